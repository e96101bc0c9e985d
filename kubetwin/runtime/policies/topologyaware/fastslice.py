"""A fast path for the topology-aware policy's CPU slicing when a grant takes no exclusive CPUs.

Upstream's ``allocateCpu`` always asks ``takeCPUs`` for the exclusive CPUs, also for a
request of none (every shared, reserved and best-effort container): the pool's sliceable CPUs
are worked out (the CPU allocator run once per leaf pool below it) and then zero of them taken;
the grant's CPUs are then accounted in every pool above and below it, and so again when it is
released. With no exclusive CPUs the answer is known: the allocator takes nothing from any set
(it only takes sets no larger than what it still needs), the sliceable CPUs cannot fail (each
leaf asks for at most the shared CPUs it has), and accounting an empty set changes no pool.
What can still fail is kept: a pool whose allocatable shared CPU is negative refuses even zero
exclusive CPUs, with the plain error, and isolated requests go the plain way.
``tests/runtime/test_fast_paths.py`` holds containers, updates and exports equal with this off
(``ENABLED = False``: :mod:`.resources` as upstream has it).

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/topology-aware/policy/resources.go`` (``takeCPUs``, ``allocateCpu``,
``AccountAllocateCPU``, ``AccountReleaseCPU``).
"""

from __future__ import annotations

from typing import Any

#: take this path (False: every grant through the plain slicing and accounting)
ENABLED = True


def takes_nothing(supply: Any, r: Any, cnt: int, scored: list[int] | None = None) -> bool:
    """Whether ``supply.pick_exclusive_cpus(r, cnt, ...)`` certainly picks no CPU and changes
    nothing: no CPUs asked, not from the isolated ones, and enough shared CPU not to refuse
    (``supply.allocatable_shared_cpu()``, or per pool id in ``scored``: :mod:`.fastpick`)."""
    if cnt != 0 or r.isolate:
        return False
    return (supply.allocatable_shared_cpu() if scored is None else scored[supply.node.id]) >= 0
