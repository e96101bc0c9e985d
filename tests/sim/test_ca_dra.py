"""DRA in the Cluster Autoscaler's simulation (kubetwin/sim/ca_dra.py): template slices renamed
as upstream's ``SanitizedNodeResourceSlices`` renames them, the DRA snapshot's claims forked,
and ``simulate`` scaling up the node group whose devices the pods claim."""

from __future__ import annotations

import pytest

from kubetwin.sim import simulate
from kubetwin.sim.ca_dra import node_local_slices, sanitized_node_resource_slices

DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}
SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu", "uid": "u1"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1,
                                                                          "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}}


# --- utils/sanitize.go SanitizedNodeResourceSlices (cluster-autoscaler 1.36.1, TestSanitizedNodeResourceSlices)
def test_sanitized_slices_point_at_the_new_node_with_suffixed_slice_and_pool_names():
    (s,) = sanitized_node_resource_slices([SLICE], "new-node", "abc")
    assert s["metadata"]["name"] == "n1-gpu-abc" and "uid" not in s["metadata"]
    assert s["spec"]["pool"] == {"name": "n1-abc", "generation": 1, "resourceSliceCount": 1}
    assert s["spec"]["nodeName"] == "new-node"
    assert s["spec"]["devices"] == SLICE["spec"]["devices"]


def test_sanitized_slices_from_several_pools_each_get_their_pool_suffixed():
    # TestSanitizedNodeResourceSlices "multiple node-local slices from multiple pools"
    other = {**SLICE, "metadata": {"name": "n1-nic"}, "spec": {**SLICE["spec"], "pool": {
        "name": "n1-nics", "generation": 1, "resourceSliceCount": 1}}}
    out = sanitized_node_resource_slices([SLICE, other], "new-node", "abc")
    assert [(s["metadata"]["name"], s["spec"]["pool"]["name"]) for s in out] == [
        ("n1-gpu-abc", "n1-abc"), ("n1-nic-abc", "n1-nics-abc")]


def test_sanitizing_leaves_the_original_slice_unchanged():
    sanitized_node_resource_slices([SLICE], "new-node", "abc")
    assert SLICE["spec"]["nodeName"] == "n1" and SLICE["metadata"]["name"] == "n1-gpu"


def test_a_slice_that_is_not_node_local_cannot_be_sanitized():
    shared = {**SLICE, "spec": {**SLICE["spec"], "nodeName": None, "allNodes": True}}
    with pytest.raises(ValueError, match="isn't node-local"):
        sanitized_node_resource_slices([shared], "new-node", "abc")


def test_node_local_slices_are_those_published_for_the_node():
    other = {**SLICE, "spec": {**SLICE["spec"], "nodeName": "n2"}}
    assert node_local_slices([SLICE, other], "n2") == [other]


# --- simulate ---------------------------------------------------------------------------------------
def groups(gpus=2, gpu_max=5):
    return [{"name": "cpu", "count": 1, "minSize": 1, "maxSize": 5,
             "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
            {"name": "gpu", "count": 0, "minSize": 0, "maxSize": gpu_max, "machine": f"1s1n4c1t:gpus={gpus}",
             "draDrivers": [{"driver": "gpu.example.com", "kinds": ["gpu"]}]}]


def claiming(name, count=1, **kw):
    return {"name": name, "count": count, "template": {"spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpu"}]}}]}},
        **kw}


def ca_spec(workloads, **ca):
    return {"horizon": "30m", "nodeGroups": groups(**ca.pop("groups", {})), "workloads": workloads,
            "autoscaling": {"clusterAutoscaler": {"expander": "least-waste", **ca}}}


def test_pending_gpu_pods_scale_up_the_group_whose_drivers_publish_gpus(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, ca_spec([claiming("w", 4)]), DEVICE_CLASS, TEMPLATE))
    (up,) = r.autoscaling["clusterAutoscaler"]["scaleUps"]
    assert up["nodeGroup"] == "gpu"
    assert [o["nodeGroup"] for o in up["options"]] == ["gpu"]   # the CPU group's template has no devices


def test_devices_of_a_template_node_are_not_counted_twice(tmp_path, kit):
    # two GPUs per node: four one-GPU pods need two nodes, not one
    r = simulate(kit.scenario(tmp_path, ca_spec([claiming("w", 4)]), DEVICE_CLASS, TEMPLATE))
    assert r.autoscaling["clusterAutoscaler"]["scaleUps"][0]["nodes"] == 2


def test_pods_run_on_the_added_nodes_with_devices_from_their_slices(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, ca_spec([claiming("w", 4)]), DEVICE_CLASS, TEMPLATE))
    assert [p.phase for p in r.pods] == ["Running"] * 4
    assert sorted(p.node for p in r.pods) == ["gpu-0", "gpu-0", "gpu-1", "gpu-1"]
    assert all(len(p.claims) == 1 for p in r.pods)


def test_the_group_maximum_bounds_a_dra_scale_up(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, ca_spec([claiming("w", 4), ], groups={"gpu_max": 1}),
                              DEVICE_CLASS, TEMPLATE))
    assert r.autoscaling["clusterAutoscaler"]["finalSizes"]["gpu"] == 1
    assert sum(p.phase == "Running" for p in r.pods) == 2


def test_a_drained_gpu_node_goes_when_its_pod_ended_and_its_devices_are_free(tmp_path, kit):
    spec = ca_spec([claiming("w", 1, duration="2m")], scaleDownUnneededTime="1m", scaleDownDelayAfterAdd="1m")
    r = simulate(kit.scenario(tmp_path, spec, DEVICE_CLASS, TEMPLATE))
    ca = r.autoscaling["clusterAutoscaler"]
    assert ca["scaleUps"][0]["nodeGroup"] == "gpu"
    assert [d["nodeGroup"] for d in ca["scaleDowns"]] == ["gpu"] and ca["finalSizes"]["gpu"] == 0


def gpu_deployment(replicas=2):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "w"}},
                     "template": {"metadata": {"labels": {"app": "w"}}, "spec": {
                         "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                         "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"},
                                                                    "claims": [{"name": "gpu"}]}}]}}}}


def drain_spec(gpus):
    spec = ca_spec([], scaleDownUnneededTime="1m", groups={"gpus": gpus})
    del spec["workloads"]
    spec["nodeGroups"][1]["count"] = 2
    return spec


def test_a_gpu_node_whose_pod_finds_a_free_device_elsewhere_is_drained(tmp_path, kit):
    # one pod per node; the drain simulation releases the pod's claim and allocates it again on
    # the other node's free GPU (UnreservePodClaims, then Filter and Reserve in the snapshot)
    r = simulate(kit.scenario(tmp_path, drain_spec(gpus=2), DEVICE_CLASS, TEMPLATE, gpu_deployment()))
    ca = r.autoscaling["clusterAutoscaler"]
    assert len(ca["scaleDowns"]) == 1 and not ca["scaleDowns"][0]["empty"]
    assert ca["finalSizes"]["gpu"] == 1
    running = [p for p in r.pods if p.phase == "Running"]
    assert len(running) == 2 and len({p.node for p in running}) == 1


def test_a_gpu_node_is_kept_when_its_pod_finds_no_free_device_elsewhere(tmp_path, kit):
    # one GPU per node, both taken: the other node's device is not counted free twice
    r = simulate(kit.scenario(tmp_path, drain_spec(gpus=1), DEVICE_CLASS, TEMPLATE, gpu_deployment()))
    ca = r.autoscaling["clusterAutoscaler"]
    assert ca["scaleDowns"] == [] and ca["finalSizes"]["gpu"] == 2


# --- core/static_autoscaler_dra_test.go (cluster-autoscaler 1.36.1) -------------------------------------
def test_scale_down_empty_single_device_nodes_but_not_the_one_whose_device_is_in_use(tmp_path, kit):
    # "scale-down: empty single-device nodes": the node whose only GPU a pod holds is 100 %
    # utilized (its device pool, not its idle cpu), the two empty ones go
    spec = ca_spec([], scaleDownUnneededTime="1m", groups={"gpus": 1})
    del spec["workloads"]
    spec["nodeGroups"][1]["count"] = 3
    r = simulate(kit.scenario(tmp_path, spec, DEVICE_CLASS, TEMPLATE, gpu_deployment(replicas=1)))
    ca = r.autoscaling["clusterAutoscaler"]
    busy = next(p.node for p in r.pods if p.phase == "Running")
    assert sorted(d["node"] for d in ca["scaleDowns"]) == sorted({"gpu-0", "gpu-1", "gpu-2"} - {busy})
    assert all(d["empty"] for d in ca["scaleDowns"]) and ca["finalSizes"]["gpu"] == 1


def test_scale_up_one_pod_per_node_one_device_per_node(tmp_path, kit):
    # "scale-up: one pod per node, one device per node": 1 scheduled, 3 unschedulable -> 3 nodes
    spec = ca_spec([], groups={"gpus": 1})
    del spec["workloads"]
    spec["nodeGroups"][1]["count"] = 1
    r = simulate(kit.scenario(tmp_path, spec, DEVICE_CLASS, TEMPLATE, gpu_deployment(replicas=4)))
    (up,) = r.autoscaling["clusterAutoscaler"]["scaleUps"]
    assert (up["nodeGroup"], up["nodes"]) == ("gpu", 3)


def test_scale_up_multiple_pods_per_node_one_device_each(tmp_path, kit):
    # "scale-up: multiple pods per node, pods requesting one device": 3-GPU nodes, 12 pods, the
    # existing node takes 3, the 9 unschedulable ones -> 3 nodes
    spec = ca_spec([], groups={"gpus": 3})
    del spec["workloads"]
    spec["nodeGroups"][1]["count"] = 1
    r = simulate(kit.scenario(tmp_path, spec, DEVICE_CLASS, TEMPLATE, gpu_deployment(replicas=12)))
    ups = r.autoscaling["clusterAutoscaler"]["scaleUps"]
    assert sum(u["nodes"] for u in ups if u["nodeGroup"] == "gpu") == 3


def test_the_kubelet_aware_estimator_checks_devices_in_the_snapshot_before_the_kubelet(tmp_path, kit):
    spec = ca_spec([claiming("w", 4)], estimator="kubelet-aware")
    r = simulate(kit.scenario(tmp_path, spec, DEVICE_CLASS, TEMPLATE))
    ca = r.autoscaling["clusterAutoscaler"]
    assert (ca["scaleUps"][0]["nodeGroup"], ca["scaleUps"][0]["nodes"]) == ("gpu", 2)
    assert ca["podsRejectedOnAddedNodes"] == {} and all(p.phase == "Running" for p in r.pods)


def test_an_added_nodes_devices_are_in_its_node_report(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, ca_spec([claiming("w", 4)]), DEVICE_CLASS, TEMPLATE))
    reports = {n.name: n for n in r.node_reports}
    assert reports["gpu-0"].dra_devices == {"gpu": 2} and reports["gpu-1"].dra_devices == {"gpu": 2}


# --- simulator/dynamicresources/snapshot/snapshot_test.go (cluster-autoscaler 1.36.1,
# TestSnapshotResourceClaims "UnreservePodClaims(): correctly clears allocations from pod-owned and
# unused shared claims"), on the autoscaler's fork of the simulated cluster
SHARED = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared", "namespace": "default"},
          "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


def _pod(name, own):
    claims = [{"name": "shared", "resourceClaimName": "shared"}]
    if own:
        claims.append({"name": "own", "resourceClaimTemplateName": "one-gpu"})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"resourceClaims": claims, "containers": [{"name": "c", "resources": {
                "requests": {"cpu": "100m"}, "claims": [{"name": c["name"]} for c in claims]}}]}}


@pytest.fixture
def forked(tmp_path, kit):
    from kubetwin.sim.ca_filter import SnapshotFilter
    from kubetwin.sim.loop import Simulator

    spec = {"nodeGroups": [{"name": "g", "count": 1, "machine": "1s1n4c1t:gpus=2",
                            "draDrivers": [{"driver": "gpu.example.com", "kinds": ["gpu"]}]}]}
    sim = Simulator(kit.scenario(tmp_path, spec, DEVICE_CLASS, TEMPLATE, SHARED, _pod("a", True), _pod("b", False)))
    sim.run()
    pods = {sp.pod.name: sp.pod for sp in sim.pods}
    fork = SnapshotFilter(sim.cluster, sim.sched.profile, sim.sched.handle, dra=sim.dra)
    return sim, fork, pods


def _allocated(plugin):
    return {k.split("/")[1].split("-")[0] for k in plugin.allocations()}


def test_a_removed_pod_keeps_a_shared_claim_another_pod_reserves_and_loses_its_own(forked):
    sim, fork, pods = forked
    assert _allocated(fork.dra) == {"shared", "a"}
    fork.remove_pod(pods["a"], "g-0")
    assert _allocated(fork.dra) == {"shared"}            # the pod-owned claim's allocation is gone
    assert fork.dra.allocator().state.dedicated and len(fork.dra.allocator().state.dedicated) == 1


def test_a_shared_claim_nobody_reserves_any_more_is_deallocated(forked):
    sim, fork, pods = forked
    fork.remove_pod(pods["a"], "g-0")
    fork.remove_pod(pods["b"], "g-0")
    assert _allocated(fork.dra) == set() and not fork.dra.allocator().state.dedicated


def test_the_fork_leaves_the_live_claims_as_they_are(forked):
    sim, fork, pods = forked
    fork.remove_pod(pods["a"], "g-0")
    fork.remove_pod(pods["b"], "g-0")
    assert _allocated(sim.dra) == {"shared", "a"} and len(sim.dra.allocator().state.dedicated) == 2


def test_a_failed_drain_trial_restores_the_claims(forked):
    sim, fork, pods = forked
    mark = fork.mark()
    fork.remove_pod(pods["a"], "g-0")
    fork.revert(mark)
    assert _allocated(fork.dra) == {"shared", "a"} and len(fork.dra.allocator().state.dedicated) == 2
