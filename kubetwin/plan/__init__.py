"""``kubetwin plan``: capacity planning with the kubelet in the loop — the smallest (or cheapest)
mix of node types on which a workload is scheduled by the default scheduler profile and admitted
by every kubelet, found by running the same simulation ``simulate`` runs on candidate mixes.

Not an upstream module: kubetwin's own planner (the question the Cluster Autoscaler's estimator,
``cluster-autoscaler/estimator/binpacking_estimator.go``, answers without the kubelet).
Layout: ``nodetype`` (the ``--node-type`` values), ``workload`` (what must run), ``trial`` (one
mix simulated), ``bounds`` (lower bounds), ``search`` (the strategy), ``grow`` (a mix that fits when no type
alone does), ``answer`` (headroom, why).
"""
