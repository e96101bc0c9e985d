"""The FitError message: the reason histogram, or PreFilter's message, then PostFilter's."""

from __future__ import annotations

from kubetwin.scheduler.framework.diagnosis import fit_error_message, histogram_of
from kubetwin.scheduler.framework.status import Code, Status


def test_unschedulable_message_sorts_reason_counts_as_strings():
    statuses = {f"n{i}": Status(Code.Unschedulable, ("Insufficient cpu",)) for i in range(10)}
    statuses["t1"] = Status(Code.UnschedulableAndUnresolvable, ("node(s) had untolerated taint(s)",))
    statuses["t2"] = Status(Code.UnschedulableAndUnresolvable, ("node(s) had untolerated taint(s)",))
    assert fit_error_message(12, histogram_of(statuses.values())) == (
        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint(s).")


def test_prefilter_rejection_message_replaces_the_histogram():
    assert fit_error_message(3, {}, pre_filter_msg="pod affinity terms conflict") == (
        "0/3 nodes are available: pod affinity terms conflict.")
