"""A fast path for the CPU allocator: ``AllocateCpus`` answers remembered per machine.

nri-plugins' CPU allocator is a pure function of the machine's topology and its three
arguments (the CPUs to pick from, how many, the priority preferred): it keeps no state between
calls. So an answer computed once holds for every later call with the same arguments on the
same machine — in ``simulate``, the thousands of nodes of a group share one
:class:`..sysfs.System` and pick from the same few free sets again and again. The table is kept
per :class:`System` object (the topology the allocator reads), bounded, and only ever holds
answers of :class:`.cpuallocator.CPUAllocator`'s plain code (``plain_allocate_cpus``), which
stays as it is in :mod:`.cpuallocator`; ``tests/runtime/test_cpuallocator_memo.py`` holds them
equal. Errors (a set too small) are raised before the table is read, as the plain code does.

Not an upstream module: a kubetwin fast path over nri-plugins v0.14.0
``pkg/cpuallocator/allocator.go`` (:mod:`.cpuallocator`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.cpuset import CPUSet

if TYPE_CHECKING:
    from .cpuallocator import CPUAllocator
    from .sysfs import System

#: answer from the table (False: every call runs the plain allocator, for A/B runs and tests)
ENABLED = True

#: answers kept per machine before the table starts over
MAX_ENTRIES = 1 << 16

_TABLES: dict[int, tuple["System", dict[tuple[int, int, int], tuple[CPUSet, CPUSet]]]] = {}


def allocate_cpus(alloc: "CPUAllocator", frm: CPUSet, cnt: int, prefer: int) -> tuple[CPUSet, CPUSet]:
    """``alloc.plain_allocate_cpus(frm, cnt, prefer)``, from the table when it was asked before
    on the same machine."""
    sys = alloc.sys
    got = _TABLES.get(id(sys))
    if got is None or got[0] is not sys:
        if len(_TABLES) > 64:
            _TABLES.clear()
        got = _TABLES[id(sys)] = (sys, {})
    table = got[1]
    key = (frm.mask, cnt, prefer)
    answer = table.get(key)
    if answer is None:
        answer = alloc.plain_allocate_cpus(frm, cnt, prefer)
        if len(table) >= MAX_ENTRIES:
            table.clear()
        table[key] = answer
    return answer
