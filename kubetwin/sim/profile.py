"""The scheduler profile a simulation runs: ``KubeSchedulerConfiguration`` (kubescheduler.config.k8s.io/v1).

A thin reader of what the simulated scheduler needs — which plugins are on, their Score weights,
their args and ``percentageOfNodesToScore`` — until the scheduler package offers a full
configuration API. Defaults are the v1 default profile (``pkg/scheduler/apis/config/v1/default_plugins.go``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import InputError

#: default profile: (plugin, score weight or 0 when it does not score), in upstream order
DEFAULT_PLUGINS: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 0), ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
)

#: plugins that score (upstream sets a default weight of 1 for a scoring plugin enabled without one)
_SCORING = {"TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity",
            "NodeResourcesBalancedAllocation", "ImageLocality", "NodeResourceTopologyMatch", "VolumeBinding"}
_GROUPS = ("multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
           "reserve", "permit", "preBind", "bind", "postBind")


@dataclass(frozen=True)
class SchedulerProfile:
    scheduler_name: str = "default-scheduler"
    #: enabled plugins in order, with their Score weight (0: not scoring)
    plugins: tuple[tuple[str, int], ...] = DEFAULT_PLUGINS
    plugin_args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0

    def enabled(self, name: str) -> bool:
        return any(n == name for n, _ in self.plugins)

    def weight(self, name: str) -> int:
        for n, w in self.plugins:
            if n == name:
                return w
        return 0

    def args(self, name: str) -> Mapping[str, Any]:
        return self.plugin_args.get(name, {})


def parse_scheduler_config(obj: Mapping[str, Any] | None, file: str | None = None) -> SchedulerProfile:
    """The first profile of a KubeSchedulerConfiguration (``None``: the default profile)."""
    if obj is None:
        return SchedulerProfile()
    if not isinstance(obj, Mapping):
        raise InputError("expected a KubeSchedulerConfiguration mapping", file=file)
    kind = obj.get("kind")
    if kind not in (None, "KubeSchedulerConfiguration"):
        raise InputError(f"expected kind KubeSchedulerConfiguration, found {kind!r}", path="kind", file=file)
    api = obj.get("apiVersion")
    if api not in (None, "kubescheduler.config.k8s.io/v1"):
        raise InputError(f'Unsupported value: "{api}": supported values: "kubescheduler.config.k8s.io/v1"',
                         path="apiVersion", file=file)
    pct = _percentage(obj.get("percentageOfNodesToScore"), "percentageOfNodesToScore", file)
    initial = _seconds(obj.get("podInitialBackoffSeconds", 1), "podInitialBackoffSeconds", file)
    maximum = _seconds(obj.get("podMaxBackoffSeconds", 10), "podMaxBackoffSeconds", file)
    profiles = obj.get("profiles") or [{}]
    if not isinstance(profiles, list):
        raise InputError("expected a list of profiles", path="profiles", file=file)
    prof = profiles[0]
    if not isinstance(prof, Mapping):
        raise InputError("expected a profile mapping", path="profiles[0]", file=file)
    if prof.get("percentageOfNodesToScore") is not None:
        pct = _percentage(prof.get("percentageOfNodesToScore"), "profiles[0].percentageOfNodesToScore", file)
    plugins = _plugins(prof.get("plugins") or {}, "profiles[0].plugins", file)
    args: dict[str, Mapping[str, Any]] = {}
    for i, pc in enumerate(prof.get("pluginConfig") or []):
        where = f"profiles[0].pluginConfig[{i}]"
        if not isinstance(pc, Mapping) or not isinstance(pc.get("name"), str):
            raise InputError("Required value: name", path=f"{where}.name", file=file)
        a = pc.get("args") or {}
        if not isinstance(a, Mapping):
            raise InputError("expected a mapping", path=f"{where}.args", file=file)
        args[pc["name"]] = {k: v for k, v in a.items() if k not in ("apiVersion", "kind")}
    return SchedulerProfile(str(prof.get("schedulerName") or "default-scheduler"), plugins, args, pct,
                            initial, maximum)


def _percentage(v: Any, path: str, file: str | None) -> int:
    if v is None:
        return 0
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 100:
        raise InputError(f"Invalid value: {v!r}: not in valid range [0-100]", path=path, file=file)
    return v


def _seconds(v: Any, path: str, file: str | None) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
        raise InputError(f"Invalid value: {v!r}: must be greater than 0", path=path, file=file)
    return float(v)


def _plugins(raw: Mapping[str, Any], path: str, file: str | None) -> tuple[tuple[str, int], ...]:
    """Apply enabled/disabled sets of every extension point to the default list (``mergePlugins``)."""
    if not isinstance(raw, Mapping):
        raise InputError("expected a mapping of extension points", path=path, file=file)
    order = [n for n, _ in DEFAULT_PLUGINS]
    weights = dict(DEFAULT_PLUGINS)
    for group, spec in raw.items():
        gp = f"{path}.{group}"
        if group not in _GROUPS:
            raise InputError(f"unknown extension point {group!r}", path=gp, file=file, fix=", ".join(_GROUPS))
        if not isinstance(spec, Mapping):
            raise InputError("expected {enabled: [...], disabled: [...]}", path=gp, file=file)
        for j, d in enumerate(spec.get("disabled") or []):
            name = _plugin_name(d, f"{gp}.disabled[{j}]", file)
            if name == "*":
                if group in ("multiPoint", "score"):
                    weights = {n: 0 for n in order} if group == "score" else {}
                    if group == "multiPoint":
                        order = []
                continue
            if group in ("multiPoint", "filter", "preFilter") and name in order and group != "score":
                if group == "multiPoint":
                    order.remove(name)
                    weights.pop(name, None)
            if group == "score":
                weights[name] = 0
        for j, e in enumerate(spec.get("enabled") or []):
            ep = f"{gp}.enabled[{j}]"
            name = _plugin_name(e, ep, file)
            w = e.get("weight") if isinstance(e, Mapping) else None
            if w is not None and (not isinstance(w, int) or isinstance(w, bool) or w < 0):
                raise InputError(f"Invalid value: {w!r}: weight must be a non-negative integer", path=f"{ep}.weight",
                                 file=file)
            if name not in order:
                order.append(name)
            if group in ("multiPoint", "score") and name in _SCORING:
                weights[name] = w if w else (weights.get(name) or 1)
    return tuple((n, weights.get(n, 0) if n in _SCORING else 0) for n in order)


def _plugin_name(v: Any, path: str, file: str | None) -> str:
    name = v.get("name") if isinstance(v, Mapping) else None
    if not isinstance(name, str) or not name:
        raise InputError("Required value: name", path=f"{path}.name", file=file)
    return name
