"""A hit of ``simulate``'s table of runtime-node states, with less work per creation.

:mod:`.runtime_memo` answers most pod creations on runtime-policy nodes from its table: an edge
``(state, event)`` holds what the plain NRI path answered the first time. A *hit* still pays
for its key and for applying the answer — ~12 us each (loaded machine) for ~45,000 of the
50,000 creations at 5,000 nodes x 50,000 pods. This module is that hit made lean (~7 us); the
answer is the same, field by field:

* :func:`event_key` is :func:`.runtime_memo.pod_event`'s key (the same value): the pod without
  its name and UID encoded once (each ``Quantity`` through its own ``__str__``, one Python call
  instead of two), with no import per call; for UIDs that cannot spell a QoS class in the cgroup
  parent (:func:`.runtime_memo._qos_substrings`) the whole key is read back by that encoding,
  one object per pod shape and table (so every node's history holds that one object), together
  with that key's creation edges by state (``Table.by_event``): the hit's edge is found by the
  state alone, no ``(state, key)`` tuple made, hashed and compared;
* :func:`start` is the whole hit in one frame (the node — read from a list by index,
  ``MemoNodes.at`` —, the key, the edge, the answer): the pod's placement rows (copied from
  forms made once per edge, the keys in the plain path's order, one form object per content and
  table: a few hundred shared by thousands of edges stay in the cache; an edge of one row keeps
  its form in ``Edge.form`` too, so a hit does not read the edge's tuple of forms, a cold object
  of its own), its CPUs and memory nodes, the node's next state; a hit does not count
  the node's NodeResourceTopology version (``RuntimePolicies.versions``: read only by
  ``live_nrt``, which is never installed where nodes are on the table); on pod-keyed states
  (:mod:`.runtime_canon`) the pods' positions are not renumbered per creation — neither a hit's
  nor a miss's (:meth:`.runtime_memo.MemoNodes._advance`) — but brought in by :func:`sync` when
  a deletion (or balloons' order check) reads them (``Virtual.lag``: the creations not in
  ``Virtual.slots`` yet): the same permutations, applied later, or never on a node whose last
  events are creations.

``ENABLED = False`` applies hits as :meth:`.runtime_memo.MemoNodes.start` spells them (the plain
fast path), for equivalence tests and A/B runs; ``tests/sim/test_runtime_hit.py`` compares the
two, and the plain NRI path, on random workloads.

Not an upstream module: a kubetwin fast path over nri-plugins' policies (``cmd/plugins``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Hashable

import msgspec

from ..model.quantity import Quantity
from . import runtime_memo

if TYPE_CHECKING:
    from ..model.pod import Pod
    from .loop import SimPod
    from .runtime_memo import Edge, MemoNodes, Table, Virtual

#: hits through :func:`start` and :func:`event_key` (False: :mod:`.runtime_memo`'s own code)
ENABLED = True

_replace = msgspec.structs.replace
#: :data:`.runtime_memo._ENCODER`'s bytes: the only non-msgspec type in a pod is ``Quantity``,
#: written as its string (:func:`..model.meta.enc_hook`); its ``__str__`` as the hook is one
#: Python call per quantity instead of two (any other type still raises)
_ENCODER = msgspec.json.Encoder(enc_hook=Quantity.__str__)
_pod_qos: Callable[[Any, "Pod"], str] | None = None


def _has_affinity(annotations: dict[str, str]) -> bool:
    """Whether a pod names (anti-)affinity annotations (:func:`.runtime_memo.pod_event`'s test)."""
    affinity = runtime_memo._AFFINITY_KEYS
    return any(k.endswith(affinity) or ".resource-policy.nri.io/affinity" in k
               or ".resource-policy.nri.io/anti-affinity" in k for k in annotations)


def event_key(table: "Table", pod: "Pod", kubelet: Any) -> Hashable | None:
    """``pod_event(pod, table.layout, kubelet, table.qos)``, computed with less work per call."""
    blank = _blank(pod)
    return None if blank is None else _keyed(table, pod, kubelet, blank)[0]


def _blank(pod: "Pod") -> bytes | None:
    """The pod without its name, UID, start time and nominated node, encoded (:func:`.runtime_memo.pod_event`'s
    bytes); None for a pod with (anti-)affinity annotations."""
    md = pod.metadata
    ann = md.annotations
    if ann and _has_affinity(ann):
        return None
    status = pod.status
    if status.start_time is not None or status.nominated_node_name is not None:
        status = _replace(status, start_time=None, nominated_node_name=None)
    return _ENCODER.encode(_replace(pod, metadata=_replace(md, name="", uid=""), status=status))


def _keyed(table: "Table", pod: "Pod", kubelet: Any, blank: bytes) -> tuple[Hashable, "dict[int, Edge] | None"]:
    """The event key of a pod encoded as ``blank``, and — for UIDs that cannot spell a QoS class
    (read back per ``blank`` after the first such pod) — the table's creation edges of that key
    by state (``Table.by_event``'s dict; None for other UIDs: their edges are read by ``(state, key)``)."""
    global _pod_qos
    md = pod.metadata
    uid = md.uid or pod.uid
    fast = runtime_memo.FAST_PARENT and "b" not in uid and ("/" not in uid or not table.systemd)
    if fast:
        got = table.hit_keys.get(blank)
        if got is not None:
            return got
    qos = table.qos
    cls = qos.get(blank)
    if cls is None:
        if _pod_qos is None:
            from ..runtime.node import _pod_qos as computed

            _pod_qos = computed
        cls = qos[blank] = _pod_qos(kubelet, pod)
    key = ("c", blank) + runtime_memo._qos_substrings(table.layout, cls, uid)
    if fast:
        got = table.hit_keys[blank] = (key, table.by_event.setdefault(key, {}))
        return got
    return key, None


def start(memo: "MemoNodes", i: int, sp: "SimPod", kubelet: Any) -> tuple[bool, tuple[str, str] | None]:
    """:meth:`.runtime_memo.MemoNodes.start` with its hit in one frame: the key, the edge, the
    answer applied; a miss goes to the table's own code."""
    v = memo.at[i]   # ``memo.nodes.get(i)``
    if v is None:
        v = memo._virtual(i, kubelet)
        if v is None:
            return False, None
    table = v.table
    pod = sp.pod
    # the key (:func:`event_key` with its common case in this frame): the pod's encoding read
    # back per table to its key and its edges by state
    md = pod.metadata
    ann = md.annotations
    if ann and _has_affinity(ann):
        memo._leave(i, v, kubelet)
        return False, None
    status = pod.status
    if status.start_time is not None or status.nominated_node_name is not None:
        status = _replace(status, start_time=None, nominated_node_name=None)
    blank = _ENCODER.encode(_replace(pod, metadata=_replace(md, name="", uid=""), status=status))
    uid = md.uid or pod.uid
    got: tuple[Hashable, dict[int, Edge] | None] | None = (
        table.hit_keys.get(blank) if runtime_memo.FAST_PARENT and "b" not in uid
        and ("/" not in uid or not table.systemd) else None)
    if got is None:
        got = _keyed(table, pod, kubelet, blank)
    ev, by_state = got
    state = v.state
    edge = by_state.get(state) if by_state is not None else table.edges.get((state, ev))
    base = ev
    if edge is not None and edge.next < 0:
        # the answer depends on the order the node's pods came in: the edge of that order
        ev = runtime_memo.runtime_canon_balloons.ordered_event(base, v)
        edge = table.edges.get((state, ev))
    rt = memo.rt
    if edge is None:
        rt.versions[i] += 1
        return memo._miss(i, v, sp, kubelet, ev, base)
    table.hits += 1
    if v.real is not None:
        runtime_memo.MemoNodes._park(v)
    key = f"{md.namespace}/{md.name}"   # ``pod.key``
    form = edge.form
    if form is None:
        forms = edge.forms
        if forms is None:
            forms = edge.forms = _forms(table, edge)
            form = edge.form = forms[0] if len(forms) == 1 else None
    if form is not None:   # one row (one container), copied from the edge's form itself
        row = form.copy()   # the keys in the plain path's order: pod, the template's, time, node
        row["pod"] = key
        sim = rt.sim
        row["time"] = sim.now
        row["node"] = sim.cluster.names[i]
        rt.placed.append(row)
    elif forms:
        sim = rt.sim
        now, name = sim.now, sim.cluster.names[i]
        placed = rt.placed
        for t in forms:
            row = t.copy()
            row["pod"] = key
            row["time"] = now
            row["node"] = name
            placed.append(row)
    sp.cpus, sp.mems = edge.cpus, edge.mems
    nxt = edge.next
    v.state = nxt
    v.path.append(nxt)
    v.history.append(("c", pod, ev))
    if table.canon is None:
        v.slots[key] = v.created
        v.created += 1
    else:
        v.lag += 1   # the pods' positions when a deletion needs them
    return True, None


def _forms(table: "Table", edge: "Edge") -> tuple[dict[str, Any], ...]:
    """The edge's rows as a hit copies them (the keys in the plain path's order: pod, the
    template's, time, node), each form one object per content and table: edges share a few
    hundred forms among thousands (5,000 x 50,000, balloons: 274 in 3,142 edges; topology-aware
    52 in 2,183), and a form copied at every hit stays in the cache — an edge's own form is cold
    by the time its next hit copies it."""
    out = []
    for t in edge.rows:
        form = {"pod": None, **t, "time": None, "node": None}
        try:
            form = table.forms.setdefault(tuple(form.items()), form)
        except TypeError:   # a value that is not hashable: the form kept as the edge's own
            pass
        out.append(form)
    return tuple(out)


def sync(v: "Virtual") -> None:
    """``v.slots`` after the last ``v.lag`` events (creations :func:`start` answered, or misses kept, on canonical
    states): each edge's permutation applied in order, as :func:`.runtime_canon.remap` does — an
    edge that keeps the old positions and puts the new pod after them adds its slot alone."""
    edges = v.table.edges
    history, path = v.history, v.path
    slots = v.slots
    n = len(history)
    for j in range(n - v.lag, n):
        _, pod, ev = history[j]
        edge = edges[(path[j], ev)]
        stays = edge.stays
        perm = edge.perm
        if stays is None:
            stays = edge.stays = edge.born == len(perm) and perm == tuple(range(len(perm)))
        if not stays:
            slots = {k: p for k, s in slots.items() if (p := perm[s]) >= 0}
        slots[pod.key] = edge.born
    v.slots = slots
    v.lag = 0
