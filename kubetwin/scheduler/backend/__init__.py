"""The scheduler's backend (``pkg/scheduler/backend``): the cache with its snapshot and node
tree (:mod:`.cache`, :mod:`.node_tree`) and the scheduling queue (:mod:`.queue`)."""
