"""NodeUnschedulable (``pkg/scheduler/framework/plugins/nodeunschedulable``): the plain plugin
(:mod:`.node_unschedulable`), its vectorised Filter (:mod:`.vector`) and its ``EventsToRegister``
with QueueingHints (:mod:`.hints`)."""

NAME = "NodeUnschedulable"
