"""DynamicResources (``pkg/scheduler/framework/plugins/dynamicresources``): the plain plugin
(:mod:`.dynamicresources`), extended resources backed by DRA (:mod:`.extended`), its args
(:mod:`.args`), its vectorised Filter/Score (:mod:`.vector`) with the Filter verdicts it keeps
between cycles (:mod:`.verdicts`), and its ``EventsToRegister`` with QueueingHints (:mod:`.hints`)."""

NAME = "DynamicResources"
