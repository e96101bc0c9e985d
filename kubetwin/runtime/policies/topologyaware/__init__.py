"""nri-plugins' ``topology-aware`` policy (containers/nri-plugins v0.14.0,
``cmd/plugins/topology-aware/policy``): a tree of pools (root, sockets, dies, NUMA nodes,
L3 cache groups) built from the machine, each container placed in the best-scoring pool,
exclusive CPUs sliced off the pool's shared set, the others sharing what is left.

``preferences``: what the pod's annotations and QoS ask for; ``resources``: supplies, requests,
grants, scores; ``node``: the pools; ``pools``: building the tree, scoring, placing, applying;
``policy``: the ``Backend``.
"""
