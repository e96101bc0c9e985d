"""NodeAffinity (``pkg/scheduler/framework/plugins/nodeaffinity``): the plain plugin
(:mod:`.node_affinity`), its args (:mod:`.args`), its vectorised Filter/Score (:mod:`.vector`)
and its ``EventsToRegister`` with QueueingHints (:mod:`.hints`)."""

NAME = "NodeAffinity"
