"""Lower bounds: resource sums, big items, the NUMA relaxation, mixes and prices."""

from __future__ import annotations

from pathlib import Path

from kubetwin.plan.bounds import INFEASIBLE, demand_of, mix_admissible, mix_node_bound, price_bound, type_bound
from kubetwin.plan.nodetype import parse_node_type
from kubetwin.plan.workload import read_workload, scenario_for

from .conftest import deployment, write


def _demand(folder: Path, *docs: dict):
    return demand_of(scenario_for(read_workload([write(folder, "w.yaml", *docs)]), []))


def test_the_resource_sum_bound_divides_requests_by_allocatable(tmp_path: Path) -> None:
    d = _demand(tmp_path, deployment(replicas=10, cpu="3", memory="1Gi"))
    t = parse_node_type("a=1s1n8c2t:mem=64Gi")   # 16 CPUs
    assert type_bound(d, t, {}).nodes == 2          # 30 CPUs over 16


def test_pods_bigger_than_half_a_node_need_a_node_each(tmp_path: Path) -> None:
    d = _demand(tmp_path, deployment(replicas=3, cpu="9", memory="1Gi"))
    t = parse_node_type("a=1s1n8c2t:mem=64Gi")
    b = type_bound(d, t, {})
    assert b.nodes == 3 and "more than half" in b.basis


def test_a_pod_larger_than_a_node_makes_the_type_infeasible(tmp_path: Path) -> None:
    d = _demand(tmp_path, deployment(replicas=1, cpu="20", memory="1Gi"))
    assert type_bound(d, parse_node_type("a=1s1n8c2t:mem=64Gi"), {}).nodes == INFEASIBLE


def test_daemon_pods_take_room_on_every_node(tmp_path: Path) -> None:
    d = _demand(tmp_path, deployment(replicas=4, cpu="3", memory="1Gi"))
    t = parse_node_type("a=1s1n8c2t:mem=64Gi")
    assert type_bound(d, t, {}).nodes == 1
    assert type_bound(d, t, {"cpu": 10_000}).nodes == 2   # 12 CPUs over 6 left per node


def test_single_numa_node_alignment_bounds_by_numa_nodes(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                                     "cpuManagerPolicy: static\ntopologyManagerPolicy: single-numa-node\n"
                                     "reservedSystemCPUs: '0'\n")
    d = _demand(tmp_path, deployment(replicas=8, cpu="5"))
    t = parse_node_type("n=1s2n4c2t:mem=64Gi,kubelet=k.yaml", root=tmp_path)
    assert type_bound(d, t, {}).nodes == 4                   # 8 NUMA nodes of 8 CPUs, two a node
    assert type_bound(d, t, {}, numa=False).nodes == 3       # 40 CPUs over 15


def test_the_numa_bound_needs_the_static_cpu_manager(tmp_path: Path) -> None:
    d = _demand(tmp_path, deployment(replicas=8, cpu="5"))
    t = parse_node_type("n=1s2n4c2t:mem=64Gi")
    assert "NUMA" not in type_bound(d, t, {}).basis


def test_a_mix_is_admissible_only_if_its_room_covers_the_requests(tmp_path: Path) -> None:
    d = _demand(tmp_path, deployment(replicas=4, cpu="4", memory="1Gi"))
    rooms = [{"cpu": 8000, "memory": 1 << 36, "pods": 110}, {"cpu": 4000, "memory": 1 << 36, "pods": 110}]
    assert mix_admissible(d, rooms, (1, 2))
    assert not mix_admissible(d, rooms, (1, 1))


def test_the_node_bound_of_a_mix_uses_the_largest_room(tmp_path: Path) -> None:
    d = _demand(tmp_path, deployment(replicas=4, cpu="4", memory="1Gi"))
    rooms = [{"cpu": 8000, "memory": 1 << 36, "pods": 110}, {"cpu": 4000, "memory": 1 << 36, "pods": 110}]
    assert mix_node_bound(d, rooms)[0] == 2


def test_the_price_bound_takes_the_cheapest_price_per_unit(tmp_path: Path) -> None:
    d = _demand(tmp_path, deployment(replicas=4, cpu="4", memory="1Gi"))
    rooms = [{"cpu": 8000, "memory": 1 << 36, "pods": 110}, {"cpu": 4000, "memory": 1 << 36, "pods": 110}]
    assert price_bound(d, rooms, [3.0, 1.0])[0] == 4.0      # 16 CPUs at 0.25 a CPU


def test_dra_claims_are_bounded_by_the_devices_a_node_type_publishes(tmp_path: Path) -> None:
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
    tmpl = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "two"},
            "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu",
                                                                                   "count": 2}}]}}}}
    dep = deployment(replicas=3, cpu="1", memory="1Gi",
                     extra={"resourceClaims": [{"name": "g", "resourceClaimTemplateName": "two"}]})
    d = _demand(tmp_path, cls, tmpl, dep)
    t = parse_node_type("g=1s2n4c2t:mem=64Gi:gpus=2,dra=gpu.example.com")
    b = type_bound(d, t, {})
    assert b.nodes == 3 and b.basis.startswith("DRA devices")   # 6 devices asked, 2 per node


RESTRICTED = ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
              "cpuManagerPolicy: static\ntopologyManagerPolicy: restricted\nreservedSystemCPUs: '0'\n")
STATIC_MEMORY = ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                 "topologyManagerPolicy: single-numa-node\nmemoryManagerPolicy: Static\n"
                 "reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]\n")


def test_restricted_alignment_bounds_items_no_larger_than_a_numa_node(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text(RESTRICTED)
    d = _demand(tmp_path, deployment(replicas=8, cpu="5"))
    t = parse_node_type("n=1s2n4c2t:mem=64Gi,kubelet=k.yaml", root=tmp_path)
    b = type_bound(d, t, {})
    assert b.nodes == 4 and "restricted" in b.basis   # 5 CPUs fit one NUMA node: preferred only there


def test_restricted_leaves_items_larger_than_a_numa_node_out_instead_of_refusing(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text(RESTRICTED)
    d = _demand(tmp_path, deployment(name="big", replicas=1, cpu="9"), deployment(replicas=10, cpu="5"))
    t = parse_node_type("n=1s2n4c2t:mem=64Gi,kubelet=k.yaml", root=tmp_path)
    b = type_bound(d, t, {})
    # ten 5-CPU items take a NUMA node each (5 nodes); the 9-CPU one may span two NUMA nodes
    assert b.nodes == 5 and "1 larger item(s) left out" in b.basis


def test_the_static_memory_manager_bounds_guaranteed_memory_by_numa_nodes(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text(STATIC_MEMORY)
    d = _demand(tmp_path, deployment(replicas=8, cpu="1", memory="20Gi"))
    t = parse_node_type("n=1s2n4c2t:mem=64Gi,kubelet=k.yaml", root=tmp_path)
    b = type_bound(d, t, {})
    # 20Gi is more than half a NUMA node's 32Gi: one NUMA node each, two a node
    assert b.nodes == 4 and "allocatable memory" in b.basis
    assert type_bound(d, t, {}, numa=False).nodes == 3   # 160Gi over a node's memory


def test_guaranteed_memory_larger_than_any_numa_node_is_infeasible_under_single_numa_node(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text(STATIC_MEMORY)
    d = _demand(tmp_path, deployment(replicas=1, cpu="1", memory="40Gi"))
    t = parse_node_type("n=1s2n4c2t:mem=64Gi,kubelet=k.yaml", root=tmp_path)
    assert type_bound(d, t, {}).nodes == INFEASIBLE
