"""Block I/O classes in ``simulate``: the runtime's goresctrl classes acting on the simulated disk.

A node group names its goresctrl ``blockio`` configuration (the file containerd's
``blockio_config_file`` names, the one ``kubetwin runtime --blockio`` reads) and its block devices::

    nodeGroups:
    - name: workers
      disk: {nodefs: 100Gi, ioBandwidth: 200Mi}   # the bandwidth of the first device below
      blockio:
        config: blockio.yaml                      # goresctrl pkg/blockio: Classes
        devices:                                  # what /sys/block shows (default: the machine's disk_map)
        - {name: sda, major: 8, minor: 0, scheduler: bfq}
        - {name: nvme0n1, major: 259, minor: 0, links: [/dev/disk/by-id/nvme-a]}

Every container the node's runtime creates gets the class containerd gives it
(:func:`kubetwin.runtime.blockio.blockio_class_choice`: ``blockio.resources.beta.kubernetes.io/
container.NAME``, else ``.../pod``), unless an NRI plugin of the node group's runtime policy
adjusts it (nri-plugins' resource manager with ``control.blockio.enable``: the
``blockioclass.resource-policy.nri.io`` annotation, or the pod's QoS class with
``usePodQoSAsDefaultClass``): ``""`` clears the class. A class the configuration does not define
fails the container (``CreateContainerError``: ``no OCI BlockIO parameters for class``; an NRI
class: ``failed to adjust BlockIO class in OCI Spec: ...``), and the pod fails as for any runtime
refusal in ``simulate`` (:mod:`.runtime_policies`). A class no node group defines is refused
when the scenario is read, with the annotation's path.

The class becomes the cgroup v2 lines runc writes (:func:`kubetwin.runtime.blockio.io_files`:
``io.bfq.weight`` when a device uses BFQ, else ``io.weight``; ``io.max`` per device), and those
lines act on the simulated disk — the **first** device of the list, the one ``disk.ioBandwidth``
describes (:mod:`.io_psi`):

* the weight: on a BFQ device the class's ``io.bfq.weight`` (its device line, else ``default``),
  else its ``io.weight`` ``default``; 100 (the default of both) for containers without a class or
  whose class writes none for that controller;
* ``io.max`` ``rbps`` / ``wbps``: the reads (writes) a container wants are capped there; what is
  cut waits (blk-throttle holds the bios: ``io.pressure`` some and full), even on an idle disk.
  A container's ``io`` curve is half reads, half writes unless given split
  (``io: {read: CURVE, write: CURVE}``, :mod:`.usage`);
* ``riops`` / ``wiops`` on the simulated device cannot act (the model has bytes, no requests):
  such a class is refused when the scenario is read. Limits on the other devices are written
  (and reported) but carry no simulated I/O.

Node groups without ``blockio`` behave as before: no classes (``io.weight`` 100 for all), class
annotations unread.

Not an upstream module: kubetwin's glue between the goresctrl classes (:mod:`kubetwin.runtime.blockio`,
intel/goresctrl ``pkg/blockio``; containerd ``internal/cri/server/container_create_linux.go``;
containerd/nri ``pkg/runtime-tools/generate`` ``AdjustBlockIOClass``) and its I/O contention model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import InputError
from ..model.strict import INTEGER, STRING, check, list_of, obj, suggest
from ..runtime.blockio import (
    BLOCKIO_POD_ANNOTATION,
    BLOCKIO_POD_ANNOTATION_CONTAINER_PREFIX,
    BlockDevice,
    BlockIOConfig,
    bfq_loaded,
    block_devices,
    blockio_class_choice,
    io_files,
    load_blockio_config,
)
from ..runtime.classes import annotation_path
from .cfs import fair_share
from .stall_psi import Stall

if TYPE_CHECKING:
    from .loop import SimPod, Simulator
    from .scenario import Scenario

#: the node group's ``blockio`` field (strict)
SPEC = obj(config=STRING, devices=list_of(obj(name=STRING, major=INTEGER, minor=INTEGER, scheduler=STRING,
                                               links=list_of(STRING))))
#: the I/O schedulers of /sys/block/NAME/queue/scheduler
SCHEDULERS = ("bfq", "mq-deadline", "kyber", "none")
#: cgroup v2 default of both ``io.weight`` and ``io.bfq.weight``
DEFAULT_WEIGHT = 100
#: a container without a class, in the per-class figures
NO_CLASS = "(no class)"


@dataclass(frozen=True)
class ClassIO:
    """What one class writes on a node and what of it acts on the simulated disk."""

    name: str
    files: Mapping[str, str]
    notes: tuple[str, ...]
    weight: int                 # on the simulated disk, in its controller's units
    rbps: int | None            # io.max on the simulated disk (None: max)
    wbps: int | None

    def io_max(self, disk: BlockDevice) -> str:
        for line in (self.files.get("io.max") or "").splitlines():
            if line.startswith(f"{disk.number} "):
                return line
        return ""


@dataclass(frozen=True)
class NodeBlockIO:
    """A node group's Block I/O configuration resolved against its devices."""

    config: BlockIOConfig
    devices: tuple[BlockDevice, ...]
    file: str
    classes: Mapping[str, ClassIO] = field(default_factory=dict)

    @property
    def disk(self) -> BlockDevice:
        return self.devices[0]


def _device(raw: Any, path: str) -> BlockDevice:
    if not isinstance(raw, Mapping):
        raise InputError("expected {name, major, minor, scheduler, links}", path=path)
    name = raw.get("name")
    if not isinstance(name, str) or not name.removeprefix("/dev/"):
        raise InputError("Required value: name (the device's name in /sys/block, or its /dev path)", path=f"{path}.name")
    name = name.removeprefix("/dev/")
    if "/" in name:
        raise InputError(f"Invalid value: {raw['name']!r}: a whole-disk device, /dev/NAME or NAME",
                         path=f"{path}.name", fix="list other paths of the device (by-id, ...) under links")
    nums = []
    for k in ("major", "minor"):
        v = raw.get(k)
        if v is None:
            raise InputError(f"Required value: {k} (the device number, as in /sys/block/{name}/dev)",
                             path=f"{path}.{k}")
        if v < 0 or v > (1 << 20):
            raise InputError(f"Invalid value: {v}: must be between 0 and {1 << 20}", path=f"{path}.{k}")
        nums.append(int(v))
    scheduler = raw.get("scheduler", "mq-deadline")
    if scheduler not in SCHEDULERS:
        near = suggest(str(scheduler), SCHEDULERS)
        raise InputError(f'Unsupported value: "{scheduler}": supported values: '
                         + ", ".join(f'"{s}"' for s in SCHEDULERS), path=f"{path}.scheduler",
                         fix=f'did you mean "{near}"?' if near else None)
    links = tuple(str(x) for x in raw.get("links") or ())
    return BlockDevice(name, nums[0], nums[1], scheduler, 0, links)


def parse_node_group_blockio(raw: Any, path: str, root: Path, machine: Any, disk: Any) -> NodeBlockIO | None:
    """A node group's ``blockio: {config, devices}``: read, resolved and checked now."""
    if raw is None:
        return None
    check(raw, SPEC, prefix=path)
    if not isinstance(raw, Mapping):
        raise InputError("expected {config: FILE, devices: [{name, major, minor, scheduler}]}", path=path)
    if not raw.get("config"):
        raise InputError("Required value: config (a goresctrl blockio configuration file)", path=f"{path}.config")
    if disk is None or disk.io_bandwidth is None:
        raise InputError("Block I/O classes act on the simulated disk: the node group needs disk.ioBandwidth",
                         path=path, fix="give disk: {nodefs: SIZE, ioBandwidth: BYTES_PER_SECOND}")
    if raw.get("devices") is not None:
        devices = tuple(_device(d, f"{path}.devices[{k}]") for k, d in enumerate(raw["devices"]))
        seen: dict[str, int] = {}
        for k, d in enumerate(devices):
            for key in (d.name, d.number):
                if key in seen:
                    raise InputError(f"Duplicate value: {key!r} (also devices[{seen[key]}])",
                                     path=f"{path}.devices[{k}]")
                seen[key] = k
    else:
        devices = block_devices(machine) if machine is not None else ()
    if not devices:
        raise InputError("Required value: devices (the node's block devices: the first is the simulated disk); "
                         "the machine description lists none", path=f"{path}.devices")
    if not (root / str(raw["config"])).is_file():
        raise InputError(f"no such file: {root / str(raw['config'])}", path=f"{path}.config",
                         fix="the path is relative to the scenario's folder")
    config = load_blockio_config(root / str(raw["config"]))
    node = NodeBlockIO(config, devices, config.file or str(raw["config"]))
    classes = {name: _class_io(node, name) for name in config.class_names()}
    return NodeBlockIO(config, devices, node.file, classes)


def _class_io(node: NodeBlockIO, name: str) -> ClassIO:
    """A class's lines on the node's devices and what of them acts on the simulated disk."""
    config, disk = node.config, node.disk
    params = config.parameters(name, node.devices)
    dev = (disk.major, disk.minor)
    for rows, field_name in ((params.throttle_read_iops_device, "ThrottleReadIOPS"),
                             (params.throttle_write_iops_device, "ThrottleWriteIOPS")):
        if any((a, b) == dev for a, b, _ in rows):
            where = next((dp.path for dp in reversed(config.classes[name])
                          if dp.devices is not None and getattr(dp, _FIELDS[field_name]) != -1), f"Classes.{name}")
            raise InputError(f"{field_name} on the simulated disk {disk.node} ({disk.number}) is not modelled by "
                             "kubetwin: its I/O model has bytes per second, no requests", path=f"{where}.{field_name}",
                             file=node.file, fix="throttle by ThrottleReadBps / ThrottleWriteBps, or drop the IOPS limit")
    out = io_files(params.oci(), bfq=bfq_loaded(node.devices))
    files = out.files
    weight = DEFAULT_WEIGHT
    if disk.scheduler == "bfq":
        lines = (files.get("io.bfq.weight") or "").splitlines()
        mine = [ln.split()[1] for ln in lines if ln.startswith(f"{disk.number} ")]
        default = [ln.split()[1] for ln in lines if ln.startswith("default ")]
        if mine or default:
            weight = int((mine or default)[0])
    elif files.get("io.weight"):
        weight = int(files["io.weight"].split()[1])
    caps: dict[str, int | None] = {"rbps": None, "wbps": None}
    for line in (files.get("io.max") or "").splitlines():
        number, _, rest = line.partition(" ")
        if number != disk.number:
            continue
        for item in rest.split():
            k, _, v = item.partition("=")
            if k in caps and v != "max":
                caps[k] = int(v)
    return ClassIO(name, dict(files), out.notes, weight, caps["rbps"], caps["wbps"])


_FIELDS = {"ThrottleReadIOPS": "throttle_read_iops", "ThrottleWriteIOPS": "throttle_write_iops"}


# --- the scenario's pods ----------------------------------------------------------------------------
def check_pod_classes(sc: "Scenario", pod: Any, file: str | None, prefix: str = "") -> None:
    """A class no node group's configuration defines is refused when the scenario is read, with
    the annotation's path; one only some groups define fails the container on the others, during
    the run (as containerd does)."""
    ann = {k: v for k, v in pod.metadata.annotations.items()
           if k == BLOCKIO_POD_ANNOTATION or k.startswith(BLOCKIO_POD_ANNOTATION_CONTAINER_PREFIX)}
    if not ann:
        return
    configs = {id(n.blockio): n.blockio for n in sc.nodes if getattr(n, "blockio", None) is not None}
    if not configs:
        return   # no node group reads the annotations (as before Block I/O classes in simulate)
    known = sorted({c for b in configs.values() for c in b.config.class_names()})
    names = [c.name for c, _ in pod.all_containers()]
    for key in ann:
        ctr = key.removeprefix(BLOCKIO_POD_ANNOTATION_CONTAINER_PREFIX)
        if key != BLOCKIO_POD_ANNOTATION and ctr not in names:
            from ..diagnostics import warn

            near = suggest(ctr, names)
            at = f'metadata.annotations["{key}"]'
            warn(InputError(f'no container "{ctr}" in the pod: the annotation applies to nothing',
                            path=f"{prefix}.{at}" if prefix else at, file=file,
                            fix=f'did you mean "container.{near}"?' if near else None))
    for c, _ in pod.all_containers():
        choice = blockio_class_choice(c.name, ann)
        if choice.name and choice.name not in known:
            near = suggest(choice.name, known)
            path = annotation_path(choice)
            raise InputError(f"no OCI BlockIO parameters for class \"{choice.name}\": no node group's Block I/O "
                             "configuration defines it", path=f"{prefix}.{path}" if prefix else path, file=file,
                             fix=f'did you mean "{near}"?' if near else f"one of: {', '.join(known)}")


# --- during the run ---------------------------------------------------------------------------------
@dataclass
class _ClassFigures:
    weight: int
    io_max: str
    containers: int = 0
    throttled_seconds: float = 0.0     # container-seconds in which io.max cut what it wanted
    throttled_bytes: float = 0.0       # bytes io.max held back
    contended_bytes: float = 0.0       # bytes the saturated disk did not serve

    def to_json(self, name: str) -> dict[str, Any]:
        return {"class": name, "weight": self.weight, "ioMax": self.io_max, "containers": self.containers,
                "throttledSeconds": round(self.throttled_seconds, 3), "throttledBytes": round(self.throttled_bytes),
                "contendedBytes": round(self.contended_bytes)}


class BlockIOClasses:
    """Every container's Block I/O class on the nodes whose group has a configuration."""

    def __init__(self, sim: "Simulator"):
        if not sim.sc.settings.kubelet_admission:
            raise InputError("kubeletAdmission is false but a node group has a Block I/O configuration: containers "
                             "reach the runtime only through the kubelet", file=sim.sc.source or None,
                             path="spec.kubeletAdmission", fix="set kubeletAdmission: true, or drop blockio")
        self.sim = sim
        #: per pod UID: node index and (container, class or None, origin) of its containers
        self.running: dict[str, tuple[int, tuple[tuple[str, str | None, str], ...]]] = {}
        #: per pod key: its containers' classes and cgroup lines (the results' per-pod output)
        self.pods: dict[str, list[dict[str, Any]]] = {}
        #: per node name: class -> figures
        self.figures: dict[str, dict[str, _ClassFigures]] = {}

    def node(self, i: int) -> NodeBlockIO | None:
        return getattr(self.sim.sim_nodes[i], "blockio", None)

    def create_containers(self, i: int, sp: "SimPod", kubelet: Any) -> tuple[str, str] | None:
        """Below the kubelet that admitted ``sp`` on node ``i``: containerd's class, then the node's
        NRI runtime policy (which may set another); the failure (reason, message) or None."""
        sim = self.sim
        failed = self.create(i, sp, kubelet)
        if failed is not None:
            return failed
        if kubelet is not None and sim.runtime is not None and sim.sim_nodes[i].runtime is not None:
            failed = sim.runtime.start(i, sp, kubelet)
            if failed is None:
                failed = self.adjusted(i, sp, kubelet)
        elif kubelet is not None:
            sim._record_allocation(sp, kubelet)
        if failed is None:
            self.started(i, sp)
        else:
            self.running.pop(sp.pod.uid, None)
        return failed

    def create(self, i: int, sp: "SimPod", kubelet: Any) -> tuple[str, str] | None:
        """containerd's ``CreateContainer`` for each container of ``sp`` on node ``i``: the class
        from the annotations; a class the node's configuration lacks fails the pod (the kubelet
        releases it)."""
        nb = self.node(i)
        if nb is None:
            return None
        from .usage import curve_containers

        out = []
        for c, _ in curve_containers(sp.pod):
            choice = blockio_class_choice(c.name, sp.pod.metadata.annotations)
            if choice.name and choice.name not in nb.classes:
                self._release(i, sp, kubelet)
                return "CreateContainerError", f"no OCI BlockIO parameters for class \"{choice.name}\""
            out.append((c.name, choice.name or None, "annotation" if choice.name else ""))
        self.running[sp.pod.uid] = (i, tuple(out))
        return None

    def adjusted(self, i: int, sp: "SimPod", kubelet: Any) -> tuple[str, str] | None:
        """After the node's NRI plugins created the containers: a class they set (``""`` clears it)."""
        nb = self.node(i)
        got = self.running.get(sp.pod.uid)
        rt = self.sim.runtime
        if nb is None or got is None or rt is None:
            return None
        rows: dict[str, dict[str, Any]] = {}
        for r in reversed(rt.placed):   # the pod's rows were just appended, one per container
            if r.get("pod") != sp.pod.key:
                break
            rows.setdefault(r["container"], r)
        out = []
        for name, cls, origin in got[1]:
            row = rows.get(name)
            if row is not None and "blockioClass" in row:
                new = row["blockioClass"]
                if new and new not in nb.classes:
                    rt.stop(i, sp)
                    self._release(i, sp, kubelet)
                    return ("CreateContainerError", "failed to adjust BlockIO class in OCI Spec: no OCI BlockIO "
                            f"parameters for class \"{new}\"")
                cls, origin = (new or None), ("policy" if new else "")
            out.append((name, cls, origin))
        self.running[sp.pod.uid] = (i, tuple(out))
        return None

    def started(self, i: int, sp: "SimPod") -> None:
        """The pod runs: its classes and cgroup lines into the per-pod output."""
        got = self.running.get(sp.pod.uid)
        nb = self.node(i)
        if got is None or nb is None:
            return
        rows = []
        node = self.sim.cluster.names[i]
        figures = self.figures.setdefault(node, {})
        for name, cls, origin in got[1]:
            ci = nb.classes.get(cls) if cls else None
            row: dict[str, Any] = {"container": name, "node": node, "blockioClass": cls}
            if ci is not None:
                row["origin"] = origin
                row["files"] = dict(ci.files)
                if ci.notes:
                    row["notes"] = list(ci.notes)
            rows.append(row)
            f = figures.get(cls or NO_CLASS)
            if f is None:
                f = figures[cls or NO_CLASS] = _ClassFigures(ci.weight if ci else DEFAULT_WEIGHT,
                                                             ci.io_max(nb.disk) if ci else "")
            f.containers += 1
        self.pods[sp.pod.key] = rows

    def forget(self, sp: "SimPod") -> None:
        self.running.pop(sp.pod.uid, None)

    def _release(self, i: int, sp: "SimPod", kubelet: Any) -> None:
        self.running.pop(sp.pod.uid, None)
        if kubelet:
            kubelet.remove(sp.pod)
            if self.sim.nrt is not None:
                self.sim.nrt.state_changed(i)

    # --- the disk -----------------------------------------------------------------------------------
    def stalls(self, i: int, rows: list["SimPod"], t: float, bandwidth: int) -> tuple[list[Stall], float]:
        """The interval's I/O stalls on node ``i``: weights and ``io.max`` of each container's class."""
        nb = self.node(i)
        assert nb is not None
        wants = []
        for sp, name, read, write in io_wants_split(rows, t):
            got = self.running.get(sp.pod.uid)
            cls = next((c for n, c, _ in got[1] if n == name), None) if got is not None else None
            wants.append(Want(sp, name, read, write, nb.classes.get(cls) if cls else None))
        stalls, full, per = class_stalls(bandwidth, wants)
        figures = self.figures.setdefault(self.sim.cluster.names[i], {})
        dt = self.sim.sc.settings.sample_interval
        for w, (throttled, contended) in zip(wants, per):
            if throttled <= 0 and contended <= 0:
                continue
            key = w.cls.name if w.cls is not None else NO_CLASS
            f = figures.get(key)
            if f is None:
                f = figures[key] = _ClassFigures(w.cls.weight if w.cls else DEFAULT_WEIGHT,
                                                 w.cls.io_max(nb.disk) if w.cls else "")
            if throttled > 0:
                f.throttled_seconds += dt
                f.throttled_bytes += throttled * dt
            f.contended_bytes += contended * dt
        return stalls, full

    def result(self) -> dict[str, Any]:
        """``blockio`` of the results: per pod its containers' classes and lines; per node and class
        the weight, the ``io.max`` line of the simulated disk and what throttling and contention cost."""
        nodes = {}
        for i, sn in enumerate(self.sim.sim_nodes):
            nb = getattr(sn, "blockio", None)
            name = self.sim.cluster.names[i]
            if nb is None or name not in self.figures:
                continue
            nodes[name] = {"disk": {"name": nb.disk.name, "device": nb.disk.number, "scheduler": nb.disk.scheduler},
                           "classes": [f.to_json(k) for k, f in sorted(self.figures[name].items())]}
        return {"pods": dict(sorted(self.pods.items())), "nodes": nodes}


# --- the model -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Want:
    """One container's I/O wish at a sample, and its class on the node (None: none)."""

    sp: Any
    container: str
    read: float
    write: float
    cls: ClassIO | None


def io_wants_split(rows: list["SimPod"], t: float) -> list[tuple["SimPod", str, float, float]]:
    """(pod, container, reads, writes in bytes/s) of every running container; a container
    without an ``io`` curve wants nothing (it still counts against the node's ``full``); an
    ``io`` curve not given split is half reads, half writes."""
    from .usage import _pick, curve_containers

    out = []
    for sp in rows:
        u = sp.usage
        for c, lead in curve_containers(sp.pod):
            if u is None or not u.io:
                out.append((sp, c.name, 0.0, 0.0))
                continue
            key = c.name if any(n == c.name for n, _ in u.io) else ("" if lead else None)
            curve = _pick(u.io, c.name, lead)
            if curve is None:
                out.append((sp, c.name, 0.0, 0.0))
                continue
            total = float(curve.at(t - sp.origin))
            wcurve = next((w for n, w in u.io_write if n == key), None)
            if wcurve is None:
                out.append((sp, c.name, total / 2, total / 2))
            else:
                write = min(float(wcurve.at(t - sp.origin)), total)
                out.append((sp, c.name, total - write, write))
    return out


def class_stalls(bandwidth: int, wants: list[Want]) -> tuple[list[Stall], float, list[tuple[float, float]]]:
    """Every stalled container of one node, the node-wide full share, and per container the
    bytes/s ``io.max`` held back and those the saturated disk did not serve.

    ``io.max`` first (blk-throttle sits before the scheduler): reads capped at ``rbps``, writes at
    ``wbps``; what passes is split by weight as in :func:`kubetwin.sim.io_psi.io_stalls`."""
    passed = []
    for w in wants:
        r, wr = w.read, w.write
        if w.cls is not None:
            if w.cls.rbps is not None:
                r = min(r, float(w.cls.rbps))
            if w.cls.wbps is not None:
                wr = min(wr, float(w.cls.wbps))
        passed.append(r + wr)
    if sum(passed) <= bandwidth:
        got = passed
    else:
        got = fair_share(float(bandwidth), passed,
                         [float(w.cls.weight if w.cls is not None else DEFAULT_WEIGHT) for w in wants])
    out: list[Stall] = []
    shares = []
    per = []
    for w, p, g in zip(wants, passed, got):
        want = w.read + w.write
        share = max(0.0, min(1.0, 1.0 - g / want)) if want > 0 else 0.0
        shares.append(share)
        per.append((want - p, p - g))
        if share > 0:
            parts = []
            if p < want:
                parts.append(f"io.max of class {w.cls.name if w.cls else ''} let {p:.0f} of {want:.0f} B/s through")
            if g < p:
                parts.append(f"disk of {bandwidth} B/s contended: got {g:.0f} B/s"
                             + (f" at weight {w.cls.weight}" if w.cls is not None else ""))
            out.append(Stall(w.sp.pod.key, w.sp.pod.uid, w.container, share, share, "; ".join(parts)))
    full = min(shares) if shares and all(w.read + w.write > 0 for w in wants) else 0.0
    return out, full, per
