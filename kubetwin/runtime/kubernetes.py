"""What nri-plugins reads back from the CRI values: CPU request and limit, memory request.

Below the kubelet a resource policy sees no pod spec, only the container's Linux resources
(``cpu.shares``, CFS quota and period, memory limit) and its ``oom_score_adj``; it estimates
the container's requests and limits from them (``estimateResourceRequirements``), including
a Burstable container's memory request from its OOM score, by the inverse of the kubelet's
formula over the node's memory capacity. The rounding of each conversion is the plugin's.

Upstream: containers/nri-plugins v0.14.0 ``pkg/kubernetes/resources.go``,
``pkg/resmgr/cache/utils.go`` (``estimateResourceRequirements``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

MIN_SHARES = 2
MAX_SHARES = 262144
SHARES_PER_CPU = 1024
MILLI_CPU_TO_CPU = 1000
QUOTA_PERIOD = 100000
MIN_QUOTA_PERIOD = 1000
GUARANTEED_OOM_SCORE_ADJ = -997
BESTEFFORT_OOM_SCORE_ADJ = 1000
MIN_BURSTABLE_OOM_SCORE_ADJ = 1000 + GUARANTEED_OOM_SCORE_ADJ
MAX_BURSTABLE_OOM_SCORE_ADJ = BESTEFFORT_OOM_SCORE_ADJ - 1


def milli_cpu_to_shares(milli: int) -> int:
    if milli == 0:
        return MIN_SHARES
    shares = milli * SHARES_PER_CPU // MILLI_CPU_TO_CPU
    return max(MIN_SHARES, min(MAX_SHARES, shares))


def shares_to_milli_cpu(shares: int) -> int:
    if shares == MIN_SHARES:
        return 0
    return int(float(shares * MILLI_CPU_TO_CPU) / float(SHARES_PER_CPU) + 0.5)


def quota_to_milli_cpu(quota: int, period: int) -> int:
    if quota == 0 or period == 0:
        return 0
    return int(float(quota * MILLI_CPU_TO_CPU) / float(period) + 0.5)


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def mem_req_to_oom_adj(req: int, capacity: int) -> int:
    return 1000 - _go_div(1000 * req, capacity)


@lru_cache(maxsize=8)
def oom_adj_to_mem_req_estimates(capacity: int) -> dict[int, int]:
    """``CalculateOomAdjToMemReqEstimates``: for each OOM score, the smallest memory request
    giving it, found the plugin's way (step by a thousandth of the capacity, then adjust)."""
    milli = float(capacity) / 1000.0
    adj_to_req = {1000: 0, 0: capacity}
    i_to_req = {0: 0, 1000: capacity}
    for i in range(1, 1000):
        prev_req = i_to_req[i - 1]
        prev_adj = mem_req_to_oom_adj(prev_req, capacity)
        curr_req = int(float(prev_req) + milli + 0.5)
        curr_adj = mem_req_to_oom_adj(curr_req, capacity)
        if curr_adj < prev_adj:
            j = 0
            while curr_adj < prev_adj and j < int(milli):
                if curr_adj == prev_adj - 1:
                    adj_to_req[curr_adj] = curr_req
                    i_to_req[i] = curr_req
                curr_req -= 1
                curr_adj = mem_req_to_oom_adj(curr_req, capacity)
                j += 1
        elif curr_adj == prev_adj:
            j = 0
            while curr_adj == prev_adj and j < int(milli):
                curr_req += 1
                curr_adj = mem_req_to_oom_adj(curr_req, capacity)
                j += 1
            if curr_adj == prev_adj - 1:
                adj_to_req[curr_adj] = curr_req
                i_to_req[i] = curr_req
            else:
                raise ValueError(f"capacity {capacity}: failed to calculate request estimate #{i}")
        else:
            raise ValueError(f"capacity {capacity}: failed to calculate request estimate #{i}")
    return adj_to_req


def oom_adj_to_mem_req(oom_adj: int, mem_limit: int, capacity: int) -> int | None:
    if oom_adj < MIN_BURSTABLE_OOM_SCORE_ADJ or oom_adj > MAX_BURSTABLE_OOM_SCORE_ADJ:
        return None
    req = oom_adj_to_mem_req_estimates(capacity).get(oom_adj, 0)
    if req < mem_limit or mem_limit == 0:
        return req
    return None


@dataclass(frozen=True, slots=True)
class Requirements:
    """A container's ``v1.ResourceRequirements`` as the plugin estimates them; absent = None."""

    cpu_request: int | None = None  # milli-CPU
    cpu_limit: int | None = None
    memory_request: int | None = None  # bytes
    memory_limit: int | None = None

    def to_json(self) -> dict[str, dict[str, str]]:
        req: dict[str, str] = {}
        lim: dict[str, str] = {}
        if self.cpu_request is not None:
            req["cpu"] = f"{self.cpu_request}m"
        if self.memory_request is not None:
            req["memory"] = str(self.memory_request)
        if self.cpu_limit is not None:
            lim["cpu"] = f"{self.cpu_limit}m"
        if self.memory_limit is not None:
            lim["memory"] = str(self.memory_limit)
        return {"requests": req, "limits": lim}


def estimate_resource_requirements(shares: int, quota: int, period: int, memory_limit: int, qos: str,
                                   oom_adj: int, capacity: int) -> Requirements:
    """``estimateResourceRequirements`` from the NRI container's Linux resources."""
    cpu_req = None
    if (v := shares_to_milli_cpu(shares)) > 0:
        cpu_req = v
    mem_lim = memory_limit if memory_limit > 0 else None
    cpu_lim = None
    mem_req = None
    if qos == "Guaranteed":
        # upstream copies the (possibly absent) request map entries: a zero Quantity when absent
        cpu_lim = cpu_req if cpu_req is not None else 0
        mem_req = mem_lim if mem_lim is not None else 0
    else:
        if qos == "Burstable":
            est = oom_adj_to_mem_req(oom_adj, memory_limit if memory_limit > 0 else 0, capacity)
            if est:
                mem_req = est
        if (v := quota_to_milli_cpu(quota, period)) > 0:
            cpu_lim = v
    return Requirements(cpu_req, cpu_lim, mem_req, mem_lim)
