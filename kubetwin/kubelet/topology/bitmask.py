"""NUMA affinity masks as plain ints (bit *i* = NUMA node *i*), like ``topologymanager/bitmask``.

An int keeps AND/count/compare at machine speed and is hashable; the kubelet's ``IsLessThan``
is the numeric comparison of the masks, so ints order exactly as upstream does.

Upstream: ``pkg/kubelet/cm/topologymanager/bitmask/bitmask.go``."""

from __future__ import annotations

from itertools import combinations
from typing import Iterable, Iterator


def mask_of(nodes: Iterable[int]) -> int:
    m = 0
    for n in nodes:
        m |= 1 << n
    return m


def bits_of(mask: int) -> list[int]:
    """The NUMA ids set in ``mask``, ascending (``GetBits``)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def count(mask: int) -> int:
    return mask.bit_count()


def is_narrower_than(a: int, b: int) -> bool:
    """Fewer NUMA nodes wins; on a tie the numerically smaller mask (``IsNarrowerThan``)."""
    ca, cb = a.bit_count(), b.bit_count()
    if ca == cb:
        return a < b
    return ca < cb


def iterate_bitmasks(nodes: Iterable[int]) -> Iterator[int]:
    """Every non-empty mask over ``nodes``: by number of bits, then in combination order (``IterateBitMasks``)."""
    ids = list(nodes)
    for k in range(1, len(ids) + 1):
        for combo in combinations(ids, k):
            yield mask_of(combo)


def format_mask(mask: int | None) -> str:
    """``[0 1]`` style, as the kubelet logs a NUMA affinity; ``None`` is 'any'."""
    if mask is None:
        return "any"
    return "[" + " ".join(str(b) for b in bits_of(mask)) + "]"
