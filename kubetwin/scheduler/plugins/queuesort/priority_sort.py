"""PrioritySort: the scheduling queue pops the highest priority first and, among equal
priorities, the pod queued first (``pkg/scheduler/framework/plugins/queuesort/priority_sort.go``).

``Less`` is upstream's comparison; :meth:`PrioritySort.sort_key` is the same order as a key for
the queue's heap, with the order of arrival breaking a full tie (upstream's heap leaves such ties
to its own order; kubetwin makes them reproducible)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...framework.interface import Plugin
from . import NAME

if TYPE_CHECKING:
    from ...backend.queue import QueuedPod


class PrioritySort(Plugin):
    name = NAME

    @staticmethod
    def less(a: "QueuedPod", b: "QueuedPod") -> bool:
        """``Less``: a before b when its priority is higher, or equal and it was queued earlier."""
        p1, p2 = a.pod.spec.priority or 0, b.pod.spec.priority or 0
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    @staticmethod
    def sort_key(qp: "QueuedPod") -> tuple[int, float, int]:
        """The heap key that orders as :meth:`less` does (then by arrival)."""
        return (-(qp.pod.spec.priority or 0), qp.timestamp, qp.seq)
