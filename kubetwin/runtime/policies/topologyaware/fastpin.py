"""A fast path for the topology-aware policy's pinning: cpuset texts once per pool and mask.

After every creation and deletion upstream re-pins each shared container
(``updateSharedAllocations``): the shared CPUs of its pool, with its exclusive CPUs if it has
any, one thread per core when the container hides hyperthreads, formatted as a cpuset text —
for every such container of the node, though the containers of one pool get the same text.
Here the text is made once per (pool, exclusive CPUs, hiding) in a pass and remembered per
machine and mask; whether a container hides hyperthreads (a pod annotation: the sandbox's
annotations never change) is kept on its grant. The containers are pinned in the same order
with the same values (``set_cpuset_cpus``: upstream marks every one of them pending, changed or
not, and so does kubetwin), so the NRI updates are the plain code's.
``tests/runtime/test_fast_paths.py`` holds containers, updates and exports equal with this
off (``ENABLED = False``: :meth:`.policy.TopologyAwarePolicy.update_shared_allocations` and
``_set_preferred_cpuset`` as upstream has them).

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/topology-aware/policy/topology-aware-policy.go`` (``updateSharedAllocations``,
``applyGrant``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ....model.cpuset import CPUSet
from .preferences import CPU_NORMAL, CPU_PRESERVE, CPU_RESERVED, hide_hyperthreads_preference

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


def update_shared_allocations(p: "TopologyAwarePolicy", grant: Any) -> None:
    """``p.update_shared_allocations(grant)``: the same containers pinned to the same CPUs, in
    the same order."""
    if grant is not None and grant.cpu_type == CPU_RESERVED:
        return
    if not p.cfg.pin_cpu:
        return   # the plain loop pins nothing else
    sys = p.sys
    gid = grant.container.id if grant is not None else None
    texts: dict[tuple[int, int, bool], str] = {}
    for other in list(p.allocations.values()):
        cpu_type = other.cpu_type
        if cpu_type == CPU_RESERVED or cpu_type == CPU_PRESERVE:
            continue
        exclusive = other.exclusive
        if (other.cpu_portion == 0 or cpu_type != CPU_NORMAL) and exclusive:
            continue   # exclusive CPUs alone (``shared_portion() == 0``)
        c = other.container
        if gid is not None and c.id == gid:
            continue
        hide = hides_hyperthreads(other)
        node = other.node
        key = (node.id, exclusive.mask, hide)
        text = texts.get(key)
        if text is None:
            shared = node.free_supply().sharable
            text = texts[key] = cpuset_text(sys, shared if not exclusive else exclusive | shared, hide)
        c.set_cpuset_cpus(text)
