"""nri-plugins' resource policies, one package each, registered in :mod:`..resmgr.policy`. Models containers/nri-plugins cmd/plugins/* policies, registered by their upstream names."""
