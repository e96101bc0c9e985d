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
      nodeGroups: [{name, count, machine, kubeletConfig|kubeletConfigFile, labels, taints, capacity, gpus,
                    runtime: {policy, config}}]
      workloads:  [{name, count, template, arrival, duration}]
      objects:    [paths of manifests: Pods, Deployments, Jobs, PriorityClasses, Nodes, ...]
      traces:     [{format: alibaba-gpu-v2023|pods|manifests, path, ...}]
      autoscaling: {horizontalPodAutoscaler, verticalPodAutoscaler, clusterAutoscaler}  (autoscaling_config.py)

Everything Kubernetes has an object for stays in that object (Pods, Nodes, Deployments,
ReplicaSets, Jobs, PriorityClasses, Services, Namespaces, KubeletConfiguration,
KubeSchedulerConfiguration). Arrival and run time of a real object come from the annotations
``kubetwin.io/arrival`` and ``kubetwin.io/duration``. See docs/scenario-format.md.

Not an upstream module: kubetwin's own scenario format.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import msgspec

from .. import limits
from ..errors import InputError
from ..model.apischema import type_spec
from ..model.controller_selector import SELECTED_KINDS, check_controller_selector
from ..model.kinds import check_builtin, check_object
from ..model.loader import Document, load_documents
from ..model.node import Node, node_from_dict
from ..model.pod import Pod, pod_from_dict
from ..model.strict import check, list_of
from ..model.unmodelled import SIMULATION, not_modelled_object, not_modelled_pod
from .amounts import check_amounts, check_node_amounts, check_pod_amounts
from .gpushare import GPU_COUNT, GPU_MODEL
from .usage import USAGE, check_usage_against_pod, parse_usage
from .workload import FOREVER, Arrival, Controller, DurationSpec, parse_duration_spec, seconds

if TYPE_CHECKING:
    from ..machine.model import Machine
    from ..model.kubelet_config import KubeletConfiguration

API_VERSION = "kubetwin.io/v1alpha1"
ARRIVAL = "kubetwin.io/arrival"
DURATION = "kubetwin.io/duration"
_CONTROLLERS = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "Job": "batch/v1", "StatefulSet": "apps/v1"}
_PASSED_ON = ("DaemonSet", "HorizontalPodAutoscaler", "VerticalPodAutoscaler", "Service", "Namespace", "ReplicationController", "NodeResourceTopology", "PodDisruptionBudget",
              "DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim", "ResourceQuota", "LimitRange")
#: Every kind a scenario takes (a misspelt one is refused with the nearest of these).
_SCENARIO_KINDS = frozenset({"Pod", "Node", "PriorityClass", "KubeSchedulerConfiguration", "Simulation",
                             *_CONTROLLERS, *_PASSED_ON})


@dataclass
class SimNode:
    """A node of the simulated cluster: the API object, plus what its kubelet runs on."""

    node: Node
    group: str = ""
    machine: Machine | None = None              # when the hardware is known
    kubelet: KubeletConfiguration | None = None  # when the kubelet is simulated
    gpus: int = 0
    gpu_model: str = ""
    #: the KubeletConfiguration as written, so variants can change one field and re-default
    kubelet_raw: dict[str, Any] | None = None
    #: ResourceSlices its DRA drivers publish
    slices: list[dict[str, Any]] = field(default_factory=list)
    #: the node group's ``capacity`` (on top of the machine's, or all of it without a machine)
    extra_capacity: dict[str, str] = field(default_factory=dict)
    #: its filesystems and process table (:class:`kubetwin.sim.disk.DiskSpec`), None: not simulated
    disk: Any = None
    #: the runtime resource policy below the kubelet (:class:`.runtime_policies.RuntimePolicy`)
    runtime: Any = None
    #: what its device plugins advertise (:class:`kubetwin.kubelet.devices.DeviceInventory`), None: none
    devices: Any = None
    #: its runtime's Block I/O classes (:class:`kubetwin.sim.blockio.NodeBlockIO`), None: none
    blockio: Any = None


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
    #: the version came from the command line (``--kubernetes-version``): it wins over the scenario's
    version_given: bool = False
    #: what-ifs that are not upstream behaviour (``--variant NAME:whatif.KEY=VALUE``, :mod:`.whatif_psi`)
    eviction_policy: str = "upstream"
    psi_threshold: float = 40.0
    #: live NodeResourceTopology (``spec.nodeResourceTopology``, :mod:`.nrt_exporter`), None: off
    node_resource_topology: Any = None


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
    #: timed in-place resizes (``spec.resizes``, :mod:`kubetwin.sim.resize`)
    resizes: list[Any] = field(default_factory=list)
    #: HPA/VPA objects, controller flags and autoscaled node groups (:mod:`.autoscaling_config`)
    autoscaling: Any = None
    #: keep the cluster at the end as manifests (``simulate --write-end-state``, :mod:`.end_state`)
    want_end_state: bool = False

    def summary(self) -> str:
        return (f"{len(self.nodes)} nodes, {len(self.arrivals)} pods"
                + (f", {len(self.controllers)} controllers" if self.controllers else ""))


# --- loading -------------------------------------------------------------------------------------
def load_scenario(paths: str | Path | list[str | Path], *, base: Path | None = None,
                  kubernetes_version: str | None = None) -> Scenario:
    """A scenario from one or more files: a ``Simulation`` object and/or Kubernetes objects.

    ``kubernetes_version`` (``--kubernetes-version``) is the release every kubelet configuration
    and gate of the scenario is read at; it overrides ``spec.kubernetesVersion``."""
    if not isinstance(paths, list):
        paths = [paths]
    docs: list[Document] = []
    for p in paths:
        found = load_documents(p)
        if not found:  # as ``kubectl apply -f``: a file with nothing in it is a mistake, not an empty cluster
            raise InputError("no objects in the file (expected a Simulation object and/or Kubernetes objects)",
                             file=str(p))
        docs.extend(found)
    first = str(paths[0]) if paths else "<scenario>"
    sc = Scenario(name=Path(first).stem, source=first)
    if kubernetes_version is not None:
        from ..model.features import normalize_version

        sc.settings.kubernetes_version = normalize_version(kubernetes_version)
        sc.settings.version_given = True
    sims = [d for d in docs if d.obj.get("kind") == "Simulation"]
    if len(sims) > 1:
        raise InputError("more than one Simulation object", path="kind", file=sims[1].where)
    others = [d for d in docs if d.obj.get("kind") != "Simulation"]
    if sims:
        _apply_simulation(sc, sims[0], base)
    _apply_objects(sc, others)
    if sims and sc.resizes:
        from .resize import parse_resizes

        try:
            sc.resizes = parse_resizes(sc, sc.resizes)
        except InputError as exc:
            raise exc.in_file(sims[0].where) from None
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
    check_simulation(obj, where)
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


def _simulation_spec() -> Any:
    """The fields of the ``Simulation`` object (docs/scenario-format.md), for strict decoding.

    Embedded Kubernetes objects are checked by their own readers: ``kubeletConfig`` as a
    KubeletConfiguration, ``schedulerConfig`` as a KubeSchedulerConfiguration, ``template`` as a
    Pod; ``usage`` by the usage-curve reader."""
    from ..model.apischema import type_spec
    from ..model.strict import (
        ANY,
        BOOLEAN,
        INTEGER,
        NUMBER,
        OPEN_OBJECT,
        STRING,
        STRING_OR_NUMBER,
        list_of,
        map_of,
        obj,
    )
    from .autoscaling_config import AUTOSCALING_SPEC
    from .blockio import SPEC as BLOCKIO_SPEC

    duration = STRING_OR_NUMBER  # a Go duration string or a number of seconds
    node_group = obj(
        name=STRING, count=INTEGER, machine=STRING, kubeletConfig=OPEN_OBJECT, kubeletConfigFile=STRING,
        labels=map_of(STRING), taints=list_of(type_spec("io.k8s.api.core.v1.Taint")),
        capacity=map_of(STRING_OR_NUMBER), gpus=obj(count=INTEGER, model=STRING), zones=list_of(STRING),
        minSize=INTEGER, maxSize=INTEGER,
        draDrivers=list_of(obj(driver=STRING, kinds=list_of(STRING), vendorIDs=list_of(STRING_OR_NUMBER),
                               partitions=INTEGER)),
        disk=obj(nodefs=STRING_OR_NUMBER, nodefsUsed=STRING_OR_NUMBER, imagefs=STRING_OR_NUMBER,
                 writableLayers=STRING, images=list_of(STRING_OR_NUMBER), imagesInUse=STRING_OR_NUMBER,
                 maxPID=INTEGER, pids=INTEGER, ioBandwidth=STRING_OR_NUMBER),
        runtime=obj(policy=STRING, config=STRING), devices=STRING, blockio=BLOCKIO_SPEC)
    workload = obj(name=STRING, count=INTEGER, template=OPEN_OBJECT, priorityClassName=STRING, usage=ANY,
                   arrival=obj(at=duration, start=duration, interval=duration, rate=NUMBER),
                   duration=ANY)
    trace = obj(format=STRING, path=STRING, pods=STRING, deletions=BOOLEAN, limit=INTEGER)
    spec = obj(seed=INTEGER, horizon=duration, sampleInterval=duration, kubeletAdmission=BOOLEAN,
               controllerDelay=duration, maxRecreations=INTEGER, podMaxInUnschedulablePodsDuration=duration,
               kubernetesVersion=STRING, featureGates=map_of(BOOLEAN), schedulerConfig=OPEN_OBJECT,
               schedulerConfigFile=STRING, nodeGroups=list_of(node_group), workloads=list_of(workload),
               objects=list_of(STRING), traces=list_of(trace),
               resizes=list_of(obj(at=duration, pod=STRING, workload=STRING, patch=OPEN_OBJECT)),
               nodeResourceTopology=obj(exporter=STRING, updateInterval=duration, watchKubeletState=BOOLEAN,
                                        podsFingerprint=BOOLEAN),
               autoscaling=AUTOSCALING_SPEC)
    return obj(apiVersion=STRING, kind=STRING,
               metadata=type_spec("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"), spec=spec)


def check_simulation(obj: Mapping[str, Any], file: str | None = None) -> None:
    """Refuse unknown and mistyped fields of a ``Simulation`` object, each with its path and the
    nearest valid name (``spec.nodeGroups[0].kubeletConfg`` → ``kubeletConfig``)."""
    from ..model.strict import check

    check(obj, _simulation_spec(), file=file)


def _exclusive(obj: Mapping[str, Any], path: str, *names: str) -> None:
    given = [n for n in names if obj.get(n) is not None]
    if len(given) > 1:
        raise InputError(f"{' and '.join(given)} are both given; one of them would be ignored", path=path,
                         fix=f"give only one of {', '.join(names)}")


def _parse_spec(sc: Scenario, spec: Mapping[str, Any], root: Path) -> None:
    _exclusive(spec, "spec", "schedulerConfig", "schedulerConfigFile")
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
    if spec.get("nodeResourceTopology") is not None:
        from .nrt_exporter import parse_settings

        st.node_resource_topology = parse_settings(spec["nodeResourceTopology"])
    if "podMaxInUnschedulablePodsDuration" in spec:
        st.pod_max_in_unschedulable = seconds(spec["podMaxInUnschedulablePodsDuration"],
                                              "spec.podMaxInUnschedulablePodsDuration")
    if spec.get("kubernetesVersion") is not None:
        from ..model.features import normalize_version

        try:
            version = normalize_version(spec["kubernetesVersion"])
        except InputError as exc:
            raise InputError(exc.message, path="spec.kubernetesVersion", fix=exc.fix) from None
        if not st.version_given:
            st.kubernetes_version = version
        elif version != st.kubernetes_version:
            from ..diagnostics import warn

            warn(InputError(f"the scenario is for Kubernetes {version}; --kubernetes-version "
                            f"{st.kubernetes_version} is used", path="spec.kubernetesVersion"))
    if spec.get("featureGates") is not None:
        from ..model.features import gates_for

        st.feature_gates = dict(spec["featureGates"])
        gates_for(st.kubernetes_version, st.feature_gates, path="spec.featureGates")
    if spec.get("schedulerConfig") is not None:
        try:
            sc.profile = parse_scheduler_config(spec["schedulerConfig"])
        except InputError as exc:
            raise exc.within("spec.schedulerConfig") from None
    if spec.get("schedulerConfigFile"):
        from ..model.loader import load_one

        d = load_one(root / str(spec["schedulerConfigFile"]), "KubeSchedulerConfiguration")
        sc.profile = parse_scheduler_config(d.obj, d.where)
    if spec.get("autoscaling") is not None:
        from .autoscaling_config import parse_autoscaling

        sc.autoscaling = parse_autoscaling(spec["autoscaling"])
    for i, g in enumerate(_list(spec.get("nodeGroups"), "spec.nodeGroups")):
        nodes = _node_group(g, f"spec.nodeGroups[{i}]", root, st, sc)
        sc.nodes.extend(nodes)
        for n in nodes:
            if n.slices:
                sc.objects.setdefault("ResourceSlice", []).extend(n.slices)
                sc.origins.setdefault("ResourceSlice", []).extend(
                    [f"{sc.source}: spec.nodeGroups[{i}].draDrivers"] * len(n.slices))
    for i, w in enumerate(_list(spec.get("workloads"), "spec.workloads")):
        _workload(sc, w, f"spec.workloads[{i}]")
    listed: set[Path] = set()
    for i, p in enumerate(_list(spec.get("objects"), "spec.objects")):
        if not isinstance(p, str):
            raise InputError("expected a path to a manifest file", path=f"spec.objects[{i}]")
        path = root / p
        if not _exists(path):
            raise InputError(f"no such file: {path}", path=f"spec.objects[{i}]")
        # A file listed twice would create each of its objects twice (the API server answers
        # AlreadyExists), and a list of 100,000 copies would read the file 100,000 times.
        if path.resolve() in listed:
            raise InputError(f'Duplicate value: "{p}"', path=f"spec.objects[{i}]",
                             fix="list each manifest file once")
        listed.add(path.resolve())
        _apply_objects(sc, load_documents(path))
    for i, t in enumerate(_list(spec.get("traces"), "spec.traces")):
        _trace(sc, t, f"spec.traces[{i}]", root)
    if spec.get("resizes") is not None:  # parsed once every pod of the scenario is known (load_scenario)
        sc.resizes = list(spec["resizes"])


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


def _node_group(g: Any, path: str, root: Path, st: Settings, sc: Scenario | None = None) -> list[SimNode]:
    from ..model.kubelet_config import KubeletConfiguration

    if not isinstance(g, Mapping):
        raise InputError("expected a node group mapping", path=path)
    _exclusive(g, path, "kubeletConfig", "kubeletConfigFile")
    name = g.get("name")
    if not isinstance(name, str) or not name:
        raise InputError("Required value: name", path=f"{path}.name")
    from .autoscaling_config import node_group_size

    autoscaled = g.get("minSize") is not None or g.get("maxSize") is not None
    count = _int(g.get("count", 1), f"{path}.count", 0 if autoscaled else 1)
    limits.MAX_SIM_NODES.check(count, path=f"{path}.count", what="the node group's count")
    size = node_group_size(g, path, count)
    if size is not None:
        limits.MAX_SIM_NODES.check(size[1], path=f"{path}.maxSize", what="the node group's maxSize")
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
            cfg = KubeletConfiguration.from_dict(g["kubeletConfig"], st.kubernetes_version,
                                                 warn_prefix=f"{path}.kubeletConfig")
        except InputError as exc:
            exc.file = None
            raise exc.within(f"{path}.kubeletConfig") from None
    elif g.get("kubeletConfigFile"):
        from ..model.loader import load_one

        doc = load_one(root / str(g["kubeletConfigFile"]), "KubeletConfiguration")
        cfg = KubeletConfiguration.from_dict(doc.obj, st.kubernetes_version, file=doc.where)
        raw_cfg = dict(doc.obj)
    elif machine is not None:
        cfg = KubeletConfiguration.from_dict(None, st.kubernetes_version)
    if cfg is not None and machine is None:
        _kubelet_without_machine(cfg, path)
    labels = g.get("labels") or {}
    gpus = g.get("gpus") or {}
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
    if g.get("taints") is not None:  # core/v1 Taints, decoded strictly as a Node's spec.taints
        check(g["taints"], list_of(type_spec("io.k8s.api.core.v1.Taint")), prefix=f"{path}.taints")
    extra = {str(a): str(b) for a, b in (capacity or {}).items()}
    try:
        cap, alloc = node_resources(machine, cfg, extra, ngpu)
    except InputError as exc:
        exc.file = None
        raise exc.within(path) from None
    devices = None
    if g.get("devices") is not None:   # device plugins (kubetwin/sim/device_plugins.py)
        from .device_plugins import device_resources, parse_devices

        if g.get("runtime") is not None:
            raise InputError("device plugins together with a runtime resource policy are not modelled by kubetwin",
                             path=f"{path}.devices")
        devices = parse_devices(g["devices"], f"{path}.devices", root, machine)
        dev_cap, dev_alloc = device_resources(devices)
        cap, alloc = {**cap, **dev_cap}, {**alloc, **dev_alloc}
    if machine is not None and cfg is not None:
        _check_kubelet_starts(machine, cfg, f"{path}.kubeletConfig", devices)
    from ..model.features import gates_for
    from .disk import parse_disk

    disk = parse_disk(g.get("disk"), f"{path}.disk",   # the gates its kubelet runs with
                      cfg.feature_gate_values if cfg is not None else gates_for(st.kubernetes_version, st.feature_gates))
    blockio = None
    if g.get("blockio") is not None:   # goresctrl Block I/O classes (kubetwin/sim/blockio.py)
        from .blockio import parse_node_group_blockio

        blockio = parse_node_group_blockio(g["blockio"], f"{path}.blockio", root, machine, disk)
    runtime = None
    if g.get("runtime") is not None:
        from .runtime_policies import parse_node_group_runtime

        if machine is None:
            raise InputError("Required value: machine (a runtime policy places containers on the machine's CPUs)",
                             path=f"{path}.machine")
        runtime = parse_node_group_runtime(g["runtime"], f"{path}.runtime", root)
        if cfg is not None:
            from .runtime_policies import check_starts

            check_starts(machine, cfg, runtime, f"{path}.runtime")
    out = []
    for k in range(max(count, 1)):
        node_name = f"{name}-{k}"
        lab = {"kubernetes.io/hostname": node_name, "kubernetes.io/os": "linux", **{str(a): str(b) for a, b in labels.items()}}
        if zones:
            lab["topology.kubernetes.io/zone"] = str(zones[k % len(zones)])
        if model:
            lab.setdefault(GPU_MODEL, model)
        obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node_name, "labels": lab},
                               "spec": {"taints": copy.deepcopy(g.get("taints") or [])}}
        obj["status"] = {"capacity": dict(cap), "allocatable": dict(alloc)}
        try:
            node = node_from_dict(obj, checked=True)  # made here; its taints checked above
        except InputError as exc:
            exc.file = None
            raise exc.within(path) from None
        if k == 0:
            check_amounts(node.status.capacity, f"{path}.capacity")
        sn = SimNode(node, name, machine, cfg, ngpu, model, raw_cfg or {}, extra_capacity=extra, disk=disk,
                     runtime=runtime, devices=devices, blockio=blockio)
        for d in drivers:
            sn.slices.extend(_publish(machine, d, node_name))
        out.append(sn)
    if size is not None:
        from .autoscaling_config import Autoscaling, NodeGroupSize

        if ngpu:
            raise InputError("the Cluster Autoscaler is not modelled for node groups with GPU-share GPUs",
                             path=f"{path}.maxSize", fix="autoscale a node group without gpus (draDrivers work)")
        if sc is None:
            raise InputError("minSize/maxSize are read in a Simulation's nodeGroups only", path=f"{path}.maxSize")
        if sc.autoscaling is None:
            sc.autoscaling = Autoscaling()
        sc.autoscaling.groups[name] = NodeGroupSize(name, size[0], size[1], out[0], tuple(drivers))
    return out[:count]


def _check_kubelet_starts(machine: Any, cfg: Any, path: str, devices: Any = None) -> None:
    """Start the group's kubelet once now (the run reuses it): a configuration its managers
    refuse on this machine (reserved CPUs past the machine, a memory reservation it does not
    have) is an error of the scenario, named as such, before the run."""
    from .kubelets import template_for

    try:
        template_for(machine, cfg, devices)
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


def _exists(p: Path) -> bool:
    """``Path.exists`` that answers False where the OS refuses the name itself (a value too long
    to be a path, ENAMETOOLONG): such a value names no file, so it is judged as a spec."""
    try:
        return p.exists()
    except OSError:
        return False


def _machine(src: Any, path: str, root: Path) -> Any:
    from ..machine import load_machine

    if not isinstance(src, str) or not src:
        raise InputError("expected a machine source: a spec like 2s2n8c2t, or a path", path=path)
    candidate = root / src
    if _exists(candidate):
        src = str(candidate)
    elif src.startswith("hwloc:"):
        src = str(Path(__file__).parent / "default" / "machines" / src.split(":", 1)[1])
    try:
        return load_machine(src)
    except InputError as exc:
        if not _exists(Path(src)):  # a spec or a missing path: the scenario's value is at fault, not a file
            exc.file = None
        raise exc.within(path) from None


def node_resources(machine: Any, cfg: Any, extra: Mapping[str, str],
                   gpus: int = 0) -> tuple[dict[str, str], dict[str, str]]:
    """A node's ``status.capacity`` and ``status.allocatable`` as its kubelet reports them.

    With a machine: the kubelet's capacity (cpu, memory, hugepages, pods) and allocatable
    (``kubeReserved``, ``systemReserved``, hard eviction), then the group's ``capacity`` entries on
    top of both. Without one: the group's ``capacity`` (``pods`` defaulting to ``maxPods``), and
    allocatable from the kubelet configuration when the group has one, else the same. GPUs of
    open-gpu-share's device plugin are added to both."""
    from ..kubelet.admission import effective_config, node_capacity

    if machine is not None and cfg is not None:
        cfg = effective_config(cfg)
        cap = node_capacity(machine, cfg)
        alloc = cfg.node_allocatable(cap)
        out_cap = {k: str(v) for k, v in cap.items()}
        out_alloc = {k: str(v) for k, v in alloc.items()}
        for k, v in extra.items():
            out_cap[k] = out_alloc[k] = v
    else:
        out_cap = dict(extra)
        out_cap.setdefault("pods", str(cfg.max_pods if cfg is not None else 110))
        if cfg is not None:
            out_alloc = {k: str(v) for k, v in effective_config(cfg).node_allocatable(out_cap).items()}
        else:
            out_alloc = dict(out_cap)
    if gpus:
        out_cap[GPU_COUNT] = out_alloc[GPU_COUNT] = str(gpus)   # open-gpu-share's device plugin resource
    return out_cap, out_alloc


def _kubelet_without_machine(cfg: Any, path: str) -> None:
    """A node group without hardware gets no kubelet admission: its resource managers' settings
    would be read and not acted on."""
    from ..diagnostics import not_modelled

    for field_, value, default in (("cpuManagerPolicy", cfg.cpu_manager_policy, "none"),
                                   ("memoryManagerPolicy", cfg.memory_manager_policy, "None"),
                                   ("topologyManagerPolicy", cfg.topology_manager_policy, "none")):
        if value != default:
            not_modelled(f"{path}.kubeletConfig.{field_}",
                         why="kubelet admission (Topology, CPU and Memory Managers) needs the node group's machine")


def _workload(sc: Scenario, w: Any, path: str) -> None:
    import random

    if not isinstance(w, Mapping):
        raise InputError("expected a workload mapping", path=path)
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
    check_builtin(tmpl, "v1", "Pod", prefix=f"{path}.template")  # as written: defaults added below are ours
    try:
        base = _pod_dict(tmpl, name)
    except InputError as exc:
        raise exc.within(path) from None
    if w.get("priorityClassName"):
        base["spec"]["priorityClassName"] = str(w["priorityClassName"])
    check = _decode_pod(copy.deepcopy(base) | {"metadata": {**base["metadata"], "name": f"{name}-0"}},
                        f"{path}.template")
    try:
        check_pod_amounts(check, None)
    except InputError as exc:
        raise exc.within(f"{path}.template") from None
    not_modelled_pod(base, None, prefix=f"{path}.template", reader=SIMULATION)
    check_usage_against_pod(usage, check, f"{path}.usage")
    _check_blockio(sc, check, None, f"{path}.template")
    del check
    spec: Any = None
    for k, t in enumerate(times):
        obj = copy.deepcopy(base)
        obj["metadata"]["name"] = f"{name}-{k}"
        obj["metadata"]["uid"] = f"{obj['metadata'].get('namespace', 'default')}/{name}-{k}"
        pod = _decode_pod(obj, f"{path}.template")
        # the replicas of one template share one spec object, as a controller's pods share their
        # template's: admission then runs once per workload (:mod:`.admission_memo`), and the
        # caches keyed by spec identity find every replica
        if spec is None:
            spec = pod.spec
        elif pod.spec is not spec and pod.spec == spec:
            pod = msgspec.structs.replace(pod, spec=spec)
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
    """A replica of a workload template, already strictly checked (:func:`_workload`)."""
    try:
        return pod_from_dict(obj, checked=True)
    except InputError as exc:
        exc.file = None
        raise exc.within(path) from None


def arrival_times(raw: Any, count: int, path: str, rng: Any) -> list[float]:
    """``{at: 0s}`` (all at once), ``{start, interval}`` (evenly spaced) or ``{start, rate}`` (Poisson, per second)."""
    if raw is None:
        return [0.0] * count
    if not isinstance(raw, Mapping):
        raise InputError("expected {at}, {start, interval} or {start, rate}", path=path)
    _exclusive(raw, path, "at", "interval", "rate")
    if "at" in raw and "start" in raw:
        raise InputError("at and start are both given; start would be ignored", path=path,
                         fix="{at} for all at once, {start, interval} or {start, rate}")
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


_TRACE_FORMATS = ("alibaba-gpu-v2023", "pods", "manifests")


def _trace(sc: Scenario, t: Any, path: str, root: Path) -> None:
    from . import traces

    if not isinstance(t, Mapping):
        raise InputError("expected {format, path}", path=path)
    fmt = t.get("format")
    p = t.get("path")
    if not isinstance(p, str):
        raise InputError("Required value: path", path=f"{path}.path")
    full = root / p
    if fmt != "alibaba-gpu-v2023":
        for option in ("pods", "deletions", "limit"):
            if t.get(option) is not None:
                raise InputError(f"{option} applies to format alibaba-gpu-v2023 only; it would be ignored",
                                 path=f"{path}.{option}")
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
        from ..model.strict import suggest

        near = suggest(str(fmt), _TRACE_FORMATS)
        raise InputError(f'Unsupported value: "{fmt}": supported values: "alibaba-gpu-v2023", "manifests", "pods"',
                         path=f"{path}.format", fix=f'did you mean "{near}"?' if near else None)


# --- real objects ----------------------------------------------------------------------------------
def _apply_objects(sc: Scenario, docs: list[Document]) -> None:
    from ..model.policy import limit_range_from_dict, priority_class_from_dict, resource_quota_from_dict

    for doc in docs:
        obj, where = doc.obj, doc.where
        kind = obj.get("kind")
        if not isinstance(kind, str) or kind not in _SCENARIO_KINDS:
            check_object(obj, where, kinds=_SCENARIO_KINDS, what="in a scenario")
        if kind != "Simulation":
            check_object(obj, where)
        if not isinstance(kind, str):
            raise InputError(f"kind must be a string, not {type(kind).__name__}", path="kind", file=where)
        if kind in SELECTED_KINDS:   # the apps validation of the selector, as plan does
            check_controller_selector(obj, where)
        if kind == "Pod":
            pod = pod_from_dict(obj, where, checked=True)
            check_pod_amounts(pod, where)
            not_modelled_pod(obj, where, reader=SIMULATION)
            t, d = _timing(obj, where)
            sc.arrivals.append(Arrival(t, pod, d.sample(_rng(sc, pod.name)), None, where, _usage(obj, where, pod)))
            _check_blockio(sc, pod, where)
        elif kind == "Node":
            node = node_from_dict(obj, where, checked=True)
            check_node_amounts(node, where)
            sc.nodes.append(SimNode(node, "nodes"))
        elif kind == "PriorityClass":
            pc = priority_class_from_dict(obj, where, checked=True)
            sc.priority_classes[pc.name] = pc
        elif kind in _CONTROLLERS:
            not_modelled_object(obj, where)
            sc.controllers.append(_controller(obj, where, sc))
            _check_blockio(sc, sc.controllers[-1].template, where, "spec.template")
        elif kind == "KubeSchedulerConfiguration":
            sc.profile = parse_scheduler_config(obj, where)
        elif kind == "Simulation":
            raise InputError("a Simulation object may only be given once, in the scenario", path="kind", file=where)
        else:
            if kind == "LimitRange":  # the admission controllers' objects: their values too, naming the file
                limit_range_from_dict(obj, where, checked=True)
            elif kind == "ResourceQuota":
                resource_quota_from_dict(obj, where, checked=True)
            elif kind == "DaemonSet":   # its pod template: amounts as for every pod
                from .daemonset_controller import check_daemon_set

                check_daemon_set(obj, where)
            not_modelled_object(obj, where)
            sc.objects.setdefault(kind, []).append(obj)
            sc.origins.setdefault(kind, []).append(where)


def _rng(sc: Scenario, name: str) -> Any:
    import random

    return random.Random(f"{sc.settings.seed}/{name}")


def _usage(obj: Mapping[str, Any], where: str, pod: Pod | None = None) -> Any:
    ann = (obj.get("metadata") or {}).get("annotations") or {}
    if USAGE not in ann:
        return None
    try:
        usage = parse_usage(ann[USAGE], f"metadata.annotations[{USAGE}]")
        if pod is not None:
            check_usage_against_pod(usage, pod, f"metadata.annotations[{USAGE}]")
        return usage
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
    pod_spec = dict(_mapping(tmpl.get("spec"), "spec.template.spec", where))
    if kind == "Job":
        pod_spec.setdefault("restartPolicy", "Never")
    pod_obj = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {**(tmpl.get("metadata") or {}), "name": f"{name}-template", "namespace": ns},
               "spec": pod_spec}
    not_modelled_pod(pod_obj, where, prefix="spec.template", reader=SIMULATION)
    try:
        template = pod_from_dict(pod_obj, checked=True)  # checked with its controller
        check_pod_amounts(template, None)
    except InputError as exc:
        exc.file = None
        raise exc.within("spec.template").in_file(where) from None
    if kind != "Job" and d is FOREVER:
        d = FOREVER
    from .load import load_of

    c = Controller(f"{kind}/{ns}/{name}", kind, template, replicas, completions, backoff, t, d,
                   sc.settings.max_recreations, meta={"name": name, "namespace": ns,
                                                      "selector": (spec.get("selector") or {}),
                                                      "owner": _controller_ref(meta), "object": obj},
                   usage=_usage(obj, where, template), load=load_of(obj, where))
    if kind == "StatefulSet":   # its controller (:mod:`.statefulset_loop`) reads the set's identity and policy
        from .statefulset import check_statefulset, statefulset_spec

        try:
            check_statefulset(obj)
        except InputError as exc:
            raise exc.in_file(where) from None
        c.meta["statefulset"] = statefulset_spec(obj)
    if kind == "Job":  # a Job part done (a snapshot, an end state): only its remaining completions run
        c.succeeded, c.failed = _job_counts(obj.get("status"), where)
    return c


def _job_counts(status: Any, where: str) -> tuple[int, int]:
    """``status.succeeded`` and ``status.failed`` of a Job (0 when absent): the pods the Job
    controller counts as done, which it does not create again."""
    if status is None:
        return 0, 0
    st = _mapping(status, "status", where)
    try:
        return (_int(st.get("succeeded", 0) or 0, "status.succeeded"),
                _int(st.get("failed", 0) or 0, "status.failed"))
    except InputError as exc:
        raise exc.in_file(where) from None


def _controller_ref(meta: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kind, name) of the object's managing controller (``metav1.GetControllerOf``)."""
    for ref in meta.get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return str(ref.get("kind")), str(ref.get("name"))
    return None


def _adopt(sc: Scenario) -> None:
    """Pods of the scenario whose controller is one of its controllers count as that
    controller's pods, so it creates only the replicas missing (a snapshot's running pods are not
    created twice). A ReplicaSet managed by a Deployment of the scenario is that Deployment's:
    the Deployment is the controller played, the ReplicaSet's pods are its pods."""
    by_key = {c.key: c for c in sc.controllers}
    alias: dict[str, str] = {}
    kept = []
    for c in sc.controllers:
        ref = c.meta.get("owner")
        parent = f"{ref[0]}/{c.meta['namespace']}/{ref[1]}" if ref else None
        if c.kind == "ReplicaSet" and ref and ref[0] == "Deployment" and parent in by_key:
            alias[c.key] = parent
        else:
            kept.append(c)
    sc.controllers = kept
    by_key = {c.key: c for c in kept}
    for i, a in enumerate(sc.arrivals):
        if a.owner is not None:
            continue
        refs = [r for r in a.pod.metadata.owner_references if r.controller]
        if not refs:
            continue
        key = f"{refs[0].kind}/{a.pod.metadata.namespace}/{refs[0].name}"
        owner = by_key.get(alias.get(key, key))
        if owner is None:
            continue
        if owner.kind == "StatefulSet" and not _stateful_member(owner, a.pod):
            continue
        owner.created += 1
        owner.active += 1
        sc.arrivals[i] = replace(a, owner=owner.key)


def _check_blockio(sc: Scenario, pod: Pod, file: str | None, prefix: str = "") -> None:
    """A Block I/O class annotated on a pod must be one some node group defines (kubetwin/sim/blockio.py)."""
    if pod.metadata.annotations:
        from .blockio import check_pod_classes

        check_pod_classes(sc, pod, file, prefix)


def _stateful_member(c: Controller, pod: Pod) -> bool:
    """``isMemberOf``: a StatefulSet claims only pods named ``<set>-<ordinal>`` (others it releases)."""
    from .statefulset import parent_and_ordinal

    parent, ordinal = parent_and_ordinal(pod.name)
    return parent == c.meta["name"] and ordinal >= 0


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
    _adopt(sc)
    sc.arrivals.sort(key=lambda a: a.time)
    from .autoscaling_config import resolve_autoscalers

    resolve_autoscalers(sc)


# --- for other readers of scenario parts (``kubetwin plan``: node types, a workload without a Simulation) ---
def node_group(g: Any, path: str, root: Path, st: Settings) -> list[SimNode]:
    """The nodes of one ``spec.nodeGroups`` entry (strict, as in a Simulation)."""
    return _node_group(g, path, root, st)


def dra_driver(d: Any, path: str, st: Settings) -> DRADriver:
    """One ``draDrivers`` entry of a node group."""
    return _dra_driver(d, path, st)


def publish_slices(machine: Any, d: DRADriver, node: str) -> list[dict[str, Any]]:
    """The ResourceSlices driver ``d`` publishes for ``node`` on ``machine``."""
    return _publish(machine, d, node)


def scenario_from_documents(sc: Scenario, docs: list[Document]) -> Scenario:
    """``sc`` (its nodes and settings set) with the Kubernetes objects of ``docs`` applied and
    finished as :func:`load_scenario` finishes a scenario: default profile, unique names,
    controllers adopting their pods."""
    _apply_objects(sc, docs)
    if sc.profile is None:
        sc.profile = parse_scheduler_config(None)
    _finish(sc)
    return sc
