"""DefaultPreemption, the PostFilter plugin: for a pod no node fits, the node where evicting
lower-priority pods would make room, and those pods (``pkg/scheduler/framework/plugins/
defaultpreemption/default_preemption.go``; the evaluator is :mod:`.preemption`).

A successful PostFilter ends the cycle with a nomination (the scheduler evicts the victims and
nominates the pod); otherwise its message (``preemption: 0/N nodes are available: ...``) ends
the FitError. :meth:`DefaultPreemption.answered_without_dry_run` tells the kept-verdict
shortcut when the answer read nothing but node counts.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from ....model.pod import Pod
from ...framework.diagnosis import Diagnosis
from ...framework.interface import CycleState, Plugin, PostFilterResult
from ...framework.status import SUCCESS, Code, Status
from . import NAME
from .args import DefaultPreemptionArgs, parse_default_preemption_args
from .preemption import NEVER, message_without_dry_run, pod_priority, preempt

#: how DefaultPreemption answered a failed cycle without a dry run (see :meth:`answered_without_dry_run`)
PREEMPT_NEVER, PREEMPT_NO_DRY_RUN = 1, 2


class DefaultPreemption(Plugin):
    name = NAME

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str, file: str | None = None) -> DefaultPreemptionArgs:
        return parse_default_preemption_args(raw, path, file)

    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Diagnosis) -> tuple[PostFilterResult | None, Status]:
        args: DefaultPreemptionArgs = self.args
        outcome = preempt(self.handle, pod, state, diagnosis, args.min_candidate_nodes_percentage,
                          args.min_candidate_nodes_absolute)
        if outcome.node is not None:
            return PostFilterResult(outcome.node, outcome.victims), SUCCESS
        return None, Status(Code.Unschedulable, (outcome.message,) if outcome.message else ())

    def answered_without_dry_run(self, pod: Pod, diagnosis: Diagnosis) -> int | None:
        """How PostFilter answered without a dry run — the pod may not preempt
        (:data:`PREEMPT_NEVER`), or no node holds a victim (:data:`PREEMPT_NO_DRY_RUN`: the
        message is a function of the node counts) — or None when it may have run one."""
        if pod.spec.preemption_policy == "Never":
            return PREEMPT_NEVER
        if pod.status.nominated_node_name:
            return None
        cache = self.handle.cache
        if cache is None or not cache.any_priority_below(pod_priority(pod)):
            return PREEMPT_NO_DRY_RUN if cache is not None else None
        if not diagnosis.nodes_with_code(Code.Unschedulable):
            return PREEMPT_NO_DRY_RUN
        return None

    def kept_answer_holds(self, kind: int, pod: Pod, potential: int) -> bool:
        """Would PostFilter answer the same way without a dry run now that ``potential`` nodes
        fail as Unschedulable? Not once a lower-priority pod (a possible victim) is bound."""
        if kind != PREEMPT_NO_DRY_RUN or not potential:
            return True
        cache = self.handle.cache   # PREEMPT_NO_DRY_RUN is only answered with a cache
        return cache is not None and not cache.any_priority_below(pod_priority(pod))

    @staticmethod
    def message_without_dry_run(kind: int, num_nodes: int, potential: int) -> str:
        """PostFilter's message for an answer without a dry run: a function of the node counts."""
        return _message(kind, num_nodes, potential)


@functools.lru_cache(maxsize=4096)
def _message(kind: int, num_nodes: int, potential: int) -> str:
    if kind == PREEMPT_NEVER:
        return "preemption: " + NEVER
    if kind == PREEMPT_NO_DRY_RUN:
        return message_without_dry_run(num_nodes, potential)
    return ""
