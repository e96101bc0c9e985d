"""One plugin alone over every given node — what the upstream plugin unit tests observe.

The verdict per node is the plugin's own: PreFilter ``Skip`` ⇒ Success everywhere; a
PreFilter rejection ⇒ that status on every node; else its Filter status. A PreFilter node
restriction (NodeAffinity's ``matchFields``) does not replace the plugin's Filter verdict,
as the unit tests call Filter on each node. Scores are computed for every node (the tests
score nodes directly) and then passed through the plugin's NormalizeScore.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model.pod import Pod
from .framework.interface import CycleState, Handle, Plugin
from .framework.status import Code, Status


@dataclass(frozen=True)
class PluginResult:
    filter: dict[str, Status]
    scores: dict[str, int] | None
    pre_filter: Status
    pre_score: Status | None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"filter": {n: s.to_json() for n, s in self.filter.items()}}
        if self.scores is not None:
            out["scores"] = dict(self.scores)
        return out


def run_plugin(plugin: Plugin, handle: Handle, pod: Pod) -> PluginResult:
    nodes = handle.snapshot.node_infos
    state = CycleState()
    verdicts: dict[str, Status] = {}
    pre = Status()
    if hasattr(plugin, "pre_filter"):
        _, pre = plugin.pre_filter(state, pod, nodes)
    if pre.is_skip:
        verdicts = {ni.name: Status() for ni in nodes}
    elif pre.code != Code.Success:
        verdicts = {ni.name: pre for ni in nodes}
    elif hasattr(plugin, "filter"):
        verdicts = {ni.name: plugin.filter(state, pod, ni) for ni in nodes}
    else:
        verdicts = {ni.name: Status() for ni in nodes}

    scores: dict[str, int] | None = None
    pre_score: Status | None = None
    if hasattr(plugin, "score"):
        pre_score = plugin.pre_score(state, pod, nodes) if hasattr(plugin, "pre_score") else Status()
        if pre_score.is_skip:
            scores = {ni.name: 0 for ni in nodes}
        elif pre_score.code != Code.Success:
            scores = {}
        else:
            scores = {}
            for ni in nodes:
                s, st = plugin.score(state, pod, ni)
                scores[ni.name] = s if st.is_success else 0
            if hasattr(plugin, "normalize_score"):
                plugin.normalize_score(state, pod, scores)
    return PluginResult(verdicts, scores, pre, pre_score)
