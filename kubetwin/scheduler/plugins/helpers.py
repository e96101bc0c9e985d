"""Small helpers several plugins share (``plugins/helper`` upstream)."""

from __future__ import annotations

from typing import Any, MutableMapping

from ...model.node import Taint
from ...model.pod import Toleration
from ..framework.interface import MAX_NODE_SCORE, CycleState

_DECIMAL_INTEGER = __import__("re").compile(r"(0|-?[1-9][0-9]*)\Z")  # content.IsDecimalInteger: no "-0", no newline
_INT64 = (-(2**63), 2**63 - 1)


def default_normalize_score(max_priority: int, reverse: bool, scores: MutableMapping[str, int]) -> None:
    """``helper.DefaultNormalizeScore``: scale to ``0..max_priority`` by the maximum, maybe reversed."""
    max_count = max(scores.values(), default=0)
    if max_count == 0:
        if reverse:
            for k in scores:
                scores[k] = max_priority
        return
    for k, s in scores.items():
        s = max_priority * s // max_count
        scores[k] = max_priority - s if reverse else s


def _taint_int(text: str) -> int | None:
    """``content.IsDecimalInteger`` then ``ParseInt(…, 10, 64)``: canonical decimal int64 only."""
    if not _DECIMAL_INTEGER.match(text):
        return None
    v = int(text)
    return v if _INT64[0] <= v <= _INT64[1] else None


def tolerates(t: Toleration, taint: Taint, comparison_operators: bool) -> bool:
    """``Toleration.ToleratesTaint``; ``Gt``/``Lt`` compare the taint's value to the toleration's.

    A value that is no canonical int64 makes the toleration not match (logged upstream).
    """
    if t.effect and t.effect != taint.effect:
        return False
    if t.key and t.key != taint.key:
        return False
    op = t.operator
    if op in ("", "Equal"):
        return t.value == taint.value
    if op == "Exists":
        return True
    if op in ("Gt", "Lt"):
        if not comparison_operators:
            return False
        tv, nv = _taint_int(t.value), _taint_int(taint.value)
        if tv is None or nv is None:
            return False
        return nv > tv if op == "Gt" else nv < tv
    return False


def tolerated(tolerations: list[Toleration], taint: Taint, comparison_operators: bool) -> bool:
    return any(tolerates(t, taint, comparison_operators) for t in tolerations)


def does_not_schedule(taint: Taint) -> bool:
    """``DoNotScheduleTaintsFilterFunc``: NoSchedule and NoExecute keep pods away."""
    return taint.effect in ("NoSchedule", "NoExecute")


def untolerated_taint(taints: list[Taint], tolerations: list[Toleration], comparison_operators: bool,
                      only=does_not_schedule) -> Taint | None:
    """``FindMatchingUntoleratedTaint``: the first taint passing ``only`` that no toleration tolerates."""
    for taint in taints:
        if only(taint) and not tolerated(tolerations, taint, comparison_operators):
            return taint
    return None


__all__ = ["MAX_NODE_SCORE", "default_normalize_score", "tolerates", "tolerated", "untolerated_taint",
           "does_not_schedule"]


def pre_filter_state(plugin: Any, state: CycleState, pod: Any) -> Any:
    """The plugin's PreFilter state of this cycle; when Filter is called without one (preemption's
    dry runs), PreFilter is run on a scratch state over the snapshot. ``None`` when PreFilter skips."""
    s = state.get(plugin.name)
    if s is None:
        scratch = CycleState()
        _, st = plugin.pre_filter(scratch, pod, plugin.handle.snapshot.node_infos)
        if st.is_skip:
            return None
        s = scratch[plugin.name]
    return s
