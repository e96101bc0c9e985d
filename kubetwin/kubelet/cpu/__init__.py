"""CPU Manager: policies ``none`` and ``static``, ``takeByTopology`` and the policy options.

Upstream: ``pkg/kubelet/cm/cpumanager``."""

from .assignment import TakeStrategy, take_by_topology
from .manager import CPUManager
from .options import StaticPolicyOptions, parse_static_policy_options
from .state import CPUState

__all__ = ["CPUManager", "CPUState", "StaticPolicyOptions", "TakeStrategy", "parse_static_policy_options",
           "take_by_topology"]
