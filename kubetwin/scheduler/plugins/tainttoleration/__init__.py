"""TaintToleration (``pkg/scheduler/framework/plugins/tainttoleration``): the plain plugin
(:mod:`.taint_toleration`), its vectorised Filter/Score (:mod:`.vector`) and its
``EventsToRegister`` with QueueingHints (:mod:`.hints`)."""

NAME = "TaintToleration"
