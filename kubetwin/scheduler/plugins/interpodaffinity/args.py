"""``InterPodAffinityArgs`` (``kubescheduler.config.k8s.io/v1``), decoded strictly, defaulted
(``hardPodAffinityWeight`` 1) and validated ([0, 100]) as kube-scheduler does
(``apis/config/v1/defaults.go``, ``validation/validation_pluginargs.go``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ....errors import InputError
from ....model.strict import BOOLEAN, INTEGER
from ...framework.args import args_spec, decode_args
from . import NAME

SPEC = args_spec(hardPodAffinityWeight=INTEGER, ignorePreferredTermsOfExistingPods=BOOLEAN)


@dataclass(frozen=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


def parse_inter_pod_affinity_args(raw: Mapping[str, Any] | None, path: str = "",
                                  file: str | None = None) -> InterPodAffinityArgs:
    args = decode_args(NAME, raw, SPEC, path, file)
    p = path + "." if path else ""
    w = args.get("hardPodAffinityWeight")
    if w is None:
        w = 1
    if not 0 <= w <= 100:
        raise InputError(f"Invalid value: {w!r}: not in valid range [0, 100]", path=f"{p}hardPodAffinityWeight",
                         file=file)
    return InterPodAffinityArgs(int(w), bool(args.get("ignorePreferredTermsOfExistingPods") or False))
