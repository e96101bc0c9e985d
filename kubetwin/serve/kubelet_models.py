"""The kubelet of every served node, kept as equivalence classes so that one extender call over
thousands of nodes costs a dictionary look-up per node.

A kubelet's admission (``pkg/kubelet/cm``: Topology, CPU, Memory and Device Managers, then node
allocatable; :class:`kubetwin.kubelet.admission.NodeAdmission`) is deterministic: two nodes with
the same machine and KubeletConfiguration that admitted pods of the same shapes in the same order
are in the same state and give every pod the same verdict. A node's *class* is that history —
(its machine and configuration, the shapes admitted so far) — and each class keeps one kubelet in
that state (never admitted into: a trial admits into a copy, ``NodeAdmission.fork``). A verdict
is remembered per (class, pod shape); a pod's shape is its spec (without ``nodeName``) and its
annotations — all the kubelet's admission reads of a pod besides its identity.

A rejected admission leaves the managers' allocations as they were but counts in the kubelet's
metrics, and a hang (``KubeletHang``) stops the kubelet: every admission, whatever its verdict,
is part of the class.

Not an upstream module: a kubetwin fast path over the upstream decisions the kubelet package
models (the plain path is ``NodeAdmission.admit`` on a node's own kubelet, used for drill-downs).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

import msgspec

if TYPE_CHECKING:
    from ..kubelet.admission import NodeAdmission
    from ..model.pod import Pod

#: ``k8s.io/kube-scheduler/extender/v1`` MaxExtenderPriority
MAX_EXTENDER_PRIORITY = 10
_ENCODE = msgspec.json.Encoder(enc_hook=str).encode  # Quantity and the like: their canonical text


def pod_shape(pod: Pod) -> bytes:
    """What the kubelet's admission reads of a pod besides its name and UID."""
    spec = pod.spec if not pod.spec.node_name else msgspec.structs.replace(pod.spec, node_name="")
    return _ENCODE((spec, pod.metadata.annotations))


@dataclass(frozen=True)
class Verdict:
    """The kubelet's answer for a pod on a node of a class."""

    admitted: bool
    reason: str = ""
    message: str = ""
    #: NUMA fit 0..MaxExtenderPriority (0 when nothing of the pod is NUMA-bound, or rejected)
    score: int = 0
    #: NUMA nodes the pod's exclusive CPUs, memory blocks and devices came from
    numa_nodes: tuple[int, ...] = ()
    hang: bool = False


def numa_fit(kubelet: NodeAdmission, pod: Pod) -> tuple[int, tuple[int, ...]]:
    """NUMA nodes an admitted pod's exclusive CPUs, memory blocks and devices come from, and the
    score: MaxExtenderPriority divided by how many there are (10 on one NUMA node, 5 on two, ...)."""
    uid = pod.uid
    spanned: set[int] = set()
    cpus = kubelet.cpu.state.entries.get(uid, {}) if kubelet.cpu.static is not None else {}
    if cpus:
        for n in kubelet.machine.nodes:
            if any(cs.mask & n.cpus.mask for cs in cpus.values()):
                spanned.add(n.id)
    if kubelet.memory.static is not None:
        for blocks in kubelet.memory.static.state.entries.get(uid, {}).values():
            for b in blocks:
                spanned.update(b.numa_affinity)
    dm = kubelet.device_manager
    for res in dm.pod_devices.get(uid, {}).values():
        for rname, per_numa in res.items():
            devices = dm.all_devices.get(rname, {})
            for ids in per_numa.values():
                for d in ids:
                    if d in devices:
                        spanned.update(devices[d].numa_nodes)
    if not spanned:
        return 0, ()
    return MAX_EXTENDER_PRIORITY // len(spanned), tuple(sorted(spanned))


def trial(kubelet: NodeAdmission, pod: Pod) -> tuple[Verdict, NodeAdmission]:
    """Admit ``pod`` into a copy of ``kubelet``: the verdict and the copy after it."""
    copy = kubelet.fork()
    d = copy.admit(pod)
    if not d.admitted:
        return Verdict(False, d.reason, d.message, hang=d.hang), copy
    score, numa = numa_fit(copy, pod)
    return Verdict(True, score=score, numa_nodes=numa), copy


class KubeletModels:
    """Every modelled node's kubelet, by class; thread-safe (one lock around changes)."""

    def __init__(self, verdict_limit: int = 200_000):
        self._class_of: dict[str, int] = {}
        self._base_of: dict[str, int] = {}           # node -> its class with nothing admitted
        self._reps: list[NodeAdmission] = []
        self._history: list[tuple[Any, ...]] = []    # class id -> (template key, shapes...)
        self._ids: dict[tuple[Any, ...], int] = {}
        self._templates: dict[tuple[int, int, int], NodeAdmission] = {}
        self._verdicts: dict[tuple[int, bytes], Verdict] = {}
        self._limit = verdict_limit
        #: pod shape -> (generation, {node: (Verdict, unresolvable)} of the nodes whose kubelet rejects it)
        self._rejections: dict[bytes, tuple[int, dict[str, tuple[Verdict, bool]]]] = {}
        #: bumped whenever a node changes class
        self.generation = 0
        self.lock = threading.RLock()

    # --- classes ---------------------------------------------------------------------------
    def _class(self, history: tuple[Any, ...], kubelet: NodeAdmission) -> int:
        cid = self._ids.get(history)
        if cid is None:
            cid = self._ids[history] = len(self._reps)
            self._reps.append(kubelet)
            self._history.append(history)
        return cid

    def add_node(self, name: str, machine: Any, config: Any, devices: Any = None) -> None:
        """A node whose kubelet runs on ``machine`` with ``config`` (and the device plugins'
        ``devices``, a ``DeviceInventory``), nothing admitted yet."""
        from ..kubelet.admission import NodeAdmission

        key = (id(machine), id(config), id(devices))
        with self.lock:
            tmpl = self._templates.get(key)
            if tmpl is None:
                tmpl = self._templates[key] = NodeAdmission(machine, config, devices=devices, explain_rejections=True)
            cid = self._class((key,), tmpl)
            self._class_of[name] = self._base_of[name] = cid

    def modelled(self, name: str) -> bool:
        return name in self._class_of

    @property
    def node_names(self) -> Iterable[str]:
        return self._class_of.keys()

    def class_count(self) -> int:
        return len(self._reps)

    def kubelet(self, name: str) -> NodeAdmission:
        """The (shared, read-only) kubelet in this node's state."""
        return self._reps[self._class_of[name]]

    # --- verdicts --------------------------------------------------------------------------
    def _verdict(self, cid: int, pod: Pod, shape: bytes) -> Verdict:
        v = self._verdicts.get((cid, shape))
        if v is None:
            v, _ = trial(self._reps[cid], pod)
            if len(self._verdicts) >= self._limit:
                self._verdicts.clear()
            self._verdicts[(cid, shape)] = v
        return v

    def verdict(self, name: str, pod: Pod, shape: bytes | None = None) -> Verdict | None:
        """The kubelet's answer for ``pod`` on node ``name`` (None: no kubelet modelled)."""
        cid = self._class_of.get(name)
        if cid is None:
            return None
        return self._verdict(cid, pod, shape if shape is not None else pod_shape(pod))

    def verdicts(self, names: Iterable[str], pod: Pod) -> dict[str, Verdict | None]:
        """:meth:`verdict` for many nodes: the hot path of an extender call."""
        shape = pod_shape(pod)
        class_of, memo = self._class_of, self._verdicts
        out: dict[str, Verdict | None] = {}
        for name in names:
            cid = class_of.get(name)
            if cid is None:
                out[name] = None
                continue
            v = memo.get((cid, shape))
            out[name] = v if v is not None else self._verdict(cid, pod, shape)
        return out

    def rejections(self, pod: Pod, shape: bytes | None = None) -> dict[str, tuple[Verdict, bool]]:
        """The modelled nodes whose kubelet would reject ``pod``: the verdict, and whether even the
        node's kubelet with nothing admitted would (:meth:`unresolvable`). Computed once per pod
        shape over every node, then kept until a node changes state: an extender call then costs
        one look-up per node it names."""
        shape = shape if shape is not None else pod_shape(pod)
        gen = self.generation
        hit = self._rejections.get(shape)
        if hit is not None and hit[0] == gen:
            return hit[1]
        per_class: dict[int, Verdict] = {}
        out: dict[str, tuple[Verdict, bool]] = {}
        for name, cid in self._class_of.items():
            v = per_class.get(cid)
            if v is None:
                v = per_class[cid] = self._verdict(cid, pod, shape)
            if not v.admitted:
                out[name] = (v, not self._verdict(self._base_of[name], pod, shape).admitted)
        if len(self._rejections) >= 1024:
            self._rejections.clear()
        self._rejections[shape] = (gen, out)
        return out

    def unresolvable(self, name: str, pod: Pod, shape: bytes | None = None) -> bool:
        """The kubelet of this node would reject the pod even with nothing admitted (preemption
        cannot help)."""
        base = self._base_of.get(name)
        if base is None:
            return False
        return not self._verdict(base, pod, shape if shape is not None else pod_shape(pod)).admitted

    # --- changes ---------------------------------------------------------------------------
    def admit(self, name: str, pod: Pod) -> Verdict:
        """Admit ``pod`` on node ``name`` for real: the node moves to the class after it."""
        with self.lock:
            cid = self._class_of[name]
            v, after = trial(self._reps[cid], pod)
            # a rejection changes no allocation but does count in the kubelet's metrics (and a
            # hang stops the kubelet): the node moves to the class after every admission
            mark = pod_shape(pod) if v.admitted else (b"hang" if v.hang else b"rejected", pod_shape(pod))
            self._class_of[name] = self._class((*self._history[cid], mark), after)
            self.generation += 1
            return v

    def replay(self, name: str, pods: Iterable[Pod]) -> tuple[NodeAdmission, list[Any]]:
        """A kubelet of this node's machine and configuration that admitted ``pods`` in order (its
        own copy, with the pods' own names: for drill-downs and preemption), and the decisions."""
        base = self._reps[self._base_of[name]]
        kubelet = base.fork()
        decisions = [kubelet.admit(p) for p in pods]
        return kubelet, decisions
