"""The cgroup v2 files runc writes for a container, from its OCI ``linux.resources``.

runc (``libcontainer/specconv``) turns the OCI resources into its cgroup configuration — CPU
shares become ``cpu.weight`` on the way (``ConvertCPUSharesToCgroupV2Value``: the quadratic
curve since runc 1.3.2 / opencontainers/cgroups; the linear one before) — and the cgroup v2
manager (``opencontainers/cgroups`` ``fs2.Manager.Set``) writes them in a fixed order: pids,
memory, io, cpu, cpuset, hugetlb, then the ``unified`` map, which therefore overrides anything
written before it. The systemd driver sets the matching unit properties first and then writes
the same files, so the end state is the same. crun writes the same files with the same curve
(since 1.23).

Per file:

* ``memory.swap.max`` from OCI ``memory.swap`` (memory+swap) minus ``memory.limit``
  (``ConvertMemorySwapToCgroupV2Value``), ``memory.max``, ``memory.low`` (reservation);
* ``io.*`` from ``blockIO`` (:func:`kubetwin.runtime.blockio.io_files`);
* ``cpu.weight``; ``cpu.max`` = ``"<quota|max> <period>"`` when either is set (period 100000 by default);
* ``cpuset.cpus`` / ``cpuset.mems`` when not empty;
* ``hugetlb.<size>.max`` and, on kernels with reservation accounting, ``hugetlb.<size>.rsvd.max``;
* ``pids.max`` (0 is written as 1, as systemd would);
* every ``unified`` key verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import InputError
from ..kubelet.cgroups import cpu_shares_to_weight, cpu_shares_to_weight_quadratic
from .blockio import io_files

DEFAULT_PERIOD = 100000


@dataclass(frozen=True, slots=True)
class CgroupWrite:
    """One file write: the file, what is written, and the OCI field it comes from."""

    file: str
    content: str
    source: str


@dataclass(frozen=True)
class CgroupState:
    """The writes in order, the files' end state, and what could not be applied."""

    writes: tuple[CgroupWrite, ...]
    files: dict[str, str]
    notes: tuple[str, ...] = ()


def cpu_weight(shares: int, curve: str = "quadratic") -> int:
    """``ConvertCPUSharesToCgroupV2Value``: 0 stays unset."""
    return cpu_shares_to_weight_quadratic(shares) if curve == "quadratic" else cpu_shares_to_weight(shares)


def num_to_str(value: int) -> str:
    """``numToStr``: 0 is "do not write", -1 is ``max``."""
    if value == 0:
        return ""
    if value == -1:
        return "max"
    return str(value)


def memory_swap_v2(swap: int, memory: int) -> int:
    """``ConvertMemorySwapToCgroupV2Value``: OCI's memory+swap as cgroup v2's swap alone."""
    if memory == -1 and swap == 0:
        return -1
    if swap in (-1, 0):
        return swap
    if memory == -1:
        return swap
    if memory == 0:
        raise InputError("unable to set swap limit without memory limit", path="linux.resources.memory.swap")
    if memory < 0:
        raise InputError(f"invalid memory value: {memory}", path="linux.resources.memory.limit")
    if swap < memory:
        raise InputError("memory+swap limit should be >= memory limit", path="linux.resources.memory.swap")
    return swap - memory


def cgroup_writes(resources: Mapping[str, Any], *, weight_curve: str = "quadratic", bfq: bool = False,
                  hugetlb_rsvd: bool = True, swap_controller: bool = True) -> CgroupState:
    """``fs2.Manager.Set`` for the OCI ``linux.resources`` of one container."""
    writes: list[CgroupWrite] = []
    notes: list[str] = []

    def w(file: str, content: str, source: str) -> None:
        writes.append(CgroupWrite(file, content, source))

    pids = resources.get("pids")
    if pids is not None and pids.get("limit") is not None:
        limit = int(pids["limit"])
        w("pids.max", str(limit) if limit > 0 else "1" if limit == 0 else "max", "pids.limit")
    mem = resources.get("memory") or {}
    limit, reservation, swap = int(mem.get("limit") or 0), int(mem.get("reservation") or 0), int(mem.get("swap") or 0)
    if limit or reservation or swap:
        swap2 = memory_swap_v2(swap, limit)
        swap_str = num_to_str(swap2)
        if swap_str == "" and swap2 == 0 and swap > 0:
            swap_str = "0"  # memory and memory+swap equal: no swap
        if swap_str:
            if swap_controller:
                w("memory.swap.max", swap_str, "memory.swap - memory.limit")
            elif swap_str not in ("max", "0"):
                raise InputError("memory.swap.max: the swap controller is not available",
                                 path="linux.resources.memory.swap")
        if num_to_str(limit):
            w("memory.max", num_to_str(limit), "memory.limit")
        if num_to_str(reservation):
            w("memory.low", num_to_str(reservation), "memory.reservation")
    block_io = resources.get("blockIO")
    io = io_files(block_io or {}, bfq=bfq) if block_io else None
    if io is not None:
        for f, content in io.files.items():
            w(f, content, "blockIO")
        notes.extend(io.notes)
    cpu = resources.get("cpu") or {}
    shares = int(cpu.get("shares") or 0)
    quota, period = int(cpu.get("quota") or 0), int(cpu.get("period") or 0)
    if shares:
        weight = cpu_weight(shares, weight_curve)
        if weight:
            curve = ("ceil(10^((log2(s)^2 + 125*log2(s))/612 - 7/34))" if weight_curve == "quadratic"
                     else "1 + (s - 2) * 9999 / 262142")
            w("cpu.weight", str(weight), f"cpu.shares {shares} -> {curve}")
    if quota or period:
        text = (str(quota) if quota > 0 else "max") + " " + str(period or DEFAULT_PERIOD)
        w("cpu.max", text, "cpu.quota, cpu.period")
    if cpu.get("cpus"):
        w("cpuset.cpus", str(cpu["cpus"]), "cpu.cpus")
    if cpu.get("mems"):
        w("cpuset.mems", str(cpu["mems"]), "cpu.mems")
    for hp in resources.get("hugepageLimits") or ():
        size, value = str(hp["pageSize"]), str(int(hp.get("limit") or 0))
        w(f"hugetlb.{size}.max", value, "hugepageLimits")
        if hugetlb_rsvd:
            w(f"hugetlb.{size}.rsvd.max", value, "hugepageLimits")
    for key, value in (resources.get("unified") or {}).items():
        if "/" in key:
            raise InputError(f'unified resource "{key}" must be a file name (no slashes)',
                             path=f"linux.resources.unified.{key}")
        w(key, str(value), "unified")
    files: dict[str, str] = {}
    for wr in writes:
        files[wr.file] = wr.content
    return CgroupState(tuple(writes), files, tuple(notes))


__all__ = ["CgroupWrite", "CgroupState", "cgroup_writes", "cpu_weight", "num_to_str", "memory_swap_v2",
           "DEFAULT_PERIOD"]
