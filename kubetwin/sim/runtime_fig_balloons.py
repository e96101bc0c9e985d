"""The balloons table's per-miss bookkeeping made lean: its state key, guard and figures from keys.

:mod:`.runtime_canon_balloons` keys ``balloons`` states by their live pods; at 1,000 nodes x
10,000 pods its key cost more than it saved (6,267 -> 6,212 misses, +0.35 s CPU): per miss a
key (~50 us at 5,000 x 50,000), the order guard twice and the creation-order check, and the
figures of every new state taken while its real node is there (only a third of the states are
ever read). This module does for balloons what :mod:`.runtime_fig` does for ``topology-aware``:

* **the key** (:func:`snapshot`): :func:`.runtime_canon_balloons.snapshot`'s value (a test holds
  the two equal at every miss of random runs), read with fewer calls — a container's CPU
  resources read directly (``resources()`` only when something is missing, as it fills it in),
  the balloon types' positions kept per list of types, empty ``groupBy`` counts skipped, the
  pods sorted by a C key function;
* **the guard** (:class:`Guard`, per table): :func:`.runtime_canon_balloons.order_free` with the
  memory bound (a function of the machine's memory nodes, the same for every node of a table)
  read once, and :func:`created_in_order` with fewer calls — after a creation,
  from the node's last True answer when only the new pod and its requests came since
  (:data:`INCREMENTAL_ORDER`, :func:`_since`; the walk of every pod otherwise);
* **figures from the key** (:func:`key_figures`): the key holds per container its runtime state,
  ``cpuset`` CPUs and memory nodes and its balloon (by position), and per balloon its type (by
  position) and CPUs — all the figures read: a container's exclusive CPUs are its balloon's when
  the balloon holds one pod (upstream's ``PodIDs``: its pods with containers, each pod's entry
  dropped with its last container, so the pods whose containers sit in that balloon) and is
  not a ``reserved`` one (:meth:`..runtime.policies.balloons.policy.BalloonsPolicy.container_placement`);
  the reserved CPUs are ``reservedResources`` (fixed at start) or the reserved balloons' CPUs.
  So a joined state keeps its key and its figures are made when read (end states only), as on
  topology-aware tables. States past the bound (``Table.ordered``) keep their eager figures.

``ENABLED = False`` keeps :mod:`.runtime_canon_balloons`' own functions and the eager figures
(``INCREMENTAL_ORDER = False``: the walk at every call; ``tests/sim/test_runtime_order_since.py``
holds the two equal);
``tests/sim/test_runtime_fig_balloons.py`` holds the lean key equal to the plain one, the lean
guard to the plain one, and figures from keys to the real node's, at every miss of random runs.

Not an upstream module: a kubetwin fast path over nri-plugins v0.14.0's ``balloons`` policy
(``cmd/plugins/balloons/policy/balloons-policy.go``); the figures are kubetwin's own
(:mod:`kubetwin.report.placement`).
"""

from __future__ import annotations

from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any, Hashable

from ..model.cpuset import CPUSet
from . import runtime_canon_balloons, runtime_fig, runtime_policies

if TYPE_CHECKING:
    from ..runtime.node import RuntimeNode

#: lean key, guard and figures from keys on balloons tables (False: runtime_canon_balloons' own)
ENABLED = True

_FIRST = itemgetter(0)
#: a libmem request as the key holds it
_REQUEST = attrgetter("limit", "priority", "types", "affinity", "zone", "strict")

#: per list of balloon types (by identity, the list held): each type's position
_TYPES: dict[int, tuple[list[Any], dict[int, int]]] = {}


def _type_positions(defs: list[Any]) -> dict[int, int]:
    got = _TYPES.get(id(defs))
    if got is not None and got[0] is defs:
        return got[1]
    if len(_TYPES) >= 4096:
        _TYPES.clear()
    pos = {id(d): i for i, d in enumerate(defs)}
    _TYPES[id(defs)] = (defs, pos)
    return pos


def balloon_entry(types: dict[int, int], b: Any) -> tuple[Any, ...]:
    """One balloon's part of a balloons state key: its type's position, instance, CPUs, memory
    nodes, shared idle CPUs and non-empty groups (:func:`snapshot`'s; :mod:`.runtime_inckey`
    makes the same tuple inline, and its tests hold the two keys equal)."""
    groups = b.groups
    return (types[id(b.defn)], b.instance, b.cpus._mask, b.mems, b.shared_idle_cpus._mask,
            tuple(sorted([(g, n) for g, n in groups.items() if n])) if groups else ())


def container_descriptor(r: Any, place: tuple[int, ...], m: Any) -> tuple[Any, ...]:
    """One container's part of a balloons state key: name, runtime state, ``cpuset`` CPUs,
    memory nodes and shares, its place in its balloon (``()``: none), its libmem request (one
    definition for :func:`snapshot` and :mod:`.runtime_inckey`)."""
    cpu = runtime_fig.container_cpu(r.ctr)
    shares = cpu.shares
    return (r.name, r.state, cpu.cpus, cpu.mems, -1 if shares is None else shares, place,
            _REQUEST(m) if m is not None else ())


def node_part(policy: Any, balloons: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """The node's part of a balloons state key: free CPUs, every balloon's entry, memory zones."""
    zones = policy.mem_allocator.zones
    return policy.free_cpus._mask, tuple(balloons), tuple(sorted(zones)) if zones else ()


def snapshot(rn: "RuntimeNode", evs: dict[str, int]) -> tuple[Hashable, list[str]]:
    """:func:`.runtime_canon_balloons.snapshot` (the same value: ``(key, pods in canonical
    order)``) with fewer calls per container and balloon."""
    assert rn.resmgr is not None
    policy: Any = rn.resmgr.policy
    requests = policy.mem_allocator.requests
    types = _type_positions(policy.defs)
    where: dict[str, tuple[int, int]] = {}
    balloons = []
    for bi, b in enumerate(policy.balloons):
        for ids in b.pod_ids.values():
            if len(ids) == 1:
                where[ids[0]] = (bi, 0)
            else:
                for k, cid in enumerate(ids):
                    where[cid] = (bi, k)
        balloons.append(balloon_entry(types, b))
    descs = []
    nowhere = ()
    get_where, get_request = where.get, requests.get
    for key, rec in rn.pods.items():
        ctrs = tuple([container_descriptor(r, get_where(r.ctr.id, nowhere), get_request(r.ctr.id))
                      for r in rec.containers])
        descs.append(((evs[key], ctrs), key))
    descs.sort(key=_FIRST)
    return (tuple([d for d, _ in descs]), node_part(policy, balloons)), [k for _, k in descs]


class Guard:
    """:func:`.runtime_canon_balloons.order_free` for the nodes of one table: the memory bound
    (the smallest normal memory node's capacity, fixed by the machine the table's nodes share)
    read off the first node asked."""

    __slots__ = ("bound",)

    def __init__(self) -> None:
        self.bound: int | None = None

    def __call__(self, rn: "RuntimeNode") -> bool:
        assert rn.resmgr is not None
        policy: Any = rn.resmgr.policy
        requests = policy.mem_allocator.requests
        if not requests:
            return True
        bound = self.bound
        if bound is None:
            bound = self.bound = runtime_canon_balloons.memory_bound(rn)
        total = 0
        for r in requests.values():
            total += r.limit
        return total <= bound


class OrderCheck:
    """:func:`created_in_order` for the nodes of one table, with the table's own memory of their
    last answers (``seen``: id(a node's libmem requests) -> what its last True answer saw,
    :func:`_remember`). It lives and dies with the table: its entries hold the nodes' requests,
    event maps and pod records, which must not outlive the run that made them (held at module
    level, they kept ~150,000 objects of the last run alive and slowed every later run in the
    process by their scattered heap)."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen: dict[int, tuple[Any, ...]] = {}

    def __call__(self, rn: "RuntimeNode", evs: dict[str, int]) -> bool:
        return created_in_order(rn, evs, self.seen)


def created_in_order(rn: "RuntimeNode", evs: dict[str, int], seen: dict[int, tuple[Any, ...]]) -> bool:
    """:func:`.runtime_canon_balloons.created_in_order` with fewer calls; with
    :data:`INCREMENTAL_ORDER`, after a creation on a node whose last answer was True, from that
    answer (:func:`_since`; ``seen``: the last answers, :class:`OrderCheck`)."""
    assert rn.resmgr is not None
    policy: Any = rn.resmgr.policy
    requests = policy.mem_allocator.requests
    pods = rn.pods
    if INCREMENTAL_ORDER:
        last_answer = seen.get(id(requests))
        if last_answer is not None and last_answer[0] is requests and _since(seen, last_answer, pods, evs, requests):
            return True
    last = _walk(pods, evs, requests)
    if last is not None and INCREMENTAL_ORDER:
        _remember(seen, pods, evs, requests, last)
    return last is not None or len(requests) < 2


def _walk(pods: dict[str, Any], evs: dict[str, int], requests: dict[str, Any]) -> int | None:
    """The creation counter of the last of ``requests`` when all of them belong to containers of
    ``evs``' pods and were made in those containers' order (-1: none); None otherwise."""
    last, seen = -1, 0
    get = requests.get
    for key in evs:
        for r in pods[key].containers:
            req = get(r.ctr.id)
            if req is not None:
                if req.created <= last:
                    return None
                last = req.created
                seen += 1
    return last if seen == len(requests) else None   # no request of a container that is gone


#: libmem's requests checked from the node's last answer after a creation (False: the walk of
#: every pod at every miss, ``bench_runtime_sim.py --plain``)
INCREMENTAL_ORDER = True

def _remember(seen: dict[int, tuple[Any, ...]], pods: dict[str, Any], evs: dict[str, int], requests: dict[str, Any],
              last: int) -> None:
    """After a True answer (every request of a live container, made in their order; ``last``: the
    counter of the last): the requests, the event map, the last pod (its key and record) and the
    last request made, for :func:`_since`. Held by identity; cleared past a size (only a walk
    more)."""
    if len(seen) >= 16384:
        seen.clear()
    key = next(reversed(evs)) if evs else None
    seen[id(requests)] = (requests, evs, len(evs), key, pods.get(key) if key is not None else None,
                           len(requests), next(reversed(requests.values())) if requests else None, last)


def _since(seen: dict[int, tuple[Any, ...]], last_answer: tuple[Any, ...], pods: dict[str, Any], evs: dict[str, int],
           requests: dict[str, Any]) -> bool:
    """Whether the walk would answer True, from its last True answer on this node (``seen``: the
    same requests, an entry of ``seen``) when exactly one pod came since — the new pod, last in ``evs`` — and the only
    requests made since are its own: then the requests are the old ones (in their order, from
    live containers, as the last answer saw) and the new pod's, made after them in its
    containers' order. Proved without the walk:

    * one pod came, none went: the same event map (``evs``, in creation order), one entry more,
      the old last pod second to last and the same record (a pod deleted and made again under
      its key has a new one): every entry after it came since, so the new pod alone;
    * the requests are the old ones and the new pod's: one per new pod's container that holds
      one (``k``) more than before, the last ``k`` (a dict keeps insertion order; libmem only adds
      and deletes requests, and a request made since is after every old one) are the new pod's
      and the one before them is the old last request — so none was deleted (the count) and no
      other was made.

    False: not proved (the walk then), not a False answer. Updates ``seen`` when True."""
    (_requests, old_evs, n_evs, old_key, old_rec, n_requests, old_last, last) = last_answer
    if old_evs is not evs or len(evs) != n_evs + 1:
        return False
    back = reversed(evs)
    new = next(back)
    if old_key is not None and (next(back) != old_key or pods.get(old_key) is not old_rec):
        return False
    rec = pods[new]
    get = requests.get
    mine = []
    for r in rec.containers:
        req = get(r.ctr.id)
        if req is not None:
            if req.created <= last:
                return False
            last = req.created
            mine.append(req)
    k = len(mine)
    if len(requests) != n_requests + k:
        return False
    back_requests = reversed(requests.values())
    for req in reversed(mine):
        if next(back_requests) is not req:
            return False
    if n_requests and next(back_requests) is not old_last:
        return False
    seen[id(requests)] = (requests, evs, n_evs + 1, new, rec, n_requests + k, mine[-1] if mine else old_last, last)
    return True


class KeyFigures(runtime_fig.KeyFigures):
    """What balloons figures from keys read besides the key: the machine, ``reservedResources``
    (fixed at start), the reserved type's position, which types' balloons never hold CPUs alone
    (``reserved``), a pod of each event number (its containers' CPU requests)."""

    __slots__ = ("reserved_type", "shared_types")

    def __init__(self, machine: Any):
        super().__init__(machine)
        self.reserved_type = -1
        self.shared_types: frozenset[int] = frozenset()


def keep_key(kf: KeyFigures, rn: "RuntimeNode") -> None:
    """Before a state keeps its key instead of its figures: what is fixed at start read once."""
    if kf.reserved is None:
        assert rn.resmgr is not None
        policy: Any = rn.resmgr.policy
        kf.reserved = policy.reserved
        kf.reserved_type = next(i for i, d in enumerate(policy.defs) if d is policy.reserved_def)
        # a balloon named ``reserved[...]`` holds no CPUs alone (``container_placement``)
        kf.shared_types = frozenset(i for i, d in enumerate(policy.defs) if (d.name + "[").startswith("reserved["))


def key_figures(kf: KeyFigures, key: Any) -> tuple[int, int, int, CPUSet, CPUSet]:
    """:func:`.runtime_policies.runtime_figures` of a node in the state of ``key`` (a key of
    :func:`.runtime_canon_balloons.snapshot`): containers, unpinned and misaligned containers,
    exclusive CPUs, reserved CPUs."""
    pods, (_free, balloons, _zones) = key
    lay = runtime_policies._layout(kf.machine)
    known = lay.misaligned_text
    machine = kf.machine
    # the pods of each balloon (a pod counts once however many of its containers sit there)
    held: dict[int, int] = {}
    for _ev, ctrs in pods:
        seen = set()
        for c in ctrs:
            w = c[5]
            if w and w[0] not in seen:
                seen.add(w[0])
                held[w[0]] = held.get(w[0], 0) + 1
    shared = kf.shared_types
    exclusive = 0
    containers = unpinned = misplaced = 0
    for ev, ctrs in pods:
        wanted: dict[str, int] | None = None
        for name, state, cpus, mems, _shares, w, _req in ctrs:
            if state == "exited":
                continue
            containers += 1
            if w:
                b = balloons[w[0]]
                if held[w[0]] == 1 and b[2] and b[0] not in shared:
                    exclusive |= b[2]
            if not cpus:
                unpinned += 1
                continue
            if wanted is None:
                wanted = runtime_policies._pod_wanted(lay, kf.pods[ev])
            k = (cpus, mems, wanted.get(name, 1))
            bad = known.get(k)
            if bad is None:
                bad = runtime_policies.misaligned_text(lay, machine, k)
            if bad:
                misplaced += 1
    reserved = kf.reserved
    assert reserved is not None
    if not reserved:
        mask = 0
        for b in balloons:
            if b[0] == kf.reserved_type:
                mask |= b[2]
        reserved = CPUSet.from_mask(mask)
    return containers, unpinned, misplaced, CPUSet.from_mask(exclusive), reserved
