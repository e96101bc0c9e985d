"""A name-free, order-free key of a runtime node's state, for the table of :mod:`.runtime_memo`.

The table identifies a node's state by its history (the pod shapes created and deleted, in
order). Two different histories often leave the node in the same state up to the names of its
pods and the order they came in — the same pods, placed on the same CPUs and memory nodes —, and
then everything after behaves the same. With this module on, a miss that lands in a state the
table already holds (by :func:`snapshot`'s key) joins it instead of making a new one, so all the
later events from both histories share one set of edges.

Only nri-plugins' ``topology-aware`` policy is keyed so (:func:`applies`); ``balloons`` has a key
of its own (:mod:`.runtime_canon_balloons`, see "Balloons" below).

The key (:func:`snapshot`)
--------------------------
Per live pod (a :class:`..runtime.node.PodRecord` of the real node): the pod's event key
(:func:`.runtime_memo.pod_event`: the whole pod but its name, UID, start time and nominated
node; as a small number per table) and, per container in the pod's order, its name, its
runtime state (created / running / exited), the ``cpuset`` CPUs and memory nodes and CPU shares
the runtime holds for it, the policy's grant (pool, CPU type and class, exclusive CPUs, CPU
portion, memory type, size and zone, cold start) and its libmem request (limit, priority, types,
affinity, zone, strict). The pods sorted by that (the *canonical order*: position ``p`` of a
state is the ``p``-th pod of that order); then, for the whole node, each pool's free supply
(isolated, reserved and sharable CPUs, granted reserved and shared milli-CPUs), the CPU class
of each CPU, the memory zones libmem holds. Pods with equal descriptors are interchangeable.

Why two nodes with equal keys answer every later event alike (the proof)
------------------------------------------------------------------------
Take two real nodes A and B (the same machine, policy resource and kubelet configuration — one
table) with equal keys, and the bijection ``f`` from A's pods to B's that maps the ``p``-th pod
of A's canonical order to the ``p``-th of B's. We show that for every event (a creation of a
pod shape; a deletion of position ``p``) the outputs ``simulate`` reads are equal and the new
keys are equal with the positions related by the same permutation. What ``simulate`` reads of a
runtime node (:mod:`.runtime_policies`): the new pod's rows (``cpuset`` CPUs and memory nodes,
exclusive CPUs and pool, misalignment, Block I/O class), whether the creation was refused or
warned (the table leaves then anyway), and the node figures (containers, unpinned, misaligned,
exclusive CPUs, reserved CPUs) — each a function of the key (sums and unions over containers,
the reserved CPUs fixed at start). The NodeResourceTopology export is read only with
``NodeResourceTopologyMatch`` in the profile, and then no node is on the table at all.

What the policy and the plumbing below it read of the state, and why f preserves each:

1. *Names and ids.* Container and sandbox ids are hashes of the pod UID
   (:meth:`RuntimeNode._container`); the policy keys its grants, the cache its containers and
   libmem its requests by them, and reads them back only through those maps (``f`` maps the
   entries one to one). A pod's name, UID and the ``io.kubernetes.*`` labels derived from
   them reach the policy only in log and error messages (a warning or a refusal leaves the
   table), in affinity annotations (a pod with one is never keyed: :func:`.runtime_memo.pod_event`),
   and in ``matchExpressions`` (only policies whose expressions read no names or ids are on
   the table: :func:`.runtime_memo.policy_memoizable`). Namespaces, labels and annotations
   are part of the event key. ``topology-aware``'s colocation (``colocatePods``,
   ``colocateNamespaces``) groups containers by sandbox and namespace, both kept by ``f``;
   the weights it sums per pool are order-free.
2. *Orders.* ``topology-aware`` iterates its grants (a dict in insertion order, so in creation
   order) in three places: summing figures per pool (``colocated``, shared CPU use — order-free
   sums), ``hasZeroCpuReqContainer`` (an ``any`` — order-free) and
   ``updateSharedAllocations``, which sets each shared container's ``cpuset`` from its own
   pool's free supply, which the loop does not change, so the result does not depend on the
   order of the updates (the runtime applies them by container id). The runtime's own maps
   (pods, containers) are read by id or summed. Pools are sorted by Go's ``sort.Slice`` over
   the policy's fixed pool list with scores that are functions of the free supplies and of
   grant counts, all in the key.
3. *libmem's creation counter* (``Request.created``, and the cache's ``ctime``, which nothing
   reads). It is read in one place: ``zoneShrinkUsage``'s tie-break between requests of the
   same priority and limit, when a zone is *overcommitted* (its requests' limits exceed its
   capacity) — and there the order of creation can decide which container moves, which is not
   in the key (``tests/runtime/test_libmem.py``: of two equal requests, the younger moves). Whether a zone is overcommitted at any step of an event is a function of the
   key (zone usages are sums over requests by zone), up to the first step that handles one.
   So the table counts the overcommits libmem handles (:func:`overcommits`) during a miss: an
   event that met one is order-dependent — that node leaves the table for the plain path (its
   own history replayed) and the answer is not kept, so no other node can take it. Before
   the first handled overcommit nothing reads ``created``; the memory zones libmem keeps are in
   the key (trial offers leave empty zones behind only until the next commit or release, which
   ends every event).
4. *Everything else the policy holds* is in the key, or fixed at start (pool tree, reserved and
   isolated CPUs, the CPU allocator, which picks from the CPU sets it is given), or per event
   (offers, scores; ``explaining`` is off in ``simulate``).

The runtime's per-container NRI resources are the kubelet's CRI resources (a function of the
pod shape, with the kubelet's managers off) with what the policy writes over them: ``cpuset``
CPUs and memory nodes and CPU shares (in the key), scheduling and I/O priority classes, RDT and
Block I/O classes (from annotations and the policy configuration: the pod shape).

Hence A and B take every event alike, and by induction every sequence of events — as long as no
overcommit is met (3), which the table checks on each miss. Positions: the table stores with
each edge the permutation from the old canonical positions (and the new pod) to the new ones,
computed on the real node that answered the miss; a node taking the edge maps its pods' slots
through it. The answers the table keeps are per new pod (rows) or per state (figures), so they
carry over unchanged.

Balloons
--------
Keyed by :mod:`.runtime_canon_balloons`: balloons reads the order of its list of balloons (kept in
that key) and the order of each balloon's pods only as the order libmem's calls come in, which
matters only when a zone can be overcommitted — a memory bound that module checks.

Not an upstream module: a kubetwin fast path over nri-plugins v0.14.0's ``topology-aware``
policy (``cmd/plugins/topology-aware/policy``, ``pkg/resmgr/lib/memory``), kept plain in
:mod:`kubetwin.runtime`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable

if TYPE_CHECKING:
    from ..runtime.node import RuntimeNode

#: join states by :func:`snapshot`'s key (False: the history key alone, as before)
ENABLED = True


def applies(rp: Any) -> bool:
    """Whether a node group's runtime policy is one this key is proven for: nri-plugins'
    ``topology-aware`` (``rp``: a :class:`.runtime_policies.RuntimePolicy`)."""
    if not ENABLED or rp.plugin is not None or rp.resource is None or rp.resource.policy != "topology-aware":
        return False
    # colocatePods scopes its implicit affinity by pod *name* (``pod/name``), not by pod: two
    # pods of one name (in two namespaces) attract each other's containers — a relation of
    # names the key does not hold
    return not getattr(rp.resource.config, "colocate_pods", False)


def overcommits(rn: "RuntimeNode") -> int:
    """How many overcommits ``rn``'s memory allocator has handled (see the proof, item 3)."""
    assert rn.resmgr is not None
    policy: Any = rn.resmgr.policy
    return policy.mem_allocator.overcommits


def snapshot(rn: "RuntimeNode", evs: dict[str, int]) -> tuple[Hashable, list[str]]:
    """``(key, pods)``: the key of ``rn``'s state and its live pods' keys in canonical order.
    ``evs``: each live pod's event key (as a number of the table)."""
    assert rn.resmgr is not None
    policy: Any = rn.resmgr.policy
    grants = policy.allocations
    requests = policy.mem_allocator.requests
    descs = []
    for key, rec in rn.pods.items():
        ctrs = []
        for r in rec.containers:
            cid = r.ctr.id
            cpu: Any = r.ctr.resources().cpu
            g = grants.get(cid)
            m = requests.get(cid)
            ctrs.append((r.name, r.state, cpu.cpus, cpu.mems, -1 if cpu.shares is None else cpu.shares,
                         (g.node.id, g.cpu_type, g.cpu_class, g.exclusive.mask, g.cpu_portion, g.mem_type,
                          g.mem_size, g.mem_zone, g.cold_start) if g is not None else (),
                         (m.limit, m.priority, m.types, m.affinity, m.zone, m.strict) if m is not None else ()))
        descs.append(((evs[key], tuple(ctrs)), key))
    descs.sort(key=lambda d: d[0])
    pools = []
    for n in policy.pools:
        s = n.free_supply()
        pools.append((s.isolated.mask, s.reserved.mask, s.sharable.mask, s.granted_reserved, s.granted_shared))
    node = (tuple(pools), tuple(sorted(policy.cpu_class_of.items())), tuple(sorted(policy.mem_allocator.zones)))
    return (tuple(d for d, _ in descs), node), [k for _, k in descs]


def permutation(old: list[str], order: list[str], created: str | None) -> tuple[tuple[int, ...], int]:
    """``(perm, born)``: the new canonical position of each old position (-1: the pod deleted)
    and the created pod's (-1: none), from the pods' keys in the old and new canonical orders."""
    at = {k: i for i, k in enumerate(order)}
    return tuple(at.get(k, -1) for k in old), (at[created] if created is not None else -1)


def follow(keys: list[str], perm: tuple[int, ...], born: int, created: str | None) -> list[str]:
    """A real node's pods in the new canonical order, after an event with ``(perm, born)``."""
    out = [""] * (len(keys) - perm.count(-1) + (born >= 0))
    for k, j in zip(keys, perm):
        if j >= 0:
            out[j] = k
    if born >= 0 and created is not None:
        out[born] = created
    return out


def remap(slots: dict[str, int], perm: tuple[int, ...], born: int, created: str | None) -> None:
    """A node's pods' positions (``slots``), in place, after an event with ``(perm, born)``."""
    for k, s in list(slots.items()):
        j = perm[s]
        if j >= 0:
            slots[k] = j
        else:
            del slots[k]
    if born >= 0 and created is not None:
        slots[created] = born
