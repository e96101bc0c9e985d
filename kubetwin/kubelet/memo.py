"""Remembered answers of the managers' pure calculations (hints, CPU picks, hint merges).

A hint or a CPU pick depends only on the kubelet's immutable set-up (machine, configuration,
policy options) and on inputs that are spelled out in the key (free memory per NUMA node,
available CPUs, the request). Every kubelet copied from one template has the same set-up, so the
copies share one ``SharedMemo``: thousands of simulated nodes pass through the same states, and a
state one node has already answered for costs a dictionary look-up on every other node. Nothing
is ever invalidated — a changed state is a different key — and the table is simply emptied when
it grows past its limit.

Not an upstream module: a kubetwin fast path; the calculations remembered are upstream's.
"""

from __future__ import annotations

from typing import Any, Hashable

#: entries kept before the table is emptied (keys are small tuples: a few MB at most)
DEFAULT_LIMIT = 200_000


class SharedMemo(dict):
    """A bounded ``dict`` whose instances survive a kubelet copy as the same object."""

    __slots__ = ("limit",)

    def __init__(self, limit: int = DEFAULT_LIMIT):
        super().__init__()
        self.limit = limit

    def put(self, key: Hashable, value: Any) -> Any:
        """Keep ``value`` for ``key`` and return it (a memo with limit 0 keeps nothing)."""
        if len(self) >= self.limit:
            self.clear()
            if self.limit <= 0:
                return value
        self[key] = value
        return value

    def __deepcopy__(self, memo: dict) -> "SharedMemo":
        return self

    def __copy__(self) -> "SharedMemo":
        return self
