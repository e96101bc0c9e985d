"""A fast path for runtime policies in ``simulate``: node histories answered from a table.

Nodes of one group start from the same runtime (machine, policy resource, kubelet
configuration), and the NRI policies are deterministic: a node that has seen the same sequence
of pod creations and deletions as another node — the same pods up to their names — is in the
same state, and the next creation gets the same cpusets, memory nodes and pool. So each group
shares a table of *states* (a trie of histories): an edge ``(state, event)`` holds what the
plain path answered the first time — the next state, the new pod's placement rows, its CPUs and
memory nodes — and every later node that takes the same edge reads it instead of running the
policy. A node only holds a history and its state; a real :class:`..runtime.node.RuntimeNode`
is needed for an edge the table does not know (a *miss*), and a new state's node figures (for
the end of the run) are taken from it then (on pod-keyed states they are made from the state's
key when read: :mod:`.runtime_fig`, :mod:`.runtime_fig_balloons`; a creation miss's key is made
from its parent state's: :mod:`.runtime_inckey`). Such a real node is kept with
the state it is in ("parked"); a miss takes the one parked at the node's state, or the one parked nearest on the
node's own path, and replays the rest of the node's history on it — the plain path, the same
calls in the same order. Nodes parked in shallow states (at most :data:`CLONE_DEPTH` events from
the start, met by many nodes; none by default) stay there: a miss below them takes a copy
(:mod:`.runtime_copy`). Before a long replay (or a fresh node's), a miss on topology-aware's
pod-keyed states takes a copy of the node in a child state of its own less the pod that edge
created, when its key says it is in the node's state (:mod:`.runtime_undo`). A miss in a state
where another node holds the real node it came with (by a miss of its own, not moved on yet)
takes a copy of that node, not a replay. With :mod:`.runtime_snapshot` on, a snapshot is kept at every state a real node leaves and a miss
restores its own state's (no replays; off by default: it costs more than it saves). Misses and replays hand the runtime the kubelet's CRI resources of the
pod's containers computed once per event (with the managers off they depend on the pod alone,
as the key does), and the key reads each pod shape's QoS class once.

The answer is the plain path's answer, by construction, as long as nothing the policy reads
differs between two nodes with the same history. That holds only where the key spells it out,
so the table is used only when:

* the kubelet's CPU and memory managers are off (``none``): the CRI resources the runtime gets
  then depend on the pod alone, never on what the kubelet holds;
* the runtime is an nri-plugins policy (not a Python plugin, whose state is its own) whose
  ``matchExpressions`` and balloons' ``groupBy`` templates read only namespaces, QoS classes and
  labels (not names or ids);
* ``NodeResourceTopologyMatch`` does not read the nodes' published topology during the run;
* the event is keyed on the whole pod but its name, UID, start time and nominated node (which
  nothing below the kubelet reads) (namespace, labels, annotations,
  containers, resources; plus the substrings of the pod's cgroup parent that upstream's cache
  reads its QoS class from), and the pod has no (anti-)affinity annotations (they match other
  pods by name);
* the plain path answered without a rejection and without a warning (both name the pod).

On pod-keyed states (:mod:`.runtime_canon` for ``topology-aware``, :mod:`.runtime_canon_balloons`
for ``balloons``) a creation whose answer may depend on the order the node's pods came in (an
overcommit libmem handled; a balloons node's memory past its bound) is not kept either.

Any other case turns the node back to the plain path for the rest of the run (with its history
replayed on a real node first). ``tests/sim/test_runtime_memo.py`` holds the table's answers
against the plain path's on random workloads.

Not an upstream module: a kubetwin fast path; the policies it remembers are nri-plugins'
(``cmd/plugins/topology-aware``, ``cmd/plugins/balloons``), kept plain in :mod:`kubetwin.runtime`.
"""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Hashable

import msgspec

from ..diagnostics import warn_calls
from ..model.meta import enc_hook
from . import (
    runtime_canon,
    runtime_canon_balloons,
    runtime_fig,
    runtime_fig_balloons,
    runtime_hit,
    runtime_inckey,
    runtime_snapshot,
    runtime_undo,
)

if TYPE_CHECKING:
    from ..model.pod import Pod
    from ..runtime.node import RuntimeNode
    from .loop import SimPod
    from .runtime_policies import RuntimePolicies


_ENCODER = msgspec.json.Encoder(enc_hook=enc_hook)

#: a real node leaving a state this shallow (at most this many events from the start) by a miss
#: leaves a copy of itself parked there: shallow states are met by many nodes, and a copy costs
#: less than the replay of their history the next miss there would need — before misses copied
#: the node another node holds in their state (5,000 nodes x 50,000 pods, topology-aware: depth
#: 4 replays 9,655 creations and makes 2,963 copies, depth 6 5,495 and 3,997). With those copies
#: a parked copy no longer pays: -1 (none) against 6, CPU, same minutes — 5,000 x 50,000
#: topology-aware 11.32 / 12.00 s, balloons 13.03-13.71 / 13.96-14.06 s; 1,000 x 10,000
#: topology-aware 4.70-4.94 / 5.22-5.37 s, balloons 4.44-4.62 / 5.49-5.81 s
CLONE_DEPTH = -1

#: use the table (False: every node on the plain path, for equivalence tests and A/B runs)
ENABLED = True

#: after a miss, move every object alive into the collector's permanent generation
#: (:func:`gc.freeze`; False: the collector as ``simulate`` sets it, A/B runs). A miss leaves the
#: table a new state with its real node — hundreds of objects that live as long as the run — and
#: the young-generation collections ``simulate`` still runs would each scan them once to find no
#: garbage: 21 collections, 0.52 s of the topology-aware run at 5,000 x 50,000, against 3 and
#: 0.05 s with the freeze (run 9.02 -> 8.50 s CPU, the same peak memory). ``simulate`` freezes
#: what exists before the run and unfreezes at its end, so these objects go back to the oldest
#: generation then; reference counting frees them as usual meanwhile (only cyclic garbage among
#: them waits for the end of the run). The freeze itself is constant time (a list splice). Only
#: in runs of :func:`.loop.simulate` (``Simulator.collector_managed``): a bare ``Simulator.run``
#: leaves the collector alone.
FREEZE_AFTER_MISS = True

#: balloons' memory bound asked once a creation miss: :meth:`MemoNodes._miss` asks the guard
#: whether the node crossed it, and when it did not, ``_arrive`` takes that answer instead of
#: asking again (between the two only the new pod's placement is read: nothing moves a libmem
#: request). False: asked twice, as before (``bench_runtime_sim.py --plain``)
GUARD_ONCE = True


class Real:
    """A started :class:`RuntimeNode` and the keys of the pods created on it, in history order
    (slot ``j`` of a history is ``keys[j]`` here: a parked node carries another node's pods);
    on a table with canonical states (:mod:`.runtime_canon`) its live pods in canonical order
    (slot: position), and each one's event key (as the table's number)."""

    __slots__ = ("rn", "keys", "evs", "since")

    def __init__(self, rn: "RuntimeNode", keys: list[str] | None = None, evs: dict[str, int] | None = None):
        self.rn = rn
        self.keys = keys if keys is not None else []
        self.evs = evs if evs is not None else {}
        #: during a miss's creation: the key of the state it left and the containers updated
        #: since (:mod:`.runtime_inckey`), for the new state's key
        self.since: tuple[Any, set[str]] | None = None

    def copy(self, table: "Table") -> "Real":
        """A copy of this real node (its own runtime node, keys and event numbers) for another
        node of ``table``: the table's nodes are never resized in place, so the copy shares what
        only a resize writes (``clone_runtime_node(resizable=False)``)."""
        from .runtime_policies import clone_runtime_node

        sn = table.node
        return Real(clone_runtime_node(self.rn, sn.runtime, sn.kubelet, resizable=False), list(self.keys),
                    dict(self.evs))


@dataclass(slots=True)
class Edge:
    """What the plain path answered for one event in one state."""

    next: int
    rows: tuple[dict[str, Any], ...] = ()     # the new pod's placement rows, without pod/time/node
    cpus: str = ""
    mems: str = ""
    #: canonical states: each old position's new one (-1: deleted), the new pod's (:mod:`.runtime_canon`)
    perm: tuple[int, ...] = ()
    born: int = -1
    #: canonical states: the old positions stay and the new pod comes after them (None: not
    #: known yet; :mod:`.runtime_hit`)
    stays: bool | None = None
    #: the rows as a hit copies them: the identity keys in place, values to fill (:mod:`.runtime_hit`)
    forms: tuple[dict[str, Any], ...] | None = None
    #: the one form of an edge of one row (``forms[0]``; None otherwise, or not made yet): a hit
    #: copies it without reading the tuple — a cold object of its own (:mod:`.runtime_hit`)
    form: dict[str, Any] | None = None


@dataclass(slots=True)
class State:
    parked: Real | None = None
    figures: Any = None                       # the node figures of this state (set when it is made)
    #: a snapshot of a real node in this state, its pods' keys and their event numbers
    #: (:mod:`.runtime_snapshot`), taken when the last real node leaves it
    snapshot: tuple[bytes, list[str], dict[str, int]] | None = None
    #: a real node in this state held by a node that came here by a miss (not parked yet)
    held: Real | None = None
    #: canonical states: the state's key, its figures made from it when read (:mod:`.runtime_fig`),
    #: and the key its misses' keys are made from (:mod:`.runtime_inckey`)
    key: Any = None


@dataclass
class Table:
    """The states of one (machine, policy resource, kubelet configuration). ``kubelet``: the
    kubelet every real node of the table runs beside — a private copy of the group's started
    kubelet (with the managers off, the CRI resources it computes depend on the pod alone), so
    replays and parked nodes never touch a simulated node's kubelet."""

    node: Any                                 # a SimNode of the group (machine, policy, configuration)
    kubelet: Any
    layout: Any
    states: list[State] = field(default_factory=lambda: [State()])
    edges: dict[tuple[int, Hashable], Edge] = field(default_factory=dict)
    #: per creation event: the kubelet's CRI resources and QoS class of each container (with the
    #: managers off they depend on the pod alone), for the misses and replays of that event
    cri: dict[Hashable, tuple[tuple[dict[str, Any], str], ...]] = field(default_factory=dict)
    #: the QoS class of each pod shape (:func:`pod_event`)
    qos: dict[bytes, str] = field(default_factory=dict)
    #: the event key of each pod shape, for UIDs that cannot spell a QoS class, with that key's
    #: creation edges by state (the same dict as ``by_event``'s; :mod:`.runtime_hit`)
    hit_keys: dict[bytes, tuple[Hashable, dict[int, "Edge"]]] = field(default_factory=dict)
    #: creation event key -> its edges by state (each also in ``edges`` under ``(state, key)``):
    #: a hit finds its edge by the state alone (:mod:`.runtime_hit`)
    by_event: dict[Hashable, dict[int, "Edge"]] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0
    replayed: int = 0
    #: canonical states (:mod:`.runtime_canon`): state key -> state; None: states are histories
    canon: dict[Hashable, int] | None = None
    #: canonical states: the key of a real node's state (:func:`.runtime_canon.snapshot`, or
    #: :func:`.runtime_canon_balloons.snapshot` on balloons nodes)
    keyer: Any = None
    #: canonical states: whether a real node's state is one whose pods' order no answer reads
    #: (None: always; :func:`.runtime_canon_balloons.order_free` on balloons nodes)
    guard: Any = None
    #: canonical states the guard does not hold for: never joined, their nodes alike by their path
    #: (:mod:`.runtime_canon_balloons`, "Past the bound")
    ordered: set[int] = field(default_factory=set)
    #: canonical states: event key -> its number in state keys
    ev_ids: dict[Hashable, int] = field(default_factory=dict)
    joins: int = 0                            # misses that landed in a state the table held
    #: the snapshots of the table's real nodes (:mod:`.runtime_snapshot`; None: not made yet)
    snapshots: Any = None
    restored: int = 0
    copied_held: int = 0
    #: canonical states: what figures from keys read besides the key (:mod:`.runtime_fig`)
    key_figures: Any = None
    #: balloons states: whether a real node's libmem requests were made in creation order
    #: (:func:`.runtime_canon_balloons.created_in_order`, or a lean :class:`.runtime_fig_balloons.OrderCheck`)
    in_order: Any = runtime_canon_balloons.created_in_order
    #: during a creation miss: the guard answered True for its real node after the creation
    #: (:data:`GUARD_ONCE`; ``_arrive`` takes it and clears it)
    guarded: bool = False
    #: container id -> pod key, for keys made from their parent's (:mod:`.runtime_inckey`)
    owners: dict[str, str] = field(default_factory=dict)
    #: state -> its creation edges ``(event, next state)``, and how many of ``edges`` that index
    #: has read (:func:`.runtime_undo.children`)
    kids: dict[int, list[tuple[Hashable, int]]] = field(default_factory=dict)
    kids_seen: int = 0
    #: real nodes made from a child state's node, and tries dropped (:mod:`.runtime_undo`)
    undone: int = 0
    undo_failed: int = 0
    #: (state, child state) pairs whose try failed (:mod:`.runtime_undo`)
    undo_failed_at: set[tuple[int, int]] = field(default_factory=set)
    #: the placement rows' forms as hits copy them, one per content (:mod:`.runtime_hit`)
    forms: dict[tuple[tuple[str, Any], ...], dict[str, Any]] = field(default_factory=dict)
    #: creation event key -> each container name's wanted CPUs, for the rows of its misses
    #: (:func:`.runtime_fig.record`)
    wanted: dict[Hashable, dict[str, int]] = field(default_factory=dict)
    #: the layout's cgroup driver is systemd (a UID with ``/`` renders its cgroup parent apart there)
    systemd: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.systemd = getattr(self.layout, "driver", None) == "systemd"

    def new_state(self) -> int:
        self.states.append(State())
        return len(self.states) - 1


@dataclass(slots=True)
class Virtual:
    """A node on the table: its state, the states along its path, its history (for replays)."""

    table: Table
    state: int = 0
    path: list[int] = field(default_factory=lambda: [0])
    #: ``("c", pod, event key)`` or ``("d", slot, None)`` per event, in order
    history: list[tuple[str, Any, Hashable]] = field(default_factory=list)
    #: pod key -> slot (successful creations in order), for pods still on the node
    slots: dict[str, int] = field(default_factory=dict)
    #: canonical states: the last ``lag`` events (creations answered by :mod:`.runtime_hit`) are
    #: not in ``slots`` yet (:func:`.runtime_hit.sync` brings them in)
    lag: int = 0
    created: int = 0
    #: a real node in this node's state, when the last event was a miss
    real: Real | None = None


_AFFINITY_KEYS = ("/affinity", "/anti-affinity")


def _name_free_key(key: Any) -> bool:
    """An expression key that reads nothing of a pod's or container's name or ids: the namespace,
    the QoS class, or a label the runtime does not derive from names (``io.kubernetes.*`` are)."""
    if not isinstance(key, str):
        return False
    k = key.lstrip("/")
    if k.startswith("pod/"):
        k = k[4:]
    if k in ("namespace", "qosclass"):
        return True
    return k.startswith("labels/") and not k[7:].startswith("io.kubernetes.")


def _expressions_name_free(value: Any) -> bool:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "matchExpressions":
                if not isinstance(v, list) or not all(isinstance(e, dict) and _name_free_key(e.get("key"))
                                                      for e in v):
                    return False
            elif not _expressions_name_free(v):
                return False
    elif isinstance(value, list):
        return all(_expressions_name_free(v) for v in value)
    return True


class _Refs:
    """A subject for :func:`..runtime.policies.balloons.expand.expand` that records every key
    path the template's references walk (``("pod", "labels", "app")``) and resolves none."""

    __slots__ = ("paths", "path")

    def __init__(self, paths: set[tuple[str, ...]], path: tuple[str, ...] = ()):
        self.paths, self.path = paths, path

    def eval_key(self, key: str) -> "_Refs":
        p = self.path + (key,)
        self.paths.add(p)
        return _Refs(self.paths, p)


def _template_name_free(src: Any) -> bool:
    """A balloons ``groupBy`` template whose every reference reads nothing of a pod's or
    container's name or ids (by :func:`_name_free_key`, as expression keys)."""
    from ..runtime.policies.balloons.expand import ExpandError, expand

    if not isinstance(src, str):
        return False
    paths: set[tuple[str, ...]] = set()
    try:
        expand(src, _Refs(paths), False)
    except ExpandError:
        return False   # the policy refuses or skips it: keep the plain path
    leaves = [p for p in paths if not any(len(q) > len(p) and q[:len(p)] == p for q in paths)]
    return all(_name_free_key("/".join(p)) for p in leaves)


def _group_by_name_free(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_template_name_free(v) if k == "groupBy" else _group_by_name_free(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_group_by_name_free(v) for v in value)
    return True


def policy_memoizable(resource: Any) -> bool:
    """Whether a policy resource can be answered from the table: its ``matchExpressions`` and
    balloons' ``groupBy`` templates read no pod or container names or ids (namespace, QoS class
    and plain labels only: a ``groupBy`` of ``${pod/name}`` groups two pods of one name in two
    namespaces into one balloon), and topology-aware's ``colocatePods`` is off (upstream scopes
    that implicit affinity by pod *name*, ``pod/name``, so two pods of one name in two
    namespaces attract each other's containers — a relation of names the history key does not
    hold)."""
    if resource is None:
        return False
    if getattr(resource.config, "colocate_pods", False):
        return False
    def plain(o: Any) -> Any:
        if hasattr(o, "__dict__"):
            return o.__dict__
        raise TypeError(type(o).__name__)

    try:
        config = json.loads(json.dumps(resource.config, default=plain))
    except (TypeError, ValueError):
        return False   # something not seen through: keep the plain path
    return _expressions_name_free(config) and _group_by_name_free(config)


def kubelet_memoizable(kubelet: Any) -> bool:
    """The kubelet's CRI resources depend on the pod alone: CPU and memory managers off."""
    return getattr(kubelet.cpu, "static", None) is None and getattr(kubelet.memory, "static", None) is None


def pod_event(pod: "Pod", layout: Any, kubelet: Any, qos: dict[bytes, str] | None = None) -> Hashable | None:
    """The key of a pod's creation: the pod without its name and UID, and the QoS substrings of
    its cgroup parent; None when the pod can not be keyed (affinity annotations). ``qos``: the
    QoS class of each pod seen so far by the rest of its key (the class reads nothing else, and
    the nodes of one table share the kubelet's configuration, so its feature gates)."""
    from ..runtime.node import _pod_qos

    ann = pod.metadata.annotations
    if ann and any(k.endswith(_AFFINITY_KEYS) or ".resource-policy.nri.io/affinity" in k
                   or ".resource-policy.nri.io/anti-affinity" in k for k in ann):
        return None
    meta = msgspec.structs.replace(pod.metadata, name="", uid="")
    status = msgspec.structs.replace(pod.status, start_time=None, nominated_node_name=None)
    blank = _ENCODER.encode(msgspec.structs.replace(pod, metadata=meta, status=status))
    cls = qos.get(blank) if qos is not None else None
    if cls is None:
        cls = _pod_qos(kubelet, pod)
        if qos is not None:
            qos[blank] = cls
    return ("c", blank) + _qos_substrings(layout, cls, pod.uid)


#: the QoS substrings of a pod's cgroup parent read once per (layout, QoS class) for UIDs that
#: cannot take part in them (False: the parent rendered for every pod; equivalence tests)
FAST_PARENT = True
_PARENT_BITS: dict[tuple[Any, str], tuple[bool, bool]] = {}


def _qos_substrings(layout: Any, cls: str, uid: str) -> tuple[bool, bool]:
    """Whether the pod's cgroup parent names ``besteffort`` / ``burstable`` (what upstream's cache
    reads the QoS class from). A UID without a ``b`` cannot take part in either word: both start
    with ``b`` and the letters before the UID in its component (``pod``) are none of theirs; the
    systemd driver only turns ``-`` into ``_``, and a ``/`` (refused by that driver) is rendered
    as the plain path renders it. Such a UID gives the answer of any other ``b``-free UID."""
    if FAST_PARENT and "b" not in uid and ("/" not in uid or layout.driver != "systemd"):
        key = (layout, cls)
        got = _PARENT_BITS.get(key)
        if got is None:
            got = _PARENT_BITS[key] = _rendered_substrings(layout, cls, "0")
        return got
    return _rendered_substrings(layout, cls, uid)


def _rendered_substrings(layout: Any, cls: str, uid: str) -> tuple[bool, bool]:
    parent = layout.path(layout.pod(cls, uid)) or ""
    return "besteffort" in parent, "burstable" in parent


_ROW_IDENTITY = ("pod", "time", "node")


def _settle(sim: Any) -> None:
    """After a miss: the table's new objects out of the collector's young generation
    (:data:`FREEZE_AFTER_MISS`), in runs whose collector :func:`.loop.simulate` manages (it
    unfreezes them at the end of the run)."""
    if FREEZE_AFTER_MISS and sim.collector_managed and gc.isenabled():
        gc.freeze()


def _figures(rn: "RuntimeNode") -> Any:
    """A new state's node figures, while a real node is in it: cheaper than a replay to the
    state at the end of the run (a state never changes, so its figures do not either)."""
    from . import runtime_policies

    return runtime_policies.runtime_figures(rn)


def _snapshot(table: Table, st: State, real: Real) -> bool:
    """A snapshot of ``real`` kept at ``st`` (its state); False when snapshots are off or the
    node is not snapshot-safe."""
    if not runtime_snapshot.ENABLED:
        return False
    snaps = table.snapshots
    if snaps is None:
        from .runtime_policies import shared_objects

        sn = table.node
        snaps = table.snapshots = runtime_snapshot.Snapshots(shared_objects(real.rn, sn.runtime, sn.kubelet))
    data = snaps.take(real.rn)
    if data is None:
        return False
    st.snapshot = (data, list(real.keys), dict(real.evs))
    return True


class MemoNodes:
    """The runtime-policy nodes of a run that are on the table (see the module docstring).
    :class:`.runtime_policies.RuntimePolicies` asks it first; a node it does not take (or lets
    go) is on the plain path, in ``RuntimePolicies.nodes``."""

    def __init__(self, rt: "RuntimePolicies"):
        self.rt = rt
        self.tables: dict[tuple[int, int, int], Table] = {}
        self.nodes: dict[int, Virtual] = {}
        #: ``nodes`` by index (None: not on the table), read by a hit (:func:`.runtime_hit.start`):
        #: one slot of a list instead of a dictionary's index, entry and key — cold lines in the run
        self.at: list[Virtual | None] = [None] * len(rt.nodes)
        self._policy_ok: dict[int, bool] = {}

    # --- which nodes ---------------------------------------------------------------------------
    def _virtual(self, i: int, kubelet: Any) -> Virtual | None:
        v = self.nodes.get(i)
        if v is not None or not ENABLED or self.rt.nodes[i] is not None or i in self.rt.plain:
            return v
        sn = self.rt.sim.sim_nodes[i]
        rp = sn.runtime
        ok = self._policy_ok.get(id(rp))
        if ok is None:
            ok = self._policy_ok[id(rp)] = rp.plugin is None and policy_memoizable(rp.resource)
        if not ok or not kubelet_memoizable(kubelet) or self.rt.sim.sched.handle.live_nrt is not None:
            self.rt.plain.add(i)
            return None
        key = (id(sn.machine), id(rp.resource), id(sn.kubelet))
        table = self.tables.get(key)
        if table is None:
            from ..kubelet.cgroup_paths import CgroupLayout
            from .kubelets import template_for

            cfg: Any = sn.kubelet
            machine: Any = sn.machine
            table = self.tables[key] = Table(sn, template_for(machine, cfg).fork(),
                                             CgroupLayout(cfg.cgroup_driver, cfg.cgroup_root, cfg.cgroups_per_qos))
            if runtime_canon.applies(rp):
                table.canon = {}
                table.keyer = runtime_fig.snapshot if runtime_fig.ENABLED else runtime_canon.snapshot
                if runtime_fig.figures_from_keys():
                    table.key_figures = runtime_fig.KeyFigures(sn.machine)
            elif runtime_canon_balloons.applies(rp):
                table.canon, table.keyer = {}, runtime_canon_balloons.snapshot
                table.guard = runtime_canon_balloons.order_free
                if runtime_fig_balloons.ENABLED:
                    table.keyer, table.guard = runtime_fig_balloons.snapshot, runtime_fig_balloons.Guard()
                    table.in_order = runtime_fig_balloons.OrderCheck()
                    if runtime_fig.figures_from_keys():
                        table.key_figures = runtime_fig_balloons.KeyFigures(sn.machine)
        v = self.nodes[i] = self.at[i] = Virtual(table)
        return v

    # --- the run's calls -----------------------------------------------------------------------
    def start(self, i: int, sp: "SimPod", kubelet: Any) -> tuple[bool, tuple[str, str] | None]:
        """``(handled, failure)``: handled is False when node ``i`` is on the plain path. With
        :data:`.runtime_hit.ENABLED` the caller asks :func:`.runtime_hit.start` instead."""
        if runtime_hit.ENABLED:
            return runtime_hit.start(self, i, sp, kubelet)
        v = self.nodes.get(i)
        if v is None:
            v = self._virtual(i, kubelet)
            if v is None:
                return False, None
        table = v.table
        pod = sp.pod
        ev = pod_event(pod, table.layout, kubelet, table.qos)
        if ev is None:
            self._leave(i, v, kubelet)
            return False, None
        base = ev
        edge = table.edges.get((v.state, ev))
        if edge is not None and edge.next < 0:
            # the answer depends on the order the node's pods came in: the edge of that order
            ev = runtime_canon_balloons.ordered_event(base, v)
            edge = table.edges.get((v.state, ev))
        rt = self.rt
        rt.versions[i] += 1
        if edge is not None:
            table.hits += 1
            self._park(v)
            key = pod.key
            now, name = rt.sim.now, rt.sim.cluster.names[i]
            for t in edge.rows:
                rt.placed.append({"pod": key, **t, "time": now, "node": name})
            sp.cpus, sp.mems = edge.cpus, edge.mems
            self._advance(v, edge.next, ("c", pod, ev), key, edge)
            return True, None
        return self._miss(i, v, sp, kubelet, ev, base)

    def _miss(self, i: int, v: Virtual, sp: "SimPod", kubelet: Any, ev: Hashable,
              base: Hashable) -> tuple[bool, tuple[str, str] | None]:
        """:meth:`start` for an event the table does not know in ``v``'s state (``ev``: its key
        there, ``base``: the pod's own; ``versions`` counted by the caller): the plain NRI path on
        a real node, its answer kept as a new edge."""
        table = v.table
        pod = sp.pod
        rt = self.rt
        table.misses += 1
        real = self._real(v)
        self._keep_copy(v, real)
        warned = warn_calls()
        counted = table.canon is not None and table.guard is None
        overcommits = runtime_canon.overcommits(real.rn) if counted else 0
        parent = (table.states[v.state].key if runtime_inckey.INCREMENTAL and table.canon is not None
                  and (table.keyer is runtime_fig.snapshot or table.keyer is runtime_fig_balloons.snapshot) else None)
        if parent is not None:
            touched = runtime_inckey.watch(real.rn)
            try:
                refused = real.rn.start_pod(pod, self._cri(table, ev, pod))
            finally:
                runtime_inckey.unwatch(real.rn)
        else:
            refused = real.rn.start_pod(pod, self._cri(table, ev, pod))
        crossed = table.guard is not None and v.state not in table.ordered and not table.guard(real.rn)
        if refused is not None or warn_calls() != warned or (
                counted and runtime_canon.overcommits(real.rn) != overcommits) or (
                crossed and not runtime_canon_balloons.same_order(v, real)):
            # the answer names the pod (or, on canonical states, may depend on the order the
            # node's pods came in, and the real node's order is not this node's): this node
            # leaves the table, its own history replayed
            rn = self._leave(i, v, kubelet)
            rt.versions[i] -= 1
            return True, rt.started(i, rn, sp, rn.start_pod(pod))
        if crossed:
            # past the bound from a joined state: the answer is kept for this node's order alone
            mark = table.edges.setdefault((v.state, base), Edge(-1))
            table.by_event.setdefault(base, {}).setdefault(v.state, mark)
            ev = runtime_canon_balloons.ordered_event(base, v)
        key = pod.key
        if runtime_fig.ENABLED:
            made: list[dict[str, Any]] = []
            runtime_fig.record(rt, i, real.rn, sp, made, key, table.wanted, base)
            templates = tuple(made)
        else:
            rows = rt.record(i, real.rn, sp)
            templates = tuple({k: val for k, val in row.items() if k not in _ROW_IDENTITY} for row in rows)
        edge = table.edges[(v.state, ev)] = Edge(0, templates, sp.cpus, sp.mems)
        if ev is base:
            table.by_event.setdefault(base, {})[v.state] = edge
        if table.canon is not None:
            num = real.evs[key] = table.ev_ids.setdefault(base, len(table.ev_ids))
            if ev is not base:
                table.ev_ids[ev] = num   # the same pod shape: one number in state keys
            if table.key_figures is not None:
                table.key_figures.pods.setdefault(num, pod)
        if parent is not None and not crossed:
            real.since = (parent, touched)
        # the guard answered True above unless it was not asked (no guard, an ordered state) or
        # the node crossed the bound
        table.guarded = GUARD_ONCE and table.guard is not None and not crossed and v.state not in table.ordered
        self._arrive(table, edge, real, key)
        self._advance(v, edge.next, ("c", pod, ev), key, edge)
        v.real = table.states[edge.next].held = real
        _settle(self.rt.sim)
        return True, None

    def stop(self, i: int, sp: "SimPod") -> bool:
        """``handled``: the pod left node ``i`` (on the table)."""
        v = self.nodes.get(i)
        if v is None:
            return False
        if v.lag:
            runtime_hit.sync(v)
        slot = v.slots.get(sp.pod.key)
        if slot is None:
            return True
        table = v.table
        ev = ("d", slot)
        self.rt.versions[i] += 1
        edge = table.edges.get((v.state, ev))
        del v.slots[sp.pod.key]
        if edge is not None:
            table.hits += 1
            self._park(v)
            self._advance(v, edge.next, ("d", slot, None), None, edge)
            return True
        table.misses += 1
        real = self._real(v)
        self._keep_copy(v, real)
        gone = real.keys[slot]
        real.rn.delete_pod(gone)
        real.evs.pop(gone, None)
        edge = table.edges[(v.state, ev)] = Edge(0)
        self._arrive(table, edge, real, None)
        self._advance(v, edge.next, ("d", slot, None), None, edge)
        v.real = table.states[edge.next].held = real
        _settle(self.rt.sim)
        return True

    def figures(self, i: int, compute: Any) -> Any:
        """``compute(rn)`` for node ``i``'s state (once per state); None when the node is not on
        the table or never ran a pod."""
        v = self.nodes.get(i)
        if v is None or not v.history:
            return None
        st = v.table.states[v.state]
        if st.figures is None and st.key is not None:
            kf = v.table.key_figures
            st.figures = (runtime_fig_balloons.key_figures(kf, st.key) if type(kf) is runtime_fig_balloons.KeyFigures
                          else runtime_fig.key_figures(kf, st.key))
        if st.figures is None:
            real = self._real(v)
            st.figures = compute(real.rn)
            v.real = real
            self._park(v)
        return st.figures

    # --- states --------------------------------------------------------------------------------
    @staticmethod
    def _arrive(table: Table, edge: Edge, real: Real, created: str | None) -> None:
        """After a miss, ``real`` is in the edge's next state: a new one, or on canonical states
        the one of its key if the table holds it (then its pods are put in that state's order)."""
        guarded = table.guarded   # the guard answered True for the node as it is now (GUARD_ONCE)
        table.guarded = False
        if table.canon is None:
            edge.next = table.new_state()
            table.states[edge.next].figures = _figures(real.rn)
            if created is not None:
                real.keys.append(created)
            return
        since = real.since
        if since is not None:
            real.since = None
            got = None
            if created is not None and table.keyer is runtime_fig.snapshot:
                got = runtime_inckey.creation_key(real.rn, real.evs, since[0], real.keys, created, since[1],
                                                  table.owners)
            elif created is not None and table.keyer is runtime_fig_balloons.snapshot:
                got = runtime_inckey.balloons_creation_key(real.rn, real.evs, since[0], real.keys, created, since[1],
                                                           table.owners)
            if got is not None:
                key, order, perm, born = got
            else:
                key, order = table.keyer(real.rn, real.evs)
                perm = None
        else:
            key, order = table.keyer(real.rn, real.evs)
            perm = None
        if perm is None:
            edge.perm, edge.born = runtime_canon.permutation(real.keys, order, created)
        else:
            edge.perm, edge.born = perm, born
        real.keys = order
        if table.guard is not None and not ((guarded or table.guard(real.rn)) and table.in_order(real.rn, real.evs)):
            edge.next = table.new_state()
            table.ordered.add(edge.next)
            table.states[edge.next].figures = _figures(real.rn)
            return
        # one lookup (a key's hash is a walk of its tuples, not kept: hashed once, not twice)
        new = len(table.states)
        nxt = table.canon.setdefault(key, new)
        if nxt != new:
            table.joins += 1
            edge.next = nxt
            return
        edge.next = table.new_state()
        if runtime_inckey.INCREMENTAL:
            table.states[edge.next].key = key   # the parent key of this state's misses
        if table.key_figures is not None:
            if type(table.key_figures) is runtime_fig_balloons.KeyFigures:
                runtime_fig_balloons.keep_key(table.key_figures, real.rn)
            else:
                runtime_fig.keep_key(table.key_figures, real.rn)
            table.states[edge.next].key = key
        else:
            table.states[edge.next].figures = _figures(real.rn)

    @staticmethod
    def _advance(v: Virtual, nxt: int, event: tuple[str, Any, Hashable], key: str | None, edge: Edge) -> None:
        if key is not None and v.table.canon is not None and runtime_hit.ENABLED:
            # a creation on pod-keyed states: its positions brought in when a deletion reads them,
            # as a hit's are (:func:`.runtime_hit.sync`)
            v.state = nxt
            v.path.append(nxt)
            v.history.append(event)
            v.lag += 1
            return
        if v.lag:
            runtime_hit.sync(v)
        v.state = nxt
        v.path.append(nxt)
        v.history.append(event)
        if v.table.canon is not None:
            runtime_canon.remap(v.slots, edge.perm, edge.born, key)
        elif key is not None:
            v.slots[key] = v.created
            v.created += 1

    @staticmethod
    def _park(v: Virtual) -> None:
        """The node moves on from its state: a real node it holds stays there for later misses."""
        if v.real is not None:
            st = v.table.states[v.state]
            if st.held is v.real:
                st.held = None
            if st.parked is None:
                st.parked = v.real
            v.real = None

    @staticmethod
    def _keep_copy(v: Virtual, real: Real) -> None:
        """Before ``real`` leaves its state by a miss, a snapshot of it is kept there
        (:mod:`.runtime_snapshot`); when the node can not be snapshot, a copy of it is parked
        there if the state is shallow."""
        st = v.table.states[v.state]
        if st.snapshot is not None or (st.parked is None and _snapshot(v.table, st, real)):
            return
        if st.parked is None and len(v.path) - 1 <= CLONE_DEPTH:
            st.parked = real.copy(v.table)

    def _real(self, v: Virtual) -> Real:
        """A real node in ``v``'s state: the one it holds, the one parked there, or the one parked
        nearest on its path with the rest of its history replayed (from a fresh node if none)."""
        held = v.real
        table = v.table
        if held is not None:
            v.real = None
            if table.states[v.state].held is held:
                table.states[v.state].held = None
            return held
        st = table.states[v.state]
        if st.parked is None and st.held is not None:
            # another node holds a real node in this state (it came here by a miss and has not
            # moved on): a copy of it, no replay
            table.copied_held += 1
            return st.held.copy(table)
        k = len(v.path) - 1
        # on balloons states: not from before the node's last ordered creation (another order there)
        floor = runtime_canon_balloons.replay_floor(v.history) if table.guard is not None else 0
        while k >= floor and table.states[v.path[k]].parked is None and table.states[v.path[k]].snapshot is None:
            k -= 1
        if runtime_undo.ENABLED and runtime_undo.worth(table, len(v.path) - 1 - k if k >= floor else len(v.path)):
            # a long replay ahead (a fork counted as one creation): a child state's node less the
            # pod its edge created, if that is a node in this state
            undone = runtime_undo.from_child(table, v.state)
            if undone is not None:
                return undone
        parked = table.states[v.path[k]].parked if k >= floor else None
        snap = table.states[v.path[k]].snapshot if k >= floor else None
        if parked is None and snap is not None:
            table.restored += 1
            real = Real(table.snapshots.restore(snap[0]), list(snap[1]), dict(snap[2]))
        elif parked is not None:
            st = table.states[v.path[k]]
            if st.snapshot is not None or _snapshot(table, st, parked) or k > CLONE_DEPTH:
                st.parked = None   # the state keeps its snapshot (or is deep): the node goes on
                real = parked
            else:
                # a shallow state keeps its node for the many later misses below it: a copy goes on
                real = parked.copy(table)
        else:
            k = 0
            real = Real(self._fresh(v))
        rn = real.rn
        for j in range(k, len(v.history)):
            kind, arg, ev = v.history[j]
            table.replayed += 1
            if kind == "c":
                refused = rn.start_pod(arg, self._cri(table, ev, arg))
                if refused is not None:  # the table only holds creations that succeeded
                    raise RuntimeError(f"internal error: replaying {arg.key} on a runtime node: {refused.message}")
                if table.canon is None:
                    real.keys.append(arg.key)
                else:
                    real.evs[arg.key] = table.ev_ids[ev]
                    edge = table.edges[(v.path[j], ev)]
                    real.keys = runtime_canon.follow(real.keys, edge.perm, edge.born, arg.key)
            else:
                gone = real.keys[arg]
                rn.delete_pod(gone)
                if table.canon is not None:
                    real.evs.pop(gone, None)
                    edge = table.edges[(v.path[j], ("d", arg))]
                    real.keys = runtime_canon.follow(real.keys, edge.perm, edge.born, None)
        return real

    @staticmethod
    def _cri(table: Table, ev: Hashable, pod: "Pod") -> tuple[tuple[dict[str, Any], str], ...]:
        """The CRI resources and QoS class of each of the pod's containers, as the table's kubelet
        computes them (once per event: the pod's name and UID do not enter them)."""
        got = table.cri.get(ev)
        if got is None:
            from ..diagnostics import warn_calls
            from ..kubelet.admission import container_resources_for

            warned = warn_calls()
            got = tuple(container_resources_for(table.kubelet, pod, c) for c, _ in pod.all_containers())
            if warn_calls() == warned:   # a warning names the pod: computed again for the next one
                table.cri[ev] = got
        return got

    def _fresh(self, v: Virtual) -> "RuntimeNode":
        from .runtime_policies import fork_runtime_node

        sn = v.table.node
        return fork_runtime_node(sn.machine, sn.runtime, sn.kubelet, v.table.kubelet)

    def _leave(self, i: int, v: Virtual, kubelet: Any) -> "RuntimeNode":
        """Node ``i`` goes to the plain path: a fresh node below its own kubelet, its history replayed."""
        from .runtime_policies import fork_runtime_node

        del self.nodes[i]
        self.at[i] = None
        if v.real is not None and v.table.states[v.state].held is v.real:
            v.table.states[v.state].held = None
        self.rt.plain.add(i)
        sn = self.rt.sim.sim_nodes[i]
        rn = fork_runtime_node(sn.machine, sn.runtime, sn.kubelet, v.table.kubelet)
        keys: list[str] = []
        table = v.table
        for j, (kind, arg, ev) in enumerate(v.history):
            if kind == "c":
                rn.start_pod(arg)
                if table.canon is None:
                    keys.append(arg.key)
                else:
                    edge = table.edges[(v.path[j], ev)]
                    keys = runtime_canon.follow(keys, edge.perm, edge.born, arg.key)
            else:
                rn.delete_pod(keys[arg])
                if table.canon is not None:
                    edge = table.edges[(v.path[j], ("d", arg))]
                    keys = runtime_canon.follow(keys, edge.perm, edge.born, None)
        rn.kubelet = kubelet
        self.rt.nodes[i] = rn
        return rn
