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

Twelfth session: a shared grant of a normal request (no exclusive CPUs, not isolated) is made
by :func:`allocate_shared` with the allocatable shared CPU the ranking just computed for the
chosen pool (:mod:`.fastpick`'s figures: nothing changes the accounting between the ranking
and the grant), instead of ``allocateCpu`` asking the pool for it twice (the refusal of a pool
short of CPU, and the check of the shared fraction), each a walk of the pool's ancestors and
subtree and of every grant. Anything else — no figures, a pool that would refuse — goes the
plain way, which computes its own figures and raises its own errors (nothing is changed before).

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/topology-aware/policy/resources.go`` (``takeCPUs``, ``allocateCpu``,
``AccountAllocateCPU``, ``AccountReleaseCPU``).
"""

from __future__ import annotations

from typing import Any

from ....model.cpuset import EMPTY
from . import fastpick
from .preferences import CPU_NORMAL

#: take this path (False: every grant through the plain slicing and accounting)
ENABLED = True


def takes_nothing(supply: Any, r: Any, cnt: int, scored: list[int] | None = None) -> bool:
    """Whether ``supply.pick_exclusive_cpus(r, cnt, ...)`` certainly picks no CPU and changes
    nothing: no CPUs asked, not from the isolated ones, and enough shared CPU not to refuse
    (``supply.allocatable_shared_cpu()``, or per pool id in ``scored``: :mod:`.fastpick`)."""
    if cnt != 0 or r.isolate:
        return False
    return (supply.allocatable_shared_cpu() if scored is None else scored[supply.node.id]) >= 0


def allocate_shared(supply: Any, r: Any) -> Any:
    """``supply.allocate_cpu(r)`` for a normal request of no exclusive CPUs, not isolated, with
    the ranking's figures for it (:func:`.fastpick.scored`): the same grant (no CPUs, the
    request's fraction as its portion) and the same change to the pool (the fraction granted
    from its shared CPUs); None when the plain code is to answer."""
    if r.cpu_type != CPU_NORMAL or r.full != 0 or r.isolate:
        return None
    scored = fastpick.scored(supply, r)
    if scored is None:
        return None
    shared = scored[supply.node.id]
    fraction = r.fraction
    if shared < 0 or shared < fraction:
        return None   # the plain code refuses, with its own error
    from .resources import Grant  # (it imports this module)

    grant = Grant(supply.node, r.container, CPU_NORMAL, r.cpu_class, EMPTY)
    if fraction > 0:
        supply.granted_shared += fraction
        grant.cpu_portion = fraction
    return grant
