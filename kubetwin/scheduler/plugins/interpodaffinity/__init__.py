"""InterPodAffinity (``pkg/scheduler/framework/plugins/interpodaffinity``): the plain plugin
(:mod:`.plugin`), its args (:mod:`.args`), its vectorised PreFilter/Filter/Score (:mod:`.vector`)
and its ``EventsToRegister`` with QueueingHints (:mod:`.hints`)."""

NAME = "InterPodAffinity"
