"""NodePorts (``pkg/scheduler/framework/plugins/nodeports``): the plain plugin (:mod:`.node_ports`),
its vectorised Filter (:mod:`.vector`) and its ``EventsToRegister`` with QueueingHints (:mod:`.hints`)."""

NAME = "NodePorts"
