"""The vectorised cycle's Filter with a recorder (a traced cycle, ``--trace``): the same
``findNodesThatFitPod`` as :meth:`.cycle.VectorCycle._find_feasible` — the same stages, the same
sampling, the same answer — with each stage's vectorised verdict timed and handed over with the
nodes the sampling examined and the rejections of the nodes walked node by node, so the trace
reports what the fast path computed instead of re-running the plugins one by one.

Not an upstream module: kubetwin's tracing hook on the vectorised twin of
``pkg/scheduler/schedule_one.go``'s ``findNodesThatFitPod``."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ..framework.interface import CycleState
from ..framework.status import Status

if TYPE_CHECKING:
    from ...model.pod import Pod
    from ..schedule_one import CycleRecorder
    from .cycle import Stage, VectorCycle, VectorDiagnosis


def find_feasible_recorded(vc: VectorCycle, state: CycleState, pod: Pod, skipped: set[str],
                           candidates: np.ndarray, diag: VectorDiagnosis, start: int,
                           recorder: CycleRecorder) -> tuple[np.ndarray, int]:
    clock = time.perf_counter_ns
    stages: list[Stage] = []
    timed: list[tuple[str, Any, int]] = []
    cs = vc.cs
    for plugin, name, twin, _ in vc.filters:
        if name in skipped:
            continue
        t0 = clock()
        verdict = twin(cs, pod, plugin, state) if twin is not None else None
        stages.append((plugin, verdict))
        timed.append((name, verdict, clock() - t0))
    statuses: dict[int, Status] = {}
    t0 = clock()
    feasible, processed = vc._find_feasible(state, pod, skipped, candidates, diag, start, stages=stages,
                                            keep_statuses=statuses)
    walk = clock() - t0
    m = len(candidates)
    if m:
        s = start % m
        rot = np.concatenate((candidates[s:], candidates[:s])) if s else candidates
        examined = rot[:processed]
    else:
        examined = candidates
    recorder.filter_stages(cs.names, timed, examined, statuses, walk)
    return feasible, processed
