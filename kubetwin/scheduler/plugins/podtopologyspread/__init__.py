"""PodTopologySpread (``pkg/scheduler/framework/plugins/podtopologyspread``): the plain plugin
(:mod:`.plugin`), its args (:mod:`.args`), its vectorised PreFilter/Filter/Score (:mod:`.vector`)
and its ``EventsToRegister`` with QueueingHints (:mod:`.hints`)."""

NAME = "PodTopologySpread"
