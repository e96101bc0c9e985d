"""One node's decisions: QoS, cgroups, OOM score, managers, eviction."""
