"""Per-cluster memos of the scheduler's fast paths: one ``OrderedDict`` per cluster state, kept
as long as the cluster state lives.

Why: the fast paths that keep answers across cycles (:mod:`.nodescores`,
:mod:`kubetwin.scheduler.plugins.noderesources.fit_kept`) each hold one memo per
:class:`~kubetwin.scheduler.backend.cache.ClusterState`. A simulation asks about one cluster
cycle after cycle, so the last cluster asked about is remembered by a weak reference — calling
it is cheaper than the weak dictionary's lookup.

Not an upstream module: upstream keeps no state across scheduling cycles.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any


class ClusterMemos:
    """An ``OrderedDict`` per cluster state (weakly keyed), the last one asked about at hand."""

    __slots__ = ("_memos", "_last_ref", "_last_memo")

    def __init__(self) -> None:
        self._memos: weakref.WeakKeyDictionary[Any, OrderedDict[Any, Any]] = weakref.WeakKeyDictionary()
        self._last_ref: Any = None
        self._last_memo: OrderedDict[Any, Any] | None = None

    def of(self, cs: Any) -> OrderedDict[Any, Any]:
        """The memo of cluster state ``cs`` (a new empty one the first time)."""
        ref = self._last_ref
        if ref is not None and ref() is cs and self._last_memo is not None:
            return self._last_memo
        memo = self._memos.get(cs)
        if memo is None:
            memo = self._memos[cs] = OrderedDict()
        self._last_ref, self._last_memo = weakref.ref(cs), memo
        return memo
