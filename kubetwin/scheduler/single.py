"""One plugin alone over every given node — what the upstream plugin unit tests observe
(``pkg/scheduler/framework/plugins/*/*_test.go`` call a plugin's extension points directly).

The plugin runs in a framework of its own (:meth:`.framework.runtime.Framework.for_plugin`). The
verdict per node is the plugin's own: PreFilter ``Skip`` ⇒ Success everywhere; a PreFilter
rejection ⇒ that status on every node; else its Filter status. A PreFilter node restriction
(NodeAffinity's ``matchFields``) does not replace the plugin's Filter verdict, as the unit tests
call Filter on each node. Scores are computed for every node (the tests score nodes directly)
and then passed through the plugin's NormalizeScore.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model.pod import Pod
from .framework.interface import CycleState, FilterPlugin, Handle, Plugin, PreScorePlugin, ScoreExtensions, ScorePlugin
from .framework.runtime import Framework
from .framework.status import SUCCESS, Status


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
    fwk = Framework.for_plugin(plugin, handle)
    nodes = handle.snapshot.node_infos
    state = CycleState()
    pre = fwk.run_pre_filter_plugins(state, pod, nodes)
    verdicts: dict[str, Status]
    if plugin.name in pre.skipped or not isinstance(plugin, FilterPlugin):
        verdicts = {ni.name: SUCCESS for ni in nodes}
    elif not pre.status.is_success and pre.status.plugin:
        verdicts = {ni.name: pre.status for ni in nodes}
    else:
        verdicts = {ni.name: fwk.run_filter_plugins(state, pod, ni) or SUCCESS for ni in nodes}

    scores: dict[str, int] | None = None
    pre_score: Status | None = None
    if isinstance(plugin, ScorePlugin):
        pre_score = plugin.pre_score(state, pod, nodes) if isinstance(plugin, PreScorePlugin) else SUCCESS
        if pre_score.is_skip:
            scores = {ni.name: 0 for ni in nodes}
        elif not pre_score.is_success:
            scores = {}
        else:
            scores = {}
            for ni in nodes:
                s, st = plugin.score(state, pod, ni)
                scores[ni.name] = s if st.is_success else 0
            if isinstance(plugin, ScoreExtensions):
                plugin.normalize_score(state, pod, scores)
    return PluginResult(verdicts, scores, pre.status, pre_score)
