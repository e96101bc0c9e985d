"""Library entry points behind ``kubetwin schedule``: the explained one-shot cycle and one plugin
alone, over the cluster the command read.

Not an upstream module: kubetwin's own entry points."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from ..model.features import FeatureGates
from ..model.pod import Pod
from .backend.node_tree import node_tree_order
from .framework.interface import Handle
from .framework.types import ResourceAccounting, Snapshot, build_snapshot
from .inputs import ClusterInputs, load_plugin_args
from .plugins.registry import plugin_class
from .single import PluginResult, run_plugin

if TYPE_CHECKING:
    from .cycle import CycleOutcome


def make_handle(cluster: ClusterInputs, gates: FeatureGates, seed: int = 0, *, tree_order: bool = False) -> Handle:
    """The framework handle over a snapshot of ``cluster``: nodes in input order, or in the
    cache's node-tree order (``tree_order``: the order a cycle visits them)."""
    accounting = ResourceAccounting(gates)
    snapshot = build_snapshot(cluster.nodes, cluster.pods, accounting, cluster.namespace_labels())
    if tree_order:
        snapshot = Snapshot(node_tree_order(snapshot.node_infos), snapshot.namespaces, snapshot.objects)
    # plugins name the file an object came from in their errors
    return Handle(snapshot=snapshot, gates=gates, accounting=accounting, objects=cluster.objects, seed=seed,
                  origins=cluster.origins)


def run_single_plugin(name: str, args_path: str | Path | None, cluster: ClusterInputs, pod: Pod,
                      gates: FeatureGates) -> PluginResult:
    cls = plugin_class(name)
    raw, where = load_plugin_args(args_path, name)
    try:
        args = cls.parse_args(raw, "", where or None)
    except InputError as exc:
        raise exc.in_file(where or None) from None
    handle = make_handle(cluster, gates)
    plugin = cls(args, handle)
    return run_plugin(plugin, handle, pod)


def run_cycle(cluster: ClusterInputs, pod: Pod, gates: FeatureGates, *, config_path: str | None = None,
              admit: bool = False, seed: int = 0) -> CycleOutcome:
    from .cycle import schedule_one

    return schedule_one(cluster, pod, gates, config_path=config_path, admit=admit, seed=seed)
