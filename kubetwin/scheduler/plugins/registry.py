"""The in-tree plugin registry and the default profile's plugins
(``pkg/scheduler/framework/plugins/registry.go``, ``pkg/scheduler/apis/config/v1/default_plugins.go``).

Each in-tree plugin lives in one folder of :mod:`kubetwin.scheduler.plugins`, which names it
(its ``__init__``) and holds the plain plugin, its args, its vectorised Filter/Score and its
``EventsToRegister``; this module is the one place that lists the folders. Modules are imported
when first needed, so a one-plugin run imports one plugin. Out-of-tree plugins (the simulation's
GPU sharing) register themselves with :func:`~kubetwin.scheduler.framework.interface.register`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ...model.strict import suggest
from ..framework.interface import Plugin, registered
from . import (
    defaultbinder,
    defaultpreemption,
    dynamicresources,
    interpodaffinity,
    nodeaffinity,
    nodename,
    nodeports,
    noderesources,
    noderesourcetopology,
    nodeunschedulable,
    podtopologyspread,
    queuesort,
    schedulinggates,
    tainttoleration,
)

_PKG = __name__.rpartition(".")[0]


@dataclass(frozen=True)
class InTreePlugin:
    """Where an in-tree plugin's parts are (``module:attribute``): its class, its vectorised
    twins and its ``EventsToRegister``."""

    name: str
    cls: str
    vector: str | None = None
    hints: str | None = None


def _plugin(name: str, folder: str, module: str, cls: str, *, vector: bool | str = False,
            hints: bool = False) -> InTreePlugin:
    base = f"{_PKG}.{folder}"
    twins = None
    if vector:
        twins = f"{base}.vector:" + (vector if isinstance(vector, str) else "VECTORISED")
    return InTreePlugin(name, f"{base}.{module}:{cls}", twins, f"{base}.hints:EVENTS" if hints else None)


IN_TREE: dict[str, InTreePlugin] = {p.name: p for p in (
    _plugin(schedulinggates.NAME, "schedulinggates", "scheduling_gates", "SchedulingGates"),
    _plugin(queuesort.NAME, "queuesort", "priority_sort", "PrioritySort"),
    _plugin(nodeunschedulable.NAME, "nodeunschedulable", "node_unschedulable", "NodeUnschedulable",
            vector=True, hints=True),
    _plugin(nodename.NAME, "nodename", "node_name", "NodeName", vector=True, hints=True),
    _plugin(tainttoleration.NAME, "tainttoleration", "taint_toleration", "TaintToleration", vector=True, hints=True),
    _plugin(nodeaffinity.NAME, "nodeaffinity", "node_affinity", "NodeAffinity", vector=True, hints=True),
    _plugin(nodeports.NAME, "nodeports", "node_ports", "NodePorts", vector=True, hints=True),
    _plugin(noderesources.FIT, "noderesources", "fit", "NodeResourcesFit", vector=True, hints=True),
    _plugin(noderesources.BALANCED_ALLOCATION, "noderesources", "balanced_allocation",
            "NodeResourcesBalancedAllocation", vector="BALANCED_ALLOCATION_VECTORISED"),
    _plugin(podtopologyspread.NAME, "podtopologyspread", "plugin", "PodTopologySpread", vector=True, hints=True),
    _plugin(interpodaffinity.NAME, "interpodaffinity", "plugin", "InterPodAffinity", vector=True, hints=True),
    _plugin(dynamicresources.NAME, "dynamicresources", "dynamicresources", "DynamicResources",
            vector=True, hints=True),
    _plugin(defaultpreemption.NAME, "defaultpreemption", "default_preemption", "DefaultPreemption"),
    _plugin(noderesourcetopology.NAME, "noderesourcetopology", "plugin", "NodeResourceTopologyMatch",
            vector=True),
    _plugin(defaultbinder.NAME, "defaultbinder", "default_binder", "DefaultBinder"),
)}

#: The default profile's QueueSort, PreEnqueue and Bind plugins: plugins without args whose
#: ``pluginConfig`` args kubetwin leaves unread, as before they were plugin classes.
QUEUE_SORT = queuesort.NAME
SCHEDULING_GATES = schedulinggates.NAME
DEFAULT_BINDER = defaultbinder.NAME
CYCLE_FRAME = frozenset({QUEUE_SORT, SCHEDULING_GATES, DEFAULT_BINDER})

#: Plugins of the default profile that need objects kubetwin does not model yet.
NOT_MODELLED = frozenset({"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "ImageLocality"})

#: (name, score weight) in upstream's multiPoint order (v1 ``getDefaultPlugins``). A multi-point
#: plugin without a weight that has a Score method gets weight 1 (``getScoreWeights``):
#: DynamicResources scores since v1.35 (prioritized lists), so it weighs 1.
DEFAULT_MULTI_POINT: tuple[tuple[str, int], ...] = (
    (SCHEDULING_GATES, 0), (QUEUE_SORT, 0), (nodeunschedulable.NAME, 0), (nodename.NAME, 0),
    (tainttoleration.NAME, 3), (nodeaffinity.NAME, 2), (nodeports.NAME, 0), (noderesources.FIT, 1),
    ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
    (podtopologyspread.NAME, 2), (interpodaffinity.NAME, 2), (dynamicresources.NAME, 1), (defaultpreemption.NAME, 0),
    (noderesources.BALANCED_ALLOCATION, 1), ("ImageLocality", 1), (DEFAULT_BINDER, 0),
)

#: every plugin name a profile may list
KNOWN = frozenset(IN_TREE) | NOT_MODELLED


def _import(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    mod = importlib.import_module(module)
    return getattr(mod, attr) if attr else mod


def is_known(name: str) -> bool:
    """An in-tree plugin, an unmodelled plugin or a registered out-of-tree one."""
    return name in KNOWN or registered(name) is not None


def plugin_class(name: str, path: str = "--plugin") -> type[Plugin]:
    """The class of the plugin called ``name``; an unknown name is an error with the nearest one."""
    entry = IN_TREE.get(name)
    if entry is not None:
        cls: type[Plugin] = _import(entry.cls)
        return cls
    cls_or_none = registered(name)
    if cls_or_none is not None:
        return cls_or_none
    near = suggest(name, KNOWN)
    fix = f'did you mean "{near}"?' if near else f"known plugins: {', '.join(sorted(IN_TREE))}"
    raise InputError(f"unknown scheduler plugin {name!r}", path=path, fix=fix)


def vectorised(name: str) -> Any:
    """The in-tree plugin's vectorised twins (``VECTORISED`` of its folder), or None."""
    entry = IN_TREE.get(name)
    if entry is None or entry.vector is None:
        return None
    return _import(entry.vector)


def in_tree_events() -> dict[str, tuple[Any, ...]]:
    """``EventsToRegister`` (with QueueingHints) of every in-tree plugin that registers any."""
    return {name: _import(e.hints) for name, e in IN_TREE.items() if e.hints is not None}
