"""SchedulingGates: a pod that carries ``spec.schedulingGates`` stays out of activeQ until they
are all removed (``pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go``).

kubetwin's pods never lose their gates during a run (no pod updates are modelled), so the
plugin registers no events: a gated pod waits for the whole run."""

from __future__ import annotations

from ....model.pod import Pod
from ...framework.interface import Plugin
from ...framework.status import SUCCESS, Status, unresolvable
from . import NAME


class SchedulingGates(Plugin):
    name = NAME

    @staticmethod
    def pre_enqueue(pod: Pod) -> Status:
        """``PreEnqueue``: UnschedulableAndUnresolvable naming the gates (as Go prints a
        ``[]string``), success for a pod without gates."""
        gates = pod.spec.scheduling_gates
        if not gates:
            return SUCCESS
        return unresolvable("waiting for scheduling gates: [" + " ".join(g.name for g in gates) + "]")
