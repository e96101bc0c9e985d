"""Extension points and the plugin registry.

A plugin is a class registered under its upstream name; which extension points it takes
part in is which methods it defines (``pre_filter``, ``filter``, ``post_filter``,
``pre_score``, ``score``, ``normalize_score``, ``reserve``, ``unreserve``, ``permit``,
``bind``), like the Go interfaces a plugin struct satisfies. Registration is lazy: the
registry maps names to modules so a one-plugin run imports one module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

from ...errors import InputError
from ...model.pod import Pod
from .status import Status
from .types import NodeInfo, ResourceAccounting, Snapshot

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


@dataclass
class Handle:
    """What plugins may read besides the pod and the node: ``framework.Handle``."""

    snapshot: Snapshot
    gates: Any
    accounting: ResourceAccounting
    #: other API objects by kind (Services, DeviceClasses, NodeResourceTopologies, ...)
    objects: Mapping[str, list[Any]] = field(default_factory=dict)
    #: pods nominated to nodes (preemption), by node name
    nominated: Mapping[str, list[Any]] = field(default_factory=dict)
    #: the run's seed: tie-breaks and the names of generated ResourceClaims
    seed: int = 0
    #: the DynamicResources plugin over this snapshot, whose allocated devices other plugins read
    dynamic_resources: Any = None


class CycleState(dict):
    """Per-cycle, per-plugin scratch space (``fwk.CycleState``), keyed by plugin name."""

    def clone(self) -> "CycleState":
        c = CycleState()
        for k, v in self.items():
            c[k] = v.clone() if hasattr(v, "clone") else v
        return c


class Plugin:
    """Base of every plugin. ``args`` are its typed args (see :mod:`..config`)."""

    name: ClassVar[str] = ""

    def __init__(self, args: Any, handle: Handle):
        self.args = args
        self.handle = handle

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str) -> Any:
        """Typed, defaulted args from the ``pluginConfig[].args`` mapping; plugins override."""
        return dict(raw or {})


#: PreFilter returns (node names to restrict to or None, status).
PreFilterResult = tuple["set[str] | None", Status]
FilterFn = Callable[[CycleState, Pod, NodeInfo], Status]

#: upstream plugin name -> module that defines and registers it
PLUGIN_MODULES: dict[str, str] = {
    "PrioritySort": "kubetwin.scheduler.plugins.queuesort",
    "SchedulingGates": "kubetwin.scheduler.plugins.schedulinggates",
    "NodeResourcesFit": "kubetwin.scheduler.plugins.noderesources",
    "NodeResourcesBalancedAllocation": "kubetwin.scheduler.plugins.balancedallocation",
    "NodeName": "kubetwin.scheduler.plugins.nodename",
    "NodeUnschedulable": "kubetwin.scheduler.plugins.nodeunschedulable",
    "NodePorts": "kubetwin.scheduler.plugins.nodeports",
    "TaintToleration": "kubetwin.scheduler.plugins.tainttoleration",
    "NodeAffinity": "kubetwin.scheduler.plugins.nodeaffinity",
    "PodTopologySpread": "kubetwin.scheduler.plugins.podtopologyspread",
    "InterPodAffinity": "kubetwin.scheduler.plugins.interpodaffinity",
    "DynamicResources": "kubetwin.scheduler.plugins.dynamicresources",
    "NodeResourceTopologyMatch": "kubetwin.scheduler.plugins.noderesourcetopology",
    "DefaultPreemption": "kubetwin.scheduler.plugins.defaultpreemption",
    "DefaultBinder": "kubetwin.scheduler.plugins.defaultbinder",
    "ImageLocality": "kubetwin.scheduler.plugins.imagelocality",
}

_REGISTRY: dict[str, type[Plugin]] = {}


def register(cls: type[Plugin]) -> type[Plugin]:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    _REGISTRY[cls.name] = cls
    return cls


def plugin_class(name: str, path: str = "--plugin") -> type[Plugin]:
    cls = _REGISTRY.get(name)
    if cls is not None:
        return cls
    module = PLUGIN_MODULES.get(name)
    if module is None:
        raise InputError(f"unknown scheduler plugin {name!r}", path=path,
                         fix=f"known plugins: {', '.join(sorted(PLUGIN_MODULES))}")
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        raise InputError(f"scheduler plugin {name} is not available in this build", path=path) from None
    return _REGISTRY[name]
