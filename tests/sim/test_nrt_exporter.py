"""Live NodeResourceTopology in `simulate` (``kubetwin.sim.nrt_exporter``): the agents publish
from the kubelets' state over simulated time, NodeResourceTopologyMatch reads them through the
cache its args choose, and stale data shows as pods bound then refused by their kubelet.

One node (2 NUMA nodes x 4 CPUs x 8 GiB, static CPU and Memory Managers, single-numa-node):
Guaranteed pods of 1 CPU and 4.5Gi fit the node's allocatable three times but its NUMA nodes
only twice.
"""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.sim import simulate

KUBELET = {"cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node", "memoryManagerPolicy": "Static",
           "kubeReserved": {"cpu": "1", "memory": "500Mi"}, "systemReserved": {"memory": "500Mi"},
           "evictionHard": {"memory.available": "100Mi"},
           "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1100Mi"}}]}


def spec(nrt, args=None, count=3):
    profile = {"schedulerName": "default-scheduler",
               "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}}}
    if args:
        profile["pluginConfig"] = [{"name": "NodeResourceTopologyMatch", "args": args}]
    res = {"cpu": "1", "memory": "4608Mi"}
    out = {"seed": 1, "maxRecreations": 1, "horizon": "30m",
           "schedulerConfig": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                               "profiles": [profile]},
           "nodeGroups": [{"name": "n", "count": 1, "machine": "1s2n4c1t:mem=16Gi", "kubeletConfig": KUBELET}],
           "workloads": [{"name": "w", "count": count, "arrival": {"interval": "1s"}, "duration": "1h",
                          "template": {"spec": {"containers": [{"name": "c", "resources": {
                              "requests": dict(res), "limits": dict(res)}}]}}}]}
    if nrt is not None:
        out["nodeResourceTopology"] = nrt
    return out


STALE = {"watchKubeletState": False, "updateInterval": "60s"}


def run(tmp_path, kit, nrt, args=None):
    return simulate(kit.scenario(tmp_path, spec(nrt, args)))


def test_an_agent_watching_the_kubelets_checkpoints_never_lets_a_pod_be_refused(tmp_path, kit):
    r = run(tmp_path, kit, {})
    assert r.summary()["rejectedByKubelet"] == {} and r.summary()["bound"] == 2


def test_the_third_pod_waits_with_the_plugins_message(tmp_path, kit):
    r = run(tmp_path, kit, {})
    assert r.pending_reasons == {"cannot align container": 1}


def test_stale_objects_let_a_pod_be_bound_and_refused_by_its_kubelet(tmp_path, kit):
    r = run(tmp_path, kit, STALE)
    assert r.summary()["rejectedByKubelet"].get("TopologyAffinityError", 0) >= 1


def test_an_overreserve_cache_holds_back_pods_instead_of_binding_them_on_stale_data(tmp_path, kit):
    r = run(tmp_path, kit, STALE, {"cacheResyncPeriodSeconds": 5})
    assert r.summary()["rejectedByKubelet"] == {}


def test_overreserve_resyncs_a_node_once_the_agent_published_its_pods(tmp_path, kit):
    r = run(tmp_path, kit, STALE, {"cacheResyncPeriodSeconds": 5})
    resyncs = [e for e in r.events if e["type"] == "NodeResourceTopologyResync"]
    # the first pod's 4.5Gi came off both NUMA nodes (over-reserved), so the second fails Filter
    # and marks the node; the agent publishes at 60 s, the next resync tick (65 s) finds the
    # fingerprint matching and takes the object
    assert resyncs[0] == {"time": 65.0, "type": "NodeResourceTopologyResync", "nodes": ["n-0"]}


def test_a_resync_is_no_cluster_event_so_the_parked_pod_waits_for_its_leftover_flush(tmp_path, kit):
    r = run(tmp_path, kit, STALE, {"cacheResyncPeriodSeconds": 5})
    second = next(p for p in r.pods if p.name == "w-1")
    # retried at 60 s (the object's update, before the resync) and parked again; the next retry
    # is flushUnschedulablePodsLeftover's, 5 min later, on the 30 s tick
    assert second.start == 390.0


def test_discard_reserved_nodes_answers_as_passthrough_when_binding_is_instant(tmp_path, kit):
    r = run(tmp_path, kit, STALE, {"discardReservedNodes": True})
    assert r.summary()["rejectedByKubelet"] == {"TopologyAffinityError": 1}


def test_scenarios_without_the_field_publish_nothing(tmp_path, kit):
    r = run(tmp_path, kit, None)
    assert not any(e["type"] == "NodeResourceTopologyResync" for e in r.events)


@pytest.mark.parametrize("nrt,match", [({"exporter": "rte"}, 'unknown exporter "rte"'),
                                       ({"updateIntervall": "1m"}, 'unknown field "spec.nodeResourceTopology.updateIntervall"'),
                                       ({"updateInterval": 0, "watchKubeletState": False}, "never update")])
def test_bad_node_resource_topology_settings_are_refused(tmp_path, kit, nrt, match):
    with pytest.raises(InputError, match=match):
        kit.scenario(tmp_path, spec(nrt))


def test_static_objects_and_live_ones_together_are_refused(tmp_path, kit):
    nrt_obj = {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
               "metadata": {"name": "n-0"}, "zones": []}
    sc = kit.scenario(tmp_path, spec({}), nrt_obj)
    with pytest.raises(InputError, match="publishes them too"):
        simulate(sc)


def test_after_a_resync_the_clock_runs_on_to_the_parked_pods_next_retry(tmp_path, kit):
    s = spec(STALE, {"cacheResyncPeriodSeconds": 5}, count=2)
    del s["horizon"], s["workloads"][0]["duration"]   # pods run forever: no event of their own is left
    r = simulate(kit.scenario(tmp_path, s))
    assert [(p.name, p.phase, p.start) for p in r.pods] == [("w-0", "Running", 0.0), ("w-1", "Running", 390.0)]
