"""Shortcuts that give the plain cycle's answers faster: the vectorised cycle (:mod:`.cycle`),
what plugins' vectorised twins return (:mod:`.vector`) and failed cycles kept per pod
(:mod:`.verdicts`). They talk to the framework runtime and the cache through public methods only."""
