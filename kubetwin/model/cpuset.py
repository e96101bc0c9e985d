"""``CPUSet``: a set of logical CPU ids in the Linux list format (``0-3,8,10-11``).

Kept as one Python int used as a bit mask, so union, intersection and difference over a
1,000-CPU machine are single big-int operations — the CPU manager does these in its inner
loops. Immutable and hashable, like the kubelet's ``cpuset.CPUSet``.

CPU ids read from any input (cpusets, MachineInfo, sysfs, hwloc) are bounded by
:data:`MAX_CPU_ID`: ``"0-99999999999"`` is refused at once instead of building a mask of 10^11
bits. Commands then refuse CPUs the machine does not have, as the kubelet does.

Upstream: ``k8s.io/utils/cpuset/cpuset.go``.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from .. import limits
from ..errors import InputError
from .goint import atoi

#: The largest CPU id kubetwin reads by default (ids 0 to 65535: the 65,536 CPUs of
#: ``256s1n256c1t``); ``KUBETWIN_MAX_CPU_ID`` raises it (:mod:`kubetwin.limits`).
MAX_CPU_ID = limits.MAX_CPU_ID.default


class CPUSet:
    __slots__ = ("_mask",)

    def __init__(self, cpus: Iterable[int] = ()):
        mask = 0
        for c in cpus:
            if c < 0:
                raise ValueError(f"negative CPU id {c}")
            mask |= 1 << c
        self._mask = mask

    @classmethod
    def from_mask(cls, mask: int) -> "CPUSet":
        obj = cls.__new__(cls)
        obj._mask = mask
        return obj

    @classmethod
    def range(cls, first: int, last: int) -> "CPUSet":
        """CPUs ``first..last`` inclusive."""
        if last < first:
            return EMPTY
        return cls.from_mask(((1 << (last - first + 1)) - 1) << first)

    @classmethod
    def parse(cls, text: str, path: str = "") -> "CPUSet":
        """``cpuset.Parse`` (k8s.io/utils/cpuset): the Linux list format, elements as
        ``strconv.Atoi`` reads them (no blanks); the empty string is the empty set."""
        if not isinstance(text, str):
            raise InputError(f"cpuset must be a string like \"0-3,8\", not {type(text).__name__}", path=path)
        if text == "":
            return EMPTY
        max_id = limits.MAX_CPU_ID.value()
        mask = 0
        for part in text.split(","):
            lo, dash, hi = part.partition("-")
            try:
                if dash:
                    a, b = _cpu_id(lo), _cpu_id(hi)
                    if b < a:
                        raise ValueError
                else:
                    a = b = _cpu_id(lo)
            except ValueError:
                raise InputError(f'invalid cpuset "{_short(text)}": bad element "{_short(part)}"', path=path,
                                 fix='use the Linux list format, e.g. "0-3,8,10-11"') from None
            if b > max_id:
                raise InputError(f'invalid cpuset "{_short(text)}": CPU id {_short(hi if dash else lo)} is beyond the largest '
                                 f"CPU id kubetwin reads ({max_id})", path=path,
                                 fix=f"name CPUs of the machine (Linux numbers them from 0); {limits.MAX_CPU_ID.env}=N "
                                     "raises the limit")
            mask |= ((1 << (b - a + 1)) - 1) << a
        return cls.from_mask(mask)

    # --- set algebra ------------------------------------------------------------------
    @property
    def mask(self) -> int:
        return self._mask

    def union(self, *others: "CPUSet") -> "CPUSet":
        m = self._mask
        for o in others:
            m |= o._mask
        return CPUSet.from_mask(m)

    def intersection(self, other: "CPUSet") -> "CPUSet":
        return CPUSet.from_mask(self._mask & other._mask)

    def difference(self, other: "CPUSet") -> "CPUSet":
        return CPUSet.from_mask(self._mask & ~other._mask)

    __or__ = union
    __and__ = intersection
    __sub__ = difference

    def is_subset_of(self, other: "CPUSet") -> bool:
        return self._mask & ~other._mask == 0

    def is_empty(self) -> bool:
        return self._mask == 0

    def size(self) -> int:
        return self._mask.bit_count()

    __len__ = size

    def __bool__(self) -> bool:
        return self._mask != 0

    def __contains__(self, cpu: int) -> bool:
        return cpu >= 0 and (self._mask >> cpu) & 1 == 1

    def __iter__(self) -> Iterator[int]:
        """Ascending CPU ids."""
        m = self._mask
        while m:
            low = m & -m
            yield low.bit_length() - 1
            m ^= low

    def sorted(self) -> list[int]:
        return list(self)

    def first(self) -> int:
        return (self._mask & -self._mask).bit_length() - 1 if self._mask else -1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CPUSet) and other._mask == self._mask

    def __hash__(self) -> int:
        return hash(self._mask)

    def __str__(self) -> str:
        """The Linux list format, ranges of 2+ CPUs joined with ``-`` (``String()``)."""
        parts: list[str] = []
        m = self._mask
        base = 0
        while m:
            # skip zeros, then measure the run of ones
            tz = (m & -m).bit_length() - 1
            m >>= tz
            base += tz
            run = (~m & (m + 1)).bit_length() - 1
            start, end = base, base + run - 1
            parts.append(str(start) if start == end else f"{start}-{end}")
            m >>= run
            base += run
        return ",".join(parts)

    def __repr__(self) -> str:
        return f"CPUSet({str(self)!r})"


def _cpu_id(text: str) -> int:
    """A CPU id as Go's ``strconv.Atoi`` reads one (:func:`kubetwin.model.goint.atoi`): ASCII digits
    after an optional sign, within int64; a negative id is refused here (a ``-`` splits a range)."""
    value = atoi(text)
    if value is None or value < 0:
        raise ValueError(text)
    return value


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


EMPTY = CPUSet.from_mask(0)
