"""NodeResourcesFit and NodeResourcesBalancedAllocation (``pkg/scheduler/framework/plugins/noderesources``):
the plain plugins (:mod:`.fit`, :mod:`.balanced_allocation`), the scoring strategies they share
(:mod:`.resource_allocation`), their args (:mod:`.args`), their vectorised Filter/Score
(:mod:`.vector`) and their ``EventsToRegister`` with QueueingHints (:mod:`.hints`)."""

FIT = "NodeResourcesFit"
BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation"
