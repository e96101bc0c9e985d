"""The policies' configuration in nri-plugins' own format: ``config.nri/v1alpha1`` custom
resources (``TopologyAwarePolicy``, ``BalloonsPolicy``) and the Helm values that produce them.

A resource is decoded as the API server decodes it with the CRDs installed: unknown and
mistyped fields are refused (strict decoding), enum, minimum and required rules of the CRD
schema are enforced, and the CRD defaults are filled in (``pinCPU``, ``pinMemory``,
``preferIsolatedCPUs`` true; ``defaultCPUPriority`` none; ``unlimitedBurstable`` package;
balloon types' ``allocatorPriority`` high). The policy's own ``Validate()`` rules follow
(scheduling and CPU class references). Every error names the file and the field path.

Helm values are merged over the chart's defaults as ``helm install -f`` merges them (maps
deep-merged, lists and scalars replaced, ``null`` deletes), then ``config`` becomes the spec
and ``nri.plugin.index`` the plugin's NRI index.

Upstream: containers/nri-plugins v0.14.0 ``config/crd/bases/config.nri_{topologyaware,balloons}
policies.yaml``, ``pkg/apis/config/v1alpha1/resmgr/policy/{topologyaware,balloons}/config.go``,
``deployment/helm/{topology-aware,balloons}/values.yaml``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model.strict import BOOLEAN, INTEGER, OPEN_OBJECT, STRING, Spec, check, list_of, map_of, obj, unknown_key_error

API_VERSION = "config.nri/v1alpha1"
KINDS = {"TopologyAwarePolicy": "topology-aware", "BalloonsPolicy": "balloons"}
CHARTS = {v: k for k, v in KINDS.items()}

CPU_PRIORITIES = ("high", "normal", "low", "none")
TOPOLOGY_LEVELS = ("system", "package", "die", "numa", "l3cache")
TOPOLOGY_LEVEL_VALUES = {"": 0, "system": 1, "package": 2, "die": 3, "numa": 4, "l3cache": 5, "l2cache": 6,
                         "core": 7, "thread": 8}
SCHED_POLICIES = ("none", "other", "fifo", "rr", "batch", "iso", "idle", "deadline")
SCHED_FLAGS = ("reset-on-fork", "reclaim", "dl-overrun", "keep-policy", "keep-params", "util-clamp-min",
               "util-clamp-max")
IO_CLASSES = ("none", "rt", "be", "idle")
OPERATORS = ("Equals", "NotEqual", "In", "NotIn", "Exists", "NotExist", "AlwaysTrue", "Matches", "MatchesNot",
             "MatchesAny", "MatchesNone")

# --- the CRD schemas as strict specs -----------------------------------------------------------
_CACHE_ID_CAT = obj(unified=STRING, code=STRING, data=STRING)
_CAT = map_of(_CACHE_ID_CAT)
_MBA = map_of(list_of(STRING))
_RDT_CLASS = obj(l2Allocation=_CAT, l3Allocation=_CAT, mbAllocation=_MBA)
_RDT = obj(enable=BOOLEAN, usePodQoSAsDefaultClass=BOOLEAN, force=BOOLEAN,
           options=obj(l2=obj(optional=BOOLEAN), l3=obj(optional=BOOLEAN), mb=obj(optional=BOOLEAN)),
           partitions=map_of(obj(l2Allocation=_CAT, l3Allocation=_CAT, mbAllocation=_MBA,
                                 classes=map_of(_RDT_CLASS))))
_CONTROL = obj(
    blockio=obj(enable=BOOLEAN, usePodQoSAsDefaultClass=BOOLEAN),
    cpu=obj(classes=map_of(obj(disabledCstates=list_of(STRING), energyPerformancePreference=INTEGER,
                               freqGovernor=STRING, maxFreq=INTEGER, minFreq=INTEGER, uncoreMaxFreq=INTEGER,
                               uncoreMinFreq=INTEGER))),
    rdt=_RDT,
)
_KLOG = obj(add_dir_header=BOOLEAN, alsologtostderr=BOOLEAN, alsologtostderrthreshold=STRING,
            legacy_stderr_threshold_behavior=BOOLEAN, log_backtrace_at=STRING, log_dir=STRING, log_file=STRING,
            log_file_max_size=INTEGER, logtostderr=BOOLEAN, one_output=BOOLEAN, skip_headers=BOOLEAN,
            skip_log_headers=BOOLEAN, stderrthreshold=STRING, v=INTEGER, vmodule=STRING)
_LOG = obj(debug=list_of(STRING), klog=_KLOG, source=BOOLEAN)
_INSTRUMENTATION = obj(httpEndpoint=STRING, logExportPeriod=STRING, logExporter=STRING,
                       metrics=obj(enabled=list_of(STRING), polled=list_of(STRING)), metricsExporter=STRING,
                       prometheusExport=BOOLEAN, reportPeriod=STRING, samplingRatePerMillion=INTEGER,
                       tracingCollector=STRING)
_AGENT = obj(nodeResourceTopology=BOOLEAN, podResourceAPI=BOOLEAN)
_CPU_CLASS = obj(disabledCstates=list_of(STRING), energyPerformancePreference=INTEGER, freqGovernor=STRING,
                 maxFreq=STRING, minFreq=STRING, name=STRING, pctMaxFreq=STRING, pctMinFreq=STRING,
                 pctPriority=STRING, publishExtendedResource=BOOLEAN, sstClosID=INTEGER, turboPriority=INTEGER,
                 uncoreMaxFreq=STRING, uncoreMinFreq=STRING)
_SCHED_CLASS = obj(name=STRING, policy=STRING, priority=INTEGER, flags=list_of(STRING), nice=INTEGER,
                   runtime=INTEGER, deadline=INTEGER, period=INTEGER, ioClass=STRING, ioPriority=INTEGER)
_EXPRESSION = obj(key=STRING, operator=STRING, values=list_of(STRING))
_COMMON: dict[str, Spec] = dict(agent=_AGENT, availableResources=map_of(STRING), reservedResources=map_of(STRING),
                                 control=_CONTROL, log=_LOG, instrumentation=_INSTRUMENTATION, cpuClasses=list_of(_CPU_CLASS),
                                 controllableInterrupts=list_of(STRING), pinCPU=BOOLEAN, pinMemory=BOOLEAN,
                                 reservedPoolNamespaces=list_of(STRING), schedulingClasses=list_of(_SCHED_CLASS))
TOPOLOGY_AWARE_SPEC = obj(
    colocatePods=BOOLEAN, colocateNamespaces=BOOLEAN, preferIsolatedCPUs=BOOLEAN, preferSharedCPUs=BOOLEAN,
    defaultCPUPriority=STRING, unlimitedBurstable=STRING, namespaceSchedulingClasses=map_of(STRING),
    podQoSSchedulingClasses=map_of(STRING), sharedPoolCPUClass=STRING, reservedPoolCPUClass=STRING,
    defaultExclusiveCPUClass=STRING, **_COMMON)
_BALLOON_TYPE = obj(
    name=STRING, allocatorPriority=STRING, allocatorTopologyBalancing=BOOLEAN, componentCreation=STRING,
    components=list_of(obj(balloonType=STRING)), cpuClass=STRING, groupBy=STRING, hideHyperthreads=BOOLEAN,
    irqClaim=list_of(STRING), irqMode=STRING, loads=list_of(STRING), matchExpressions=list_of(_EXPRESSION),
    maxBalloons=INTEGER, maxCPUs=INTEGER, memoryTypes=list_of(STRING), minBalloons=INTEGER, minCPUs=INTEGER,
    namespaces=list_of(STRING), pinMemory=BOOLEAN, preferCloseToDevices=list_of(STRING), preferCoreType=STRING,
    preferIsolCpus=BOOLEAN, preferNewBalloons=BOOLEAN, preferPerNamespaceBalloon=BOOLEAN,
    preferSpreadOnPhysicalCores=BOOLEAN, preferSpreadingPods=BOOLEAN, schedulingClass=STRING,
    shareIdleCPUsInSame=STRING, showContainersInNrt=BOOLEAN)
BALLOONS_SPEC = obj(
    allocatorTopologyBalancing=BOOLEAN, balloonTypes=list_of(_BALLOON_TYPE), idleCPUClass=STRING,
    loadClasses=list_of(obj(name=STRING, level=STRING, overloadsLevelInBalloon=BOOLEAN)),
    preferSpreadOnPhysicalCores=BOOLEAN, preserve=obj(matchExpressions=list_of(_EXPRESSION)),
    showContainersInNrt=BOOLEAN, turboDomain=STRING, **_COMMON)


def _object_meta_spec() -> Any:
    from ..model.apischema import type_spec

    try:
        return type_spec("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    except Exception:  # noqa: BLE001 - an API schema without ObjectMeta: accept any object
        return OPEN_OBJECT


def _resource_spec(spec: Any) -> Any:
    status = obj(nodes=map_of(obj(status=STRING, generation=INTEGER, errors=STRING, timestamp=STRING)))
    return obj(apiVersion=STRING, kind=STRING, metadata=_object_meta_spec(), spec=spec, status=status)


# --- parsed configurations ---------------------------------------------------------------------
@dataclass(frozen=True)
class SchedulingClass:
    name: str
    policy: str = ""
    priority: int | None = None
    flags: tuple[str, ...] = ()
    nice: int | None = None
    runtime: int | None = None
    deadline: int | None = None
    period: int | None = None
    io_class: str = ""
    io_priority: int | None = None


@dataclass(frozen=True)
class TopologyAwareConfig:
    """``topologyaware.Config`` after CRD defaulting."""

    reserved_resources: dict[str, str]
    available_resources: dict[str, str] = field(default_factory=dict)
    pin_cpu: bool = True
    pin_memory: bool = True
    prefer_isolated: bool | None = True
    prefer_shared: bool | None = None
    colocate_pods: bool = False
    colocate_namespaces: bool = False
    reserved_pool_namespaces: tuple[str, ...] = ()
    default_cpu_priority: str = "none"
    unlimited_burstable: str = "package"
    scheduling_classes: tuple[SchedulingClass, ...] = ()
    namespace_scheduling_classes: dict[str, str] = field(default_factory=dict)
    podqos_scheduling_classes: dict[str, str] = field(default_factory=dict)
    cpu_classes: tuple[dict[str, Any], ...] = ()
    shared_pool_cpu_class: str = ""
    reserved_pool_cpu_class: str = ""
    default_exclusive_cpu_class: str = ""
    controllable_interrupts: tuple[str, ...] = ("*",)
    control: dict[str, Any] = field(default_factory=dict)
    agent: dict[str, Any] = field(default_factory=dict)

    def scheduling_class(self, name: str) -> SchedulingClass | None:
        for sc in self.scheduling_classes:
            if sc.name == name:
                return sc
        return None


@dataclass(frozen=True)
class BalloonsConfig:
    """``balloons.Config`` after CRD defaulting, as the validated ``spec`` (the balloons policy
    reads it)."""

    spec: dict[str, Any]


@dataclass(frozen=True)
class PolicyResource:
    """A policy configuration: which policy, its config, the plugin's NRI index, the source."""

    policy: str  # "topology-aware" | "balloons"
    kind: str
    name: str
    config: TopologyAwareConfig | BalloonsConfig
    spec: dict[str, Any]
    plugin_index: str = "90"
    file: str = ""

    @property
    def control(self) -> dict[str, Any]:
        return self.spec.get("control") or {}


# --- decoding ----------------------------------------------------------------------------------
def _enum(value: Any, allowed: tuple[str, ...], path: str) -> None:
    if value is not None and value not in allowed:
        raise InputError(f'unsupported value: "{value}": supported values: '
                         + ", ".join(f'"{a}"' for a in allowed), path=path)


def _minimum(value: Any, lo: int, path: str) -> None:
    if value is not None and value < lo:
        raise InputError(f"should be greater than or equal to {lo}", path=path)


def _required(d: dict, key: str, path: str) -> None:
    if d.get(key) is None:
        raise InputError("Required value", path=f"{path}.{key}" if path else key)


def _check_common(spec: dict[str, Any]) -> None:
    for i, cc in enumerate(spec.get("cpuClasses") or []):
        p = f"spec.cpuClasses[{i}]"
        _required(cc, "name", p)
        _enum(cc.get("pctPriority"), ("high", "low"), f"{p}.pctPriority")
        for k in ("energyPerformancePreference", "sstClosID", "turboPriority"):
            _minimum(cc.get(k), 0, f"{p}.{k}")
    for i, sc in enumerate(spec.get("schedulingClasses") or []):
        p = f"spec.schedulingClasses[{i}]"
        _required(sc, "name", p)
        _enum(sc.get("policy"), SCHED_POLICIES, f"{p}.policy")
        _enum(sc.get("ioClass"), IO_CLASSES, f"{p}.ioClass")
        for j, fl in enumerate(sc.get("flags") or []):
            _enum(fl, SCHED_FLAGS, f"{p}.flags[{j}]")
    for domain in ("reservedResources", "availableResources"):
        for key in (spec.get(domain) or {}):
            if key not in ("cpu", "memory"):
                raise unknown_key_error(key, ("cpu", "memory"), path=f"spec.{domain}", what="resource")
    _check_interrupts(spec.get("controllableInterrupts"))


def _check_interrupts(patterns: Any) -> None:
    from .gomatch import BadPattern, match

    for i, pat in enumerate(patterns or []):
        try:
            match(pat, "")
        except BadPattern:
            raise InputError(f'invalid controllable interrupts: invalid pattern "{pat}"',
                             path=f"spec.controllableInterrupts[{i}]") from None


def _defaults(spec: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    out = dict(spec)
    for k, v in defaults.items():
        if out.get(k) is None:
            out[k] = copy.deepcopy(v)
    return out


def decode_topology_aware(spec: dict[str, Any]) -> TopologyAwareConfig:
    _required(spec, "reservedResources", "spec")
    _check_common(spec)
    _enum(spec.get("defaultCPUPriority"), CPU_PRIORITIES, "spec.defaultCPUPriority")
    _enum(spec.get("unlimitedBurstable"), TOPOLOGY_LEVELS, "spec.unlimitedBurstable")
    spec = _defaults(spec, {"pinCPU": True, "pinMemory": True, "preferIsolatedCPUs": True,
                            "defaultCPUPriority": "none", "unlimitedBurstable": "package",
                            "controllableInterrupts": ["*"], "agent": {"nodeResourceTopology": True}})
    classes = tuple(SchedulingClass(
        name=sc["name"], policy=sc.get("policy") or "", priority=sc.get("priority"),
        flags=tuple(sc.get("flags") or ()), nice=sc.get("nice"), runtime=sc.get("runtime"),
        deadline=sc.get("deadline"), period=sc.get("period"), io_class=sc.get("ioClass") or "",
        io_priority=sc.get("ioPriority")) for sc in spec.get("schedulingClasses") or [])
    names = {sc.name for sc in classes}
    canonical: dict[str, str] = {}
    for qos, sched in (spec.get("podQoSSchedulingClasses") or {}).items():
        lower = qos.lower()
        if lower not in ("besteffort", "burstable", "guaranteed"):
            raise InputError(f'invalid QoS class "{qos}" (with scheduling "{sched}")',
                             path=f"spec.podQoSSchedulingClasses.{qos}")
        if sched not in names:
            raise InputError(f'unknown scheduling class "{sched}"', path=f"spec.podQoSSchedulingClasses.{qos}")
        canonical[lower] = sched
    for ns, sched in (spec.get("namespaceSchedulingClasses") or {}).items():
        if sched not in names:
            raise InputError(f'unknown scheduling class "{sched}" for namespace "{ns}"',
                             path=f"spec.namespaceSchedulingClasses.{ns}")
    cpu_classes = tuple(spec.get("cpuClasses") or ())
    reserved_cc = spec.get("reservedPoolCPUClass") or ""
    if cpu_classes:
        known = {c["name"] for c in cpu_classes}
        seen: set[str] = set()
        for i, c in enumerate(cpu_classes):
            if c["name"] in seen:
                raise InputError(f'duplicate CPU class "{c["name"]}"', path=f"spec.cpuClasses[{i}].name")
            seen.add(c["name"])
            if c.get("pctPriority") is not None or c.get("sstClosID") is not None:
                raise InputError("Priority Core Turbo (SST) CPU classes need SST hardware, which the machine "
                                 "model does not describe", path=f"spec.cpuClasses[{i}]",
                                 fix="drop pctPriority/sstClosID: kubetwin models CPU classes without SST")
        shared = spec.get("sharedPoolCPUClass") or ""
        if shared == "":
            raise InputError("shared CPU class not specified", path="spec.sharedPoolCPUClass")
        if shared not in known:
            raise InputError(f'unknown shared CPU class "{shared}"', path="spec.sharedPoolCPUClass")
        if reserved_cc and reserved_cc not in known:
            raise InputError(f'unknown reserved CPU class "{reserved_cc}"', path="spec.reservedPoolCPUClass")
        reserved_cc = reserved_cc or shared
        dflt = spec.get("defaultExclusiveCPUClass") or ""
        if dflt and dflt not in known:
            raise InputError(f'unknown default exclusive CPU class "{dflt}"', path="spec.defaultExclusiveCPUClass")
    return TopologyAwareConfig(
        reserved_resources=dict(spec.get("reservedResources") or {}),
        available_resources=dict(spec.get("availableResources") or {}),
        pin_cpu=bool(spec["pinCPU"]), pin_memory=bool(spec["pinMemory"]),
        prefer_isolated=spec.get("preferIsolatedCPUs"), prefer_shared=spec.get("preferSharedCPUs"),
        colocate_pods=bool(spec.get("colocatePods")), colocate_namespaces=bool(spec.get("colocateNamespaces")),
        reserved_pool_namespaces=tuple(spec.get("reservedPoolNamespaces") or ()),
        default_cpu_priority=spec["defaultCPUPriority"], unlimited_burstable=spec["unlimitedBurstable"],
        scheduling_classes=classes,
        namespace_scheduling_classes=dict(spec.get("namespaceSchedulingClasses") or {}),
        podqos_scheduling_classes=canonical, cpu_classes=cpu_classes,
        shared_pool_cpu_class=spec.get("sharedPoolCPUClass") or "", reserved_pool_cpu_class=reserved_cc,
        default_exclusive_cpu_class=spec.get("defaultExclusiveCPUClass") or "",
        controllable_interrupts=tuple(spec["controllableInterrupts"]),
        control=dict(spec.get("control") or {}), agent=dict(spec.get("agent") or {}))


def decode_balloons(spec: dict[str, Any]) -> BalloonsConfig:
    _required(spec, "reservedResources", "spec")
    _check_common(spec)
    _enum(spec.get("turboDomain"), ("package", "system"), "spec.turboDomain")
    for i, lc in enumerate(spec.get("loadClasses") or []):
        _required(lc, "name", f"spec.loadClasses[{i}]")
        _required(lc, "level", f"spec.loadClasses[{i}]")
        _enum(lc.get("level"), ("l2cache", "core"), f"spec.loadClasses[{i}].level")
    for j, e in enumerate((spec.get("preserve") or {}).get("matchExpressions") or []):
        _check_expression(e, f"spec.preserve.matchExpressions[{j}]")
    types = []
    for i, bt in enumerate(spec.get("balloonTypes") or []):
        p = f"spec.balloonTypes[{i}]"
        _required(bt, "name", p)
        _enum(bt.get("allocatorPriority"), CPU_PRIORITIES, f"{p}.allocatorPriority")
        _enum(bt.get("componentCreation"), ("", "all", "balance-balloons"), f"{p}.componentCreation")
        _enum(bt.get("preferCoreType"), ("efficient", "performance"), f"{p}.preferCoreType")
        _enum(bt.get("shareIdleCPUsInSame"), ("", "system", "package", "die", "numa", "l2cache", "core", "thread"),
              f"{p}.shareIdleCPUsInSame")
        for j, c in enumerate(bt.get("components") or []):
            _required(c, "balloonType", f"{p}.components[{j}]")
        for j, e in enumerate(bt.get("matchExpressions") or []):
            _check_expression(e, f"{p}.matchExpressions[{j}]")
        types.append(_defaults(bt, {"allocatorPriority": "high", "preferIsolCpus": False}))
    spec = _defaults(spec, {"pinCPU": True, "pinMemory": True, "turboDomain": "package",
                            "controllableInterrupts": ["*"], "agent": {"nodeResourceTopology": True}})
    if types:
        spec["balloonTypes"] = types
    return BalloonsConfig(spec)


def _check_expression(e: dict[str, Any], path: str) -> None:
    _required(e, "key", path)
    _required(e, "operator", path)
    _enum(e.get("operator"), OPERATORS, f"{path}.operator")


def decode_policy(doc: Any, file: str = "", plugin_index: str = "90") -> PolicyResource:
    """A ``TopologyAwarePolicy`` or ``BalloonsPolicy`` resource, checked as the API server would."""
    try:
        if not isinstance(doc, dict):
            raise InputError(f"expected a {' or '.join(KINDS)} object, got {type(doc).__name__}")
        kind = doc.get("kind")
        if kind not in KINDS:
            if kind in ("TemplatePolicy",):
                raise InputError(f'kind "{kind}" (the template policy) is not modelled', path="kind")
            raise unknown_key_error(str(kind), KINDS, path="kind", what="policy kind")
        if doc.get("apiVersion") != API_VERSION:
            raise InputError(f'unknown apiVersion "{doc.get("apiVersion")}" for kind {kind}', path="apiVersion",
                             fix=f'use "{API_VERSION}"')
        spec_spec = TOPOLOGY_AWARE_SPEC if kind == "TopologyAwarePolicy" else BALLOONS_SPEC
        check(doc, _resource_spec(spec_spec), file=file)
        spec = doc.get("spec")
        if not isinstance(spec, dict):
            raise InputError("Required value", path="spec")
        policy = KINDS[kind]
        config: TopologyAwareConfig | BalloonsConfig
        if policy == "topology-aware":
            config = decode_topology_aware(spec)
            full = spec
        else:
            config = decode_balloons(spec)
            full = config.spec
        name = ((doc.get("metadata") or {}).get("name")) or ""
        return PolicyResource(policy, kind, name, config, dict(full), plugin_index, file)
    except InputError as exc:
        raise exc.in_file(file or None) from None


# --- Helm values -------------------------------------------------------------------------------
_RDT_DEFAULTS = {
    "enable": False, "usePodQoSAsDefaultClass": True,
    "options": {"l2": {"optional": True}, "l3": {"optional": True}, "mb": {"optional": True}},
    "partitions": {"fullCache": {
        "l2Allocation": {"all": {"unified": "100%"}}, "l3Allocation": {"all": {"unified": "100%"}},
        "classes": {q: {"l2Allocation": {"all": {"unified": pct}}, "l3Allocation": {"all": {"unified": pct}}}
                    for q, pct in (("BestEffort", "33%"), ("Burstable", "66%"), ("Guaranteed", "100%"))}}},
}
_LOG_DEFAULTS = {"source": True, "klog": {"skip_headers": True}, "debug": ["none"]}
_INSTR_DEFAULTS = {"httpEndpoint": ":8891", "prometheusExport": False, "reportPeriod": "60s",
                   "samplingRatePerMillion": 0}
#: the charts' ``config`` defaults (values.yaml of each chart, v0.14.0)
CHART_CONFIG_DEFAULTS: dict[str, dict[str, Any]] = {
    "topology-aware": {
        "reservedResources": {"cpu": "750m"},
        "agent": {"nodeResourceTopology": True, "podResourceAPI": False},
        "control": {"rdt": _RDT_DEFAULTS}, "log": _LOG_DEFAULTS, "instrumentation": _INSTR_DEFAULTS,
    },
    "balloons": {
        "reservedResources": {"cpu": "1000m"},
        "agent": {"nodeResourceTopology": True, "podResourceAPI": False},
        "allocatorTopologyBalancing": True,
        "balloonTypes": [
            {"name": "dedicated-cpus",
             "matchExpressions": [{"key": "qosclass", "operator": "In", "values": ["Guaranteed"]}],
             "preferNewBalloons": True, "preferSpreadingPods": True},
            {"name": "shared-local-cpus",
             "matchExpressions": [{"key": "qosclass", "operator": "In", "values": ["BestEffort", "Burstable"]}],
             "shareIdleCPUsInSame": "package", "preferNewBalloons": True, "maxBalloons": 2,
             "preferSpreadingPods": False},
        ],
        "reservedPoolNamespaces": ["kube-system"],
        "control": {"rdt": _RDT_DEFAULTS}, "log": _LOG_DEFAULTS, "instrumentation": _INSTR_DEFAULTS,
    },
}
#: the charts' other top-level values (accepted, they shape the DaemonSet, not the policy)
_CHART_KEYS = ("image", "initContainerImage", "configGroupLabel", "extraEnv", "plugin-test", "resources", "nri",
               "tolerations", "affinity", "nodeSelector", "allowPCT", "podPriorityClassNodeCritical", "ports",
               "openshift", "config")
_NRI_VALUES = obj(plugin=obj(index=INTEGER, enableRDT=BOOLEAN, annotations=map_of(STRING)),
                  runtime=obj(patchConfig=BOOLEAN, config=obj(pluginRegistrationTimeout=STRING,
                                                              pluginRequestTimeout=STRING)))


def helm_merge(base: Any, override: Any) -> Any:
    """Helm's values coalescing: maps merge key by key, ``null`` removes a key, the rest replaces."""
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for k, v in override.items():
            if v is None:
                out.pop(k, None)
            elif k in out:
                out[k] = helm_merge(out[k], v)
            else:
                out[k] = copy.deepcopy(v)
        return out
    return copy.deepcopy(override)


def policy_from_helm(chart: str, values: Any, file: str = "") -> PolicyResource:
    """The custom resource the chart renders from ``values`` (merged over its defaults)."""
    if chart not in CHART_CONFIG_DEFAULTS:
        raise unknown_key_error(chart, CHART_CONFIG_DEFAULTS, path="--policy", what="policy")
    values = values or {}
    if not isinstance(values, dict):
        raise InputError(f"Helm values must be a mapping, not {type(values).__name__}", file=file or None)
    for key in values:
        if key not in _CHART_KEYS:
            raise unknown_key_error(str(key), _CHART_KEYS, file=file or None, what="chart value")
    nri = values.get("nri") or {}
    check(nri, _NRI_VALUES, file=file or None, prefix="nri")
    index = (nri.get("plugin") or {}).get("index", 90)
    if not isinstance(index, int) or not 0 <= index <= 99:
        raise InputError("must be an integer from 0 to 99", path="nri.plugin.index", file=file or None)
    config = helm_merge(CHART_CONFIG_DEFAULTS[chart], values.get("config") or {})
    check(config, TOPOLOGY_AWARE_SPEC if chart == "topology-aware" else BALLOONS_SPEC, file=file or None,
          prefix="config")
    doc = {"apiVersion": API_VERSION, "kind": CHARTS[chart],
           "metadata": {"name": "default", "namespace": "kube-system"}, "spec": config}
    try:
        res = decode_policy(doc, file, plugin_index=f"{index:02d}")
    except InputError as exc:
        if exc.path.startswith("spec"):
            exc.path = "config" + exc.path[4:]
        raise
    return res


def load_policy(source: str, helm_values: str | None = None) -> PolicyResource:
    """``--policy``: a resource file, or a chart name (``topology-aware``, ``balloons``) whose
    defaults, merged with ``--helm-values``, give the resource."""
    from ..model.loader import load_documents

    if source in CHART_CONFIG_DEFAULTS:
        values: Any = {}
        if helm_values:
            docs = load_documents(helm_values)
            if len(docs) != 1:
                raise InputError(f"expected one values document, found {len(docs)}", file=helm_values)
            values = docs[0].obj
        return policy_from_helm(source, values, helm_values or "")
    if helm_values:
        raise InputError("--helm-values goes with a chart name: --policy topology-aware|balloons",
                         path="--helm-values")
    if not Path(source).exists() and source != "-" and "/" not in source and not source.endswith((".yaml", ".yml",
                                                                                                   ".json")):
        from ..model.strict import suggest

        names = (*CHART_CONFIG_DEFAULTS, "none")
        near = suggest(source, names)
        raise InputError(f"no such file, and not a policy name ({', '.join(names)})", file=source,
                         fix=f'did you mean "{near}"?' if near else "give a policy resource file or a policy name")
    docs = load_documents(source)
    if len(docs) != 1:
        raise InputError(f"expected one policy resource, found {len(docs)}", file=source)
    return decode_policy(docs[0].obj, source)

