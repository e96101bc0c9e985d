"""Node-pressure eviction as the kubelet decides it (``pkg/kubelet/eviction``).

Signals are observed from the Summary API, thresholds come from the KubeletConfiguration,
pods are ranked per signal, and :class:`EvictionManager` runs the kubelet's synchronize loop
(conditions, grace periods, minimum reclaim, node-level reclaim, one eviction per pass,
local-storage limits, admission under pressure).
"""

from .manager import AdmitResult, Eviction, EvictionManager, SyncResult, signal_to_node_reclaim_funcs
from .ranking import DiskLayout, rank_pods, resource_request, signal_to_rank_func
from .signals import SIGNALS, SignalObservation, make_signal_observations
from .thresholds import thresholds_met, update_containerfs_thresholds
from .timeline import Step, StepResult, load_timeline, run_timeline

__all__ = [
    "AdmitResult", "DiskLayout", "Eviction", "EvictionManager", "SIGNALS", "SignalObservation", "Step",
    "StepResult", "SyncResult", "load_timeline", "make_signal_observations", "rank_pods", "resource_request",
    "run_timeline", "signal_to_node_reclaim_funcs", "signal_to_rank_func", "thresholds_met",
    "update_containerfs_thresholds",
]
