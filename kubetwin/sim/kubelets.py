"""The kubelet of each simulated node: its admission pipeline, built on first use.

Nodes of one group share a machine and a KubeletConfiguration, so their kubelets start from
the same state: the managers' start-up (CPU topology discovery, topology masks, reserved CPUs,
the NUMA memory table, policy options) is done once per (machine, configuration), and each node
gets a copy of that freshly started kubelet. The copy shares what never changes after start-up
— the machine, the configuration, the CPU topology and its masks, feature gates, options,
CPU sets and quantities (all immutable) — and duplicates only the managers and their state.
"""

from __future__ import annotations

import copy
from typing import Any

from .scenario import SimNode

#: types whose instances are immutable values: shared between a template and its copies
_SHARED_TYPES = frozenset({"Machine", "KubeletConfiguration", "CPUTopology", "TopoMasks", "FeatureGates", "NUMAInfo",
                           "TopologyManagerOptions", "StaticPolicyOptions", "TakeStrategy", "Quantity", "CPUSet",
                           "NUMANode", "CPUInfo"})


class _Template:
    __slots__ = ("machine", "config", "kubelet", "shared")

    def __init__(self, machine: Any, config: Any):
        from ..kubelet.admission import NodeAdmission

        self.machine, self.config = machine, config
        self.kubelet = NodeAdmission(machine, config)
        self.shared = _immutables(self.kubelet)

    def fork(self) -> Any:
        return copy.deepcopy(self.kubelet, dict(self.shared))


_TEMPLATES: dict[tuple[int, int], _Template] = {}


def kubelet_for(node: SimNode) -> Any:
    """A freshly started kubelet for ``node`` (a copy of its group's template)."""
    key = (id(node.machine), id(node.kubelet))
    tmpl = _TEMPLATES.get(key)
    if tmpl is None or tmpl.machine is not node.machine or tmpl.config is not node.kubelet:
        if len(_TEMPLATES) > 64:
            _TEMPLATES.clear()
        tmpl = _TEMPLATES[key] = _Template(node.machine, node.kubelet)
    return tmpl.fork()


def _immutables(root: Any) -> dict[int, Any]:
    """A deepcopy memo mapping every immutable value reachable from ``root`` to itself."""
    memo: dict[int, Any] = {}
    seen: set[int] = set()
    stack = [root]
    while stack:
        o = stack.pop()
        if id(o) in seen or o is None or isinstance(o, (int, float, str, bool, bytes)):
            continue
        seen.add(id(o))
        if type(o).__name__ in _SHARED_TYPES:
            memo[id(o)] = o
            continue
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        else:
            d = getattr(o, "__dict__", None)
            if d is not None:
                stack.extend(d.values())
            for slot in getattr(type(o), "__slots__", ()):
                v = getattr(o, slot, None)
                if v is not None:
                    stack.append(v)
    return memo
