"""NodeResourceTopologyMatch's NUMA cells as numpy columns across nodes, for its vectorised twin
(:mod:`.vector`).

Each node's row is read from the plugin's NRT cache (:mod:`.cache`) exactly as the plain plugin
reads it (``get_cached_nrt_copy``, then ``createNUMANodeList``'s cells via
:func:`.plugin.numa_nodes`): whether the data is fresh, whether there is an object, the
topology manager policy and scope, and per resource name an ``(nodes, cells)`` array of the
``available`` amounts in thousandths (exact), of ``Value()`` (whole units rounded up, as the
scores read them) and whether the cell has the resource at all.

Rows are kept current incrementally: a row is read again only when its node changed since the
last sync (:meth:`~kubetwin.scheduler.backend.cache.Cache.changed_since`: Reserve is a bind, an
OverReserve resync and a topology agent's new object touch their node, as kept verdicts already
require of everything a cycle reads) and then only if the cache hands back another object than
the one the row was built from. A new cache (``use_source``) or a change that is not one node's
own rebuilds every row.

Nodes whose cells the arrays cannot hold exactly are *irregular*: cells not numbered
``0..k-1`` in zone order (the plugin then indexes cells by NUMA id and by position differently,
bug for bug), more than 64 cells, an amount with a fraction of a thousandth or beyond 2**52. The
twin answers for them with the plain plugin's own functions, node by node.

Not an upstream module: the columnar twin of scheduler-plugins ``pkg/noderesourcetopology``'s
``createNUMANodeList`` over the cache of ``pkg/noderesourcetopology/cache``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ....model.quantity import Quantity
from .nrt import NodeResourceTopology, topology_manager_config
from .plugin import MAX_DISTANCE, _node_allocatable_names, numa_nodes

if TYPE_CHECKING:
    from ...backend.cache import ClusterState

#: amounts up to this magnitude are exact as int64 sums and as float64 (the scores divide them)
LIMIT = 2**52
_MAX_CELLS = 64


def milli(q: Quantity) -> int | None:
    """The quantity in thousandths when that is exact and within :data:`LIMIT`, else None."""
    unscaled, scale = q.exact()
    if scale >= -3:
        v = unscaled * 10 ** (scale + 3)
    else:
        div = 10 ** (-3 - scale)
        if unscaled % div:
            return None
        v = unscaled // div
    return v if -LIMIT < v < LIMIT else None


class NRTColumns:
    """The cells of every node's NodeResourceTopology, as the plugin's cache hands them out."""

    def __init__(self, cs: "ClusterState", plugin: Any):
        self.cs = cs
        self.plugin = plugin
        self.cache: Any = None
        self.generation = -1
        n = cs.n
        self.n = n
        #: the object each row was read from (None: no object), and whether it was fresh
        self.views: list[NodeResourceTopology | None] = [None] * n
        self.fresh = np.ones(n, dtype=bool)
        self.has = np.zeros(n, dtype=bool)          # an object, fresh
        self.single = np.zeros(n, dtype=bool)       # policy single-numa-node
        self.pod_scope = np.zeros(n, dtype=bool)    # scope pod
        self.regular = np.ones(n, dtype=bool)
        self.ncells = np.zeros(n, dtype=np.int64)
        #: per node, its NUMA distance matrix's group (-1: none); per group, one node's cells
        #: (LeastNUMANodes reads only their costs, the same in the whole group)
        self.group = np.full(n, -1, dtype=np.int64)
        self.groups: dict[tuple[tuple[int, ...], ...], int] = {}
        self.group_cells: list[list[Any]] = []
        #: per group, the twin's table of cell subsets (:mod:`.vector`)
        self.combos: dict[int, Any] = {}
        self.width = 0
        #: resource name -> column index; per column (n, width) arrays
        self.rindex: dict[str, int] = {}
        self.present: list[np.ndarray] = []
        self.milli: list[np.ndarray] = []
        self.value: list[np.ndarray] = []
        self.valid = np.zeros((n, 0), dtype=bool)   # cell position < ncells
        #: per resource name: is it among the node's allocatable names (``util.ResourceList``)
        self._names: dict[str, np.ndarray] = {}
        self.rebuilt_rows = 0

    # --- keeping current -------------------------------------------------------------------------

    def sync(self, pod: Any) -> None:
        """Rows of the nodes changed since the last sync read again from the cache."""
        cs = self.cs
        cache = self.plugin.cache
        if cache is not self.cache:
            self.cache = cache
            changed: Any = None
        elif self.generation == cs.generation:
            return
        else:
            changed = cs.changed_since(self.generation)
        self.generation = cs.generation
        if changed is None:
            self._names.clear()
            rows: Any = range(self.n)
            self.views = [None] * self.n
            self.fresh[:] = True
            force = True
        else:
            rows = changed
            force = False
        get = cache.get_cached_nrt_copy
        names = cs.names
        for i in rows:
            if i < 0:
                continue
            nrt, fresh = get(names[i], pod)
            if not force and nrt is self.views[i] and fresh == self.fresh[i]:
                continue
            self._row(i, nrt, fresh)

    def _row(self, i: int, nrt: NodeResourceTopology | None, fresh: bool) -> None:
        self.rebuilt_rows += 1
        self.views[i] = nrt
        self.fresh[i] = fresh
        self.has[i] = fresh and nrt is not None
        for arr in self.present:
            arr[i] = False
        self.ncells[i] = 0
        self.group[i] = -1
        if self.width:
            self.valid[i] = False
        self.regular[i] = True
        self.single[i] = self.pod_scope[i] = False
        if nrt is None or not fresh:
            return
        policy, scope = topology_manager_config(nrt)
        self.single[i] = policy == "single-numa-node"
        self.pod_scope[i] = scope == "pod"
        cells = numa_nodes(nrt)
        if [c.numa_id for c in cells] != list(range(len(cells))) or len(cells) > _MAX_CELLS:
            self.regular[i] = False
            return
        amounts = []
        for cell in cells:
            row = []
            for name, q in cell.resources.items():
                m = milli(q)
                if m is None:
                    self.regular[i] = False
                    return
                row.append((name, m, q.value()))
            amounts.append(row)
        self._widen(len(cells))
        self.ncells[i] = len(cells)
        key = tuple(tuple(c.costs.get(o.numa_id, MAX_DISTANCE) for o in cells) for c in cells)
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = len(self.group_cells)
            self.group_cells.append(cells)
        self.group[i] = g
        self.valid[i] = np.arange(self.width) < len(cells)
        for c, row in enumerate(amounts):
            for name, m, v in row:
                r = self.column(name)
                self.present[r][i, c] = True
                self.milli[r][i, c] = m
                self.value[r][i, c] = v

    def _widen(self, k: int) -> None:
        if k <= self.width:
            return
        grow = k - self.width
        pad = ((0, 0), (0, grow))
        self.present = [np.pad(a, pad) for a in self.present]
        self.milli = [np.pad(a, pad) for a in self.milli]
        self.value = [np.pad(a, pad) for a in self.value]
        self.valid = np.pad(self.valid, pad)
        self.width = k

    def column(self, name: str) -> int:
        r = self.rindex.get(name)
        if r is None:
            r = self.rindex[name] = len(self.present)
            shape = (self.n, self.width)
            self.present.append(np.zeros(shape, dtype=bool))
            self.milli.append(np.zeros(shape, dtype=np.int64))
            self.value.append(np.zeros(shape, dtype=np.int64))
        return r

    # --- reads -----------------------------------------------------------------------------------

    def node_has_name(self, name: str) -> np.ndarray:
        """Per node: ``name`` among the keys of ``util.ResourceList(nodeInfo.Allocatable)``."""
        got = self._names.get(name)
        if got is None:
            infos = self.cs.infos
            got = self._names[name] = np.fromiter(
                (name in _node_allocatable_names(ni) for ni in infos), dtype=bool, count=self.n)
        return got
