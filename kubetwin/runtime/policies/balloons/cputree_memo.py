"""A fast path for the balloons policy's tree allocator: resizes remembered per CPU tree.

``ResizeCpus`` is a pure function of the CPU tree (built from the machine at start-up, read-only
after), the balloon type's allocator settings (topology balancing, the CPU sets to be close to
and far from) and its three arguments (the balloon's CPUs, the free CPUs, the change). In
``simulate`` the thousands of nodes of a group share one tree and resize balloons from the same
few states again and again, so an answer computed once is kept, per tree, and given again —
only answers of the plain walk (``CpuTreeAllocator._with_devices`` in :mod:`.cputree`, which
stays as upstream has it), never errors (those are computed each time).
``tests/runtime/policies/balloons/test_cputree_memo.py`` holds them equal.

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/balloons/policy/cputree.go``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from ....model.cpuset import CPUSet

if TYPE_CHECKING:
    from .cputree import CpuTreeAllocator, CpuTreeNode

#: answer from the table (False: every resize walks the tree, for A/B runs and tests)
ENABLED = True

#: answers kept per tree before the table starts over
MAX_ENTRIES = 1 << 16

_TABLES: dict[int, tuple["CpuTreeNode", dict[Hashable, tuple[CPUSet, CPUSet]]]] = {}


def resize(alloc: "CpuTreeAllocator", current: CPUSet, free: CPUSet, delta: int) -> tuple[CPUSet, CPUSet]:
    """``alloc._with_devices(current, free, delta)``, from the table when asked before."""
    root = alloc.root
    got = _TABLES.get(id(root))
    if got is None or got[0] is not root:
        if len(_TABLES) > 64:
            _TABLES.clear()
        got = _TABLES[id(root)] = (root, {})
    table = got[1]
    key = (alloc.topology_balancing, tuple(tuple(s.mask for s in sets) for sets in alloc.close),
           tuple(tuple(s.mask for s in sets) for sets in alloc.far), current.mask, free.mask, delta)
    answer = table.get(key)
    if answer is None:
        answer = alloc._with_devices(current, free, delta)
        if len(table) >= MAX_ENTRIES:
            table.clear()
        table[key] = answer
    return answer
