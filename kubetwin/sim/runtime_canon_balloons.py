"""A name-free state key for ``balloons`` nodes, for the table of :mod:`.runtime_memo`.

:mod:`.runtime_canon` keys ``topology-aware`` states by the node's live pods instead of its
history, so histories equal up to pod names and creation order share one state. This module does
the same for nri-plugins' ``balloons`` policy, with a key that keeps every order balloons reads
and drops the one it reads only through libmem: the order of the pods *inside* a balloon. With it
a miss landing in a state the table holds joins it (5,000 nodes x 50,000 pods, the benchmark's
balloons: 7,582 -> 5,892 misses; ``docs/scale.md``).

The key (:func:`snapshot`)
--------------------------
Per live pod, its event key (:func:`.runtime_memo.pod_event`, a number per table) and per
container, in the pod's order: its name, runtime state, the ``cpuset`` CPUs and memory nodes and
CPU shares the runtime holds, *where* it is — the position of its balloon in the policy's list of
balloons and its own position among its pod's containers in that balloon — and its libmem request
(limit, priority, types, affinity, zone, strict). The pods sorted by that (the canonical order, as
in :mod:`.runtime_canon`). Then for the node: the free CPUs, each balloon in list order (its
type's position among the policy's types, instance index, CPUs, memory nodes, shared idle CPUs,
the ``groupBy`` values its containers count, zero counts left out), the memory zones libmem holds.

Why two nodes with equal keys answer every later event alike (the proof)
------------------------------------------------------------------------
Two real nodes A and B of one table (same machine, policy resource, kubelet configuration), equal
keys, ``f`` the bijection of their pods by canonical position. As for ``topology-aware``
(:mod:`.runtime_canon`, items 1 and 4 — names and ids, and the runtime's and the cache's maps,
which are read by id or summed — hold here alike: only policies whose ``matchExpressions`` and
``groupBy`` templates read no names or ids are on the table, :func:`.runtime_memo.policy_memoizable`)
it is enough to show the policy takes every event alike (nri-plugins v0.14.0
``cmd/plugins/balloons/policy/balloons-policy.go``; :mod:`..runtime.policies.balloons.policy` and
its fast path :mod:`..runtime.policies.balloons.fast`, which give the same answers). What it holds:

1. *The list of balloons* (``balloons``): in the key with its order. Every walk over it —
   ``fillableBalloonInstances`` (candidates in list order; ``largest`` then takes the first of
   equals, ``new`` the first empty balloon of a type), ``shareIdleCpus`` (the balloons it returns,
   re-pinned in list order), ``balloonByContainer``, the placements — reads it in that order;
   ``deleteBalloon`` takes one out and keeps the order of the rest; a new balloon is appended.
2. *Per balloon*: its type (by position), instance (the first free index, named in every row),
   CPUs, memory nodes, shared idle CPUs (read by the tree allocator, the CPU allocator and the
   pinning) and ``groupBy`` counts (``same-group`` reads only ``> 0``) are in the key; its tree
   allocator is its type's (a pure function of the CPU tree and the type); its containers by pod
   (``PodIDs``) are in the key as a set — each container's balloon and position in its pod's list
   — but not the order of its pods. That order is read by sums (``requested``), counts
   (``len(PodIDs)``, container counts), membership (``same-pod``, ``balloonByContainer``),
   ``any`` (``same-namespace``) — all order-free — and as the order ``updatePinning`` pins the
   balloon's containers in: per container ``cpuset`` CPUs and shares (a function of the balloon
   and the container alone, written to that container), and its memory through libmem
   (``allocMem``: ``GetOffer`` + ``Commit`` for the new container, ``Realloc`` for the others).
3. *libmem, without overcommit.* A request's zone from ``GetOffer`` is a function of the request
   (affinity, types, strictness) and the machine (``findInitialZone``, ``ensureNormalMemory``)
   and so is ``Realloc``'s widening (the request's zone, nodes, types) — except when the zones
   the call touches are *overcommitted* (their requests' limits above their capacity), when
   ``handleOvercommit`` moves other requests, picks among equal ones by creation order
   (``Request.created``, not in the key) and reports the moves as updates. So without an
   overcommit each container's zone after a pinning is the same whatever the order of the calls,
   no call moves another container, and the updates are the container's own. An overcommit can
   arise in one order of the calls and not in another (a container widened into a zone before or
   after another one left it), so the table checks a bound no order can pass: every zone holds a
   node of normal memory (``ensureNormalMemory``; ``Realloc`` and commits only widen zones), so
   its capacity is at least the smallest normal memory node's; the usage of a zone is a sum of
   limits of the node's requests. When the limits of all the node's requests add up to at most
   that node's capacity (:func:`order_free`), no zone is overcommitted at any step of any order.
   The table checks it on the real node after every event it answers by a miss (during a
   creation the sum only grows, by the new pod's requests; a deletion releases requests before
   anything else and adds none); past the bound see below. The rest of libmem — its zones (in
   the key), the requests' zones (in the key), the offers' version counter (read only within one
   call) — is covered.
4. *Everything else the policy holds* is fixed at start (types, reserved and allowed CPUs,
   ``ifreeCpus``, the CPU tree, the allocators — the fast policy's remembered answers are pure
   functions of the machine), or per event (the fast policy's placements, requested sums and
   joining container, made again in every event). ``cpuClass`` and ``idleCPUClass`` only name
   frequencies. The scheduling class a container gets is its balloon type's or its annotation's.

Hence A and B take every event alike — the new pod's rows (``pool`` ``type[instance]``, cpusets,
exclusive CPUs: its balloon's when it holds one pod, misalignment, Block I/O class), refusals and
warnings (the table leaves then anyway) and the node figures (sums and unions over containers) —
and, with the bound held, by induction every sequence of events.

Past the bound
--------------
Only states within the bound are joined (``Table.canon``); a state a real node reaches past it, or
whose libmem requests were not made in the order their containers were created
(:func:`created_in_order`: a container whose memory offer failed gets its request at a later
pinning), is a new state of its own (``Table.ordered``), never joined: every node in it came the
same way from a joined state, so they are alike as on a table of histories. A creation that takes
a node from a joined state past the bound may read the order of its pods (which balloon's pods
are pinned first, which of two equal requests libmem moves), so its answer is kept for that order
alone: the edge ``(state, event)`` is a marker (``next == -1``) and the answer sits at
``(state, ("o", event, ranks))`` (:func:`ordered_event`), ``ranks`` being the canonical positions
of the node's pods in the order they were created — in a joined state the requests were made in
that order, so it is the order of ``Request.created`` and of every balloon's ``PodIDs`` (pods are
added last and taken out, never moved). The real node that answers such a miss must hold the
node's own order (:func:`same_order`; else the node leaves the table), and a real node replayed
for a node past such a creation is taken from after it (:func:`replay_floor`). A state reached
from an ordered one back within the bound (and made in order) is joined again: from there on, the
argument above holds.

Not keyed so (measured, ``docs/scale.md``): the balloons' CPU sets relabelled by a symmetry of the
machine — the tree allocator and the CPU allocator break ties by CPU and tree-node ids, which a
relabelling does not preserve, so two relabelled states need not answer alike.

Not an upstream module: a kubetwin fast path over nri-plugins v0.14.0's ``balloons`` policy
(``cmd/plugins/balloons/policy``, ``pkg/resmgr/lib/memory``), kept plain in :mod:`kubetwin.runtime`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable

if TYPE_CHECKING:
    from ..runtime.node import RuntimeNode
    from .runtime_memo import Real, Virtual

#: join balloons states by :func:`snapshot`'s key (False: the history key, as before)
ENABLED = True


def applies(rp: Any) -> bool:
    """Whether a node group's runtime policy is nri-plugins' ``balloons`` (``rp``: a
    :class:`.runtime_policies.RuntimePolicy`) and the key is on."""
    return ENABLED and rp.plugin is None and rp.resource is not None and rp.resource.policy == "balloons"


def memory_bound(rn: "RuntimeNode") -> int:
    """The smallest capacity of a normal memory node: no zone holds less (see the proof, item 3)."""
    assert rn.resmgr is not None
    policy: Any = rn.resmgr.policy
    nodes = policy.mem_allocator.nodes
    return min((n.capacity for n in nodes.values() if n.normal and n.capacity > 0), default=0)


def order_free(rn: "RuntimeNode") -> bool:
    """The limits of all of ``rn``'s memory requests add up to at most :func:`memory_bound`: no
    order of libmem's calls meets an overcommit (see the proof, item 3)."""
    assert rn.resmgr is not None
    policy: Any = rn.resmgr.policy
    requests = policy.mem_allocator.requests
    if not requests:
        return True
    return sum(r.limit for r in requests.values()) <= memory_bound(rn)


def snapshot(rn: "RuntimeNode", evs: dict[str, int]) -> tuple[Hashable, list[str]]:
    """``(key, pods)``: the key of ``rn``'s state and its live pods' keys in canonical order.
    ``evs``: each live pod's event key (as a number of the table)."""
    assert rn.resmgr is not None
    policy: Any = rn.resmgr.policy
    requests = policy.mem_allocator.requests
    types = {id(d): i for i, d in enumerate(policy.defs)}
    where: dict[str, tuple[int, int]] = {}
    balloons = []
    for bi, b in enumerate(policy.balloons):
        for ids in b.pod_ids.values():
            for k, cid in enumerate(ids):
                where[cid] = (bi, k)
        balloons.append((types[id(b.defn)], b.instance, b.cpus.mask, b.mems, b.shared_idle_cpus.mask,
                         tuple(sorted((g, n) for g, n in b.groups.items() if n))))
    descs = []
    for key, rec in rn.pods.items():
        ctrs = []
        for r in rec.containers:
            cid = r.ctr.id
            cpu: Any = r.ctr.resources().cpu
            m = requests.get(cid)
            ctrs.append((r.name, r.state, cpu.cpus, cpu.mems, -1 if cpu.shares is None else cpu.shares,
                         where.get(cid, ()),
                         (m.limit, m.priority, m.types, m.affinity, m.zone, m.strict) if m is not None else ()))
        descs.append(((evs[key], tuple(ctrs)), key))
    descs.sort(key=lambda d: d[0])
    node = (policy.free_cpus.mask, tuple(balloons), tuple(sorted(policy.mem_allocator.zones)))
    return (tuple(d for d, _ in descs), node), [k for _, k in descs]


#: the tag of a creation event kept for one order of the node's pods (:func:`ordered_event`)
ORDERED = "o"


def _ranks(v: "Virtual") -> tuple[int, ...]:
    """The canonical positions of ``v``'s live pods in the order they were created (``slots`` is
    kept in that order: new pods are added last, deleted ones taken out)."""
    if v.lag:
        from . import runtime_hit

        runtime_hit.sync(v)
    return tuple(v.slots.values())


def ordered_event(ev: Hashable, v: "Virtual") -> Hashable:
    """The key of creation ``ev`` for ``v``'s order of its pods (see "Past the bound")."""
    return (ORDERED, ev, _ranks(v))


def same_order(v: "Virtual", real: "Real") -> bool:
    """Whether the real node ``real`` (in ``v``'s state, before the event) holds its pods in
    ``v``'s order: its pods' canonical positions in the order they were created on it are
    ``v``'s."""
    at = {k: i for i, k in enumerate(real.keys)}
    return tuple(at[k] for k in real.evs) == _ranks(v)


def created_in_order(rn: "RuntimeNode", evs: dict[str, int]) -> bool:
    """Whether libmem made ``rn``'s requests in the order their containers were created (pods in
    ``evs``'s order, the order they were created on ``rn``; containers in the pod's order) — so
    the order of creation tells the order ``Request.created`` holds (see "Past the bound")."""
    assert rn.resmgr is not None
    policy: Any = rn.resmgr.policy
    requests = policy.mem_allocator.requests
    if len(requests) < 2:
        return True
    last, seen = -1, 0
    for key in evs:
        for r in rn.pods[key].containers:
            req = requests.get(r.ctr.id)
            if req is not None:
                if req.created <= last:
                    return False
                last = req.created
                seen += 1
    return seen == len(requests)   # no request of a container that is gone


def replay_floor(history: list[tuple[str, Any, Hashable]]) -> int:
    """The first position on a node's path a real node may be taken from to replay the rest of its
    history: after its last creation kept for its own order (a real node from before it may hold
    its pods in another order)."""
    for j in range(len(history) - 1, -1, -1):
        ev = history[j][2]
        if isinstance(ev, tuple) and ev and ev[0] == ORDERED:
            return j + 1
    return 0
