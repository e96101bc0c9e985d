"""A fast path for the balloons tree search: ``resizeCpusMaxLocalSet`` on CPU masks in C.

Each creation that inflates a balloon asks the flat tree (:class:`.fast.FlatTree`) for the
branch to take CPUs from; in ``simulate`` the machine-wide (current CPUs, free CPUs) pair is new
almost every time (at 5,000 x 50,000, 11 of 5,060 asks found in the tables), so the tables of
remembered answers (:attr:`.fast.FlatTree.answers`, the NUMA nodes' ones of :mod:`.treesplit`, the
allocators' ``resizes``) are looked up, missed and filled for nothing, and the search runs in
Python. The C kernel ``kubetwin._kernel._treesearch`` runs the mask search itself
(:meth:`.fast.FlatTree._search_masks`, its twin: the deepest level with room, the count vectors
compared top down, then the name's rank) on the tree's masks as 64-bit words: no table, no
Python object made but the answer (one of the tree's own masks).

Only trees that nest with disjoint levels (:attr:`.fast.FlatTree.nested`, where the mask search
is the plain one's answer) get a kernel tree. :data:`ENABLED` off, the kernel not built, or
``KUBETWIN_PURE_PYTHON`` set: the tables and the Python search (equivalence tests, A/B runs;
``benchmarks/bench_runtime_sim.py --plain``). ``tests/runtime/policies/balloons/test_treekernel.py``
holds the answers equal to the twin's.

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/balloons/policy/cputree.go`` (``resizeCpusMaxLocalSet``, ``sorterAllocate``,
``sorterRelease``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .fast import FlatTree

#: search with the C kernel where it was built (False: the remembered answers and the Python search)
ENABLED = True


#: the interface of ``_treesearch`` this module speaks (its ``INTERFACE``)
INTERFACE = 1


def _load() -> tuple[Callable[..., Any], Callable[[Any, bool, int, int, int], int]] | None:
    if os.environ.get("KUBETWIN_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        from ...._kernel import _treesearch
    except ImportError:   # not built here (no compiler at set-up): the Python search runs
        return None
    from ...._kernel import current

    if not current(_treesearch, INTERFACE):
        return None
    return _treesearch.build, _treesearch.search


_KERNEL = _load()
#: the kernel was built and loaded
COMPILED = _KERNEL is not None


def build(flat: FlatTree) -> Any:
    """The kernel's form of ``flat`` (None: not built here, or a tree that does not nest)."""
    if _KERNEL is None or not flat.nested:
        return None
    try:
        return _KERNEL[0](flat.masks, flat.children, flat.ranks, flat.only_child)
    except ValueError:   # a shape the kernel does not take (children not consecutive): the Python search
        return None


def search(tree: Any, balancing: bool, current: int, free: int, delta: int) -> int:
    """:meth:`.fast.FlatTree._search_masks` ``(balancing, current, free, delta)`` on ``tree``
    (:func:`build`): the mask of the branch picked, -1 when none has room."""
    assert _KERNEL is not None
    return _KERNEL[1](tree, balancing, current, free, delta)
