"""A fast path for the CPU allocator's orderings when no CPU priority is preferred.

``takeIdleCores`` and ``takeIdleThreads`` sort their candidates with ``sort.Slice`` and a
comparison that first asks ``cmpCPUSet`` which set the preferred priority favours. With no
priority preferred (``PRIORITY_NONE``: what the topology-aware policy asks by default, and
always when it slices exclusive CPUs off the shared ones) that answer is "equal" for every pair,
and what is left of each comparison is a chain of per-candidate figures ending in the CPU id: a
strict total order, so any sort gives the order Go's does. Here each candidate's figures are
computed once and the candidates sorted by them as tuples — instead of the comparison run some
``n log n`` times over the 64 to 256 CPUs of a machine (the plain allocator's costliest step).
With a priority preferred the plain comparison runs (``ENABLED = False``: always).
``tests/runtime/test_cpuallocator_keys.py`` holds the answers equal to the plain ones.

Not an upstream module: a kubetwin fast path over nri-plugins v0.14.0
``pkg/cpuallocator/allocator.go`` (:mod:`.cpuallocator`).
"""

from __future__ import annotations

from typing import Any

#: sort by keys when no priority is preferred (False: the plain comparison always)
ENABLED = True


def sort_idle_cores(h: Any, cores: list[int], none: int) -> bool:
    """Sort ``takeIdleCores``' candidate cores (their first CPU's ids) for helper ``h``; False
    when the plain comparison must do it. With no priority preferred it is ``i < j``."""
    if not ENABLED or h.prefer != none:
        return False
    cores.sort()
    return True


def sort_idle_threads(h: Any, cpus: list[int], none: int) -> bool:
    """Sort ``takeIdleThreads``' candidate CPUs for helper ``h``; False when the plain
    comparison must do it. With no priority preferred it orders by: the CPUs already taken in
    the CPU's package (more first), the package id, the package's free CPUs (fewer first), the
    core's free CPUs (fewer first), the CPU id."""
    if not ENABLED or h.prefer != none:
        return False
    sys, topo, frm, result = h.sys, h.topo, h.frm.mask, h.result.mask
    by_pkg: dict[int, tuple[int, int, int]] = {}
    keys: dict[int, tuple[int, int, int, int, int]] = {}
    for i in cpus:
        pkg = sys.cpu(i).package
        fig = by_pkg.get(pkg)
        if fig is None:
            pset = topo.pkg[pkg].mask
            fig = by_pkg[pkg] = (-(pset & result).bit_count(), pkg, (pset & frm).bit_count())
        keys[i] = (fig[0], fig[1], fig[2], (topo.core[i].mask & frm).bit_count(), i)
    cpus.sort(key=keys.__getitem__)
    return True
