"""A real node for a state of the table made from a child state's node: its last pod deleted.

The table of node histories (:mod:`.runtime_memo`) runs a *miss* on a real
:class:`..runtime.node.RuntimeNode` in the node's state. With none parked or held there it used to
take the node parked nearest up the node's own path and replay the rest of its history on it —
or, with none on the path, fork a fresh node and replay the whole history: at 5,000 nodes x
50,000 pods ~120 fresh nodes a policy, 5-13 creations replayed on each (balloons 875 of its
1,361 replayed creations, topology-aware 621 of 953), a fork ~0.15 ms and a creation 0.07-0.11 ms.

A state that has been left by a creation often has a real node in the state that creation led
to (a *child*: parked there, or held by the node that came there by a miss). On pod-keyed states
(:mod:`.runtime_canon`, :mod:`.runtime_canon_balloons`) that node less the pod the edge created
is a node in the state — when its key says so: this module copies the child's node (the child
keeps its own), deletes that pod (the plain path: the runtime's and the policy's own deletion),
and keeps the copy only if its key is the state's in the table's map of keys and the balloons
order guard holds for it, exactly the test a miss that lands in a known state passes to *join*
it (:meth:`.runtime_memo.MemoNodes._arrive`). A deletion that leads to the state is then one more
history of it, answered as every joined history is; a copy whose key is another state's (or
whose deletion warned) is dropped and the miss replays as before. One copy, one deletion and one
key, against a fork and a whole history's creations. Measured, that pays on topology-aware tables
(a replayed creation ~0.11 ms in the run) and not on balloons' (~0.07 ms, and a costlier
deletion): on those it is off by default (:data:`BALLOONS`).

Not an upstream module: a kubetwin fast path over nri-plugins' policies (``cmd/plugins``); the
deletion is the plain runtime's (``RuntimeNode.delete_pod``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from ..diagnostics import warn_calls

if TYPE_CHECKING:
    from .runtime_memo import Real, Table

#: make a real node from a child state's node (False: replays only, for A/B runs and the
#: equivalence tests)
ENABLED = True

#: try it before a replay of at least this many creations (a fork of a fresh node counted as
#: one), topology-aware: measured in the run at 5,000 x 50,000, a try 0.36-0.39 ms (copy 0.23,
#: deletion 0.07, key 0.03) against ~0.11 ms a replayed creation; 3 gave the least CPU in replays
#: and tries (71-72 ms; 4: 75-80 ms; no tries: 101-109 ms)
MIN_REPLAY = 3
#: tried on balloons tables too (off: measured, it does not pay there — in the run at 5,000 x
#: 50,000 a try costs 0.35-0.5 ms (copy 0.19, deletion 0.13, key and order check 0.03, one try in
#: five dropped) against ~0.07 ms a replayed creation: before replays of at least 4 creations,
#: replays 91-93 -> 46-51 ms for tries of 59-64 ms; of at least 8, 91-93 -> 63-65 ms for 41-44 ms)
BALLOONS = False


def worth(table: "Table", creations: int) -> bool:
    """Whether a try comes before a replay of ``creations`` creations on ``table``."""
    return ENABLED and creations >= MIN_REPLAY and (table.guard is None or BALLOONS)


def children(table: "Table", state: int) -> list[tuple[Hashable, int]]:
    """The creation edges out of ``state`` as ``(event, next state)``: an index of the table's
    edges by their state, brought up to date from the edges added since the last call (a dict
    keeps its insertion order, so those are its last ones)."""
    edges = table.edges
    index = table.kids
    new = len(edges) - table.kids_seen
    if new:
        it = reversed(edges.items())
        for _ in range(new):
            (s, ev), edge = next(it)
            if type(ev) is tuple and ev and ev[0] == "c":
                index.setdefault(s, []).append((ev, edge.next))
        table.kids_seen = len(edges)
    return index.get(state, [])


def from_child(table: "Table", state: int) -> "Real | None":
    """A real node in ``state`` made from a child's (see the module docstring), or None. The
    first child holding a real node is tried, once a call and never again after a failure (the
    start state is never tried: a fresh node is in it already)."""
    if table.canon is None or state == 0 or state in table.ordered:
        return None
    states = table.states
    failed = table.undo_failed_at
    for ev, nxt in children(table, state):
        if nxt < 0 or nxt in table.ordered or (state, nxt) in failed:
            continue
        st = states[nxt]
        src = st.parked if st.parked is not None else st.held
        if src is None:
            continue
        gone = _created(table, state, nxt, ev, src)
        if gone is None:
            continue
        got = _undone(table, state, src, gone)
        if got is None:
            # nodes in one state are alike to the policy: another of the child's would fail too
            failed.add((state, nxt))
        return got
    return None


def _created(table: "Table", state: int, nxt: int, ev: Hashable, src: "Real") -> str | None:
    """The pod of ``src`` (a real node in ``nxt``) whose deletion may lead back to ``state``: the
    one whose descriptor is in ``nxt``'s key and not in ``state``'s (every keyer's key starts with
    the pods' descriptors in the node's canonical order, ``src.keys``' order); otherwise (no keys
    kept, or the creation changed other pods' descriptors) the last pod of the edge's shape."""
    here, there = table.states[state].key, table.states[nxt].key
    if here is not None and there is not None and len(there[0]) == len(here[0]) + 1 == len(src.keys):
        pods, left = there[0], here[0]
        j = next((j for j, d in enumerate(left) if d != pods[j]), len(left))
        if pods[:j] + pods[j + 1:] == left:
            return src.keys[j]
    num = table.ev_ids.get(ev)
    return next((k for k in reversed(src.keys) if src.evs.get(k) == num), None) if num is not None else None


def _undone(table: "Table", state: int, src: "Real", gone: str) -> "Real | None":
    """A copy of ``src`` less the pod ``gone``, if it is in ``state`` by the table's test of a
    join; None (the copy dropped) otherwise."""
    from .runtime_memo import Real
    from .runtime_policies import clone_runtime_node

    sn = table.node
    rn = clone_runtime_node(src.rn, sn.runtime, sn.kubelet, resizable=False)
    warned = warn_calls()
    rn.delete_pod(gone)
    evs = dict(src.evs)
    del evs[gone]
    if warn_calls() != warned:
        table.undo_failed += 1
        return None
    if table.guard is not None and not (table.guard(rn) and table.in_order(rn, evs)):
        table.undo_failed += 1
        return None
    key, order = table.keyer(rn, evs)
    if table.canon is None or table.canon.get(key) != state:
        table.undo_failed += 1
        return None
    table.undone += 1
    return Real(rn, list(order), evs)
