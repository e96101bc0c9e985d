"""The answer document: status, headroom per resource and per NUMA node, why each last node is needed."""

from __future__ import annotations

from pathlib import Path

from kubetwin.plan.answer import BOUND, INFEASIBLE_STATUS, PROVEN, SCHEDULER_MINIMAL, headroom, plan_document, why
from kubetwin.plan.nodetype import parse_node_type
from kubetwin.plan.search import plan
from kubetwin.plan.trial import run_trial
from kubetwin.plan.workload import read_workload

from .conftest import deployment, write


def _setup(folder: Path):
    wl = read_workload([folder / "web.yaml"])
    types = [parse_node_type("numa=1s2n4c2t:mem=64Gi,kubelet=kubelet-numa.yaml", root=folder)]
    return wl, types


def test_headroom_gives_free_resources_per_type(folder: Path) -> None:
    wl, types = _setup(folder)
    h = headroom(run_trial(wl, types, (4,), keep=True).result, types)
    assert h[0]["resources"]["cpu"] == {"allocatable": "60", "requested": "40", "free": "20", "freePercent": 33.3}


def test_headroom_per_numa_node_counts_exclusive_and_reserved_cpus(folder: Path) -> None:
    wl, types = _setup(folder)
    numa = headroom(run_trial(wl, types, (4,), keep=True).result, types)[0]["numa"]
    assert [(n["reservedCpus"], n["exclusiveCpus"], n["unallocatedCpus"]) for n in numa] == [(4, 20, 8), (0, 20, 12)]


def test_why_names_the_binding_constraint_of_one_node_fewer(folder: Path) -> None:
    wl, types = _setup(folder)
    best = run_trial(wl, types, (4,))
    got = why(best, types, lambda counts: run_trial(wl, types, counts))
    assert got[0]["withoutNode"] == "numa-3" and got[0]["bindingConstraints"] == ["NUMA alignment"]
    assert got[0]["notRunning"] == [{"owner": "Deployment/default/web", "running": 6, "wanted": 8}]


def test_why_says_when_a_node_is_not_needed(folder: Path) -> None:
    wl, types = _setup(folder)
    got = why(run_trial(wl, types, (5,)), types, lambda counts: run_trial(wl, types, counts))
    assert got[0]["needed"] is False


def test_the_status_is_proven_searched_bound_or_infeasible(folder: Path, tmp_path: Path) -> None:
    wl, types = _setup(folder)
    p = plan(wl, types, scheduler_only=False)
    doc = plan_document(p, workload=wl, trial=lambda c: run_trial(wl, types, c))
    assert doc["status"] == PROVEN
    p.lower_bound = 3        # below the answer: minimal only because every smaller count was simulated
    assert plan_document(p, workload=wl, trial=lambda c: None)["status"] == SCHEDULER_MINIMAL
    p.exhaustive = False
    assert plan_document(p, workload=wl, trial=lambda c: None)["status"] == BOUND
    big = read_workload([write(tmp_path, "big.yaml", deployment(replicas=1, cpu="64"))])
    q = plan(big, types, scheduler_only=False)
    assert plan_document(q, workload=big, trial=lambda c: None)["status"] == INFEASIBLE_STATUS


def test_headroom_per_numa_node_gives_the_memory_managers_free_memory(folder: Path) -> None:
    kubelet = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
               "cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node", "reservedSystemCPUs": "0",
               "memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}
    write(folder, "kubelet-mem.yaml", kubelet)
    wl = read_workload([folder / "web.yaml"])
    types = [parse_node_type("numa=1s2n4c2t:mem=64Gi,kubelet=kubelet-mem.yaml", root=folder)]
    numa = headroom(run_trial(wl, types, (4,), keep=True).result, types)[0]["numa"]
    # four nodes, one 8Gi Guaranteed pod pinned to each NUMA node of each: 32Gi a NUMA node,
    # 100Mi of NUMA node 0 reserved (reservedMemory)
    assert [(n["memory"], n["memoryAllocatable"], n["memoryAssigned"], n["memoryFree"]) for n in numa] == [
        ("128Gi", "130672Mi", "32Gi", "97904Mi"), ("128Gi", "128Gi", "32Gi", "96Gi")]
    assert [n["leastMemoryFreeOnANode"] for n in numa] == ["24476Mi", "24Gi"]


def test_without_the_static_memory_manager_no_free_memory_is_claimed(folder: Path) -> None:
    wl, types = _setup(folder)
    numa = headroom(run_trial(wl, types, (4,), keep=True).result, types)[0]["numa"]
    assert all("memoryFree" not in n for n in numa)
