"""What a pod actually uses while it runs: memory working-set and CPU curves.

Kubernetes objects say what a pod asks for, never what it uses; node pressure, evictions and
OOM kills depend on the latter. A curve is given beside the pod (a workload's ``usage``, or the
annotation ``kubetwin.io/usage`` of a Pod, Deployment, ReplicaSet or Job)::

    usage:
      memory: 2Gi                            # constant working set
      memory: [[0s, 512Mi], [10m, 6Gi]]      # points (time since the container started, bytes):
                                             # linear in between, flat after the last point
      cpu: 1500m                             # CPU the container wants (cores, as a quantity),
      cpu: [[0s, 200m], [5m, 3]]             # a curve like the memory one (kubetwin.sim.cpu)
      rootfs: [[0s, 0], [1h, 5Gi]]           # the container's writable layer (bytes)
      logs: 200Mi                            # its log files (bytes)
      pids: [[0s, 10], [10m, 900]]           # its processes and threads
      io: [[0s, 0], [5m, 80Mi]]              # bytes per second it reads and writes (kubetwin.sim.io_psi):
                                             # half reads, half writes unless split as
      io: {read: 60Mi, write: [[0s, 0], [5m, 20Mi]]}   # (either may be left out: none of it)
      emptyDir: {scratch: [[0s, 0], [5m, 3Gi]]}   # per emptyDir volume of the pod (bytes; kubetwin.sim.disk)
      containers:                            # per container (otherwise the first app container
        sidecar: {memory: 64Mi, cpu: 50m}    # carries the pod's curve)

A pod without a curve uses what it requested (its working set is its memory request, it wants
its CPU request, it writes nothing and runs no processes), so only pods with curves can push
a node into pressure.

Not an upstream module: kubetwin's own usage curves.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

from ..errors import InputError
from ..model.pod import is_sidecar
from ..model.quantity import parse_quantity
from ..model.strict import unknown_key_error
from .workload import seconds

USAGE = "kubetwin.io/usage"


@dataclass(frozen=True, slots=True)
class Curve:
    """Bytes over seconds since the container started: linear between points, flat outside."""

    times: tuple[float, ...]
    values: tuple[int, ...]

    def at(self, t: float) -> int:
        ts = self.times
        if t <= ts[0]:
            return self.values[0]
        k = bisect.bisect_right(ts, t)
        if k >= len(ts):
            return self.values[-1]
        t0, t1 = ts[k - 1], ts[k]
        v0, v1 = self.values[k - 1], self.values[k]
        return int(v0 + (v1 - v0) * (t - t0) / (t1 - t0))

    @property
    def settles_at(self) -> float:
        """After this time the curve no longer changes."""
        return self.times[-1]


@dataclass(frozen=True, slots=True)
class Usage:
    """Curves per container name; ``""`` is the pod's own curve (its first app container).
    Memory curves are bytes, CPU curves millicores."""

    memory: tuple[tuple[str, Curve], ...]
    cpu: tuple[tuple[str, Curve], ...] = ()
    rootfs: tuple[tuple[str, Curve], ...] = ()
    logs: tuple[tuple[str, Curve], ...] = ()
    pids: tuple[tuple[str, Curve], ...] = ()
    #: per emptyDir volume name (the pod's, not a container's)
    empty_dir: tuple[tuple[str, Curve], ...] = ()
    #: bytes per second read and written (:mod:`.io_psi`)
    io: tuple[tuple[str, Curve], ...] = ()
    #: the written part of an ``io`` curve given split (``{read, write}``), under the same name;
    #: an ``io`` curve without one is half reads, half writes (:mod:`.blockio`)
    io_write: tuple[tuple[str, Curve], ...] = ()

    def curve(self, kind: str, container: str, first: bool) -> Curve | None:
        """A container's ``rootfs``, ``logs`` or ``pids`` curve."""
        return _pick(getattr(self, kind), container, first)

    @property
    def disk(self) -> bool:
        """Whether it has curves the eviction manager's disk and PID signals read."""
        return bool(self.rootfs or self.logs or self.pids or self.empty_dir)

    @property
    def pressure_settles_at(self) -> float:
        """When the curves node pressure reads (memory, disk, PIDs, I/O) stop changing."""
        return max((c.settles_at for cs in (self.memory, self.rootfs, self.logs, self.pids, self.empty_dir, self.io)
                    for _, c in cs), default=0.0)

    def of(self, container: str, first: bool) -> Curve | None:
        """The memory curve of a container."""
        return _pick(self.memory, container, first)

    def cpu_of(self, container: str, first: bool) -> Curve | None:
        return _pick(self.cpu, container, first)

    @property
    def settles_at(self) -> float:
        """When the memory curves stop changing (what node memory pressure waits for)."""
        return max((c.settles_at for _, c in self.memory), default=0.0)


def _pick(curves: tuple[tuple[str, Curve], ...], container: str, first: bool) -> Curve | None:
    got = None
    for name, curve in curves:
        if name == container:
            return curve
        if name == "" and first:
            got = curve
    return got


def curve_containers(pod: Any) -> Iterator[tuple[Any, bool]]:
    """The containers a usage curve can describe — sidecars and app containers, in the pod's
    order — each with whether it is the lead (first app) container, which an unnamed curve means."""
    first = True
    for c, init in pod.all_containers():
        if init and not is_sidecar(c):
            continue
        lead = first and not init
        if not init:
            first = False
        yield c, lead


def _bytes(v: Any, path: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise InputError(f"Invalid value: {v!r}: a quantity of memory such as 512Mi", path=path)
    q = parse_quantity(str(v), path)
    n = q.value()
    if n < 0:
        raise InputError(f"Invalid value: {v!r}: must not be negative", path=path)
    return n


def _millicores(v: Any, path: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise InputError(f"Invalid value: {v!r}: a quantity of CPU such as 500m or 2", path=path)
    q = parse_quantity(str(v), path)
    n = q.milli_value()
    if n < 0:
        raise InputError(f"Invalid value: {v!r}: must not be negative", path=path)
    return n


def parse_curve(raw: Any, path: str, amount: Callable[[Any, str], int] = _bytes) -> Curve:
    if not isinstance(raw, list):
        return Curve((0.0,), (amount(raw, path),))
    if not raw:
        raise InputError("expected at least one point [time, amount]", path=path)
    times: list[float] = []
    values: list[int] = []
    for k, pt in enumerate(raw):
        where = f"{path}[{k}]"
        if not isinstance(pt, list) or len(pt) != 2:
            raise InputError(f"Invalid value: {pt!r}: expected a point [time, amount]", path=where)
        t = seconds(pt[0], f"{where}[0]")
        if times and t <= times[-1]:
            raise InputError(f"Invalid value: {pt[0]!r}: times must increase", path=f"{where}[0]")
        times.append(t)
        values.append(amount(pt[1], f"{where}[1]"))
    return Curve(tuple(times), tuple(values))


def _annotation_value(text: str, path: str) -> Any:
    """The annotation's text read as kubetwin reads files (strict JSON, or YAML with its limits:
    no key twice, no alias bombs): one document."""
    from ..model.loader import parse_documents, parse_yaml

    try:
        try:
            docs = parse_documents(text, "<annotation>")
        except InputError:
            docs = parse_yaml(text, "<annotation>")  # YAML flow style, {memory: 2Gi}, is not JSON
    except InputError as exc:
        raise InputError(f"expected {{memory: ...}} as JSON or YAML: {exc.message}", path=path) from None
    if len(docs) != 1:
        raise InputError(f"expected one {{memory: ...}} value, found {len(docs)} documents", path=path)
    return docs[0]


def _count(v: Any, path: str) -> int:
    """A whole number (of processes), written as a number or a quantity such as ``4k``."""
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise InputError(f"Invalid value: {v!r}: a whole number of processes", path=path)
    q = parse_quantity(str(v), path)
    n = q.value()
    if q.milli_value() != n * 1000:
        raise InputError(f"Invalid value: {v!r}: a whole number of processes", path=path)
    if n < 0:
        raise InputError(f"Invalid value: {v!r}: must not be negative", path=path)
    return n


#: container curves: key -> how its amounts read
KEYS = ("memory", "cpu", "rootfs", "logs", "pids", "io")
_AMOUNT: dict[str, Callable[[Any, str], int]] = {"memory": _bytes, "cpu": _millicores, "rootfs": _bytes,
                                                 "logs": _bytes, "pids": _count, "io": _bytes}


#: the keys of a split ``io`` curve
IO_SPLIT = ("read", "write")
_NO_BYTES = Curve((0.0,), (0,))


def sum_curves(a: Curve, b: Curve) -> Curve:
    """``a + b`` as one curve: both are linear between their points and flat outside, so their
    sum is linear between the union of their points."""
    times = tuple(sorted(set(a.times) | set(b.times)))
    return Curve(times, tuple(a.at(t) + b.at(t) for t in times))


def parse_io_split(raw: Mapping[str, Any], path: str) -> tuple[Curve, Curve]:
    """``io: {read: CURVE, write: CURVE}`` → (the total curve, the written part)."""
    for k in raw:
        if k not in IO_SPLIT:
            raise unknown_key_error(str(k), IO_SPLIT, path=f"{path}.{k}")
    if raw.get("read") is None and raw.get("write") is None:
        raise InputError("Required value: read or write (bytes per second)", path=path)
    read = parse_curve(raw["read"], f"{path}.read") if raw.get("read") is not None else _NO_BYTES
    write = parse_curve(raw["write"], f"{path}.write") if raw.get("write") is not None else _NO_BYTES
    return sum_curves(read, write), write


def _curves_of(raw: Mapping[str, Any], name: str, path: str, out: dict[str, list[tuple[str, Curve]]]) -> None:
    for key in KEYS:
        if raw.get(key) is not None:
            if key == "io" and isinstance(raw[key], Mapping):
                total, write = parse_io_split(raw[key], f"{path}.io")
                out["io"].append((name, total))
                out.setdefault("io_write", []).append((name, write))
                continue
            out[key].append((name, parse_curve(raw[key], f"{path}.{key}", _AMOUNT[key])))


def parse_usage(raw: Any, path: str) -> Usage | None:
    if raw is None:
        return None
    if isinstance(raw, str):   # the annotation: JSON (or YAML flow) text
        raw = _annotation_value(raw, path)
    top = KEYS + ("emptyDir", "containers")
    if not isinstance(raw, Mapping):
        raise InputError("expected {memory: CURVE, cpu: CURVE, ..., containers: {NAME: {memory: CURVE, ...}}}",
                         path=path)
    for k in raw:
        if k not in top:
            raise unknown_key_error(str(k), top, path=f"{path}.{k}")
    out: dict[str, list[tuple[str, Curve]]] = {k: [] for k in KEYS}
    _curves_of(raw, "", path, out)
    conts = raw.get("containers") or {}
    if not isinstance(conts, Mapping):
        raise InputError("expected a map of container name to {memory: CURVE, cpu: CURVE, ...}",
                         path=f"{path}.containers")
    for name, c in conts.items():
        where = f"{path}.containers.{name}"
        if not isinstance(c, Mapping):
            raise InputError("expected {memory: CURVE, cpu: CURVE, ...}", path=where)
        for k in c:
            if k not in KEYS:
                raise unknown_key_error(str(k), KEYS, path=f"{where}.{k}")
        _curves_of(c, str(name), where, out)
    vols = raw.get("emptyDir") or {}
    if not isinstance(vols, Mapping):
        raise InputError("expected a map of emptyDir volume name to CURVE", path=f"{path}.emptyDir")
    empty_dir = tuple((str(v), parse_curve(c, f"{path}.emptyDir.{v}")) for v, c in vols.items())
    if not any(out.values()) and not empty_dir:
        raise InputError(f"Required value: one of {', '.join(KEYS)}, emptyDir", path=path)
    return Usage(tuple(out["memory"]), tuple(out["cpu"]), tuple(out["rootfs"]), tuple(out["logs"]),
                 tuple(out["pids"]), empty_dir, tuple(out["io"]), tuple(out.get("io_write", ())))


def check_usage_against_pod(usage: Usage | None, pod: Any, path: str) -> None:
    """Each per-container curve names a container of the pod, each ``emptyDir`` curve an
    emptyDir volume of it (a curve for a name the pod does not have would be read and not used)."""
    if usage is None:
        return
    names = [c.name for c, _ in pod.all_containers()]
    for kind in KEYS:
        for name, _ in getattr(usage, kind):
            if name and name not in names:
                raise unknown_key_error(name, tuple(names), path=f"{path}.containers.{name}", what="container")
    if not usage.empty_dir:
        return
    dirs = [v.name for v in pod.spec.volumes if v.empty_dir is not None]
    for name, _ in usage.empty_dir:
        if name not in dirs:
            raise unknown_key_error(name, tuple(dirs), path=f"{path}.emptyDir.{name}",
                                    what="emptyDir volume") if dirs else InputError(
                f"the pod has no emptyDir volume {name!r}", path=f"{path}.emptyDir.{name}",
                fix="add it to spec.volumes with emptyDir: {}, or remove the curve")
