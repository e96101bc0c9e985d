"""nri-plugins' resource policies, one package each, registered in :mod:`..resmgr.policy`."""
