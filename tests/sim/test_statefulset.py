"""The StatefulSet controller's decisions (``pkg/controller/statefulset``, Kubernetes v1.36).

Cases translated from upstream's ``stateful_set_control_test.go`` and ``stateful_set_utils_test.go``
(v1.36; each test names its upstream case). Upstream drives ``UpdateStatefulSet`` against a fake
API and marks pods Running and Ready by hand between syncs; here a sync is one call of
:func:`sync` with the set's live pods, and a pod's turn to Running and Ready is a new
:class:`Member`.
"""

from __future__ import annotations

import pytest

from kubetwin.sim.statefulset import (
    PARALLEL,
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    REVISION_LABEL,
    Member,
    StatefulSetSpec,
    available,
    parent_and_ordinal,
    revision_name,
    statefulset_spec,
    sync,
)

ORDERED = StatefulSetSpec("foo", "default", "uid")
BURST = StatefulSetSpec("foo", "default", "uid", policy=PARALLEL)


def running(*ordinals: int, since: float = 0.0) -> dict[int, Member]:
    return {o: Member(o, True, since) for o in ordinals}


def pending(*ordinals: int) -> dict[int, Member]:
    return {o: Member(o) for o in ordinals}


def turn_up(spec: StatefulSetSpec, replicas: int, members: dict[int, Member] | None = None) -> list[tuple[int, ...]]:
    """``scaleUpStatefulSetControl``: sync, mark every created pod Running and Ready, until the set
    stops creating; the creations of each sync."""
    members = dict(members or {})
    rounds = []
    while True:
        d = sync(spec, replicas, members, 100.0)
        if not d.create:
            return rounds
        rounds.append(d.create)
        members.update(running(*d.create))


def turn_down(spec: StatefulSetSpec, replicas: int, members: dict[int, Member]) -> list[tuple[int, ...]]:
    """``scaleDownStatefulSetControl``: sync and remove the deleted pods until none is deleted."""
    members = dict(members)
    rounds = []
    while True:
        d = sync(spec, replicas, members, 100.0)
        if not d.delete:
            return rounds
        rounds.append(d.delete)
        for o in d.delete:
            del members[o]


# --- TestStatefulSetControl (CreatesPods, ScalesUp, ScalesDown, ReplacesPods, RecreatesFailedPod) ---
def test_creates_pods_monotonic_one_at_a_time_in_ordinal_order():
    # TestStatefulSetControl/CreatesPods/Monotonic (v1.36): assertMonotonicInvariants — a pod is
    # created only when every lower ordinal is Running and Ready
    assert turn_up(ORDERED, 3) == [(0,), (1,), (2,)]


def test_creates_pods_burst_all_at_once():
    # TestStatefulSetControl/CreatesPods/Burst (v1.36)
    assert turn_up(BURST, 3) == [(0, 1, 2)]


def test_a_pending_pod_blocks_the_next_creation_in_ordered_ready_mode():
    # processReplica: "If we have a Pod that has been created but is not running and ready we can
    # not make progress" (monotonic only)
    assert sync(ORDERED, 3, {**running(0), **pending(1)}, 100.0).create == ()
    assert sync(BURST, 3, {**running(0), **pending(1)}, 100.0).create == (2,)


def test_scales_up_from_three_to_four_creating_ordinal_three():
    # TestStatefulSetControl/ScalesUp (v1.36), both policies
    assert turn_up(ORDERED, 4, running(0, 1, 2)) == [(3,)]
    assert turn_up(BURST, 4, running(0, 1, 2)) == [(3,)]


def test_scales_down_monotonic_highest_ordinal_first_one_per_sync():
    # TestStatefulSetControl/ScalesDown/Monotonic (v1.36): scaleDownStatefulSetControl deletes the
    # highest ordinal, one at a time
    assert turn_down(ORDERED, 0, running(0, 1, 2)) == [(2,), (1,), (0,)]


def test_scales_down_burst_deletes_every_condemned_pod_at_once():
    # TestStatefulSetControl/ScalesDown/Burst (v1.36)
    assert turn_down(BURST, 0, running(0, 1, 2)) == [(2, 1, 0)]


def test_replaces_deleted_pods_lowest_ordinal_first():
    # TestStatefulSetControl/ReplacesPods (v1.36): pods 0, 2 and 4 of 5 deleted; each sync then
    # creates the lowest missing ordinal once its predecessors are Running and Ready
    assert turn_up(ORDERED, 5, running(1, 3)) == [(0,), (2,), (4,)]
    assert turn_up(BURST, 5, running(1, 3)) == [(0, 2, 4)]


def test_recreates_a_failed_pod_under_its_ordinal():
    # TestStatefulSetControl/RecreatesFailedPod (v1.36): pod 0 failed, the others Pending; the
    # failed pod deleted (gone from the simulation's list), the next sync creates ordinal 0 again;
    # Burst creates it beside the pending ones as well
    assert sync(ORDERED, 3, pending(1, 2), 100.0).create == (0,)
    assert sync(BURST, 3, pending(1, 2), 100.0).create == (0,)


# --- TestStatefulSetControlWithStartOrdinal -----------------------------------------------------
def test_start_ordinal_shifts_the_ordinals_created():
    # TestStatefulSetControlWithStartOrdinal (v1.36): newStatefulSet(3) with ordinals.start 2
    spec = StatefulSetSpec("foo", "default", "uid", start=2)
    assert turn_up(spec, 3) == [(2,), (3,), (4,)]


def test_start_ordinal_condemns_pods_below_the_start():
    # TestStatefulSetControlWithStartOrdinal (v1.36): pods outside [start, start + replicas) are condemned
    spec = StatefulSetSpec("foo", "default", "uid", start=2)
    assert turn_down(spec, 3, running(0, 1, 2, 3, 4)) == [(1,), (0,)]


# --- TestParallelScale ----------------------------------------------------------------------------
@pytest.mark.parametrize("before,after", [(3, 30), (10, 1), (501, 0), (0, 1000)])
def test_parallel_scale_in_one_sync(before, after):
    # TestParallelScale (v1.36): "scale up from 3 to 30", "scale down from 10 to 1",
    # "scale down to 0", "scale up from 0" — every pod in one sync
    d = sync(BURST, after, running(*range(before)), 100.0)
    assert d.create == tuple(range(before, after))
    assert d.delete == tuple(range(before - 1, after - 1, -1))


# --- processCondemned -----------------------------------------------------------------------------
def test_scale_down_waits_while_a_remaining_pod_is_not_ready():
    # processReplica blocks before any condemned pod is considered (monotonic)
    assert sync(ORDERED, 1, {**pending(0), **running(1, 2)}, 100.0).delete == ()
    assert sync(BURST, 1, {**pending(0), **running(1, 2)}, 100.0).delete == (2, 1)


def test_the_first_unavailable_condemned_pod_may_be_deleted():
    # processCondemned: an unhealthy condemned pod blocks unless it is the first unhealthy pod
    assert sync(ORDERED, 1, {**running(0, 1), **pending(2)}, 100.0).delete == (2,)


def test_an_unavailable_condemned_pod_above_the_first_one_blocks():
    # processCondemned: pods 1 and 2 pending, 1 is the first unhealthy one: 2 waits
    assert sync(ORDERED, 1, {**running(0), **pending(1, 2)}, 100.0).delete == ()


def test_a_ready_condemned_pod_above_an_unavailable_one_is_deleted():
    assert sync(ORDERED, 1, {**running(0, 2), **pending(1)}, 100.0).delete == (2,)


# --- TestStatefulSetAvailability (minReadySeconds) --------------------------------------------------
def test_replicas_running_for_the_required_time_are_available():
    # TestStatefulSetAvailability (v1.36): minReadySeconds 3600, Ready 120 minutes ago -> available
    assert available(Member(0, True, 0.0), 3600, 7200)


def test_replicas_not_running_for_the_required_time_are_not_available():
    # TestStatefulSetAvailability (v1.36): Ready 30 minutes ago -> not available
    assert not available(Member(0, True, 0.0), 3600, 1800)


def test_availability_needs_more_than_min_ready_seconds():
    # podutil.IsPodAvailable: lastTransitionTime + minReadySeconds must be before now
    assert not available(Member(0, True, 10.0), 30, 40.0)
    assert available(Member(0, True, 10.0), 30, 40.5)


def test_ordered_creation_waits_for_min_ready_seconds_and_requeues():
    # processReplica: !isRunningAndAvailable blocks (monotonic); syncStatefulSet requeues the set
    # minReadySeconds later while availableReplicas != replicas
    spec = StatefulSetSpec("foo", "default", "uid", min_ready_seconds=30)
    d = sync(spec, 2, running(0, since=10.0), 11.0)
    assert d.create == () and d.requeue_at == 41.0
    assert sync(spec, 2, running(0, since=10.0), 41.0).create == (1,)


def test_no_requeue_without_min_ready_seconds():
    assert sync(ORDERED, 2, running(0), 5.0).requeue_at is None


# --- stateful_set_utils.go ------------------------------------------------------------------------
@pytest.mark.parametrize("name,expected", [("foo-0", ("foo", 0)), ("foo-12", ("foo", 12)),
                                           ("my-db-3", ("my-db", 3)), ("foo", ("", -1)),
                                           ("foo-", ("", -1)), ("foo-x1", ("", -1)),
                                           ("foo-99999999999", ("foo", -1)), ("foo-2147483648", ("foo", -1)),
                                           ("1-bar", ("", -1))])
def test_parent_name_and_ordinal_from_the_pod_name(name, expected):
    # TestGetParentNameAndOrdinal (stateful_set_utils_test.go, v1.36): the ordinal parses as an int32
    assert parent_and_ordinal(name) == expected


def test_pods_get_the_identity_labels():
    # TestStatefulSetControl/CreatesPods (v1.36): the pod-index label equals the name's ordinal
    spec = StatefulSetSpec("web", "default", "uid", revision="web-abc")
    assert spec.labels(4) == {POD_NAME_LABEL: "web-4", POD_INDEX_LABEL: "4", REVISION_LABEL: "web-abc"}


def test_a_set_reads_policy_start_min_ready_and_its_update_revision():
    obj = {"metadata": {"name": "db", "namespace": "x", "uid": "u1"},
           "spec": {"podManagementPolicy": "Parallel", "ordinals": {"start": 5}, "minReadySeconds": 7,
                    "serviceName": "db", "template": {}},
           "status": {"updateRevision": "db-7d9c"}}
    assert statefulset_spec(obj) == StatefulSetSpec("db", "x", "u1", 5, PARALLEL, 7.0, "db", "db-7d9c")


def test_the_revision_stand_in_depends_on_the_template_only():
    a = revision_name("db", {"spec": {"containers": [{"name": "c"}]}})
    assert a == revision_name("db", {"spec": {"containers": [{"name": "c"}]}})
    assert a != revision_name("db", {"spec": {"containers": [{"name": "d"}]}})
    assert a.startswith("db-") and len(a) == 13
