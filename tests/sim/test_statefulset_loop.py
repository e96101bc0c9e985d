"""StatefulSets in ``simulate``: their controller on the clock, as HPA and VPA targets, adopting a
snapshot's pods by ordinal."""

from __future__ import annotations

import pytest

from kubetwin.diagnostics import collecting, strict_mode
from kubetwin.errors import InputError
from kubetwin.sim.loop import Simulator, simulate
from kubetwin.sim.statefulset import POD_INDEX_LABEL, POD_NAME_LABEL, REVISION_LABEL


def statefulset(name="db", replicas=3, cpu="1", memory="1Gi", policy=None, load=None, annotations=None, **spec):
    meta: dict = {"name": name}
    ann = dict(annotations or {})
    if load is not None:
        ann["kubetwin.io/load"] = load
    if ann:
        meta["annotations"] = ann
    body: dict = {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                  "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                      {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}}, **spec}
    if policy:
        body["podManagementPolicy"] = policy
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta, "spec": body}


def member_pod(set_name: str, ordinal: int, node: str | None = None, owner: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{set_name}-{ordinal}", "labels": {"app": set_name},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                              "name": owner or set_name, "uid": "u", "controller": True}]},
            "spec": spec}


def big(kit, count=1):
    return kit.group(count=count, cpu="64", memory="64Gi")


def starts(result) -> dict[str, float]:
    return {p.name: p.start for p in result.pods if p.phase == "Running"}


# --- the controller ----------------------------------------------------------------------------------
def test_ordered_ready_creates_pods_one_at_a_time_in_ordinal_order(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, {"nodeGroups": [big(kit)]}, statefulset()))
    assert [(p.name, p.arrival) for p in r.pods] == [("db-0", 0.0), ("db-1", 1.0), ("db-2", 2.0)]


def test_parallel_creates_every_pod_at_once(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, {"nodeGroups": [big(kit)]}, statefulset(policy="Parallel")))
    assert [(p.name, p.arrival) for p in r.pods] == [("db-0", 0.0), ("db-1", 0.0), ("db-2", 0.0)]


def test_start_ordinal_names_the_pods(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, {"nodeGroups": [big(kit)]}, statefulset(ordinals={"start": 5})))
    assert [p.name for p in r.pods] == ["db-5", "db-6", "db-7"]


def test_pods_carry_the_identity_labels_and_the_sets_owner_reference(tmp_path, kit):
    sim = Simulator(kit.scenario(tmp_path, {"nodeGroups": [big(kit)]}, statefulset(replicas=2)))
    sim.run()
    pod = sim.pods[1].pod
    assert pod.metadata.labels[POD_NAME_LABEL] == "db-1" and pod.metadata.labels[POD_INDEX_LABEL] == "1"
    assert pod.metadata.labels[REVISION_LABEL].startswith("db-") and pod.metadata.labels["app"] == "db"
    (ref,) = pod.metadata.owner_references
    assert (ref.kind, ref.name, ref.controller) == ("StatefulSet", "db", True)


def test_an_unschedulable_pod_stops_ordered_creation(tmp_path, kit):
    # one node fits one pod: db-1 stays Pending, db-2 is never created (it waits for db-1 Ready)
    r = simulate(kit.scenario(tmp_path, {"horizon": "5m", "nodeGroups": [kit.group(cpu="1500m")]}, statefulset()))
    assert [(p.name, p.phase) for p in r.pods] == [("db-0", "Running"), ("db-1", "Pending")]


def test_parallel_creates_past_an_unschedulable_pod(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, {"horizon": "5m", "nodeGroups": [kit.group(cpu="1500m")]},
                              statefulset(policy="Parallel")))
    assert sorted(p.name for p in r.pods) == ["db-0", "db-1", "db-2"]


def test_min_ready_seconds_delays_the_next_ordinal(tmp_path, kit):
    # db-0 Ready at 0; the sync at 1 s finds it not yet available and requeues minReadySeconds later
    r = simulate(kit.scenario(tmp_path, {"horizon": "5m", "nodeGroups": [big(kit)]},
                              statefulset(replicas=2, minReadySeconds=30)))
    assert [(p.name, p.arrival) for p in r.pods] == [("db-0", 0.0), ("db-1", 31.0)]


def test_a_finished_pod_is_recreated_under_the_same_name(tmp_path, kit):
    # RecreatesSucceededPod: a pod that ends (here after its kubetwin.io/duration) is replaced
    sts = statefulset(replicas=1, annotations={"kubetwin.io/duration": "1m"})
    r = simulate(kit.scenario(tmp_path, {"horizon": "150s", "nodeGroups": [big(kit)]}, sts))
    assert [(p.name, p.phase) for p in r.pods] == [("db-0", "Succeeded"), ("db-0", "Succeeded"),
                                                    ("db-0", "Running")]
    assert r.counters.recreated == 2


def test_recreation_of_rejected_pods_is_capped(tmp_path, kit):
    # a pod the API server's admission refuses (a ResourceQuota) is not created again and again
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
             "spec": {"hard": {"pods": "1"}}}
    sc = kit.scenario(tmp_path, {"horizon": "10m", "maxRecreations": 3, "nodeGroups": [big(kit)]},
                      statefulset(replicas=2), quota)
    r = simulate(sc)
    assert sum(1 for p in r.pods if p.name == "db-1" and p.phase == "Rejected") <= 4


# --- as autoscaler targets ---------------------------------------------------------------------------
def hpa_on_set(name="db", hi=10):
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name},
                     "minReplicas": 1, "maxReplicas": hi,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": 50}}}]}}


def test_hpa_scales_a_statefulset_up_with_new_ordinals(tmp_path, kit):
    # 4 cores of load over 1-core pods at 50%: 8 replicas, named db-0 .. db-7
    sc = kit.scenario(tmp_path, {"horizon": "5m", "nodeGroups": [big(kit)]},
                      statefulset(replicas=2, load="{cpu: 4}"), hpa_on_set())
    r = simulate(sc)
    assert r.autoscaling["horizontalPodAutoscalers"][0]["replicas"] == 8
    assert sorted(starts(r), key=lambda n: int(n.split("-")[1])) == [f"db-{i}" for i in range(8)]


def test_hpa_scale_up_of_an_ordered_set_creates_one_pod_per_sync(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"horizon": "5m", "nodeGroups": [big(kit)]},
                      statefulset(replicas=2, load="{cpu: 4}"), hpa_on_set())
    arrivals = sorted(p.arrival for p in simulate(sc).pods)
    assert len(set(arrivals)) == len(arrivals)   # never two pods at once


def test_hpa_scale_down_deletes_the_highest_ordinals_one_at_a_time(tmp_path, kit):
    load = "{cpu: [[0s, 4], [5m, 4], [5m1s, 1]]}"
    sc = kit.scenario(tmp_path, {"horizon": "20m", "nodeGroups": [big(kit)]},
                      statefulset(replicas=8, load=load), hpa_on_set())
    r = simulate(sc)
    gone = sorted((p.end, p.name) for p in r.pods if p.reason == "ScaledDown")
    assert [n for _, n in gone] == ["db-7", "db-6", "db-5", "db-4", "db-3", "db-2"]
    assert len({t for t, _ in gone}) == len(gone)   # one per sync
    assert sorted(starts(r)) == ["db-0", "db-1"]


def vpa_on_set(name="db", mode="Recreate"):
    return {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": name},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name},
                     "updatePolicy": {"updateMode": mode}}}


def test_vpa_evicts_set_pods_and_the_controller_recreates_them_with_the_same_names(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"horizon": "3h", "nodeGroups": [big(kit)]},
                      statefulset(replicas=4, cpu="4", load="{cpu: 1}"), vpa_on_set())
    sim = Simulator(sc)
    r = sim.run()
    evicted = [p.name for p in r.pods if p.reason == "EvictedByVPA"]
    assert sorted(evicted) == ["db-0", "db-1", "db-2", "db-3"]
    live = [sp for sp in sim.pods if sp.phase == "Running"]
    assert sorted(sp.pod.name for sp in live) == ["db-0", "db-1", "db-2", "db-3"]
    # the VPA admission controller set the target as the new pods' request
    assert all(sp.pod.spec.containers[0].resources.requests["cpu"].milli_value() < 4000 for sp in live)


def test_vpa_on_a_statefulset_respects_its_disruption_budget(tmp_path, kit):
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db"},
           "spec": {"minAvailable": 4, "selector": {"matchLabels": {"app": "db"}}}}
    sc = kit.scenario(tmp_path, {"horizon": "3h", "nodeGroups": [big(kit)]},
                      statefulset(replicas=4, cpu="4", load="{cpu: 1}"), vpa_on_set(), pdb)
    assert simulate(sc).autoscaling["verticalPodAutoscalers"][0]["evictions"] == 0


# --- a snapshot's pods ---------------------------------------------------------------------------------
def test_a_statefulset_adopts_its_existing_pods_by_ordinal(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [big(kit)]}, statefulset(),
                      member_pod("db", 0, node="n-0"), member_pod("db", 1, node="n-0"))
    r = simulate(sc)
    assert sorted(p.name for p in r.pods) == ["db-0", "db-1", "db-2"]
    assert {p.name: p.owner for p in r.pods}["db-0"] == "StatefulSet/default/db"


def test_a_gap_in_the_adopted_ordinals_is_filled_first(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [big(kit)]}, statefulset(),
                      member_pod("db", 0, node="n-0"), member_pod("db", 2, node="n-0"))
    r = simulate(sc)
    assert [p.name for p in r.pods if p.arrival > 0] == ["db-1"]


def test_adopted_pods_above_the_replicas_are_scaled_down(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [big(kit)]}, statefulset(replicas=1),
                      member_pod("db", 0, node="n-0"), member_pod("db", 1, node="n-0"))
    r = simulate(sc)
    assert [(p.name, p.reason) for p in r.pods if p.phase == "Deleted"] == [("db-1", "ScaledDown")]


def test_a_pod_not_named_as_a_member_is_not_adopted(tmp_path, kit):
    pod = member_pod("db", 0, node="n-0")
    pod["metadata"]["name"] = "other-0"
    r = simulate(kit.scenario(tmp_path, {"nodeGroups": [big(kit)]}, statefulset(replicas=1), pod))
    assert {p.name: p.owner for p in r.pods} == {"other-0": "", "db-0": "StatefulSet/default/db"}


# --- what is not modelled --------------------------------------------------------------------------------
def test_volume_claim_templates_are_an_error_under_strict(tmp_path, kit):
    sts = statefulset(volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}])
    with strict_mode(), pytest.raises(InputError, match="spec.volumeClaimTemplates"):
        kit.scenario(tmp_path, {"nodeGroups": [big(kit)]}, sts)


def test_a_plain_statefulset_is_read_without_warnings(tmp_path, kit):
    with collecting() as warnings:
        kit.scenario(tmp_path, {"nodeGroups": [big(kit)]}, statefulset())
    assert warnings == []


@pytest.mark.parametrize("field,value,message", [
    ("podManagementPolicy", "Ordered", 'spec.podManagementPolicy: Unsupported value: "Ordered"'),
    ("updateStrategy", {"type": "Rolling"}, 'spec.updateStrategy.type: Unsupported value: "Rolling"'),
    ("minReadySeconds", -1, "spec.minReadySeconds: Invalid value: -1"),
    ("ordinals", {"start": -2}, "spec.ordinals.start: Invalid value: -2")])
def test_values_the_api_server_refuses_are_refused(tmp_path, kit, field, value, message):
    with pytest.raises(InputError) as exc:
        kit.scenario(tmp_path, {"nodeGroups": [big(kit)]}, statefulset(**{field: value}))
    assert message in str(exc.value) or message in f"{exc.value.path}: {exc.value.message}"
