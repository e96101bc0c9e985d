"""``tell_rejected``: a vector Filter that leaves a trace (``on_rejected``) hears of the nodes the
plain cycle would have run it on and seen it reject — examined nodes, first rejecting Filter,
per-node statuses past the first node-by-node stage, nodes with nominated pods left out."""

from __future__ import annotations

import numpy as np

from kubetwin.scheduler.fastpath.cycle import tell_rejected
from kubetwin.scheduler.fastpath.vector import FilterVerdict
from kubetwin.scheduler.framework.status import Code, Status


def _verdict(name, fail, told):
    return FilterVerdict(name, np.array(fail), np.full(len(fail), 2, dtype=np.int8), None, lambda k: ("no",),
                         on_rejected=lambda mask: told.extend(np.flatnonzero(mask).tolist()))


def test_only_examined_nodes_rejected_first_by_the_filter_are_told():
    told: list[int] = []
    first = FilterVerdict("A", np.array([True, False, False, False]))
    second = _verdict("B", [True, True, False, True], told)
    tell_rejected([(None, first), (None, second)], np.array([0, 1, 2]), 4)
    assert told == [1]


def test_rejections_past_a_node_by_node_stage_come_from_the_statuses():
    told: list[int] = []
    verdict = _verdict("B", [False, True, True, True], told)
    statuses = {1: Status(Code.Unschedulable, ("no",), "B"), 2: Status(Code.Unschedulable, ("x",), "C"),
                3: Status(Code.Unschedulable, ("no",), "B")}
    tell_rejected([(object(), None), (None, verdict)], np.array([0, 1, 2, 3]), 4, statuses, {3: []})
    assert told == [1]
