"""Profiles from KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``), decoded strictly
(``k8s.io/kube-scheduler/config/v1/types.go``; defaults and validation in
``pkg/scheduler/apis/config/v1/default_plugins.go``, ``validation/validation.go``).

The default profile is upstream's ``getDefaultPlugins``: multi-point plugins in order, with
score weights (:mod:`.plugins.registry`). A configuration may disable plugins (``*`` disables all
defaults), enable more with weights, and pass plugin args through ``pluginConfig``, each decoded
by its plugin's folder (its ``args`` module). Unknown or mistyped fields, unknown plugin names and
a plugin configured twice are errors naming the file and the field path, with the nearest valid
name. Fields kube-scheduler acts on that kubetwin does not model (extenders, backoff, the
per-extension-point plugin sets other than ``multiPoint``, ``score`` and ``filter``) are
reported as not modelled. Plugins kubetwin does not model (volume plugins, ImageLocality) are
listed as skipped, not silently dropped. Files are read through :mod:`kubetwin.model.loader`
(duplicate keys, alias bombs and size limits refused).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..diagnostics import not_modelled
from ..errors import InputError
from ..model.loader import load_one
from ..model.strict import BOOLEAN, INTEGER, NUMBER, OPEN_OBJECT, STRING, check, list_of, obj, suggest
from .framework.interface import Plugin
from .plugins.registry import DEFAULT_MULTI_POINT, KNOWN, is_known, plugin_class

API_VERSION = "kubescheduler.config.k8s.io/v1"
DEFAULT_SCHEDULER = "default-scheduler"

#: extension points of ``Plugins``; kubetwin reads ``multiPoint``, ``score`` and ``filter``
EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
                    "permit", "preBind", "bind", "postBind", "multiPoint", "placementGenerate", "placementScore",
                    "placementFeasible", "podGroupPostFilter")
MODELLED_POINTS = frozenset({"multiPoint", "score", "filter"})

PLUGIN = obj(name=STRING, weight=INTEGER)
PLUGIN_SET = obj(enabled=list_of(PLUGIN), disabled=list_of(PLUGIN))
PROFILE = obj(schedulerName=STRING, percentageOfNodesToScore=INTEGER, percentageOfPlacementsToScore=INTEGER,
              plugins=obj({p: PLUGIN_SET for p in EXTENSION_POINTS}),
              # each plugin's args are checked by the plugin's own spec
              pluginConfig=list_of(obj(name=STRING, args=OPEN_OBJECT)))
EXTENDER = obj(urlPrefix=STRING, filterVerb=STRING, preemptVerb=STRING, prioritizeVerb=STRING, weight=INTEGER,
               bindVerb=STRING, enableHTTPS=BOOLEAN,
               tlsConfig=obj(insecure=BOOLEAN, serverName=STRING, certFile=STRING, keyFile=STRING, caFile=STRING,
                             certData=STRING, keyData=STRING, caData=STRING),
               httpTimeout=STRING, nodeCacheCapable=BOOLEAN,
               managedResources=list_of(obj(name=STRING, ignoredByScheduler=BOOLEAN)), ignorable=BOOLEAN)
KUBE_SCHEDULER_CONFIGURATION = obj(
    apiVersion=STRING, kind=STRING, parallelism=INTEGER,
    leaderElection=obj(leaderElect=BOOLEAN, leaseDuration=STRING, renewDeadline=STRING, retryPeriod=STRING,
                       resourceLock=STRING, resourceName=STRING, resourceNamespace=STRING),
    clientConnection=obj(kubeconfig=STRING, acceptContentTypes=STRING, contentType=STRING, qps=NUMBER,
                         burst=INTEGER),
    enableProfiling=BOOLEAN, enableContentionProfiling=BOOLEAN,
    percentageOfNodesToScore=INTEGER, percentageOfPlacementsToScore=INTEGER,
    podInitialBackoffSeconds=INTEGER, podMaxBackoffSeconds=INTEGER,
    profiles=list_of(PROFILE), extenders=list_of(EXTENDER), delayCacheUntilActive=BOOLEAN)

#: the scheduling queue's backoff kubetwin models (``podInitialBackoffSeconds``, ``podMaxBackoffSeconds``)
MODELLED_BACKOFF = {"podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 10}


@dataclass(frozen=True)
class Profile:
    scheduler_name: str = DEFAULT_SCHEDULER
    plugins: tuple[tuple[str, int], ...] = DEFAULT_MULTI_POINT
    #: each plugin's ``pluginConfig`` args as given (``TypeMeta`` left out), decoded by the plugin
    plugin_args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None
    #: where each plugin's args sit in the configuration, and the file (for errors)
    args_paths: Mapping[str, str] = field(default_factory=dict)
    source: str | None = None

    def args_of(self, name: str, cls: type[Plugin]) -> Any:
        """The plugin's typed args, decoded by its class (each plugin has its own args class)."""
        return cls.parse_args(self.plugin_args.get(name), self.args_paths.get(name, f"pluginConfig[{name}].args"),
                              self.source)


def check_args_type(raw: Mapping[str, Any], plugin: str, path: str, file: str | None) -> None:
    """A plugin's args name their type only as ``<Plugin>Args`` of its config group:
    ``kubescheduler.config.k8s.io/v1`` in-tree (kube-scheduler decodes them as that type,
    ``PluginConfig.decodeNestedObjects``), ``kubescheduler.config.x-k8s.io/v1`` for
    scheduler-plugins' plugins. Another apiVersion is not registered, another kind is refused
    ("args for plugin X were not of type ...")."""
    api, kind = raw.get("apiVersion"), raw.get("kind")
    cls = _modelled_class(plugin) if is_known(plugin) else None
    want = getattr(cls, "args_api_version", None) or API_VERSION  # out-of-tree plugins name their own group
    if api is not None and api != want:
        raise InputError(f'Unsupported value: "{api}": supported values: "{want}"',
                         path=f"{path}.apiVersion" if path else "apiVersion", file=file)
    if kind is not None and kind != f"{plugin}Args":
        raise InputError(f"args for plugin {plugin} were not of type {plugin}Args, got {kind!r}",
                         path=f"{path}.kind" if path else "kind", file=file)


def load_profile(path: str | Path | None, pod_scheduler_name: str = DEFAULT_SCHEDULER) -> Profile:
    """The profile of the configuration file at ``path`` that schedules the pod (its
    ``schedulerName``); the default profile without a file."""
    if path is None:
        return Profile()
    doc = load_one(path, what="KubeSchedulerConfiguration")
    obj_ = doc.obj
    if not isinstance(obj_, Mapping) or obj_.get("kind") != "KubeSchedulerConfiguration":
        kind = obj_.get("kind") if isinstance(obj_, Mapping) else None
        raise InputError(f"expected kind KubeSchedulerConfiguration, found {kind!r}", path="kind", file=doc.where)
    profiles = _check_configuration(obj_, doc.where)
    for i, prof in enumerate(profiles):
        if prof.get("schedulerName", DEFAULT_SCHEDULER) == pod_scheduler_name:
            return _profile(prof, i, obj_.get("percentageOfNodesToScore"), doc.where)
    raise InputError(f"no profile for schedulerName {pod_scheduler_name!r}", path="profiles", file=doc.where,
                     fix="the pod's spec.schedulerName must name one of the profiles")


def profile_from_config(obj_: Any, file: str | None = None) -> Profile:
    """The first profile of a KubeSchedulerConfiguration given as a mapping (embedded in another
    document, e.g. a simulation scenario); ``None`` is the default profile. Errors name
    ``file`` and the field path."""
    if obj_ is None:
        return Profile()
    if not isinstance(obj_, Mapping):
        raise InputError("expected a KubeSchedulerConfiguration mapping", file=file)
    kind = obj_.get("kind")
    if kind not in (None, "KubeSchedulerConfiguration"):
        raise InputError(f"expected kind KubeSchedulerConfiguration, found {kind!r}", path="kind", file=file)
    profiles = _check_configuration(obj_, file)
    return _profile(profiles[0], 0, obj_.get("percentageOfNodesToScore"), file)


def _check_configuration(cfg: Mapping[str, Any], file: str | None) -> list[Mapping[str, Any]]:
    """The configuration's fields checked; returns its profiles (one default profile when none)."""
    check(dict(cfg), KUBE_SCHEDULER_CONFIGURATION, file=file)
    api = cfg.get("apiVersion")
    if api not in (None, API_VERSION):
        raise InputError(f'Unsupported value: "{api}": supported values: "{API_VERSION}"', path="apiVersion",
                         file=file)
    _percentage(cfg.get("percentageOfNodesToScore"), "percentageOfNodesToScore", file)
    for key, default in MODELLED_BACKOFF.items():
        if cfg.get(key) is not None and cfg[key] != default:
            not_modelled(key, file=file, why=f"the scheduling queue's backoff is kube-scheduler's default ({default}s)")
    if cfg.get("extenders"):
        not_modelled("extenders", file=file, why="scheduler extenders are not called")
    if cfg.get("percentageOfPlacementsToScore") is not None:
        not_modelled("percentageOfPlacementsToScore", file=file, why="workload (pod group) scheduling")
    profiles = cfg.get("profiles") or [{}]
    seen: dict[str, int] = {}
    for i, prof in enumerate(profiles):
        name = prof.get("schedulerName", DEFAULT_SCHEDULER)
        if name in seen:
            raise InputError(f'Duplicate value: "{name}"', path=f"profiles[{i}].schedulerName", file=file)
        seen[name] = i
    return list(profiles)


def _percentage(pct: Any, path: str, file: str | None) -> None:
    if pct is not None and not 0 <= pct <= 100:
        raise InputError(f"Invalid value: {pct!r}: not in valid range [0-100]", path=path, file=file)


def _unknown_plugin(name: Any, path: str, file: str | None) -> InputError:
    near = suggest(str(name), KNOWN)
    return InputError(f"unknown plugin {name!r}", path=path, file=file,
                      fix=f'did you mean "{near}"?' if near else None)


def _names(entries: list[Mapping[str, Any]], path: str, file: str | None, *, star: bool) -> list[str]:
    """Plugin names of a set's list, each known (``*`` too where ``star``)."""
    out = []
    for i, e in enumerate(entries):
        name = e.get("name")
        if not name:
            raise InputError("Required value: name", path=f"{path}[{i}].name", file=file)
        if not (star and name == "*") and not is_known(name):
            raise _unknown_plugin(name, f"{path}[{i}].name", file)
        out.append(name)
    return out


def _profile(prof: Mapping[str, Any], index: int, global_pct: Any, file: str | None) -> Profile:
    base = f"profiles[{index}]"
    plugins = list(DEFAULT_MULTI_POINT)
    sets = prof.get("plugins") or {}
    for point, value in sets.items():
        if point not in MODELLED_POINTS and value and (value.get("enabled") or value.get("disabled")):
            not_modelled(f"{base}.plugins.{point}", file=file,
                         why="only multiPoint, score and filter plugin sets are read")
    mp = sets.get("multiPoint") or {}
    mpp = f"{base}.plugins.multiPoint"
    disabled = set(_names(mp.get("disabled") or [], f"{mpp}.disabled", file, star=True))
    if "*" in disabled:
        plugins = []
    plugins = [(n, w) for n, w in plugins if n not in disabled]
    enabled = mp.get("enabled") or []
    for e, name in zip(enabled, _names(enabled, f"{mpp}.enabled", file, star=False)):
        weight = int(e.get("weight", 1) or 1)
        plugins = [(n, w) for n, w in plugins if n != name] + [(name, weight)]
    score = sets.get("score") or {}
    sp = f"{base}.plugins.score"
    sdisabled = set(_names(score.get("disabled") or [], f"{sp}.disabled", file, star=True))
    weights = dict(plugins)
    if "*" in sdisabled:
        weights = {n: 0 for n in weights}
    for n in sdisabled:
        if n in weights:
            weights[n] = 0
    senabled = score.get("enabled") or []
    for e, name in zip(senabled, _names(senabled, f"{sp}.enabled", file, star=False)):
        if name not in weights:
            plugins.append((name, 0))
        weights[name] = int(e.get("weight", 1) or 1)
    filt = sets.get("filter") or {}
    fdisabled = set(_names(filt.get("disabled") or [], f"{base}.plugins.filter.disabled", file, star=True))
    plugins = [(n, weights.get(n, w)) for n, w in plugins if not (n in fdisabled and weights.get(n, 0) == 0)]
    args: dict[str, Mapping[str, Any]] = {}
    paths: dict[str, str] = {}
    for i, pc in enumerate(prof.get("pluginConfig") or []):
        cp = f"{base}.pluginConfig[{i}]"
        name = pc.get("name")
        if not name:
            raise InputError("Required value: name", path=f"{cp}.name", file=file)
        if name in args:
            raise InputError(f'Duplicate value: "{name}"', path=f"{cp}.name", file=file)
        if not is_known(name):
            raise _unknown_plugin(name, f"{cp}.name", file)
        raw = dict(pc.get("args") or {})
        check_args_type(raw, name, f"{cp}.args", file)
        args[name] = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind")}
        paths[name] = f"{cp}.args"
        cls = _modelled_class(name)
        if cls is not None:
            cls.parse_args(raw, paths[name], file)   # every plugin's args checked now, before any effect
    pct = prof.get("percentageOfNodesToScore", global_pct)
    _percentage(prof.get("percentageOfNodesToScore"), f"{base}.percentageOfNodesToScore", file)
    if prof.get("percentageOfPlacementsToScore") is not None:
        not_modelled(f"{base}.percentageOfPlacementsToScore", file=file, why="workload (pod group) scheduling")
    return Profile(prof.get("schedulerName", DEFAULT_SCHEDULER), tuple(plugins), args, pct, paths, file)


def _modelled_class(name: str) -> type[Plugin] | None:
    """The plugin's class when kubetwin models it (frame and unmodelled plugins have none)."""
    from .plugins.registry import CYCLE_FRAME, NOT_MODELLED

    if name in CYCLE_FRAME or name in NOT_MODELLED:
        return None
    return plugin_class(name, path="pluginConfig")
