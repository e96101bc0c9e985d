"""NodeName (``pkg/scheduler/framework/plugins/nodename``): the plain plugin (:mod:`.node_name`),
its vectorised Filter (:mod:`.vector`) and its ``EventsToRegister`` (:mod:`.hints`)."""

NAME = "NodeName"
