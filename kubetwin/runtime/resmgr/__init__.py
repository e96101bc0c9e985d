"""nri-plugins' resource manager core (``pkg/resmgr``): the cache of pods and containers and the
policy seam the topology-aware and balloons policies plug into."""
