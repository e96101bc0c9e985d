"""A fast path for the topology-aware policy's pinning: cpuset texts once per pool and mask.

After every creation and deletion upstream re-pins each shared container
(``updateSharedAllocations``): the shared CPUs of its pool, with its exclusive CPUs if it has
any, one thread per core when the container hides hyperthreads, formatted as a cpuset text —
for every such container of the node, though the containers of one pool get the same text.
Here the text is made once per (pool, exclusive CPUs, hiding) in a pass and remembered per
machine and mask; whether a container hides hyperthreads (a pod annotation: the sandbox's
annotations never change) is kept on its grant. The containers are pinned in the same order
with the same values (``set_cpuset_cpus``: upstream marks every one of them pending, changed or
not, and so does the cache — except, on :mod:`..fastpod`'s creations, a value the container and
the runtime's record of it hold already: :data:`...resmgr.cache.SAME_SKIPPED`), so the NRI
updates are the plain code's. Which grants it pins (not reserved or preserved CPU, not
exclusive CPUs alone) is fixed per grant, so the ids of their containers are kept on the policy
in the order of its grants, changed by each grant and release (:data:`KEPT`): the pass reads
only those grants, not the grants of exclusive CPUs alone (half of them in ``simulate``'s
benchmark, each a cold object between two creations of a node). A new grant is applied
(:func:`apply_grant`) with the same container calls in the same order, its memory nodes' text
remembered per mask and no scheduling-class lookup where its answer is known to be none.
``tests/runtime/test_fast_paths.py`` holds containers, updates and exports equal with this
off (``ENABLED = False``: :meth:`.policy.TopologyAwarePolicy.update_shared_allocations`,
``apply_grant`` and ``_set_preferred_cpuset`` as upstream has them), and
``tests/runtime/policies/topologyaware/test_fastpin.py`` the grants' calls and replies with
scheduling and CPU classes.

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/topology-aware/policy/topology-aware-policy.go`` (``updateSharedAllocations``,
``applyGrant``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ....model.cpuset import EMPTY, CPUSet
from ...kubernetes import milli_cpu_to_shares
from ...libmem import memset_string
from .preferences import (
    CPU_NORMAL,
    CPU_PRESERVE,
    CPU_RESERVED,
    MEMORY_PRESERVE,
    hide_hyperthreads_preference,
    scheduling_class_preference,
)

if TYPE_CHECKING:
    from .policy import TopologyAwarePolicy

#: pin with this module (False: the plain per-container code, for A/B runs and tests)
ENABLED = True

#: texts kept per machine before the table starts over
MAX_TEXTS = 1 << 14

_TEXTS: dict[int, tuple[Any, dict[tuple[int, bool], str]]] = {}


def _texts(sys: Any) -> dict[tuple[int, bool], str]:
    got = _TEXTS.get(id(sys))
    if got is None or got[0] is not sys:
        if len(_TEXTS) > 64:
            _TEXTS.clear()
        got = _TEXTS[id(sys)] = (sys, {})
    return got[1]


def cpuset_text(sys: Any, cpus: CPUSet, hide: bool) -> str:
    """``str(cpus)``, or of ``sys.single_thread_for_cpus(cpus)`` when ``hide``: a function of
    the machine and the mask, remembered."""
    table = _texts(sys)
    key = (cpus.mask, hide)
    text = table.get(key)
    if text is None:
        if len(table) >= MAX_TEXTS:
            table.clear()
        text = table[key] = str(sys.single_thread_for_cpus(cpus) if hide else cpus)
    return text


def hides_hyperthreads(g: Any) -> bool:
    """``hide_hyperthreads_preference`` of the grant's container, kept on the grant (a pod
    annotation: fixed for the container's life)."""
    known = g.__dict__.get("_hide_hyperthreads")
    if known is None:
        known = g.__dict__["_hide_hyperthreads"] = hide_hyperthreads_preference(g.container)
    return bool(known)


#: ``memset_string`` per memory node mask (a pure function of the mask)
_MEMSETS: dict[int, str] = {}


def memset_text(mask: int) -> str:
    """``memset_string(mask)``, remembered."""
    text = _MEMSETS.get(mask)
    if text is None:
        if len(_MEMSETS) >= MAX_TEXTS:
            _MEMSETS.clear()
        text = _MEMSETS[mask] = memset_string(mask)
    return text


def apply_grant(p: "TopologyAwarePolicy", grant: Any) -> None:
    """``p.apply_grant(grant)``: the same container calls with the same values in the same
    order (cpuset CPUs, CPU shares, CPU classes, cpuset memory nodes, scheduling class); the
    cpuset text and the memory nodes' text remembered per mask, and no scheduling class looked up for a pod without
    annotations when the policy maps no namespace and no QoS class to one (the lookup's
    answer: none)."""
    c = grant.container
    cpu_type, exclusive = grant.cpu_type, grant.exclusive
    if cpu_type == CPU_NORMAL:
        portion = grant.cpu_portion   # ``shared_portion()``
        shared = grant.node.free_supply().sharable
        cpus = shared if not exclusive else (exclusive | shared if portion > 0 else exclusive)
    elif cpu_type == CPU_RESERVED:
        cpus = grant.reserved_cpus()
        portion = grant.reserved_portion()
    elif cpu_type == CPU_PRESERVE:
        cpus, portion = EMPTY, 0
    else:
        return
    cfg = p.cfg
    if cfg.pin_cpu:
        if cpu_type != CPU_PRESERVE:
            if cpus:
                # ``p._set_preferred_cpuset(c, cpus)``, which finds this grant again by the
                # container's id for its hiding of hyperthreads (the container's own preference)
                c.set_cpuset_cpus(cpuset_text(p.sys, cpus, hides_hyperthreads(grant)))
            else:
                c.set_cpuset_cpus("")
        c.set_cpu_shares(milli_cpu_to_shares(portion if portion else 1000 * exclusive.size()))
        if exclusive and grant.cpu_class:
            for cpu in exclusive:
                p.cpu_class_of[cpu] = grant.cpu_class
    if grant.mem_type != MEMORY_PRESERVE:
        c.set_cpuset_mems(memset_text(grant.mem_zone if cfg.pin_memory else 0))
    if not c.pod.sandbox.annotations and not cfg.namespace_scheduling_classes and not cfg.podqos_scheduling_classes:
        return
    try:
        sc = scheduling_class_preference(cfg, c)
    except ValueError:
        sc = None  # upstream logs the unknown class and applies none
    if sc is not None:
        p._apply_scheduling_class(c, sc)


def _repinned(g: Any) -> bool:
    """Whether ``updateSharedAllocations`` re-pins the grant's container: not reserved or
    preserved CPU, not exclusive CPUs alone (``shared_portion() == 0``). Fixed for the grant's
    life (its CPU type, exclusive CPUs and portion are set before it is stored)."""
    cpu_type = g.cpu_type
    if cpu_type == CPU_RESERVED or cpu_type == CPU_PRESERVE:
        return False
    return not (g.exclusive._mask and (g.cpu_portion == 0 or cpu_type != CPU_NORMAL))


#: keep the ids of the containers re-pinned after each creation and deletion on the policy, in
#: the order of its grants, changed by every grant and release (:func:`granted`,
#: :func:`released`), so the re-pinning reads no grant of exclusive CPUs alone (False: every grant)
KEPT = True


def _kept(p: "TopologyAwarePolicy") -> tuple[str, ...]:
    """The ids of the containers the re-pinning pins, in ``p.allocations``' order: kept on the
    policy for its grants as they are (the number of grants counted with them), else found in
    one pass and kept (a tuple of strings: copies of the node share it)."""
    got = p.__dict__.get("_repinned")
    if got is not None and got[0] == len(p.allocations):
        ids: tuple[str, ...] = got[1]
        return ids
    ids = tuple(cid for cid, g in p.allocations.items() if _repinned(g))
    p.__dict__["_repinned"] = (len(p.allocations), ids)
    return ids


def granted(p: "TopologyAwarePolicy", g: Any) -> None:
    """``g`` was just added to ``p.allocations`` (last, under its container's id): the kept ids
    (if they were those of the grants before it) take its container's if it is re-pinned;
    otherwise they are dropped (found again when read)."""
    d = p.__dict__
    got = d.get("_repinned")
    if got is None:
        return
    if not (ENABLED and KEPT) or got[0] != len(p.allocations) - 1:
        del d["_repinned"]
        return
    d["_repinned"] = (got[0] + 1, got[1] + (g.container.id,) if _repinned(g) else got[1])


def released(p: "TopologyAwarePolicy", g: Any) -> None:
    """``g`` was just removed from ``p.allocations``: the kept ids (if they were those of the
    grants before) lose its container's; otherwise they are dropped."""
    d = p.__dict__
    got = d.get("_repinned")
    if got is None:
        return
    if not (ENABLED and KEPT) or got[0] != len(p.allocations) + 1:
        del d["_repinned"]
        return
    cid = g.container.id
    d["_repinned"] = (got[0] - 1, tuple(x for x in got[1] if x != cid) if cid in got[1] else got[1])


def update_shared_allocations(p: "TopologyAwarePolicy", grant: Any) -> None:
    """``p.update_shared_allocations(grant)``: the same containers pinned to the same CPUs, in
    the same order (with :data:`KEPT`, only the grants it pins are read)."""
    if grant is not None and grant.cpu_type == CPU_RESERVED:
        return
    if not p.cfg.pin_cpu:
        return   # the plain loop pins nothing else
    sys = p.sys
    gid = grant.container.id if grant is not None else None
    texts: dict[tuple[int, int, bool], str] = {}
    allocations = p.allocations
    others = [allocations[cid] for cid in _kept(p)] if KEPT else list(allocations.values())
    for other in others:
        cpu_type = other.cpu_type
        if cpu_type == CPU_RESERVED or cpu_type == CPU_PRESERVE:
            continue
        exclusive = other.exclusive
        mask = exclusive._mask
        if mask and (other.cpu_portion == 0 or cpu_type != CPU_NORMAL):
            continue   # exclusive CPUs alone (``shared_portion() == 0``)
        c = other.container
        if c.id == gid:
            continue
        hide = other.__dict__.get("_hide_hyperthreads")
        if hide is None:
            hide = hides_hyperthreads(other)
        node = other.node
        key = (node.id, mask, hide)
        text = texts.get(key)
        if text is None:
            shared = node.free_supply().sharable
            text = texts[key] = cpuset_text(sys, shared if not mask else exclusive | shared, bool(hide))
        c.set_cpuset_cpus(text)
