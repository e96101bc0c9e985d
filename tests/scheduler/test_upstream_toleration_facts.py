"""Toleration answers recorded from the released upstream Go code (differential testing, issue 14).

Upstream: ``Toleration.ToleratesTaint`` in k8s.io/api v0.36.3 ``core/v1/toleration.go`` with the
comparison operators enabled (``TaintTolerationComparisonOperators``); its numbers must pass
``content.IsDecimalInteger`` (k8s.io/apimachinery v0.36.3) before ``strconv.ParseInt``.
"""

from __future__ import annotations

import pytest

from kubetwin.model.node import Taint
from kubetwin.model.pod import Toleration
from kubetwin.scheduler.plugins.helpers import tolerates

# (toleration operator, toleration value, taint value, upstream's answer)
FACTS = [
    ("Lt", "5\n", "-5", False),      # a trailing newline is no decimal integer
    ("Lt", "9223372036854775807", "5\n", False),
    ("Gt", "-0", "10", False),       # "-0" is no canonical decimal integer
    ("Lt", "-0", "-9223372036854775808", False),
    ("Gt", "0", "10", True),
    ("Gt", "-5", "0", True),
]


@pytest.mark.parametrize(("op", "tol_value", "taint_value", "answer"), FACTS,
                         ids=[f"{o}-{t!r}-{n!r}" for o, t, n, _ in FACTS])
def test_comparison_tolerations_read_numbers_as_upstream(op: str, tol_value: str, taint_value: str, answer: bool) -> None:
    toleration = Toleration(key="k", operator=op, value=tol_value)
    assert tolerates(toleration, Taint(key="k", value=taint_value, effect="NoSchedule"), True) is answer
