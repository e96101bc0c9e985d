"""Library entry points behind ``kubetwin schedule``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model.pod import Pod
from .framework.interface import Handle, plugin_class
from .framework.types import ResourceAccounting, build_snapshot
from .inputs import ClusterInputs, load_plugin_args
from .single import PluginResult, run_plugin


def make_handle(cluster: ClusterInputs, gates: Any, seed: int = 0) -> Handle:
    accounting = ResourceAccounting(gates)
    snapshot = build_snapshot(cluster.nodes, cluster.pods, accounting, cluster.namespace_labels())
    handle = Handle(snapshot=snapshot, gates=gates, accounting=accounting, objects=cluster.objects, seed=seed)
    handle.origins = cluster.origins  # plugins name the file an object came from in their errors
    return handle


def run_single_plugin(name: str, args_path: str | Path | None, cluster: ClusterInputs, pod: Pod,
                      gates: Any) -> PluginResult:
    cls = plugin_class(name)
    raw, where = load_plugin_args(args_path, name)
    try:
        args = cls.parse_args(raw, "")
    except InputError as exc:
        raise exc.in_file(where or None) from None
    handle = make_handle(cluster, gates)
    plugin = cls(args, handle)
    return run_plugin(plugin, handle, pod)


def run_cycle(cluster: ClusterInputs, pod: Pod, gates: Any, *, config_path: str | None = None,
              admit: bool = False, seed: int = 0) -> Any:
    from .cycle import schedule_one

    return schedule_one(cluster, pod, gates, config_path=config_path, admit=admit, seed=seed)
