"""``DefaultPreemptionArgs`` (``kubescheduler.config.k8s.io/v1``), decoded strictly, defaulted
(10 %, 100 nodes) and validated as kube-scheduler does (``ValidateDefaultPreemptionArgs``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ....errors import InputError
from ....model.strict import INTEGER
from ...framework.args import args_spec, decode_args
from . import NAME
from .preemption import MIN_CANDIDATE_NODES_ABSOLUTE, MIN_CANDIDATE_NODES_PERCENTAGE

SPEC = args_spec(minCandidateNodesPercentage=INTEGER, minCandidateNodesAbsolute=INTEGER)


@dataclass(frozen=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE


def parse_default_preemption_args(raw: Mapping[str, Any] | None, path: str = "",
                                  file: str | None = None) -> DefaultPreemptionArgs:
    args = decode_args(NAME, raw, SPEC, path, file)
    p = path + "." if path else ""
    pct = args.get("minCandidateNodesPercentage")
    pct = MIN_CANDIDATE_NODES_PERCENTAGE if pct is None else int(pct)
    absolute = args.get("minCandidateNodesAbsolute")
    absolute = MIN_CANDIDATE_NODES_ABSOLUTE if absolute is None else int(absolute)
    if not 0 <= pct <= 100:
        raise InputError(f"Invalid value: {pct}: not in valid range [0, 100]", path=f"{p}minCandidateNodesPercentage",
                         file=file)
    if absolute < 0:
        raise InputError(f"Invalid value: {absolute}: not in valid range [0, inf)", path=f"{p}minCandidateNodesAbsolute",
                         file=file)
    if pct == 0 and absolute == 0:
        raise InputError("Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
                         path=f"{p}minCandidateNodesPercentage", file=file)
    return DefaultPreemptionArgs(pct, absolute)
