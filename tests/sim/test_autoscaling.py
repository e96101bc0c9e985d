"""HPA, VPA and the Cluster Autoscaler acting in ``simulate``: from real objects, at their periods."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.sim.loop import simulate
from kubetwin.sim.sweep import apply_variant, parse_variant


def deployment(name="web", replicas=2, cpu="1", memory="1Gi", load=None, limits=False, labels=None):
    res = {"requests": {"cpu": cpu, "memory": memory}}
    if limits:
        res["limits"] = dict(res["requests"])
    meta: dict = {"name": name}
    if load is not None:
        meta["annotations"] = {"kubetwin.io/load": load}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels or {"app": name}},
                     "template": {"metadata": {"labels": labels or {"app": name}},
                                  "spec": {"containers": [{"name": "c", "resources": res}]}}}}


def hpa(target="web", lo=1, hi=10, utilization=50, **spec):
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": target},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                     "minReplicas": lo, "maxReplicas": hi,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": utilization}}}], **spec}}


def vpa(target="web", mode="Recreate", **policy):
    spec: dict = {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                  "updatePolicy": {"updateMode": mode, **policy}}
    return {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": target},
            "spec": spec}


def replicas_over_time(result, key="Deployment/default/web"):
    return [row["replicas"][key] for row in result.autoscaling["timeSeries"] if "replicas" in row]


# --- HPA -------------------------------------------------------------------------------------------
def test_hpa_scales_a_deployment_up_to_the_load(tmp_path, kit):
    # 8 cores over 1-core pods at a 50% target: 16 replicas
    sc = kit.scenario(tmp_path, {"horizon": "10m", "nodeGroups": [kit.group(cpu="64", memory="64Gi")]},
                      deployment(load="{cpu: 8}"), hpa(hi=20))
    r = simulate(sc)
    assert replicas_over_time(r)[-1] == 16
    assert sum(1 for p in r.pods if p.phase == "Running") == 16


def test_hpa_scale_up_is_limited_per_sync_period_by_the_default_behaviour(tmp_path, kit):
    # no behavior: calculateScaleUpLimit allows max(2 x current, 4) per sync -> 4, 8, 16
    sc = kit.scenario(tmp_path, {"horizon": "2m", "sampleInterval": "5s",
                                 "nodeGroups": [kit.group(cpu="64", memory="64Gi")]},
                      deployment(load="{cpu: 8}"), hpa(hi=20))
    r = simulate(sc)
    rescales = [e["to"] for e in r.autoscaling["events"] if e["type"] == "HPARescale"]
    assert rescales[:3] == [4, 8, 16]


def test_hpa_scale_down_waits_for_the_stabilization_window_and_deletes_pods(tmp_path, kit):
    load = "{cpu: [[0s, 8], [10m, 8], [10m1s, 1]]}"
    sc = kit.scenario(tmp_path, {"horizon": "30m", "nodeGroups": [kit.group(cpu="64", memory="64Gi")]},
                      deployment(load=load), hpa(hi=20))
    r = simulate(sc)
    downs = [e for e in r.autoscaling["events"] if e["type"] == "HPARescale" and e["to"] < e["from"]]
    assert downs and downs[0]["time"] >= 600 + 300   # 5 min downscale stabilization after the drop
    assert replicas_over_time(r)[-1] == 2
    assert sum(1 for p in r.pods if p.phase == "Deleted" and p.reason == "ScaledDown") == 14


def test_hpa_metric_without_a_load_curve_is_refused(tmp_path, kit):
    pods_metric = hpa()
    pods_metric["spec"]["metrics"] = [{"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {
        "type": "AverageValue", "averageValue": "10"}}}]
    with pytest.raises(InputError, match="metric 'rps' has no source"):
        kit.scenario(tmp_path, {"horizon": "1h", "nodeGroups": [kit.group()]}, deployment(), pods_metric)


def test_pods_metric_from_the_load_curve_drives_the_hpa(tmp_path, kit):
    h = hpa(hi=20)
    h["spec"]["metrics"] = [{"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {
        "type": "AverageValue", "averageValue": "100"}}}]
    sc = kit.scenario(tmp_path, {"horizon": "5m", "nodeGroups": [kit.group(cpu="64", memory="64Gi")]},
                      deployment(load="{metrics: {rps: 1000}}"), h)
    assert replicas_over_time(simulate(sc))[-1] == 10


def test_an_hpa_on_a_statefulset_missing_from_the_scenario_is_refused(tmp_path, kit):
    h = hpa()
    h["spec"]["scaleTargetRef"]["kind"] = "StatefulSet"
    with pytest.raises(InputError, match="StatefulSet default/web is not in the scenario"):
        kit.scenario(tmp_path, {"horizon": "1h", "nodeGroups": [kit.group()]}, deployment(), h)


def test_autoscalers_need_a_horizon(tmp_path, kit):
    with pytest.raises(InputError, match="needs a horizon"):
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()]}, deployment(), hpa())


def test_an_hpa_typo_is_refused_with_its_path(tmp_path, kit):
    h = hpa()
    h["spec"]["maxReplica"] = 3
    with pytest.raises(InputError, match="maxReplica"):
        kit.scenario(tmp_path, {"horizon": "1h", "nodeGroups": [kit.group()]}, deployment(), h)


# --- VPA -------------------------------------------------------------------------------------------
def test_vpa_recreate_evicts_pods_outside_the_bounds_and_admission_sets_the_target(tmp_path, kit):
    # pods ask 4 cores and use 0.25 each; the upper bound falls below 4 cores once the
    # confidence (history span, sample count) has grown: after some minutes, not at once
    sc = kit.scenario(tmp_path, {"horizon": "3h", "nodeGroups": [kit.group(cpu="64", memory="64Gi")]},
                      deployment(replicas=4, cpu="4", load="{cpu: 1}"), vpa())
    r = simulate(sc)
    v = r.autoscaling["verticalPodAutoscalers"][0]
    assert v["evictions"] >= 1
    assert any(p.reason == "EvictedByVPA" for p in r.pods)
    evictions = [e["time"] for e in r.autoscaling["events"] if e["type"] == "VPAEviction"]
    assert min(evictions) >= 600 and len(evictions) == 4   # each pod once: the new ones are in bounds
    target = int(v["recommendation"]["c"]["target"]["cpu"].rstrip("m"))
    assert target < 4000
    replaced = [p for p in r.pods if p.phase == "Running" and p.start >= min(evictions)]
    assert len(replaced) == 4   # re-created by the Deployment, the target as request (admission controller)


def test_vpa_eviction_tolerance_keeps_half_of_the_replicas(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"horizon": "3h", "nodeGroups": [kit.group(cpu="64", memory="64Gi")],
                                 "autoscaling": {"verticalPodAutoscaler": {"recommenderInterval": "30s"}}},
                      deployment(replicas=4, cpu="4", load="{cpu: 1}"), vpa())
    r = simulate(sc)
    first = [e["time"] for e in r.autoscaling["events"] if e["type"] == "VPAEviction"]
    assert first.count(first[0]) == 2   # int(4 x 0.5) pods may be down at once


def test_vpa_off_recommends_and_changes_nothing(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"horizon": "10m", "nodeGroups": [kit.group(cpu="64", memory="64Gi")]},
                      deployment(replicas=2, cpu="4", load="{cpu: 1}"), vpa(mode="Off"))
    r = simulate(sc)
    assert r.autoscaling["verticalPodAutoscalers"][0]["recommendation"]
    assert not any(p.phase == "Deleted" for p in r.pods)


def test_vpa_respects_a_pod_disruption_budget(tmp_path, kit):
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
           "spec": {"minAvailable": 4, "selector": {"matchLabels": {"app": "web"}}}}
    sc = kit.scenario(tmp_path, {"horizon": "3h", "nodeGroups": [kit.group(cpu="64", memory="64Gi")]},
                      deployment(replicas=4, cpu="4", load="{cpu: 1}"), vpa(), pdb)
    r = simulate(sc)
    assert r.autoscaling["verticalPodAutoscalers"][0]["evictions"] == 0


def kubelet_group(cpu_spec="2s2n8c2t"):
    return {"name": "k", "count": 1, "machine": cpu_spec, "kubeletConfig": {"cpuManagerPolicy": "none"}}


def test_in_place_or_recreate_resizes_through_the_kubelet_without_evicting(tmp_path, kit):
    # pods ask 4 cores and use 0.25: the kubelet allocates the smaller requests in place
    sc = kit.scenario(tmp_path, {"horizon": "3h", "kubeletAdmission": True, "nodeGroups": [kubelet_group()]},
                      deployment(replicas=4, cpu="4", memory="1Gi", load="{cpu: 1}"), vpa(mode="InPlaceOrRecreate"))
    r = simulate(sc)
    v = r.autoscaling["verticalPodAutoscalers"][0]
    assert v["evictions"] == 0 and v["inPlaceUpdates"] == 4
    resized = [e for e in r.events if e["type"] == "PodResize"]
    assert len(resized) == 4 and {e["status"] for e in resized} == {"Completed"}
    assert all(e["source"] == "VerticalPodAutoscaler default/web" for e in resized)
    assert not any(p.reason == "EvictedByVPA" for p in r.pods)


def test_in_place_or_recreate_on_a_node_without_a_kubelet_takes_the_spec_change(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"horizon": "3h", "nodeGroups": [kit.group(cpu="64", memory="64Gi")]},
                      deployment(replicas=4, cpu="4", load="{cpu: 1}"), vpa(mode="InPlaceOrRecreate"))
    r = simulate(sc)
    v = r.autoscaling["verticalPodAutoscalers"][0]
    assert v["evictions"] == 0 and v["inPlaceUpdates"] == 4
    assert {e.get("message") for e in r.events if e["type"] == "PodResize"} == {"no kubelet simulated on the node"}


def test_in_place_or_recreate_falls_back_to_eviction_when_the_resize_is_infeasible(tmp_path, kit):
    # each pod uses 24 cores on an 8-CPU node: a recommendation no kubelet can allocate
    sc = kit.scenario(tmp_path, {"horizon": "3h", "kubeletAdmission": True,
                                 "nodeGroups": [kubelet_group("1s1n4c2t")]},
                      deployment(replicas=2, cpu="1", memory="1Gi", load="{cpu: 48}"),
                      vpa(mode="InPlaceOrRecreate"))
    r = simulate(sc)
    v = r.autoscaling["verticalPodAutoscalers"][0]
    statuses = [e["status"] for e in r.events if e["type"] == "PodResize"]
    assert "Infeasible" in statuses or "Deferred" in statuses
    assert v["inPlaceFallbacks"] >= 1 and v["evictions"] >= 1


def test_vpa_below_min_replicas_is_not_evicted(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"horizon": "3h", "nodeGroups": [kit.group(cpu="64", memory="64Gi")]},
                      deployment(replicas=1, cpu="4", load="{cpu: 1}"), vpa())
    assert simulate(sc).autoscaling["verticalPodAutoscalers"][0]["evictions"] == 0


# --- Cluster Autoscaler ------------------------------------------------------------------------------
def ca_spec(**ca):
    return {"horizon": "1h", "autoscaling": {"clusterAutoscaler": {"expander": "least-waste", **ca}},
            "nodeGroups": [{"name": "pool", "count": 1, "minSize": 1, "maxSize": 10,
                            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}]}


def test_cluster_autoscaler_adds_nodes_for_unschedulable_pods(tmp_path, kit):
    sc = kit.scenario(tmp_path, ca_spec(), deployment(replicas=10, cpu="1500m"))
    r = simulate(sc)
    ups = r.autoscaling["clusterAutoscaler"]["scaleUps"]
    # the pods are first tried at the end of t=0; the next scan (10 s) sees them unschedulable
    assert ups[0]["nodeGroup"] == "pool" and ups[0]["time"] == 10
    assert ups[0]["nodes"] == 4          # 8 pending pods, two 1.5-CPU pods per 4-CPU node
    assert ups[0]["why"] == {"Insufficient cpu": 8}
    assert sum(1 for p in r.pods if p.phase == "Running") == 10
    assert r.nodes == 5


def test_new_nodes_join_after_the_provisioning_time(tmp_path, kit):
    sc = kit.scenario(tmp_path, ca_spec(nodeProvisioningTime="3m"), deployment(replicas=4, cpu="1500m"))
    r = simulate(sc)
    late = [p for p in r.pods if p.phase == "Running" and p.node != "pool-0"]
    assert late and all(p.start == 10 + 180 for p in late)


def test_unneeded_nodes_are_removed_after_the_unneeded_time(tmp_path, kit):
    spec = ca_spec()
    spec["nodeGroups"][0]["count"] = 3
    r = simulate(kit.scenario(tmp_path, spec, deployment(replicas=1, cpu="500m")))
    downs = r.autoscaling["clusterAutoscaler"]["scaleDowns"]
    running = next(p.node for p in r.pods if p.phase == "Running")
    assert len(downs) == 2 and running not in {d["node"] for d in downs}
    assert all(d["time"] >= 600 for d in downs)   # 10 min unneeded
    assert r.autoscaling["clusterAutoscaler"]["finalSizes"] == {"pool": 1}


def test_a_bare_pod_blocks_scale_down(tmp_path, kit):
    spec = ca_spec()
    spec["nodeGroups"][0]["count"] = 2
    spec["nodeGroups"][0]["minSize"] = 0
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}
    r = simulate(kit.scenario(tmp_path, spec, pod))
    assert r.autoscaling["clusterAutoscaler"]["finalSizes"] == {"pool": 1}   # the empty one goes


def test_node_group_bounds_without_a_cluster_autoscaler_are_refused(tmp_path, kit):
    with pytest.raises(InputError, match="no Cluster Autoscaler would resize it"):
        kit.scenario(tmp_path, {"horizon": "1h", "nodeGroups": [kit.group(minSize=0, maxSize=3)]})


def test_count_outside_the_bounds_is_refused(tmp_path, kit):
    spec = ca_spec()
    spec["nodeGroups"][0]["count"] = 11
    with pytest.raises(InputError, match="outside"):
        kit.scenario(tmp_path, spec)


def test_a_misspelt_cluster_autoscaler_flag_is_refused(tmp_path, kit):
    with pytest.raises(InputError, match="scaleDownUnneededTime"):
        kit.scenario(tmp_path, ca_spec(scaleDownUneededTime="5m"))


def test_an_unknown_expander_is_refused(tmp_path, kit):
    with pytest.raises(InputError, match="least-waste"):
        kit.scenario(tmp_path, ca_spec(expander="least-wast"))


def numa_spec(estimator):
    return {"horizon": "10m", "controllerDelay": "30s", "maxRecreations": 5,
            "autoscaling": {"clusterAutoscaler": {"estimator": estimator}},
            "nodeGroups": [{"name": "numa", "count": 0, "minSize": 0, "maxSize": 10,
                            "machine": "1s2n4c2t:mem=64Gi",
                            "kubeletConfig": {"cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node",
                                              "reservedSystemCPUs": "0"}}]}


def test_kubelet_aware_estimator_counts_the_pods_the_kubelet_admits(tmp_path, kit):
    # 5-CPU Guaranteed pods: three fit the allocatable of a 16-CPU node, two fit its NUMA nodes
    web = deployment(replicas=6, cpu="5", memory="4Gi", limits=True)
    upstream = simulate(kit.scenario(tmp_path, numa_spec("binpacking"), web))
    aware = simulate(kit.scenario(tmp_path, numa_spec("kubelet-aware"), web))
    assert upstream.autoscaling["clusterAutoscaler"]["scaleUps"][0]["nodes"] == 2
    assert aware.autoscaling["clusterAutoscaler"]["scaleUps"][0]["nodes"] == 3
    assert upstream.autoscaling["clusterAutoscaler"]["podsRejectedOnAddedNodes"].get("TopologyAffinityError", 0) > 0
    assert aware.autoscaling["clusterAutoscaler"]["podsRejectedOnAddedNodes"] == {}


def test_the_estimator_variant_changes_only_the_estimator(tmp_path, kit):
    sc = kit.scenario(tmp_path, numa_spec("binpacking"), deployment())
    apply_variant(sc, parse_variant("aware:autoscaler.estimator=kubelet-aware"))
    assert sc.autoscaling.ca.estimator == "kubelet-aware"
    assert parse_variant("aware:autoscaler.estimator=kubelet-aware").changes() == (
        "autoscaler.estimator=kubelet-aware",)


def test_a_misspelt_estimator_variant_is_refused():
    with pytest.raises(InputError, match="kubelet-aware"):
        parse_variant("x:autoscaler.estimator=kubelet-awre")


def test_an_estimator_variant_without_a_cluster_autoscaler_is_refused(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()]})
    with pytest.raises(InputError, match="no Cluster Autoscaler"):
        apply_variant(sc, parse_variant("x:autoscaler.estimator=kubelet-aware"))


def test_results_carry_the_autoscaling_series_and_summary(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, ca_spec(), deployment(replicas=4, cpu="1500m", load="{cpu: 2}"), hpa()))
    data = r.to_json()
    assert data["autoscaling"]["timeSeries"][0]["nodes"] == {"pool": 1}
    s = r.summary()["autoscaling"]
    assert s["scaleUps"] >= 1 and s["nodes"]["max"] >= 2


def test_a_priority_expander_variant_without_priorities_is_refused(tmp_path, kit):
    sc = kit.scenario(tmp_path, ca_spec())
    with pytest.raises(InputError, match="needs its ConfigMap's priorities"):
        apply_variant(sc, parse_variant("x:autoscaler.expander=priority"))


def test_the_priority_expander_picks_the_group_the_config_map_prefers(tmp_path, kit):
    spec = ca_spec(expander="priority", priorities="10: [big]\n1: [small]")
    spec["nodeGroups"] = [
        {"name": "small", "count": 1, "minSize": 1, "maxSize": 5, "capacity": {"cpu": "4", "memory": "16Gi"}},
        {"name": "big", "count": 0, "minSize": 0, "maxSize": 5, "capacity": {"cpu": "16", "memory": "64Gi"}}]
    r = simulate(kit.scenario(tmp_path, spec, deployment(replicas=6, cpu="1500m")))
    ups = r.autoscaling["clusterAutoscaler"]["scaleUps"]
    assert ups[0]["nodeGroup"] == "big" and {o["nodeGroup"] for o in ups[0]["options"]} == {"small", "big"}


def test_least_waste_picks_the_group_that_wastes_least(tmp_path, kit):
    spec = ca_spec()
    spec["nodeGroups"] = [
        {"name": "odd", "count": 1, "minSize": 1, "maxSize": 5, "capacity": {"cpu": "5", "memory": "16Gi"}},
        {"name": "even", "count": 0, "minSize": 0, "maxSize": 5, "capacity": {"cpu": "6", "memory": "16Gi"}}]
    r = simulate(kit.scenario(tmp_path, spec, deployment(replicas=6, cpu="3", memory="1Gi")))
    assert r.autoscaling["clusterAutoscaler"]["scaleUps"][0]["nodeGroup"] == "even"


def test_vpa_admission_raises_the_target_to_the_limit_range_min_so_limit_ranger_admits(tmp_path, kit):
    # the target (about a quarter core) lies below the LimitRange's 1-CPU minimum per container:
    # the admission controller raises it (vertical-pod-autoscaler capping.go), LimitRanger admits
    lr = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr"},
          "spec": {"limits": [{"type": "Container", "min": {"cpu": "1"}}]}}
    sc = kit.scenario(tmp_path, {"horizon": "3h", "nodeGroups": [kit.group(cpu="64", memory="64Gi")]},
                      deployment(replicas=4, cpu="4", load="{cpu: 1}"), vpa(), lr)
    r = simulate(sc)
    evictions = [e["time"] for e in r.autoscaling["events"] if e["type"] == "VPAEviction"]
    assert evictions and not any(p.phase == "Rejected" for p in r.pods)
    replaced = [p for p in r.pods if p.phase == "Running" and p.start >= min(evictions)]
    assert len(replaced) == 4 and len(evictions) == 4   # once each: the capped bounds hold the new requests
