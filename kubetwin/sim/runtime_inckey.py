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

The edge's positions (each old canonical position's new one, the new pod's) are read off the
pods' sort (:data:`POSITIONS`), not found again by :func:`.runtime_canon.permutation`.

``INCREMENTAL = False`` keeps the walk after every miss (``bench_runtime_sim.py --plain``);
``tests/sim/test_runtime_inckey.py`` holds the two equal (and :mod:`.runtime_canon`'s and
:mod:`.runtime_canon_balloons`' keys) at every creation miss of random runs.

Not an upstream module: a kubetwin fast path over nri-plugins v0.14.0's ``topology-aware`` and
``balloons`` policies (``cmd/plugins/topology-aware/policy``, ``cmd/plugins/balloons/policy``).
"""

from __future__ import annotations

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
    (descriptor, ties by the node's own pod order); the pods in that order; and with
    :data:`POSITIONS` the edge's ``(perm, born)`` read off the sort (``None, -1`` when off:
    :func:`.runtime_canon.permutation` then)."""
    descs = list(parent)
    seen: set[str] = set()
    for cid in touched:
        pk = owners.get(cid)
        if pk is None:
            pk = _owner(owners, pods, cid)
        if pk is None or pk == created or pk in seen:
            continue
        seen.add(pk)
        j = parent_order.index(pk)
        descs[j] = updated(pods[pk], descs[j])
    pos = {k: i for i, k in enumerate(pods)}
    if not POSITIONS:
        items = [(desc, pos[k], k) for desc, k in zip(descs, parent_order)]
        items.append((mine, pos[created], created))
        items.sort()
        return tuple([d for d, _, _ in items]), [k for _, _, k in items], None, -1
    # each item's last element is its parent position (the new pod: n); the node's positions are
    # distinct, so the sort never compares it and orders as above
    n = len(parent_order)
    ranked = [(desc, pos[k], j) for j, (desc, k) in enumerate(zip(descs, parent_order))]
    ranked.append((mine, pos[created], n))
    ranked.sort()
    perm = [0] * n
    order = []
    born = -1
    for p, (_, _, j) in enumerate(ranked):
        if j == n:
            born = p
            order.append(created)
        else:
            perm[j] = p
            order.append(parent_order[j])
    return tuple([d for d, _, _ in ranked]), order, tuple(perm), born


#: the edge's positions read off the key's sort (False: :func:`.runtime_canon.permutation`)
POSITIONS = True


def creation_key(rn: "RuntimeNode", evs: dict[str, int], parent: Any, parent_order: list[str], created: str,
                 touched: set[str], owners: dict[str, str]) -> Made:
    """:func:`.runtime_fig.snapshot` of ``rn`` just after ``created`` started on it, from the key
    of the state it was in (``parent``, its pods ``parent_order``) and the ids of the containers
    updated meanwhile (``touched``), with the edge's ``(perm, born)`` (``perm`` None: not read
    here, :func:`.runtime_canon.permutation`). ``owners``: container id -> pod key, filled here."""
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
    n_old = len(old_balloons)
    new = rn.pods[created]
    sid = new.sandbox.id
    where: dict[str, tuple[int, int]] = {}
    balloons = []
    for bi, b in enumerate(policy.balloons):
        ids = b.pod_ids.get(sid)
        if ids:
            for k, cid in enumerate(ids):
                where[cid] = (bi, k)
        t = runtime_fig_balloons.balloon_entry(types, b)
        if bi < n_old:
            o = old_balloons[bi]
            if o[0] != t[0] or o[1] != t[1]:
                return None
        balloons.append(t)
    if len(balloons) < n_old:
        return None
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
