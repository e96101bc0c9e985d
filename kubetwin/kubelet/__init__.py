"""One node's decisions: QoS, cgroups, OOM score, managers, eviction.

Upstream: ``pkg/kubelet`` (``qos``, ``cm``, ``eviction``); each module names its file."""
