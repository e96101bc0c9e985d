"""The scenario: real Kubernetes objects plus one ``Simulation`` object of ours.

    apiVersion: kubetwin.io/v1alpha1
    kind: Simulation
    metadata: {name: demo}
    spec:
      seed: 1
      horizon: 2h                # stop the clock here (default: when nothing is left to happen)
      sampleInterval: 1m         # time-series resolution
      kubeletAdmission: true     # run each node's kubelet admission on bound pods
      schedulerConfig: {...}     # KubeSchedulerConfiguration (or schedulerConfigFile: path)
      nodeGroups: [{name, count, machine, kubeletConfig|kubeletConfigFile, labels, taints, capacity, gpus}]
      workloads:  [{name, count, template, arrival, duration}]
      objects:    [paths of manifests: Pods, Deployments, Jobs, PriorityClasses, Nodes, ...]
      traces:     [{format: alibaba-gpu-v2023|pods|manifests, path, ...}]

Everything Kubernetes has an object for stays in that object (Pods, Nodes, Deployments,
ReplicaSets, Jobs, PriorityClasses, Services, Namespaces, KubeletConfiguration,
KubeSchedulerConfiguration). Arrival and run time of a real object come from the annotations
``kubetwin.io/arrival`` and ``kubetwin.io/duration``. See docs/scenario-format.md.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .. import limits
from ..errors import InputError
from ..model.loader import Document, load_documents
from ..model.node import Node, node_from_dict
from ..model.pod import Pod, pod_from_dict
from .gpushare import GPU_COUNT, GPU_MODEL
from .usage import USAGE, parse_usage
from .workload import FOREVER, Arrival, Controller, DurationSpec, parse_duration_spec, seconds

API_VERSION = "kubetwin.io/v1alpha1"
ARRIVAL = "kubetwin.io/arrival"
DURATION = "kubetwin.io/duration"
_CONTROLLERS = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "Job": "batch/v1"}
_PASSED_ON = ("Service", "Namespace", "ReplicationController", "StatefulSet", "NodeResourceTopology", "PodDisruptionBudget",
              "DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim", "ResourceQuota", "LimitRange")


@dataclass
class SimNode:
    """A node of the simulated cluster: the API object, plus what its kubelet runs on."""

    node: Node
    group: str = ""
    machine: Any = None          # kubetwin.machine.Machine, when the hardware is known
    kubelet: Any = None          # KubeletConfiguration, when the kubelet is simulated
    gpus: int = 0
    gpu_model: str = ""
    #: the KubeletConfiguration as written, so variants can change one field and re-default
    kubelet_raw: dict[str, Any] | None = None
    #: ResourceSlices its DRA drivers publish
    slices: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Settings:
    seed: int = 0
    horizon: float | None = None
    sample_interval: float = 60.0
    kubelet_admission: bool = True
    controller_delay: float = 1.0
    max_recreations: int = 10
    kubernetes_version: str | None = None
    feature_gates: dict[str, bool] = field(default_factory=dict)
    #: kube-scheduler's ``--pod-max-in-unschedulable-pods-duration`` (a flag, not a
    #: KubeSchedulerConfiguration field): parked pods older than this are retried
    pod_max_in_unschedulable: float = 300.0


@dataclass
class Scenario:
    name: str
    nodes: list[SimNode] = field(default_factory=list)
    arrivals: list[Arrival] = field(default_factory=list)
    controllers: list[Controller] = field(default_factory=list)
    profile: Any = None   # kubetwin.scheduler.profile.Profile (None: the default profile)
    settings: Settings = field(default_factory=Settings)
    priority_classes: dict[str, Any] = field(default_factory=dict)
    objects: dict[str, list[Any]] = field(default_factory=dict)
    #: where each object of ``objects`` came from, for error messages (same order)
    origins: dict[str, list[str]] = field(default_factory=dict)
    source: str = ""

    def summary(self) -> str:
        return (f"{len(self.nodes)} nodes, {len(self.arrivals)} pods"
                + (f", {len(self.controllers)} controllers" if self.controllers else ""))


# --- loading -------------------------------------------------------------------------------------
def load_scenario(paths: str | Path | list[str | Path], *, base: Path | None = None) -> Scenario:
    """A scenario from one or more files: a ``Simulation`` object and/or Kubernetes objects."""
    if not isinstance(paths, list):
        paths = [paths]
    docs: list[Document] = []
    for p in paths:
        docs.extend(load_documents(p))
    first = str(paths[0]) if paths else "<scenario>"
    sc = Scenario(name=Path(first).stem, source=first)
    sims = [d for d in docs if d.obj.get("kind") == "Simulation"]
    if len(sims) > 1:
        raise InputError("more than one Simulation object", path="kind", file=sims[1].where)
    others = [d for d in docs if d.obj.get("kind") != "Simulation"]
    if sims:
        _apply_simulation(sc, sims[0], base)
    _apply_objects(sc, others)
    if sc.profile is None:
        sc.profile = parse_scheduler_config(None)
    _finish(sc)
    return sc


def parse_scheduler_config(obj: Any, file: str | None = None) -> Any:
    """The first profile of a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), read by the
    scheduler package's profile reader; ``None`` is the default profile."""
    from ..scheduler.profile import profile_from_config

    return profile_from_config(obj, file)


def _dir_of(doc: Document, base: Path | None) -> Path:
    if base is not None:
        return base
    f = Path(doc.file)
    return f.parent if f.name not in ("<stdin>", "<input>") else Path.cwd()


def _apply_simulation(sc: Scenario, doc: Document, base: Path | None) -> None:
    obj, where = doc.obj, doc.where
    if obj.get("apiVersion") != API_VERSION:
        raise InputError(f'Unsupported value: "{obj.get("apiVersion")}": supported values: "{API_VERSION}"',
                         path="apiVersion", file=where)
    meta = obj.get("metadata") or {}
    if isinstance(meta, Mapping) and meta.get("name"):
        sc.name = str(meta["name"])
    spec = obj.get("spec") or {}
    if not isinstance(spec, Mapping):
        raise InputError("expected a mapping", path="spec", file=where)
    root = _dir_of(doc, base)
    try:
        _parse_spec(sc, spec, root)
    except InputError as exc:
        raise exc.in_file(where) from None


_SPEC_KEYS = {"seed", "horizon", "sampleInterval", "kubeletAdmission", "controllerDelay", "maxRecreations",
              "kubernetesVersion", "featureGates", "schedulerConfig", "schedulerConfigFile", "nodeGroups",
              "workloads", "objects", "traces", "podMaxInUnschedulablePodsDuration"}



def _check_fields(obj: Mapping[str, Any], known: Any, path: str) -> None:
    """Refuse a field the scenario format does not have, listing the ones it does."""
    for k in obj:
        if k not in known:
            raise InputError(f'unknown field "{k}"', path=f"{path}.{k}", fix=", ".join(sorted(known)))

def _parse_spec(sc: Scenario, spec: Mapping[str, Any], root: Path) -> None:
    _check_fields(spec, _SPEC_KEYS, "spec")
    st = sc.settings
    if "seed" in spec:
        st.seed = _int(spec["seed"], "spec.seed")
    if spec.get("horizon") is not None:
        st.horizon = seconds(spec["horizon"], "spec.horizon", allow_zero=False)
    if "sampleInterval" in spec:
        st.sample_interval = seconds(spec["sampleInterval"], "spec.sampleInterval", allow_zero=False)
    if "kubeletAdmission" in spec:
        st.kubelet_admission = _bool(spec["kubeletAdmission"], "spec.kubeletAdmission")
    if "controllerDelay" in spec:
        st.controller_delay = seconds(spec["controllerDelay"], "spec.controllerDelay")
    if "maxRecreations" in spec:
        st.max_recreations = _int(spec["maxRecreations"], "spec.maxRecreations")
    if "podMaxInUnschedulablePodsDuration" in spec:
        st.pod_max_in_unschedulable = seconds(spec["podMaxInUnschedulablePodsDuration"],
                                              "spec.podMaxInUnschedulablePodsDuration")
    if "kubernetesVersion" in spec:
        st.kubernetes_version = str(spec["kubernetesVersion"])
    if "featureGates" in spec:
        fg = spec["featureGates"]
        if not isinstance(fg, Mapping) or not all(isinstance(v, bool) for v in fg.values()):
            raise InputError("expected a map of gate name to true/false", path="spec.featureGates")
        st.feature_gates = dict(fg)
    if spec.get("schedulerConfig") is not None:
        try:
            sc.profile = parse_scheduler_config(spec["schedulerConfig"])
        except InputError as exc:
            raise exc.within("spec.schedulerConfig") from None
    if spec.get("schedulerConfigFile"):
        from ..model.loader import load_one

        d = load_one(root / str(spec["schedulerConfigFile"]), "KubeSchedulerConfiguration")
        sc.profile = parse_scheduler_config(d.obj, d.where)
    for i, g in enumerate(_list(spec.get("nodeGroups"), "spec.nodeGroups")):
        nodes = _node_group(g, f"spec.nodeGroups[{i}]", root, st)
        sc.nodes.extend(nodes)
        for n in nodes:
            if n.slices:
                sc.objects.setdefault("ResourceSlice", []).extend(n.slices)
                sc.origins.setdefault("ResourceSlice", []).extend(
                    [f"{sc.source}: spec.nodeGroups[{i}].draDrivers"] * len(n.slices))
    for i, w in enumerate(_list(spec.get("workloads"), "spec.workloads")):
        _workload(sc, w, f"spec.workloads[{i}]")
    for i, p in enumerate(_list(spec.get("objects"), "spec.objects")):
        if not isinstance(p, str):
            raise InputError("expected a path to a manifest file", path=f"spec.objects[{i}]")
        path = root / p
        if not path.exists():
            raise InputError(f"no such file: {path}", path=f"spec.objects[{i}]")
        _apply_objects(sc, load_documents(path))
    for i, t in enumerate(_list(spec.get("traces"), "spec.traces")):
        _trace(sc, t, f"spec.traces[{i}]", root)


def _list(v: Any, path: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise InputError("expected a list", path=path)
    return v


def _mapping(v: Any, path: str, file: str | None = None) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise InputError(f"expected a mapping, not {type(v).__name__}", path=path, file=file)
    return v


def _int(v: Any, path: str, minimum: int = 0) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < minimum:
        raise InputError(f"Invalid value: {v!r}: must be an integer >= {minimum}", path=path)
    return v


def _bool(v: Any, path: str) -> bool:
    if not isinstance(v, bool):
        raise InputError(f"Invalid value: {v!r}: must be true or false", path=path)
    return v


_GROUP_KEYS = {"name", "count", "machine", "kubeletConfig", "kubeletConfigFile", "labels", "taints", "capacity", "draDrivers",
               "gpus", "zones"}


def _node_group(g: Any, path: str, root: Path, st: Settings) -> list[SimNode]:
    from ..model.kubelet_config import KubeletConfiguration, load_kubelet_config

    if not isinstance(g, Mapping):
        raise InputError("expected a node group mapping", path=path)
    _check_fields(g, _GROUP_KEYS, path)
    name = g.get("name")
    if not isinstance(name, str) or not name:
        raise InputError("Required value: name", path=f"{path}.name")
    count = _int(g.get("count", 1), f"{path}.count", 1)
    limits.MAX_SIM_NODES.check(count, path=f"{path}.count", what="the node group's count")
    machine = None
    if g.get("machine") is not None:
        machine = _machine(g["machine"], f"{path}.machine", root)
    cfg = None
    raw_cfg: dict[str, Any] | None = None
    if g.get("kubeletConfig") is not None:
        if not isinstance(g["kubeletConfig"], Mapping):
            raise InputError("expected a mapping of KubeletConfiguration fields", path=f"{path}.kubeletConfig")
        raw_cfg = dict(g["kubeletConfig"])
        try:
            cfg = KubeletConfiguration.from_dict(g["kubeletConfig"], st.kubernetes_version)
        except InputError as exc:
            exc.file = None
            raise exc.within(f"{path}.kubeletConfig") from None
    elif g.get("kubeletConfigFile"):
        from ..model.loader import load_one

        cfg = load_kubelet_config(root / str(g["kubeletConfigFile"]), st.kubernetes_version)
        raw_cfg = dict(load_one(root / str(g["kubeletConfigFile"]), "KubeletConfiguration").obj)
    elif machine is not None:
        cfg = KubeletConfiguration.from_dict(None, st.kubernetes_version)
    labels = g.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise InputError("expected a map of labels", path=f"{path}.labels")
    gpus = g.get("gpus") or {}
    if not isinstance(gpus, Mapping):
        raise InputError("expected {count, model}", path=f"{path}.gpus")
    ngpu = _int(gpus.get("count", 0), f"{path}.gpus.count")
    model = str(gpus.get("model", ""))
    zones = _list(g.get("zones"), f"{path}.zones")
    raw_drivers = _list(g.get("draDrivers"), f"{path}.draDrivers")
    limits.MAX_SIM_DRA_DRIVERS.check(len(raw_drivers), path=f"{path}.draDrivers", what="the number of DRA drivers")
    drivers = [_dra_driver(d, f"{path}.draDrivers[{k}]", st) for k, d in enumerate(raw_drivers)]
    if drivers and machine is None:
        raise InputError("Required value: machine (DRA drivers publish the machine's PCI devices)",
                         path=f"{path}.machine")
    capacity = g.get("capacity")
    if machine is None and capacity is None:
        raise InputError("Required value: machine or capacity", path=path,
                         fix='give machine: "2s2n8c2t" (or an hwloc XML / MachineInfo path) or capacity: {cpu, memory}')
    if machine is not None and cfg is not None:
        _check_kubelet_starts(machine, cfg, f"{path}.kubeletConfig")
    out = []
    for k in range(count):
        node_name = f"{name}-{k}"
        lab = {"kubernetes.io/hostname": node_name, "kubernetes.io/os": "linux", **{str(a): str(b) for a, b in labels.items()}}
        if zones:
            lab["topology.kubernetes.io/zone"] = str(zones[k % len(zones)])
        if model:
            lab.setdefault(GPU_MODEL, model)
        obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node_name, "labels": lab},
                               "spec": {"taints": copy.deepcopy(g.get("taints") or [])}}
        if machine is not None and cfg is not None:
            cap, alloc = _machine_resources(machine, cfg, capacity)
        else:
            cap = {str(a): str(b) for a, b in (capacity or {}).items()}
            cap.setdefault("pods", "110")
            alloc = dict(cap)
        if ngpu:
            cap[GPU_COUNT] = alloc[GPU_COUNT] = str(ngpu)   # open-gpu-share's device plugin resource
        obj["status"] = {"capacity": cap, "allocatable": alloc}
        try:
            node = node_from_dict(obj)
        except InputError as exc:
            exc.file = None
            raise exc.within(path) from None
        sn = SimNode(node, name, machine, cfg, ngpu, model, raw_cfg or {})
        for d in drivers:
            sn.slices.extend(_publish(machine, d, node_name))
        out.append(sn)
    return out


def _check_kubelet_starts(machine: Any, cfg: Any, path: str) -> None:
    """Start the group's kubelet once now (the run reuses it): a configuration its managers
    refuse on this machine (reserved CPUs past the machine, a memory reservation it does not
    have) is an error of the scenario, named as such, before the run."""
    from .kubelets import template_for

    try:
        template_for(machine, cfg)
    except InputError as exc:
        exc.file = None
        raise exc.within(path) from None


_DRIVER_KEYS = {"driver", "kinds", "vendorIDs", "partitions"}


@dataclass(frozen=True)
class DRADriver:
    """A node-local DRA driver publishing the machine's PCI devices (as ``kubetwin dra slices``)."""

    driver: str
    kinds: tuple[str, ...]
    vendor_ids: tuple[int, ...]
    partitions: int
    partitionable: bool


def _dra_driver(d: Any, path: str, st: Settings) -> DRADriver:
    from ..dra.hardware import KINDS, check_driver_name
    from ..model.features import gates_for

    if not isinstance(d, Mapping):
        raise InputError("expected {driver, kinds, vendorIDs, partitions}", path=path)
    _check_fields(d, _DRIVER_KEYS, path)
    name = d.get("driver")
    if not isinstance(name, str) or not name:
        raise InputError("Required value: driver (a DNS subdomain such as gpu.example.com)", path=f"{path}.driver")
    try:
        check_driver_name(name)
    except InputError as exc:
        raise InputError(exc.message, path=f"{path}.driver") from None
    kinds = tuple(str(k) for k in _list(d.get("kinds"), f"{path}.kinds")) or KINDS
    for j, k in enumerate(kinds):
        if k not in KINDS:
            raise InputError(f'Unsupported value: "{k}": supported values: ' + ", ".join(f'"{x}"' for x in KINDS),
                             path=f"{path}.kinds[{j}]")
    vendors = []
    for j, v in enumerate(_list(d.get("vendorIDs"), f"{path}.vendorIDs")):
        try:
            vendors.append(int(str(v), 16))
        except ValueError:
            raise InputError(f"Invalid value: {v!r}: a PCI vendor ID in hex, such as 10de",
                             path=f"{path}.vendorIDs[{j}]") from None
    partitions = _int(d.get("partitions", 0), f"{path}.partitions")
    if partitions == 1 or partitions > 16:
        raise InputError(f"Invalid value: {partitions}: 0 (whole devices) or 2 to 16", path=f"{path}.partitions")
    gates = gates_for(st.kubernetes_version, st.feature_gates)
    if partitions and not gates.enabled("DRAPartitionableDevices"):
        raise InputError("partitioned GPUs need the DRAPartitionableDevices feature gate", path=f"{path}.partitions",
                         fix="set spec.featureGates: {DRAPartitionableDevices: true}")
    return DRADriver(name, kinds, tuple(vendors), partitions, gates.enabled("DRAPartitionableDevices"))


def _publish(machine: Any, d: DRADriver, node: str) -> list[dict[str, Any]]:
    from ..dra.hardware import devices_for_machine

    return list(devices_for_machine(machine, d.driver, node, kinds=d.kinds, vendor_ids=d.vendor_ids,
                                    partitions=d.partitions, partitionable_devices=d.partitionable).slices)


def _machine(src: Any, path: str, root: Path) -> Any:
    from ..machine import load_machine

    if not isinstance(src, str) or not src:
        raise InputError("expected a machine source: a spec like 2s2n8c2t, or a path", path=path)
    candidate = root / src
    if candidate.exists():
        src = str(candidate)
    elif src.startswith("hwloc:"):
        src = str(Path(__file__).parent / "default" / "machines" / src.split(":", 1)[1])
    try:
        return load_machine(src)
    except InputError as exc:
        raise exc.within(path) from None


def _machine_resources(machine: Any, cfg: Any, extra: Mapping[str, Any] | None) -> tuple[dict[str, str], dict[str, str]]:
    from ..kubelet.admission import effective_config, node_capacity

    cfg = effective_config(cfg)
    cap = node_capacity(machine, cfg)
    alloc = cfg.node_allocatable(cap)
    out_cap = {k: str(v) for k, v in cap.items()}
    out_alloc = {k: str(v) for k, v in alloc.items()}
    for k, v in (extra or {}).items():
        out_cap[str(k)] = str(v)
        out_alloc[str(k)] = str(v)
    return out_cap, out_alloc


_WORKLOAD_KEYS = {"name", "count", "template", "arrival", "duration", "priorityClassName", "usage"}


def _workload(sc: Scenario, w: Any, path: str) -> None:
    import random

    if not isinstance(w, Mapping):
        raise InputError("expected a workload mapping", path=path)
    _check_fields(w, _WORKLOAD_KEYS, path)
    name = w.get("name")
    if not isinstance(name, str) or not name:
        raise InputError("Required value: name", path=f"{path}.name")
    count = _int(w.get("count", 1), f"{path}.count", 1)
    limits.MAX_SIM_PODS.check(count, path=f"{path}.count", what="the workload's count")
    tmpl = w.get("template")
    if not isinstance(tmpl, Mapping):
        raise InputError("Required value: template (a Pod: metadata and spec)", path=f"{path}.template")
    duration = parse_duration_spec(w.get("duration"), f"{path}.duration")
    usage = parse_usage(w.get("usage"), f"{path}.usage")
    times = arrival_times(w.get("arrival"), count, f"{path}.arrival", random.Random(f"{sc.settings.seed}/{name}"))
    if times:  # a low rate or a long interval can put the last arrival centuries away
        limits.MAX_SIM_SECONDS.check(math.ceil(max(times)), path=f"{path}.arrival",
                                     what="the last arrival time in seconds")
    drng = random.Random(f"{sc.settings.seed}/{name}/duration")
    try:
        base = _pod_dict(tmpl, name)
    except InputError as exc:
        raise exc.within(path) from None
    if w.get("priorityClassName"):
        base["spec"]["priorityClassName"] = str(w["priorityClassName"])
    check = _decode_pod(copy.deepcopy(base) | {"metadata": {**base["metadata"], "name": f"{name}-0"}},
                        f"{path}.template")
    del check
    for k, t in enumerate(times):
        obj = copy.deepcopy(base)
        obj["metadata"]["name"] = f"{name}-{k}"
        obj["metadata"]["uid"] = f"{obj['metadata'].get('namespace', 'default')}/{name}-{k}"
        pod = _decode_pod(obj, f"{path}.template")
        sc.arrivals.append(Arrival(t, pod, duration.sample(drng), None, name, usage))


def _pod_dict(tmpl: Mapping[str, Any], name: str) -> dict[str, Any]:
    obj = copy.deepcopy(dict(tmpl))
    obj.setdefault("apiVersion", "v1")
    obj.setdefault("kind", "Pod")
    meta = dict(_mapping(obj.get("metadata") or {}, "template.metadata"))
    meta.setdefault("labels", {"app": name})
    obj["metadata"] = meta
    obj["spec"] = dict(_mapping(obj.get("spec") or {}, "template.spec"))
    return obj


def _decode_pod(obj: dict[str, Any], path: str) -> Pod:
    try:
        return pod_from_dict(obj)
    except InputError as exc:
        exc.file = None
        raise exc.within(path) from None


def arrival_times(raw: Any, count: int, path: str, rng: Any) -> list[float]:
    """``{at: 0s}`` (all at once), ``{start, interval}`` (evenly spaced) or ``{start, rate}`` (Poisson, per second)."""
    if raw is None:
        return [0.0] * count
    if not isinstance(raw, Mapping):
        raise InputError("expected {at}, {start, interval} or {start, rate}", path=path)
    known = {"at", "start", "interval", "rate"}
    _check_fields(raw, known, path)
    if "at" in raw:
        return [seconds(raw["at"], f"{path}.at")] * count
    start = seconds(raw.get("start", 0), f"{path}.start")
    if "interval" in raw:
        step = seconds(raw["interval"], f"{path}.interval")
        return [start + k * step for k in range(count)]
    if "rate" in raw:
        rate = raw["rate"]
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not math.isfinite(rate) or rate <= 0:
            raise InputError(f"Invalid value: {rate!r}: pods per second, must be positive", path=f"{path}.rate")
        t, out = start, []
        for _ in range(count):
            t += rng.expovariate(rate)
            out.append(t)
        return out
    return [start] * count


def _trace(sc: Scenario, t: Any, path: str, root: Path) -> None:
    from . import traces

    if not isinstance(t, Mapping):
        raise InputError("expected {format, path}", path=path)
    fmt = t.get("format")
    p = t.get("path")
    if not isinstance(p, str):
        raise InputError("Required value: path", path=f"{path}.path")
    full = root / p
    if fmt == "alibaba-gpu-v2023":
        tr = traces.read_alibaba_gpu(full, pods=t.get("pods", "openb_pod_list_default.csv"),
                                     deletions=bool(t.get("deletions", False)),
                                     limit=t.get("limit"))
        sc.nodes.extend(tr.nodes)
        sc.arrivals.extend(tr.arrivals)
    elif fmt == "pods":
        sc.arrivals.extend(traces.read_pod_table(full))
    elif fmt == "manifests":
        sc.arrivals.extend(traces.read_manifest_folder(full))
    else:
        raise InputError(f'Unsupported value: "{fmt}": supported values: "alibaba-gpu-v2023", "manifests", "pods"',
                         path=f"{path}.format")


# --- real objects ----------------------------------------------------------------------------------
def _apply_objects(sc: Scenario, docs: list[Document]) -> None:
    from ..model.policy import priority_class_from_dict

    for doc in docs:
        obj, where = doc.obj, doc.where
        kind = obj.get("kind")
        if not isinstance(kind, str):
            raise InputError(f"kind must be a string, not {type(kind).__name__}", path="kind", file=where)
        if kind == "Pod":
            pod = pod_from_dict(obj, where)
            t, d = _timing(obj, where)
            sc.arrivals.append(Arrival(t, pod, d.sample(_rng(sc, pod.name)), None, where, _usage(obj, where)))
        elif kind == "Node":
            sc.nodes.append(SimNode(node_from_dict(obj, where), "nodes"))
        elif kind == "PriorityClass":
            pc = priority_class_from_dict(obj, where)
            sc.priority_classes[pc.name] = pc
        elif kind in _CONTROLLERS:
            sc.controllers.append(_controller(obj, where, sc))
        elif kind == "KubeSchedulerConfiguration":
            sc.profile = parse_scheduler_config(obj, where)
        elif kind == "Simulation":
            raise InputError("a Simulation object may only be given once, in the scenario", path="kind", file=where)
        elif kind in _PASSED_ON:
            sc.objects.setdefault(kind, []).append(obj)
            sc.origins.setdefault(kind, []).append(where)
        else:
            raise InputError(f"kind {kind!r} is not part of a scenario", path="kind", file=where,
                             fix="Pods, Nodes, Deployments, ReplicaSets, Jobs, PriorityClasses, "
                                 "KubeSchedulerConfiguration, " + ", ".join(_PASSED_ON))


def _rng(sc: Scenario, name: str) -> Any:
    import random

    return random.Random(f"{sc.settings.seed}/{name}")


def _usage(obj: Mapping[str, Any], where: str) -> Any:
    ann = (obj.get("metadata") or {}).get("annotations") or {}
    if USAGE not in ann:
        return None
    try:
        return parse_usage(ann[USAGE], f"metadata.annotations[{USAGE}]")
    except InputError as exc:
        raise exc.in_file(where) from None


def _timing(obj: Mapping[str, Any], where: str) -> tuple[float, DurationSpec]:
    ann = (obj.get("metadata") or {}).get("annotations") or {}
    t = seconds(ann[ARRIVAL], f"metadata.annotations[{ARRIVAL}]") if ARRIVAL in ann else 0.0
    try:
        d = parse_duration_spec(ann.get(DURATION), f"metadata.annotations[{DURATION}]")
    except InputError as exc:
        raise exc.in_file(where) from None
    return t, d


def _controller(obj: Mapping[str, Any], where: str, sc: Scenario) -> Controller:
    kind = obj["kind"]
    if obj.get("apiVersion") != _CONTROLLERS[kind]:
        raise InputError(f'Unsupported value: "{obj.get("apiVersion")}": supported values: "{_CONTROLLERS[kind]}"',
                         path="apiVersion", file=where)
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise InputError("Required value: metadata.name", path="metadata.name", file=where)
    ns = meta.get("namespace", "default")
    spec = obj.get("spec") or {}
    tmpl = spec.get("template") or {}
    if not isinstance(tmpl, Mapping) or not tmpl.get("spec"):
        raise InputError("Required value: spec.template", path="spec.template", file=where)
    try:
        t, d = _timing(obj, where)
        if kind == "Job":
            replicas = _int(spec.get("parallelism", 1), "spec.parallelism")
            limits.MAX_SIM_PODS.check(replicas, path="spec.parallelism", what="the Job's parallelism")
            completions = spec.get("completions")
            if completions is not None:
                completions = _int(completions, "spec.completions")
                limits.MAX_SIM_PODS.check(completions, path="spec.completions", what="the Job's completions")
            backoff = _int(spec.get("backoffLimit", 6), "spec.backoffLimit")
        else:
            replicas = _int(spec.get("replicas", 1), "spec.replicas")
            limits.MAX_SIM_PODS.check(replicas, path="spec.replicas", what="the number of replicas")
            completions, backoff = None, 0
    except InputError as exc:
        raise exc.in_file(where) from None
    pod_obj = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {**(tmpl.get("metadata") or {}), "name": f"{name}-template", "namespace": ns},
               "spec": dict(_mapping(tmpl.get("spec"), "spec.template.spec", where))}
    if kind == "Job":
        pod_obj["spec"].setdefault("restartPolicy", "Never")
    try:
        template = pod_from_dict(pod_obj)
    except InputError as exc:
        exc.file = None
        raise exc.within("spec.template").in_file(where) from None
    if kind != "Job" and d is FOREVER:
        d = FOREVER
    return Controller(f"{kind}/{ns}/{name}", kind, template, replicas, completions, backoff, t, d,
                      sc.settings.max_recreations, meta={"name": name, "namespace": ns,
                                                         "selector": (spec.get("selector") or {})},
                      usage=_usage(obj, where))


def _finish(sc: Scenario) -> None:
    """Names must be unique: the API server would refuse a second object with the same name."""
    seen: dict[str, str] = {}
    for a in sc.arrivals:
        key = a.pod.key
        if key in seen:
            raise InputError(f"pod {key} is defined twice ({a.source}, first in {seen[key]})", path="metadata.name",
                             file=sc.source)
        seen[key] = a.source
    limits.MAX_SIM_PODS.check(len(sc.arrivals), file=sc.source, what="the number of pods of the scenario")
    limits.MAX_SIM_NODES.check(len(sc.nodes), file=sc.source, what="the number of nodes of the scenario")
    st = sc.settings
    if st.horizon is not None:
        limits.MAX_SIM_SAMPLES.check(math.ceil(st.horizon / st.sample_interval), file=sc.source, path="spec.sampleInterval",
                                     what="spec.horizon / spec.sampleInterval (samples of the time series)")
    names: set[str] = set()
    for n in sc.nodes:
        if n.node.metadata.name in names:
            raise InputError(f"node {n.node.metadata.name} is defined twice", path="metadata.name", file=sc.source)
        names.add(n.node.metadata.name)
    for c in sc.controllers:
        c.max_recreations = sc.settings.max_recreations
    sc.arrivals.sort(key=lambda a: a.time)
