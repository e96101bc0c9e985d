"""The autoscalers' algorithms as a library: HPA, VPA recommender, Cluster Autoscaler.

Pure functions over typed, strictly parsed inputs; the simulation (``kubetwin.sim``) will drive
them later. Each module names the upstream file and release it models:

* :mod:`.hpa` — ``k8s.io/kubernetes`` v1.36 ``pkg/controller/podautoscaler``;
* :mod:`.vpa` — ``kubernetes/autoscaler`` vertical-pod-autoscaler 1.5 ``pkg/recommender``;
* :mod:`.clusterautoscaler` — ``kubernetes/autoscaler`` cluster-autoscaler 1.34 estimator and
  expanders.
"""
