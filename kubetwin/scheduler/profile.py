"""Profiles from KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1).

The default profile is upstream's ``getDefaultPlugins``: multi-point plugins in order, with
score weights. A configuration may disable plugins (``*`` disables all defaults), enable more
with weights, and pass plugin args through ``pluginConfig``. Plugins kubetwin does not model
(volume plugins, ImageLocality) are listed as skipped, not silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..errors import InputError
from ..model.loader import load_one
from .framework.interface import PLUGIN_MODULES

#: (name, score weight) in upstream's multiPoint order (v1 ``getDefaultPlugins``). A multi-point
#: plugin without a weight that has a Score method gets weight 1 (``getScoreWeights``):
#: DynamicResources scores since v1.35 (prioritized lists), so it weighs 1.
DEFAULT_MULTI_POINT: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 1), ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
)

#: Plugins of the default profile that need objects kubetwin does not model yet.
NOT_MODELLED = frozenset({"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "ImageLocality"})
#: Plugins with no Filter/Score role in a one-pod cycle (queue sort, gates, binding, preemption).
CYCLE_FRAME = frozenset({"SchedulingGates", "PrioritySort", "DefaultBinder", "DefaultPreemption"})


@dataclass(frozen=True)
class Profile:
    scheduler_name: str = "default-scheduler"
    plugins: tuple[tuple[str, int], ...] = DEFAULT_MULTI_POINT
    plugin_args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None


def load_profile(path: str | Path | None, pod_scheduler_name: str = "default-scheduler") -> Profile:
    if path is None:
        return Profile()
    doc = load_one(path, what="KubeSchedulerConfiguration")
    obj = doc.obj
    if obj.get("kind") != "KubeSchedulerConfiguration":
        raise InputError(f"expected kind KubeSchedulerConfiguration, found {obj.get('kind')!r}", path="kind",
                         file=doc.where)
    if obj.get("apiVersion") not in (None, "kubescheduler.config.k8s.io/v1"):
        raise InputError(f"unsupported apiVersion {obj.get('apiVersion')!r}", path="apiVersion", file=doc.where,
                         fix="use kubescheduler.config.k8s.io/v1")
    global_pct = obj.get("percentageOfNodesToScore")
    profiles = obj.get("profiles") or [{}]
    for i, prof in enumerate(profiles):
        name = prof.get("schedulerName", "default-scheduler")
        if name != pod_scheduler_name:
            continue
        try:
            return _profile(prof, global_pct)
        except InputError as exc:
            raise exc.within(f"profiles[{i}]").in_file(doc.where) from None
    raise InputError(f"no profile for schedulerName {pod_scheduler_name!r}", path="profiles", file=doc.where,
                     fix="the pod's spec.schedulerName must name one of the profiles")


def profile_from_config(obj: Any, file: str | None = None) -> Profile:
    """The first profile of a KubeSchedulerConfiguration given as a mapping (embedded in another
    document, e.g. a simulation scenario); ``None`` is the default profile. Errors name
    ``file`` and the field path."""
    if obj is None:
        return Profile()
    if not isinstance(obj, Mapping):
        raise InputError("expected a KubeSchedulerConfiguration mapping", file=file)
    kind = obj.get("kind")
    if kind not in (None, "KubeSchedulerConfiguration"):
        raise InputError(f"expected kind KubeSchedulerConfiguration, found {kind!r}", path="kind", file=file)
    api = obj.get("apiVersion")
    if api not in (None, "kubescheduler.config.k8s.io/v1"):
        raise InputError(f'Unsupported value: "{api}": supported values: "kubescheduler.config.k8s.io/v1"',
                         path="apiVersion", file=file)
    pct = obj.get("percentageOfNodesToScore")
    if pct is not None and (not isinstance(pct, int) or isinstance(pct, bool) or not 0 <= pct <= 100):
        raise InputError(f"Invalid value: {pct!r}: not in valid range [0-100]", path="percentageOfNodesToScore",
                         file=file)
    profiles = obj.get("profiles") or [{}]
    if not isinstance(profiles, list) or not all(isinstance(p, Mapping) for p in profiles):
        raise InputError("expected a list of profile mappings", path="profiles", file=file)
    try:
        return _profile(profiles[0], pct)
    except InputError as exc:
        raise exc.within("profiles[0]").in_file(file) from None


def _profile(prof: Mapping[str, Any], global_pct: Any) -> Profile:
    plugins = list(DEFAULT_MULTI_POINT)
    sets = prof.get("plugins") or {}
    mp = sets.get("multiPoint") or {}
    disabled = {d.get("name") for d in mp.get("disabled") or []}
    if "*" in disabled:
        plugins = []
    plugins = [(n, w) for n, w in plugins if n not in disabled]
    for i, e in enumerate(mp.get("enabled") or []):
        name = e.get("name")
        if name not in PLUGIN_MODULES and name not in dict(DEFAULT_MULTI_POINT):
            raise InputError(f"unknown plugin {name!r}", path=f"plugins.multiPoint.enabled[{i}].name")
        weight = int(e.get("weight", 1) or 1)
        plugins = [(n, w) for n, w in plugins if n != name] + [(name, weight)]
    score = sets.get("score") or {}
    sdisabled = {d.get("name") for d in score.get("disabled") or []}
    weights = dict(plugins)
    if "*" in sdisabled:
        weights = {n: 0 for n in weights}
    for n in sdisabled:
        if n in weights:
            weights[n] = 0
    for e in score.get("enabled") or []:
        name = e.get("name")
        if name not in weights:
            plugins.append((name, 0))
        weights[name] = int(e.get("weight", 1) or 1)
    filt = sets.get("filter") or {}
    fdisabled = {d.get("name") for d in filt.get("disabled") or []}
    plugins = [(n, weights.get(n, w)) for n, w in plugins if not (n in fdisabled and weights.get(n, 0) == 0)]
    args = {}
    for i, pc in enumerate(prof.get("pluginConfig") or []):
        if not pc.get("name"):
            raise InputError("Required value: name", path=f"pluginConfig[{i}].name")
        a = dict(pc.get("args") or {})
        a.pop("apiVersion", None)
        a.pop("kind", None)
        args[pc["name"]] = a
    pct = prof.get("percentageOfNodesToScore", global_pct)
    if pct is not None and (not isinstance(pct, int) or not 0 <= pct <= 100):
        raise InputError(f"Invalid value: {pct!r}: not in valid range [0-100]", path="percentageOfNodesToScore")
    return Profile(prof.get("schedulerName", "default-scheduler"), tuple(plugins), args, pct)
