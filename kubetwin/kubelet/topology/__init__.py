"""Topology Manager: hint providers, hint merging, policies and scopes (``pkg/kubelet/cm/topologymanager``)."""

from .bitmask import bits_of, iterate_bitmasks, mask_of
from .hint import TopologyHint
from .numa_info import NUMAInfo
from .policy import POLICIES, Policy, TopologyManagerOptions, merge_hints, new_policy

__all__ = ["TopologyHint", "NUMAInfo", "Policy", "POLICIES", "TopologyManagerOptions", "merge_hints",
           "new_policy", "bits_of", "mask_of", "iterate_bitmasks"]
