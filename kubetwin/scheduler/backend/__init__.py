"""The scheduler's backend (``pkg/scheduler/backend``): the cache updated by events (:mod:`.cache`),
the snapshot plugins read with its node tree order (:mod:`.snapshot`, :mod:`.node_tree`), the numpy
columns the vectorised plugins read (:mod:`.columns`) and the scheduling queue (:mod:`.queue`)."""
