"""A miss's canonical key made from its parent state's key: only what the creation changed read.

After each miss :mod:`.runtime_memo`'s pod-keyed table keys the real node's new state
(:func:`.runtime_fig.snapshot`, the value of :func:`.runtime_canon.snapshot`) by walking every
live container of the node. A creation on a ``topology-aware`` node changes few of them: the new
pod's containers, and the containers whose NRI resources the creation's updates rewrote (the
shared pool's ``cpuset`` after an exclusive grant: ``updateSharedAllocations``). Everything else
a pod's descriptor holds is unchanged by a creation that stays on the table:

* its containers' runtime states (only the new pod's init containers exit);
* their ``cpuset`` CPUs, memory nodes and CPU shares: written only by NRI updates, which the
  runtime applies by container id (:meth:`..runtime.node.RuntimeNode._apply_updates`, watched
  here for the ids it is given);
* their grants: a creation's grant is the new container's; another grant's memory zone moves
  only when libmem moves its request (an overcommit handled — the table leaves then:
  :func:`.runtime_canon.overcommits`) and its ``cpuset`` memory nodes come as an NRI update;
* their libmem requests: moved only by an overcommit handled, as above.

So :func:`creation_key` takes the parent state's descriptors (kept on ``State.key``, aligned with
the real node's pods in the parent's canonical order, ``Real.keys``), replaces those of the pods
with a watched container, adds the new pod's, sorts them as the walk does (by descriptor, ties by
the real node's own pod order) and reads the node's part (pools' free supplies, CPU classes,
memory zones) anew — the walk's value exactly.

``balloons`` (:func:`balloons_creation_key`, the value of :func:`.runtime_fig_balloons.snapshot`):
a container's descriptor also holds its balloon's position in the policy's list and its own in
its pod's entry there. A creation adds the new pod's entries alone and appends new balloons, so
another pod's positions stay, unless a balloon left the list (the ones after it move: the walk
then, found by a balloon of another type or instance at a parent position). An updated
container's libmem request is read anew as well as its ``cpuset`` (a resized balloon moves its
containers' memory zones); every balloon's part (CPUs, memory nodes, shared idle CPUs, groups) and
the free CPUs are read anew. Only states within the memory bound keep a key (no overcommit can
move another request); past it (``Table.ordered``) and on a creation that crosses it, the walk.
Deletions and the first state take the walk on both policies.

The pods' order (:func:`_pods_part`) is not sorted anew: the parent's is sorted, so the pods whose
descriptors changed go back in by a search and the new pod (the node's last) after its equals
(:func:`_inserted`); equal pods stay in the node's own order, as the walk's sort leaves them
(checked unless the parent order is an :class:`Order`, which only this module makes). The edge's
positions come with the searches (no :func:`.runtime_canon.permutation`), and equal descriptors
are one object (:func:`_shared`), so comparing them stops at the identity. ``INSERT = False``:
the sort and ``permutation``.

``INCREMENTAL = False`` keeps the walk after every miss (``bench_runtime_sim.py --plain``);
``tests/sim/test_runtime_inckey.py`` holds the two equal (and :mod:`.runtime_canon`'s and
:mod:`.runtime_canon_balloons`' keys) at every creation miss of random runs.

Not an upstream module: a kubetwin fast path over nri-plugins v0.14.0's ``topology-aware`` and
``balloons`` policies (``cmd/plugins/topology-aware/policy``, ``cmd/plugins/balloons/policy``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any, Callable, Hashable

from . import runtime_fig, runtime_fig_balloons

if TYPE_CHECKING:
    from ..runtime.node import RuntimeNode

#: a creation's key from its parent state's key (False: the walk after every miss)
INCREMENTAL = True

#: a creation's key, its pods in canonical order and the edge's ``(perm, born)`` (``perm`` None:
#: not known here, :func:`.runtime_canon.permutation` gives it)
Made = tuple[Hashable, list[str], "tuple[int, ...] | None", int]


def watch(rn: "RuntimeNode") -> set[str]:
    """Until :func:`unwatch`: the ids of the containers ``rn``'s runtime is given NRI updates for
    (the instance's ``_apply_updates`` wrapped; the class's own called as before)."""
    touched: set[str] = set()
    plain = type(rn)._apply_updates

    def applying(updates: Any) -> None:
        for u in updates:
            touched.add(u.container_id)
        plain(rn, updates)

    rn._apply_updates = applying   # type: ignore[method-assign]
    return touched


def unwatch(rn: "RuntimeNode") -> None:
    rn.__dict__.pop("_apply_updates", None)


def _owner(owners: dict[str, str], pods: dict[str, Any], cid: str) -> str | None:
    """The pod of container ``cid`` (None: none of ``pods``), every pod's containers entered in
    ``owners`` (those created by replays are not there yet)."""
    for key, rec in pods.items():
        for r in rec.containers:
            owners[r.ctr.id] = key
    return owners.get(cid)


def _updated(rec: Any, old: tuple[int, tuple[Any, ...]]) -> tuple[int, tuple[Any, ...]]:
    """An older pod's descriptor after NRI updates of its containers: their ``cpuset`` CPUs,
    memory nodes and CPU shares read anew, the rest (name, runtime state, grant, libmem request:
    unchanged by another pod's creation) kept; ``old`` itself when nothing changed."""
    ctrs = []
    same = True
    for r, o in zip(rec.containers, old[1]):
        cpu = runtime_fig.container_cpu(r.ctr)
        cpus, mems, shares = cpu.cpus, cpu.mems, -1 if cpu.shares is None else cpu.shares
        if cpus == o[2] and mems == o[3] and shares == o[4]:
            ctrs.append(o)
        else:
            same = False
            ctrs.append((o[0], o[1], cpus, mems, shares, o[5], o[6]))
    return old if same else (old[0], tuple(ctrs))


def _pods_part(pods: dict[str, Any], parent: tuple[Any, ...], parent_order: list[str], created: str,
               mine: tuple[int, tuple[Any, ...]], touched: set[str], owners: dict[str, str],
               updated: Callable[[Any, tuple[int, tuple[Any, ...]]], tuple[int, tuple[Any, ...]]]
               ) -> tuple[tuple[Any, ...], list[str], tuple[int, ...] | None, int]:
    """The pods' part of a state key after ``created`` (its descriptor ``mine``) started: the
    parent's descriptors (``parent``, pods ``parent_order``) with those of the pods whose
    containers were updated (``touched``) made anew by ``updated``, sorted as the walks sort them
    (descriptor, ties by the node's own pod order); the pods in that order; and, when the order
    was made by :func:`_inserted`, the edge's ``(perm, born)`` (``None, -1``: not known,
    :func:`.runtime_canon.permutation` then)."""
    changed: dict[int, tuple[int, tuple[Any, ...]]] = {}
    seen: set[str] = set()
    for cid in touched:
        pk = owners.get(cid)
        if pk is None:
            pk = _owner(owners, pods, cid)
        if pk is None or pk == created or pk in seen:
            continue
        seen.add(pk)
        j = parent_order.index(pk)
        was = parent[j]
        now = updated(pods[pk], was)
        if now is not was:
            changed[j] = _shared(now) if INSERT else now
    if INSERT:
        got = _inserted(pods, parent, parent_order, created, _shared(mine), changed)
        if got is not None:
            return got
    descs = list(parent)
    for j, now in changed.items():
        descs[j] = now
    pos = {k: i for i, k in enumerate(pods)}
    items = [(desc, pos[k], k) for desc, k in zip(descs, parent_order)]
    items.append((mine, pos[created], created))
    items.sort()
    return tuple([d for d, _, _ in items]), Order([k for _, _, k in items]), None, -1


#: the pods put in the parent's order by searches, not sorted with it (False: the sort)
INSERT = True

#: (pods before, position of the new pod) -> the edge's ``perm`` (:func:`_inserted`)
_PERMS: dict[tuple[int, int], tuple[int, ...]] = {}


#: pod descriptor -> the one object of its value the keys made here hold (:func:`_shared`)
_SHARED: dict[tuple[int, tuple[Any, ...]], tuple[int, tuple[Any, ...]]] = {}


def _shared(d: tuple[int, tuple[Any, ...]]) -> tuple[int, tuple[Any, ...]]:
    """The object of ``d``'s value the keys made here hold (``d`` itself when new): a node's
    descriptors are compared by the searches of :func:`_inserted` far more often than they are
    made, and equal ones that are one object compare by identity, without reading the tuples
    (cold in a long run's heap). Cleared past a size: sharing is a speed, not a meaning."""
    got = _SHARED.setdefault(d, d)
    if got is d and len(_SHARED) > 1 << 17:
        _SHARED.clear()
    return got


def _equal(a: tuple[int, tuple[Any, ...]], b: tuple[int, tuple[Any, ...]]) -> bool:
    """Two pod descriptors equal: the same object (equal ones are shared, :func:`_inserted`), or
    of one event number and equal, container by container."""
    return a is b or (a[0] == b[0] and a == b)


class Order(list[str]):
    """A real node's pods in canonical order as :func:`_inserted` and :func:`_pods_part` make it:
    equal descriptors in the node's own pod order, as the walk puts them. Only this module makes
    one, always as the new ``Real.keys``; whatever changes a real node's pods otherwise gives it
    a plain list (replays: :func:`.runtime_canon.follow`; copies and restores: ``list(...)``), so
    a parent order of this type needs no check of its equal pods' order."""

    __slots__ = ()


def _inserted(pods: dict[str, Any], parent: tuple[Any, ...], parent_order: list[str], created: str,
              mine: tuple[int, tuple[Any, ...]], changed: dict[int, tuple[int, tuple[Any, ...]]]
              ) -> tuple[tuple[Any, ...], list[str], tuple[int, ...] | None, int] | None:
    """:func:`_pods_part`'s sort made searches. The parent's descriptors are sorted; those left
    where they were (all but ``changed``: parent position -> new descriptor) are in the walk's
    order already when equal ones are in the node's own pod order (so when the parent order is an
    :class:`Order`; checked on a plain list — a node that replayed another node's path may hold
    its equal pods in that node's order: None then, the sort). Each changed pod goes back in by a
    search, after its equals that come before it on the node; the new pod, the node's last (else
    None), after all its equals (``bisect_right``). A descriptor put in next to an equal one is
    replaced by it, so equal descriptors tend to be one object and comparing them stops at the
    identity. The edge's ``(perm, born)`` comes with the order: with nothing changed the old
    positions move by one from the new pod's on (kept per size and position), else each old
    pod's place is followed through the searches."""
    if next(reversed(pods)) != created:
        return None
    if changed:
        kept = [j for j in range(len(parent)) if j not in changed]
        descs = [parent[j] for j in kept]
        keys = Order([parent_order[j] for j in kept])
    else:
        descs = parent   # type: ignore[assignment]
        keys = parent_order   # type: ignore[assignment]
    pos: dict[str, int] | None = None
    if type(parent_order) is not Order:
        for j in range(len(descs) - 1):
            if _equal(descs[j], descs[j + 1]):
                if pos is None:
                    pos = {k: i for i, k in enumerate(pods)}
                if pos[keys[j]] > pos[keys[j + 1]]:
                    return None
    if changed:
        for j, d in changed.items():
            k = parent_order[j]
            at = bisect_left(descs, d)
            end = bisect_right(descs, d, at)
            if at < end:
                if pos is None:
                    pos = {k: i for i, k in enumerate(pods)}
                p = pos[k]
                d = descs[at]
                while at < end and pos[keys[at]] < p:
                    at += 1
            descs.insert(at, d)
            keys.insert(at, k)
            kept.insert(at, j)
        i = bisect_right(descs, mine)
        if i and _equal(descs[i - 1], mine):
            mine = descs[i - 1]
        descs.insert(i, mine)
        keys.insert(i, created)
        moved = [0] * len(kept)
        for p, j in enumerate(kept):
            moved[j] = p if p < i else p + 1
        return tuple(descs), keys, tuple(moved), i
    n = len(parent)
    i = bisect_right(parent, mine)
    if i and _equal(parent[i - 1], mine):
        mine = parent[i - 1]
    perm = _PERMS.get((n, i))
    if perm is None:
        perm = _PERMS[(n, i)] = tuple(range(i)) + tuple(range(i + 1, n + 1))
    order = Order(parent_order[:i])
    order.append(created)
    order += parent_order[i:]
    return parent[:i] + (mine,) + parent[i:], order, perm, i


def creation_key(rn: "RuntimeNode", evs: dict[str, int], parent: Any, parent_order: list[str], created: str,
                 touched: set[str], owners: dict[str, str]) -> Made:
    """:func:`.runtime_fig.snapshot` of ``rn`` just after ``created`` started on it, from the key
    of the state it was in (``parent``, its pods ``parent_order``) and the ids of the containers
    updated meanwhile (``touched``), with the edge's ``(perm, born)`` when known (``perm`` None:
    :func:`.runtime_canon.permutation`). ``owners``: container id -> pod key, filled here."""
    assert rn.resmgr is not None
    policy: Any = rn.resmgr.policy
    grants = policy.allocations
    requests = policy.mem_allocator.requests
    new = rn.pods[created]
    for r in new.containers:
        owners[r.ctr.id] = created
    descs, order, perm, born = _pods_part(rn.pods, parent[0], parent_order, created,
                                          runtime_fig.pod_descriptor(new, evs[created], grants, requests), touched,
                                          owners, _updated)
    return (descs, runtime_fig.node_part(policy)), order, perm, born


def balloons_creation_key(rn: "RuntimeNode", evs: dict[str, int], parent: Any, parent_order: list[str],
                          created: str, touched: set[str], owners: dict[str, str]) -> Made | None:
    """:func:`.runtime_fig_balloons.snapshot` of ``rn`` just after ``created`` started on it (a
    creation that kept the node within its memory bound), from the parent state's key as
    :func:`creation_key` does; None when a balloon left the list (the balloons after it moved, and
    with them every container's position: the walk then). Another pod's containers keep their
    balloons and their places in them (a creation adds the new pod's alone); an updated
    container's ``cpuset`` and libmem request are read anew (a resized balloon moves its
    containers' memory zones)."""
    assert rn.resmgr is not None
    policy: Any = rn.resmgr.policy
    requests = policy.mem_allocator.requests
    types = runtime_fig_balloons._type_positions(policy.defs)
    old_balloons = parent[1][1]
    sid = rn.pods[created].sandbox.id
    where: dict[str, tuple[int, int]] = {}
    balloons = []
    for bi, b in enumerate(policy.balloons):
        ids = b.pod_ids.get(sid)
        if ids:
            for k, cid in enumerate(ids):
                where[cid] = (bi, k)
        t = runtime_fig_balloons.balloon_entry(types, b)
        if bi < len(old_balloons) and (old_balloons[bi][0] != t[0] or old_balloons[bi][1] != t[1]):
            return None
        balloons.append(t)
    if len(balloons) < len(old_balloons):
        return None
    new = rn.pods[created]
    nowhere = ()
    ctrs = []
    for r in new.containers:
        cid = r.ctr.id
        owners[cid] = created
        ctrs.append(runtime_fig_balloons.container_descriptor(r, where.get(cid, nowhere), requests.get(cid)))
    descs, order, perm, born = _pods_part(rn.pods, parent[0], parent_order, created, (evs[created], tuple(ctrs)),
                                          touched, owners, lambda rec, old: _updated_balloons(rec, old, requests))
    return (descs, runtime_fig_balloons.node_part(policy, balloons)), order, perm, born


def _updated_balloons(rec: Any, old: tuple[int, tuple[Any, ...]], requests: dict[str, Any]) -> tuple[int, tuple[Any, ...]]:
    """:func:`_updated` on a balloons node: the ``cpuset`` and the libmem request read anew, the
    name, runtime state and balloon position kept."""
    ctrs = []
    same = True
    for r, o in zip(rec.containers, old[1]):
        got = runtime_fig_balloons.container_descriptor(r, o[5], requests.get(r.ctr.id))
        if got == o:
            ctrs.append(o)
        else:
            same = False
            ctrs.append(got)
    return old if same else (old[0], tuple(ctrs))
