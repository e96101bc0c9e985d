"""The Cluster Autoscaler's estimator with the scheduler's own Filter plugins over a forked
snapshot: upstream's ``TestBinpackingEstimate`` (cluster-autoscaler 1.36.1
``estimator/binpacking_estimator_test.go``) run through the real framework."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kubetwin.autoscale import clusterautoscaler as ca
from kubetwin.model.features import gates_for
from kubetwin.model.node import Node, node_from_dict
from kubetwin.model.pod import Pod, pod_from_dict
from kubetwin.scheduler.backend.cache import ClusterState
from kubetwin.scheduler.profile import Profile
from kubetwin.sim.ca_filter import SnapshotFilter, estimator_predicates, needs_filter, sanitized_node

FACTS = json.loads((Path(__file__).parents[1] / "autoscale" / "cluster_autoscaler_cases.json").read_text())
MIB = 1024 * 1024


def make_node(cpu: int, mem_mib: int, pods: int, name: str, zone: str) -> Node:
    """Upstream's ``makeNode``: capacity = allocatable, hostname and zone labels."""
    res = {"cpu": f"{cpu}m", "memory": str(mem_mib * MIB), "pods": str(pods)}
    return node_from_dict({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                                 "topology.kubernetes.io/zone": zone}},
                           "status": {"capacity": res, "allocatable": res}}, checked=True)


def build_test_pod(name: str, cpu: int, mem: int, *, host_port: int | None = None,
                   max_skew: list[Any] | None = None) -> Pod:
    """Upstream's ``BuildTestPod(name, cpu, mem, WithNamespace("universe"), WithLabels(app=estimatee), ...)``."""
    container: dict[str, Any] = {"name": "c", "image": "i",
                                 "resources": {"requests": {"cpu": f"{cpu}m", "memory": str(mem)}}}
    if host_port:
        container["ports"] = [{"containerPort": host_port, "hostPort": host_port}]
    spec: dict[str, Any] = {"containers": [container]}
    if max_skew:
        skew, key, min_domains = max_skew
        spec["topologySpreadConstraints"] = [{"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": "estimatee"}},
                                              "minDomains": min_domains}]
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": name, "namespace": "universe", "labels": {"app": "estimatee"}},
                          "spec": spec}, checked=True)


@dataclass(frozen=True)
class Payload:
    pod: Pod


def _fork() -> SnapshotFilter:
    cs = ClusterState([make_node(100, 100, 10, "oldnode", "zone-jupiter")], gates_for(None))
    return SnapshotFilter(cs, Profile(), cs.handle)


def _estimate(case: dict[str, Any]) -> ca.Estimate:
    fork = _fork()
    template = make_node(case["millicores"], case["memory"], 10, "template", "zone-mars")
    groups = []
    for g in case["groups"]:
        pod = build_test_pod(g.get("name", "estimatee"), g["cpu"], g["memory"], host_port=g.get("host_port"),
                             max_skew=g.get("max_skew"))
        groups.append([ca.CAPod(f"{g.get('name', 'estimatee')}-{i}", {"cpu": g["cpu"], "memory": g["memory"]},
                                Payload(pod)) for i in range(g["count"])])
    res = {"cpu": case["millicores"], "memory": case["memory"] * MIB, "pods": 10}
    fits, elsewhere = estimator_predicates(fork, template, "g")
    return ca.binpacking_estimate(groups, ca.NodeTemplate("g", res, res), fits, max_nodes=case["max_nodes"],
                                  elsewhere=elsewhere)


CASES = FACTS["binpacking"] + FACTS["binpacking_spread"]


@pytest.mark.parametrize("case", CASES, ids=[c["test"] for c in CASES])
def test_binpacking_estimate_with_the_scheduler_filters_matches_upstream(case: dict[str, Any]) -> None:
    est = _estimate(case)   # TestBinpackingEstimate
    assert (est.node_count, len(est.scheduled_pods)) == (case["expect_nodes"], case["expect_pods"])
    if "expect_processed_group" in case:
        assert all(p.name.startswith(case["expect_processed_group"]) for p in est.scheduled_pods)


def test_the_hostname_spread_retry_puts_pods_on_the_existing_node_and_counts_it() -> None:
    est = _estimate(FACTS["binpacking_spread"][2])
    assert dict(est.nodes)["oldnode"]   # upstream counts it among newNodesWithPods


def test_the_kubelet_aware_retry_asks_the_kubelet_of_the_existing_node_it_chose() -> None:
    case = FACTS["binpacking_spread"][2]
    fork = _fork()
    template = make_node(case["millicores"], case["memory"], 10, "template", "zone-mars")
    g = case["groups"][0]
    pod = build_test_pod("estimatee", g["cpu"], g["memory"], max_skew=g.get("max_skew"))
    pods = [ca.CAPod(f"estimatee-{i}", {"cpu": g["cpu"], "memory": g["memory"]}, Payload(pod)) for i in range(g["count"])]
    res = {"cpu": case["millicores"], "memory": case["memory"] * MIB, "pods": 10}
    asked: list[str] = []

    def accept(p: ca.CAPod, node: ca.NewNode | str) -> bool:   # a kubelet that rejects on existing nodes
        asked.append(node if isinstance(node, str) else node.name)
        return not isinstance(node, str)

    fits, elsewhere = estimator_predicates(fork, template, "g", accept=accept)
    est = ca.binpacking_estimate([pods], ca.NodeTemplate("g", res, res), fits, max_nodes=case["max_nodes"],
                                 elsewhere=elsewhere)
    assert "oldnode" in asked and "oldnode" not in dict(est.nodes)


def test_a_zonal_spread_failure_adds_no_second_node() -> None:
    est = _estimate(FACTS["binpacking_spread"][1])
    assert [name for name, _ in est.nodes] == ["e-0"]


def test_a_pod_without_inter_pod_constraints_keeps_the_node_local_path() -> None:
    fork = _fork()
    assert not needs_filter(build_test_pod("p", 10, 10), fork.cluster, fork.framework)
    assert needs_filter(build_test_pod("p", 10, 10, max_skew=[1, "kubernetes.io/hostname", 1]),
                        fork.cluster, fork.framework)


def test_required_pod_anti_affinity_forces_one_pod_per_estimated_node() -> None:
    fork = _fork()
    template = make_node(1000, 5000, 10, "template", "zone-mars")
    pod = pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": "a", "namespace": "universe", "labels": {"app": "estimatee"}},
                         "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "10m"}}}],
                                  "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                                      {"labelSelector": {"matchLabels": {"app": "estimatee"}},
                                       "topologyKey": "kubernetes.io/hostname"}]}}}}, checked=True)
    assert needs_filter(pod, fork.cluster, fork.framework)
    fits, elsewhere = estimator_predicates(fork, template, "g")
    res = {"cpu": 1000, "memory": 5000 * MIB, "pods": 10}
    est = ca.binpacking_estimate([[ca.CAPod(f"a-{i}", {"cpu": 10}, Payload(pod)) for i in range(4)]],
                                 ca.NodeTemplate("g", res, res), fits, elsewhere=elsewhere)
    assert (est.node_count, len(est.scheduled_pods)) == (4, 4)


def test_an_estimated_node_takes_its_own_name_as_hostname() -> None:
    node = sanitized_node(make_node(1, 1, 1, "template", "z"), "template-node-for-g-e-0")
    assert node.metadata.labels["kubernetes.io/hostname"] == "template-node-for-g-e-0"


# --- in `simulate`: the Cluster Autoscaler's scan with the Filter plugins ------------------------------
def _anti_affine_deployment(replicas: int) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}],
                                           "affinity": {"podAntiAffinity": {
                                               "requiredDuringSchedulingIgnoredDuringExecution": [term]}}}}}}


def test_pods_repelled_by_anti_affinity_get_one_new_node_each(tmp_path, kit):
    from kubetwin.sim.loop import simulate

    spec = {"horizon": "30m", "autoscaling": {"clusterAutoscaler": {"expander": "least-waste"}},
            "nodeGroups": [{"name": "pool", "count": 1, "minSize": 1, "maxSize": 10,
                            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}]}
    r = simulate(kit.scenario(tmp_path, spec, _anti_affine_deployment(4)))
    ups = r.autoscaling["clusterAutoscaler"]["scaleUps"]
    # the room left on pool-0 does not count (FilterOutSchedulable runs InterPodAffinity), and the
    # estimator packs one pod per template node
    assert [u["nodes"] for u in ups] == [3]
    assert sum(1 for p in r.pods if p.phase == "Running") == 4 and r.nodes == 4


def test_a_node_whose_pods_anti_affinity_keeps_off_the_others_is_not_drained(tmp_path, kit):
    from kubetwin.sim.loop import simulate

    spec = {"horizon": "30m", "autoscaling": {"clusterAutoscaler": {"expander": "least-waste"}},
            "nodeGroups": [{"name": "pool", "count": 3, "minSize": 1, "maxSize": 10,
                            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}]}
    r = simulate(kit.scenario(tmp_path, spec, _anti_affine_deployment(3)))
    # each node is below the utilization threshold, but its pod may go to no other node
    assert r.autoscaling["clusterAutoscaler"]["scaleDowns"] == []
    assert sum(1 for p in r.pods if p.phase == "Running") == 3


def test_a_reverted_fork_is_the_cluster_again() -> None:
    fork = _fork()
    pod = build_test_pod("p", 10, 10, max_skew=[1, "kubernetes.io/hostname", 1])
    mark = fork.mark()
    fork.add_pod(pod, "oldnode")
    assert len(fork.handle.snapshot.get("oldnode").pods) == 1
    fork.revert(mark)
    assert fork.handle.snapshot.get("oldnode").pods == [] and fork.cluster.infos[0].pods == []


def test_the_fork_leaves_out_the_plugins_whose_state_is_allocated_devices() -> None:
    fork = _fork()
    names = {p.name for p, _ in fork.framework.plugins}
    assert "DynamicResources" not in names and {"InterPodAffinity", "PodTopologySpread", "NodePorts"} <= names


def test_a_fork_of_a_fork_sees_its_pods_and_leaves_it_unchanged() -> None:
    base = _fork()
    base.add_pod(build_test_pod("p", 10, 10), "oldnode")
    child = SnapshotFilter(base.cluster, Profile(), base.cluster.handle, base)
    child.add_pod(build_test_pod("q", 10, 10), "oldnode")
    assert [pi.pod.name for pi in child.handle.snapshot.get("oldnode").pods] == ["p", "q"]
    assert [pi.pod.name for pi in base.handle.snapshot.get("oldnode").pods] == ["p"]
