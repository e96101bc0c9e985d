"""A fast path for the balloons policy's ``AllocateResources``: one creation in few calls.

``simulate`` creates thousands of containers on balloons nodes in states no other node reached
(its table of node states answers the rest); each goes through ``allocateBalloon``: the
fill-method chain, ``resizeBalloon`` (tree allocator, CPU allocator, idle CPUs shared again,
re-pinning), then ``updatePinning`` of the balloon (``pinCpuMem``: ``SetCpusetCpus``,
``SetCPUShares``, ``allocMem``, ``SetCpusetMems`` per container). The plain code
(:meth:`.policy.BalloonsPolicy.allocate_resources`, with :mod:`.fast`'s hooks) makes some 550
Python calls a creation, most of them small: property reads, CPU sets made and unmade, the
requests of a balloon summed again per fill method, three setters per container each finding
the pending request again. Here, for a container whose pod carries no annotations (so: no
``balloon`` annotation, nothing preserved, no per-pod hyperthread, memory-type or scheduling
class), in a policy without ``preserve`` expressions, of a type without ``groupBy`` nor
``preferPerNamespaceBalloon`` — simulate's case —, the same steps run on masks and ints:

* the balloon: each candidate balloon's CPU count, requested mCPU (summed once a call) and
  container count read once, then each fill method of the chain on them (a new balloon, when
  the chain gets there, made as ``newBalloon`` makes it; one of ``minCPUs`` through the plain
  code);
* the inflate: the tree allocator's answer remembered per (type's allocator, current CPUs,
  free CPUs, change) — a pure function, like :mod:`.cputree_memo` but on a flat key — and, for
  an allocator with no devices to be close to or far from, asked of its flat tree at once; the CPU
  allocator through the policy's remembering one, the idle CPUs shared again on masks, the
  balloons whose shared CPUs changed re-pinned, then the end of the resize as
  :meth:`.fast.FastBalloonsPolicy._pin_resized` has it — and the inflated balloon itself, when
  it is the last of those re-pinned and a new pod joins it, left to the pinning right after
  when that one writes the same (:data:`PIN_ONCE`: the shared balloons of ``simulate``'s Burstable
  pods, ~8,500 of ~24,000 container pins at 5,000 x 50,000);
* pinning: per balloon the pinnable CPUs, their memory nodes and texts once (as :mod:`.fastpin`);
  per container the pending request found once for its three ``Set*`` calls (the same fields
  of the request and of the container set to the same values, the container marked pending
  at the first call as upstream marks it), or, while the runtime lends its records
  (:data:`..resmgr.cache.SAME_SKIPPED`), no request at all for a container past its creation
  whose cached values and runtime record hold all three already; a container already holding
  a memory zone that covers the balloon's nodes keeps it (``Realloc`` returns at once), and a new container's
  memory offer, when the node's memory limits with its own add up to at most the smallest
  normal memory node (no zone can be overcommitted then: every zone holds a normal node and
  no more than every limit), is its initial zone (resolved once per affinity and machine by
  the allocator's own code), assigned as ``GetOffer`` and ``Commit``
  leave the allocator (the request, its zone, the allocator's version, empty zones cleaned);
  any other case through the plain ``allocMem``.

Every other container, policy and type goes the plain way. Errors are raised with the plain
policy's messages at the same steps. ``ENABLED`` (False: the plain flow of :mod:`.policy` with
:mod:`.fast`'s hooks) is for equivalence tests and A/B runs
(``benchmarks/bench_balloons_nodes.py --plain``, ``benchmarks/bench_runtime_sim.py --plain``);
``tests/runtime/policies/balloons/test_fastalloc.py`` holds every NRI event, container, pool and
export of random runs equal to the plain policy's.

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/balloons/policy/balloons-policy.go`` (``AllocateResources``, ``allocateBalloon``,
``fillableBalloonInstances``, ``newBalloon``, ``resizeBalloon``, ``updatePinning``,
``pinCpuMem``, ``allocMem``) and ``pkg/resmgr/lib/memory`` (``GetOffer``, ``Commit``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ....model.cpuset import EMPTY, CPUSet
from ...cpuallocator import AllocationError, CPUAllocator
from ...kubernetes import milli_cpu_to_shares
from ...libmem import Allocator, MemoryError_, Request, Zone, container_request
from ...nri.api import LinuxCPU
from ...resmgr import cache as _cache
from ...resmgr.cache import CREATING, CachedContainer
from ...resmgr.policy import PolicyError
from . import treekernel
from .cputree import CpuTreeAllocator, CpuTreeNode, TreeError
from .policy import NO_LIMIT, Balloon, BalloonDef, _error

if TYPE_CHECKING:
    from .fast import FastBalloonsPolicy, FlatTree

#: allocate through this module (False: the plain flow with :mod:`.fast`'s hooks; A/B runs and tests)
ENABLED = True

#: a balloon whose shared idle CPUs an inflate changed, re-pinned last, is not pinned again at
#: the end of the resize nor for its idle CPUs when the pinning right after writes the same
#: (False: pinned three times, as the plain flow; A/B runs and tests)
PIN_ONCE = True

#: an inflate whose chosen CPUs are exactly as many as it adds takes them without asking the CPU
#: allocator: the plain one (:class:`...cpuallocator.CPUAllocator`, behind the policy's remembering
#: one or not) answers ``from`` itself then, before any table or walk — 4,835 of 7,253 inflates at
#: 5,000 x 50,000 (False: every inflate asks it; A/B runs and tests)
WHOLE_BRANCH = True

#: remembered tree resizes per type's allocator before the table starts afresh
MAX_RESIZES = 1 << 16

_SHARES: dict[int, int] = {}


def handles(p: "FastBalloonsPolicy", c: CachedContainer) -> bool:
    """Whether :func:`allocate_resources` places ``c``: a pod without annotations, a policy
    without ``preserve`` expressions, CPUs pinned."""
    return not p.preserve and p.pin_cpu and not p.cache.pods[c.pod_id].annotations


def allocate_resources(p: "FastBalloonsPolicy", c: CachedContainer) -> None:
    """``p.allocate_resources(c)`` of the plain policy for a container :func:`handles`."""
    try:
        pod = p.cache.pods[c.pod_id]
        by = p.def_choices.by
        got = by.get((pod.namespace, pod.qos_class)) if by is not None else None
        d = p.defs[got] if got is not None else p._choose_def(c)
        if d.group_by or d.prefer_per_namespace_balloon:
            bln = p._allocate_balloon(c, d)
            requested = None
        else:
            bln, requested = _allocate_balloon(p, c, d)
    except PolicyError as exc:
        raise _error(f"balloon allocation for container {c.pretty_name()} failed: {exc}") from None
    own = (c.resource_updates or c.requirements).cpu_request or 0
    if requested is None:
        requested = _requested_in(p, bln)
    need = own + requested
    if need < 1:
        need = 1
    if bln.cpus._mask.bit_count() * 1000 < need:
        try:
            _inflate(p, bln, need)
        except PolicyError as exc:
            raise _error(f"resizing balloon {bln.pretty_name()} failed: {exc}") from None
    bln.pod_ids.setdefault(c.pod_id, []).append(c.id)
    if d.group_by:
        p._update_groups(bln, c, 1)
    update_pinning(p, [bln])
    if d.scheduling_class:
        p._apply_scheduling_class(c, bln)


# --- the balloon -----------------------------------------------------------------------------------
def _requested_in(p: "FastBalloonsPolicy", bln: Balloon) -> int:
    """``requested`` of every container of ``bln`` (the plain ``_requested_in``)."""
    containers = p.cache.containers
    total = 0
    for ids in bln.pod_ids.values():
        for cid in ids:
            other = containers.get(cid)
            if other is not None:
                total += (other.resource_updates or other.requirements).cpu_request or 0
    return total


def _allocate_balloon(p: "FastBalloonsPolicy", c: CachedContainer, d: BalloonDef) -> tuple[Balloon, int]:
    """``allocateBalloonOfDef`` for a type without ``groupBy`` nor ``preferPerNamespaceBalloon``:
    the balloon, and the mCPU its containers request."""
    if d.prefer_new_balloons:
        chain: tuple[str, ...] = ("new", "balanced", "balanced-inflate")
    else:
        chain = ("balanced", "balanced-inflate", "new")
    if not d.prefer_spreading_pods:
        chain = ("same-pod",) + chain
    own = (c.resource_updates or c.requirements).cpu_request or 0
    rows: list[tuple[Balloon, int, int, int]] | None = None
    for method in chain:
        if method == "new":
            bln = _fill_new(p, d, own)
            if bln is not None:
                return bln, _requested_in(p, bln)
            continue   # nothing the rows hold changed (a refused new balloon's CPUs went back)
        if rows is None:
            rows = _rows(p, d)
        if method == "same-pod":
            pod_id = c.pod_id
            found = [row for row in rows if pod_id in row[0].pod_ids]
            if not found:
                continue
            rows_here = _fitting(p, d, found, own, True)   # fits once inflated, chosen by free mCPU now
            by_max = False
        else:
            by_max = method == "balanced-inflate"
            rows_here = _fitting(p, d, rows, own, by_max)
        if rows_here:
            return _pick(p, d, rows_here, by_max)
    raise _error("no suitable balloon instance available")


def _rows(p: "FastBalloonsPolicy", d: BalloonDef) -> list[tuple[Balloon, int, int, int]]:
    """Each balloon of ``d`` in list order: (balloon, CPUs, requested mCPU, containers)."""
    containers = p.cache.containers
    rows = []
    for b in p.balloons:
        if b.defn is not d:
            continue
        total = count = 0
        for ids in b.pod_ids.values():
            count += len(ids)
            for cid in ids:
                other = containers.get(cid)
                if other is not None:
                    total += (other.resource_updates or other.requirements).cpu_request or 0
        rows.append((b, b.cpus._mask.bit_count(), total, count))
    return rows


def _fitting(p: "FastBalloonsPolicy", d: BalloonDef, rows: list[tuple[Balloon, int, int, int]], own: int,
             by_max: bool) -> list[tuple[Balloon, int, int, int]]:
    """The rows whose free mCPU (``by_max``: free once inflated as far as it may) is at least ``own``."""
    if not by_max:
        return [row for row in rows if row[1] * 1000 - row[2] >= own]
    n = p.free_cpus._mask.bit_count()
    if d.max_cpus == NO_LIMIT or d.max_cpus > n:
        return [row for row in rows if (row[1] + n) * 1000 - row[2] >= own]
    return [row for row in rows if d.max_cpus * 1000 - row[2] >= own]


def _pick(p: "FastBalloonsPolicy", d: BalloonDef, rows: list[tuple[Balloon, int, int, int]],
          by_max: bool) -> tuple[Balloon, int]:
    """The plain choice among fillable balloons: the most free mCPU (``by_max``: once inflated),
    then the fewest containers, then the first."""
    if len(rows) == 1:
        return rows[0][0], rows[0][2]
    if by_max:
        n = p.free_cpus._mask.bit_count()
        limit = d.max_cpus * 1000 if d.max_cpus != NO_LIMIT and d.max_cpus <= n else None
        room = [(limit if limit is not None else (row[1] + n) * 1000) - row[2] for row in rows]
    else:
        room = [row[1] * 1000 - row[2] for row in rows]
    top = max(room)
    best = None
    for row, r in zip(rows, room):
        if r == top and (best is None or row[3] < best[3]):
            best = row
    assert best is not None
    return best[0], best[2]


def _fill_new(p: "FastBalloonsPolicy", d: BalloonDef, own: int) -> Balloon | None:
    """The ``new`` fill method: the type's first empty balloon, else a new one when the type
    may have one more and it can hold ``own`` mCPU (None: not fillable)."""
    count = 0
    used = set()
    for b in p.balloons:
        if b.defn is d:
            if not b.pod_ids:
                return b
            count += 1
            used.add(b.instance)
    if d.max_balloons > NO_LIMIT and d.max_balloons <= count:
        return None
    free = p.free_cpus
    n = free._mask.bit_count()
    if n == 0 or n < d.min_cpus:
        return None
    if d.min_cpus > 0:
        return _fill_new_plain(p, d, own)
    # ``newBalloon`` of a type of no minimum: the first free index, nothing to inflate
    instance = 0
    while instance in used:
        instance += 1
    # no CPUs: no memory nodes close to them (``mems`` 0)
    bln = Balloon(d, instance, p._new_tree_allocator(d), cpus=EMPTY, shared_idle_cpus=EMPTY)
    if d.max_cpus == NO_LIMIT or d.max_cpus > n:
        room = n * 1000
    else:
        room = d.max_cpus * 1000
    if room < own:
        return None
    p.balloons.append(bln)
    return bln


def _fill_new_plain(p: "FastBalloonsPolicy", d: BalloonDef, own: int) -> Balloon | None:
    """The ``new`` fill method of the plain policy, past its checks (a type of ``minCPUs``)."""
    saved_free = p.free_cpus
    try:
        bln = p._new_balloon(d)
    except PolicyError:
        p.free_cpus = saved_free
        return None
    if bln.max_avail_milli_cpus(p.free_cpus) < own:
        p.free_cpus = p.free_cpus | bln.cpus
        return None
    p.balloons.append(bln)
    if bln.cpus:
        p._update_pinning(p._share_idle_cpus(p.free_cpus, bln.cpus))
    return bln


# --- the inflate -----------------------------------------------------------------------------------
def _inflate(p: "FastBalloonsPolicy", bln: Balloon, milli: int) -> None:
    """``resizeBalloon`` growing ``bln`` to hold ``milli`` mCPU (more than it holds)."""
    d = bln.defn
    old = bln.cpus._mask.bit_count()
    new = (milli + 999) // 1000
    if d.max_cpus > NO_LIMIT and new > d.max_cpus:
        new = d.max_cpus
    if d.min_cpus > 0 and new < d.min_cpus:
        new = d.min_cpus
    if new <= old:
        if new < old:
            p._resize(bln, milli)   # never here: a balloon grows to hold more than it does
        return
    delta = new - old
    tree = bln.tree
    current, free = bln.cpus, p.free_cpus
    flat = getattr(tree, "flat", None)
    if (flat is not None and flat.kernel is not None and treekernel.ENABLED and not tree.close and not tree.far
            and free._mask.bit_count() > delta):
        # the C search asked at once (:mod:`.treekernel`): no table of resizes to look up and fill
        try:
            branch = flat.best(tree.topology_balancing, current._mask, free._mask, delta)
        except TreeError as exc:
            raise _error(f"resize/inflate: failed to choose a cpuset for allocating additional {delta} CPUs: "
                         f"{exc}") from None
        m = branch & free._mask
        frm = None if WHOLE_BRANCH and m.bit_count() == delta and _asks_plain(p.cpu_allocator) else CPUSet.from_mask(m)
    else:
        table = getattr(tree, "resizes", None)
        key = (current._mask, free._mask, delta)
        got = table.get(key) if table is not None else None
        if got is None:
            try:
                got = _resize_cpus(tree, current, free, delta)
            except TreeError as exc:
                raise _error(f"resize/inflate: failed to choose a cpuset for allocating additional {delta} CPUs: "
                             f"{exc}") from None
            if table is not None:
                if len(table) >= MAX_RESIZES:
                    table.clear()
                table[key] = got
        frm = got[0]
        m = frm._mask
        if WHOLE_BRANCH and m.bit_count() == delta and _asks_plain(p.cpu_allocator):
            frm = None
    if frm is None:
        am = m   # exactly ``delta`` CPUs to choose from: ``AllocateCpus`` takes them all (WHOLE_BRANCH)
    else:
        try:
            added, _ = p.cpu_allocator.allocate_cpus(frm, delta, d.priority)
        except AllocationError as exc:
            raise _error(f"resize/inflate: allocating {delta} CPUs for {bln.pretty_name()} failed: {exc}") from None
        am = added._mask
    p.free_cpus = free = CPUSet.from_mask(free._mask & ~am)
    bln.cpus = CPUSet.from_mask(current._mask | am)
    changed = _share_idle_cpus(p, free._mask, am)
    c = p.joining
    joins_last = c is not None and c.pod_id not in bln.pod_ids
    if changed and PIN_ONCE and joins_last and changed[-1] is bln:
        # ``bln`` is re-pinned last for its shared idle CPUs, then at the end of the resize, then
        # by :func:`allocate_resources` (the new container last): when the first moves no
        # memory, the three write the same values, marked pending in the same order — the last alone
        if len(changed) > 1:
            update_pinning(p, changed[:-1])
        if _pins_without_moves(p, bln):
            return
        update_pinning(p, [bln])
    elif changed:
        update_pinning(p, changed)
    # the end of the resize (:meth:`.fast.FastBalloonsPolicy._pin_resized`): left out when the
    # pinning right after writes the same
    if not joins_last or not _pins_without_moves(p, bln):
        update_pinning(p, [bln])


def _asks_plain(alloc: Any) -> bool:
    """Whether ``alloc`` answers ``allocate_cpus(frm, len(frm))`` with ``frm``'s CPUs, as the plain
    allocator's ``AllocateCpus`` does (itself, or the policy's remembering one around it, whose
    remembered answers are the plain one's)."""
    t = type(alloc)
    if t is (_REMEMBERING or _remembering()):
        t = type(alloc.inner)
    return t is CPUAllocator


_REMEMBERING: type | None = None


def _remembering() -> type:
    """:class:`.fast.RememberingCPUAllocator` (imported on first use: :mod:`.fast` imports this module)."""
    global _REMEMBERING
    from .fast import RememberingCPUAllocator

    _REMEMBERING = RememberingCPUAllocator
    return _REMEMBERING


def _pins_without_moves(p: "FastBalloonsPolicy", bln: Balloon) -> bool:
    """:meth:`.fast.FastBalloonsPolicy._pins_without_moves`, a pod without annotations read as
    :func:`update_pinning` reads it (memory not preserved, no memory types)."""
    if not bln.pod_ids:
        return True   # no container to pin (a new balloon)
    defn = bln.defn
    if not (p.pin_memory if defn.pin_memory is None else defn.pin_memory):
        return True
    mask = bln.cpus._mask | bln.shared_idle_cpus._mask
    mems = p.machine_texts.mems.get(mask)
    if mems is None:
        mems = p._closest_mems(CPUSet.from_mask(mask))
    alloc = p.mem_allocator
    users, requests = alloc.users, alloc.requests
    containers, pods = p.cache.containers, p.cache.pods
    for ids in bln.pod_ids.values():
        for cid in ids:
            c = containers.get(cid)
            if c is None:
                continue
            req = requests.get(cid)
            if req is None or users.get(cid) is None or req.zone & mems != mems:
                return False
            if pods[c.pod_id].annotations:
                _, preserve, types = p._pin_options(c, bln)
                if preserve or alloc.zone_type(req.zone) & types != types:
                    return False
    return True


def _resize_cpus(tree: CpuTreeAllocator, current: CPUSet, free: CPUSet, delta: int) -> tuple[CPUSet, CPUSet]:
    """``tree.resize_cpus(current, free, delta)`` (``delta`` > 0); an allocator of :mod:`.fast`
    with no devices to be close to or far from asks its flat tree at once (``ResizeCpus`` goes
    through ``resizeCpusWithDevices`` and ``resizeCpusOneAtATime`` to ``resizeCpusMaxLocalSet``
    then, when the free CPUs are more than the change)."""
    flat = getattr(tree, "flat", None)
    if flat is None or tree.close or tree.far or free._mask.bit_count() <= delta:
        return tree.resize_cpus(current, free, delta)
    fr, cur = free._mask, current._mask
    mask = flat.best(tree.topology_balancing, cur, fr, delta)
    return CPUSet.from_mask(mask & fr), CPUSet.from_mask(mask & cur)


def _share_idle_cpus(p: "FastBalloonsPolicy", add: int, remove: int) -> list[Balloon]:
    """``shareIdleCpus(add, remove)`` on masks (as :meth:`.fast.FastBalloonsPolicy._share_idle_cpus`)."""
    changed: list[Balloon] = []
    adding = add & ~p.sys.isolated._mask
    flat = _flat_tree(p.tree) if adding else None
    for b in p.balloons:
        shared = b.shared_idle_cpus._mask
        moved = False
        if remove and shared & remove:
            shared &= ~remove
            b.shared_idle_cpus = CPUSet.from_mask(shared)
            moved = True
        if flat is not None:
            level = b.defn.share_idle_cpus_in_same
            if level:
                idle = flat.idle_in_level(level, b.cpus._mask, adding)
                if idle and shared | idle != shared:
                    b.shared_idle_cpus = CPUSet.from_mask(shared | idle)
                    moved = True
        if moved:
            changed.append(b)
    return changed


def _flat_tree(root: CpuTreeNode) -> FlatTree:
    """:func:`.fast.flat_tree` (imported on first use: :mod:`.fast` imports this module)."""
    global _FLAT_TREE
    if _FLAT_TREE is None:
        from .fast import flat_tree

        _FLAT_TREE = flat_tree
    return _FLAT_TREE(root)


_FLAT_TREE: Callable[[CpuTreeNode], FlatTree] | None = None


# --- pinning ---------------------------------------------------------------------------------------
def _shares(milli: int) -> int:
    """``MilliCPUToShares``, remembered."""
    got = _SHARES[milli] = milli_cpu_to_shares(milli)
    if len(_SHARES) > 4096:
        _SHARES.clear()
    return got


def update_pinning(p: "FastBalloonsPolicy", blns: list[Balloon]) -> None:
    """``updatePinning(blns)`` of the plain policy with CPUs pinned: the same containers, the
    same fields set to the same values, marked pending in the same order — but a container
    :func:`_unchanged` is left alone (:data:`.resmgr.cache.SAME_SKIPPED`)."""
    if not p.pin_cpu:
        p._update_pinning(blns)
        return
    texts = p.machine_texts
    cache = p.cache
    containers = cache.containers
    pods = cache.pods
    records = cache.runtime if _cache.SAME_SKIPPED else None
    alloc = p.mem_allocator
    users, requests = alloc.users, alloc.requests
    mems_of, memsets, texts_of, shares_of = texts.mems, texts.memsets, texts.texts, _SHARES
    for bln in blns:
        mask = bln.cpus._mask | bln.shared_idle_cpus._mask
        # the pinnable CPUs as a set only where a text or memory nodes are not remembered yet
        mems = mems_of.get(mask)
        if mems is None:
            mems = p._closest_mems(CPUSet.from_mask(mask))
        bln.mems = mems
        defn = bln.defn
        pin_mem = p.pin_memory if defn.pin_memory is None else defn.pin_memory
        hide = bool(defn.hide_hyperthreads)
        text = texts_of.get(mask)
        if text is None:
            text = texts.text(CPUSet.from_mask(mask))
        single_text = ""
        for ids in bln.pod_ids.values():
            for cid in ids:
                c = containers.get(cid)
                if c is None:
                    continue
                if pods[c.pod_id].annotations:
                    single, preserve, types = p._pin_options(c, bln)
                else:
                    single, preserve, types = hide, False, 0
                if single:
                    if not single_text:
                        single_text = texts.text(p._single_threads(CPUSet.from_mask(mask)))
                    cpus_text = single_text
                else:
                    cpus_text = text
                req = (c.resource_updates or c.requirements).cpu_request
                shares: int | None = None
                if req is not None:
                    shares = shares_of.get(req)
                    if shares is None:
                        shares = _shares(req)
                # the container's own CPU resources: read where ``resources()`` would find them
                # all there (it fills in what is missing)
                ctr = c.ctr
                lx = ctr.linux
                res = lx.resources if lx is not None else None
                own = res.cpu if res is not None and res.memory is not None else None
                # a memory zone ``Realloc`` answers at once (nothing to widen): read without the call
                held = requests.get(cid) if pin_mem and types == 0 and users.get(cid) is not None else None
                zone = held.zone if held is not None and (
                    mems == 0 or held.zone & mems == mems or (held.affinity == mems and held.types == 0)) else None
                if (records is not None and own is not None and c.request is None and c.state != CREATING
                        and not preserve and (zone is not None or not pin_mem)
                        and _unchanged(own, records.get(cid), cpus_text, shares,
                                       _memset(memsets, texts, zone) if zone is not None else None)):
                    continue
                # SetCpusetCpus, SetCPUShares: the pending request found once
                pending = c._pending_cpu()
                if own is None:
                    own = ctr.resources().cpu
                    assert own is not None
                pending.cpus = own.cpus = cpus_text
                if shares is not None:
                    pending.shares = own.shares = shares
                if not pin_mem:
                    continue
                if preserve:
                    raise _error(f"{c.pretty_name()}: memory.preserve is not modelled by kubetwin's balloons policy")
                if zone is None:
                    if types == 0 and users.get(cid) is None and cid not in requests:
                        zone = _new_zone(p, c, mems)
                    else:
                        zone = p._alloc_mem(c, mems, types)
                # SetCpusetMems (the container pending already, before those allocMem touched)
                pending.mems = own.mems = _memset(memsets, texts, zone)


def _memset(memsets: dict[int, str], texts: Any, zone: int) -> str:
    """The memory-set text of ``zone`` (remembered by the machine's texts)."""
    got = memsets.get(zone)
    return got if got is not None else texts.memset(zone)


def _unchanged(own: LinuxCPU, record: Any, cpus: str, shares: int | None, memset: str | None) -> bool:
    """Whether pinning a container past its creation, nothing pending for it, to ``cpus``, CPU
    ``shares`` (None: not set) and memory set ``memset`` (None: memory not pinned) changes nothing:
    its cached CPU resources ``own`` and the runtime's ``record`` of it (its container's memory
    and CPU resources present) hold every value already. The plain ``Set*`` calls would make an
    update of those values, which the runtime writes over its own (:data:`.resmgr.cache.SAME_SKIPPED`:
    the same test as the cache's setters, on the three at once)."""
    if own.cpus != cpus or (shares is not None and own.shares != shares) or (memset is not None and own.mems != memset):
        return False
    if record is None:
        return False
    lx = record.ctr.linux
    res = lx.resources if lx is not None else None
    cpu = res.cpu if res is not None and res.memory is not None else None
    return (cpu is not None and cpu.cpus == cpus and (shares is None or cpu.shares == shares)
            and (memset is None or cpu.mems == memset))


def _new_zone(p: "FastBalloonsPolicy", c: CachedContainer, nodes: int) -> int:
    """``allocMem`` of a container without a memory zone, no memory types asked: its offer
    committed, as the allocator's ``GetOffer`` and ``Commit`` leave it when no zone can be
    overcommitted; otherwise (and on errors) the plain ``allocMem``."""
    alloc = p.mem_allocator
    limit = (c.resource_updates or c.requirements).memory_limit or 0
    if alloc.journal is not None or nodes == 0:
        return p._alloc_mem(c, nodes, 0)
    total = limit
    for r in alloc.requests.values():
        total += r.limit
    topology = _topology(alloc)
    if total > topology.smallest:
        return p._alloc_mem(c, nodes, 0)
    req = container_request(c.id, c.pretty_name(), c.qos_class, limit, nodes, 0)
    got = _resolved(alloc, nodes, topology)
    if got is None:
        return nodes   # as ``GetOffer`` fails before it changes anything: allocMem falls back
    types, zone, zone_type, capacity = got
    req.types = types
    if zone not in alloc.zones:   # as ``_zone_assign`` makes it
        alloc.zones[zone] = Zone(zone, zone_type, capacity)
    alloc._zone_assign(zone, req)
    alloc.requests[req.id] = req
    alloc.version += 1
    alloc._cleanup_unused_zones()
    return req.zone


class _MemoryTopology:
    """What libmem answers from its memory topology alone (its nodes, shared by copies of a
    runtime node): the smallest normal memory node's capacity, and per affinity of a request
    without memory types the types and initial zone ``GetOffer`` resolves it to
    (``validateRequest``, ``findInitialZone``, ``ensureNormalMemory``) with the zone's type and
    capacity (None: the resolution fails)."""

    __slots__ = ("nodes", "smallest", "resolved")

    def __init__(self, alloc: Allocator):
        self.nodes = alloc.nodes
        sizes = [n.capacity for n in self.nodes.values() if n.has_memory and n.normal]
        self.smallest = min(sizes) if sizes else -1
        self.resolved: dict[int, tuple[int, int, int, int] | None] = {}


_TOPOLOGIES: dict[int, _MemoryTopology] = {}


def _topology(alloc: Allocator) -> _MemoryTopology:
    nodes = alloc.nodes
    got = _TOPOLOGIES.get(id(nodes))
    if got is None or got.nodes is not nodes:
        if len(_TOPOLOGIES) > 64:
            _TOPOLOGIES.clear()
        got = _TOPOLOGIES[id(nodes)] = _MemoryTopology(alloc)
    return got


def _smallest_normal(alloc: Allocator) -> int:
    """The capacity of the allocator's smallest normal memory node (-1: none)."""
    return _topology(alloc).smallest


def _resolved(alloc: Allocator, affinity: int, topology: _MemoryTopology | None = None
              ) -> tuple[int, int, int, int] | None:
    """(types, zone, the zone's types, its capacity) a request of ``affinity`` and no memory
    types resolves to on ``alloc``'s machine (its :func:`_topology`), by the allocator's own
    code (None: it fails)."""
    resolved = (topology or _topology(alloc)).resolved
    if affinity in resolved:
        return resolved[affinity]
    rid = "kubetwin/probe"
    while rid in alloc.requests:   # an id no request has: the resolution reads the machine alone
        rid += "+"
    probe = Request(rid, "", 0, affinity)
    got: tuple[int, int, int, int] | None
    try:
        alloc._validate_request(probe)
        alloc._find_initial_zone(probe)
        alloc._ensure_normal_memory(probe)
        got = (probe.types, probe.zone, alloc._zone_type(probe.zone), alloc._zone_capacity(probe.zone))
    except MemoryError_:
        got = None
    resolved[affinity] = got
    return got
