"""The balloons policy's fast paths (``kubetwin.runtime.policies.balloons.fast``) answer as the
plain policy does: the tree allocator's branch for random CPU sets on conformance machines, and
whole runs of random balloon types and random pods (namespaces, QoS classes, sizes, annotations)
created and deleted in random order — every container's cpusets, memory nodes and scheduling,
the rejections, the pools, each container's grant and the NodeResourceTopology export, after
every step."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Iterator

import pytest

from kubetwin.errors import InputError
from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime import nrt
from kubetwin.runtime.config import decode_policy
from kubetwin.runtime.cpuallocator import (
    PRIORITY_HIGH,
    PRIORITY_LOW,
    PRIORITY_NONE,
    PRIORITY_NORMAL,
    AllocationError,
    CPUAllocator,
)
from kubetwin.runtime.node import RuntimeNode
from kubetwin.runtime.nri import api
from kubetwin.runtime.policies.balloons import cputree_memo, fast, treekernel
from kubetwin.runtime.policies.balloons.cputree import CpuTreeAllocator, TreeError, cpu_tree_from_system, cpus_in_level
from kubetwin.runtime.resmgr.policy import PolicyError, new_policy
from kubetwin.runtime.sysfs import System

MACHINES = Path(__file__).resolve().parents[4].parent / "shared" / "conformance" / "machines"
MACHINE_FILES = ("dual-socket-multi-numa-per-socket-ht.json", "single-socket-ht.json", "quad-socket-four-way-ht.json",
                 "dual-socket-no-ht.json", "dual-socket-sub-numa-per-socket-ht-monolithic-uncore.json")
LEVELS = ("system", "package", "die", "numa", "l2cache", "core", "thread")


def _machine(name: str) -> Any:
    if not (MACHINES / name).is_file():
        pytest.skip("the shared conformance machines are not here")
    return load_machine(str(MACHINES / name))


def _random_cpus(rng: random.Random, cpus: list[int], p: float) -> CPUSet:
    return CPUSet(c for c in cpus if rng.random() < p)


# --- the tree allocator ------------------------------------------------------------------------
def _resize(alloc: CpuTreeAllocator, current: CPUSet, free: CPUSet, delta: int) -> Any:
    try:
        return alloc.resize_cpus(current, free, delta)
    except TreeError as exc:
        return ("TreeError", str(exc))


@pytest.fixture
def no_resize_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table of resizes (:mod:`...cputree_memo`) off: it is shared by the plain and the fast
    allocator of a tree, so the second would otherwise get the first one's answer."""
    monkeypatch.setattr(cputree_memo, "ENABLED", False)


@pytest.mark.parametrize("machine", MACHINE_FILES)
def test_the_flat_tree_picks_the_plain_allocators_branch(machine: str, no_resize_table: None) -> None:
    system = System(_machine(machine))
    tree = cpu_tree_from_system(system)
    cpus = list(system.cpu_set)
    rng = random.Random(machine)
    for _ in range(400):
        current = _random_cpus(rng, cpus, rng.random() * 0.6)
        free = _random_cpus(rng, cpus, rng.random()) - current
        delta = rng.choice((1, 1, 2, 3, 4, 7, -1, -1, -2, -3))
        balancing = rng.random() < 0.5
        hints: dict[str, Any] = {}
        if rng.random() < 0.3:
            hints["far"] = [[_random_cpus(rng, cpus, 0.2)]]
        if rng.random() < 0.2:
            hints["close"] = [[_random_cpus(rng, cpus, 0.2)]]
        plain = _resize(CpuTreeAllocator(tree, balancing, **hints), current, free, delta)
        quick = _resize(fast.FastCpuTreeAllocator(tree, balancing, **hints), current, free, delta)
        assert quick == plain, (str(current), str(free), delta, balancing)


@pytest.mark.parametrize("balancing", (True, False))
def test_the_flat_tree_picks_the_plain_allocators_branch_among_many_ties(balancing: bool,
                                                                         no_resize_table: None) -> None:
    # the simulation benchmark's machine (128 CPUs): mostly free, a balloon of a few CPUs, so
    # many branches tie level after level and the name decides
    system = System(load_machine("2s2n16c2t"))
    tree = cpu_tree_from_system(system)
    cpus = list(system.cpu_set)
    rng = random.Random(f"ties/{balancing}")
    for _ in range(300):
        current = _random_cpus(rng, cpus, rng.choice((0.0, 0.02, 0.05, 0.2)))
        free = _random_cpus(rng, cpus, rng.choice((0.5, 0.8, 0.95, 1.0))) - current
        delta = rng.choice((1, 1, 2, 4, -1, -1, -2))
        plain = _resize(CpuTreeAllocator(tree, balancing), current, free, delta)
        quick = _resize(fast.FastCpuTreeAllocator(tree, balancing), current, free, delta)
        assert quick == plain, (str(current), str(free), delta)


@pytest.mark.parametrize("machine", MACHINE_FILES)
def test_the_flat_tree_finds_the_idle_cpus_of_a_level_as_the_plain_walk(machine: str) -> None:
    system = System(_machine(machine))
    tree = cpu_tree_from_system(system)
    flat = fast.flat_tree(tree)
    cpus = list(system.cpu_set)
    rng = random.Random(machine)
    for _ in range(200):
        balloon, candidates = _random_cpus(rng, cpus, 0.1), _random_cpus(rng, cpus, 0.5)
        level = rng.choice(LEVELS)
        assert flat.cpus_in_level(level, balloon, candidates) == cpus_in_level(tree, level, balloon, candidates)


def test_the_flat_tree_remembers_answers_per_current_and_free_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(treekernel, "ENABLED", False)   # the C search remembers nothing
    system = System(_machine(MACHINE_FILES[0]))
    alloc = fast.FastCpuTreeAllocator(cpu_tree_from_system(system), True)
    alloc.flat.answers.clear()
    first = alloc.resize_cpus(CPUSet([4]), CPUSet.range(0, 3) | CPUSet.range(5, 20), 3)
    assert len(alloc.flat.answers) == 1
    assert alloc.resize_cpus(CPUSet([4]), CPUSet.range(0, 3) | CPUSet.range(5, 20), 3) == first
    assert len(alloc.flat.answers) == 1


def test_the_flat_tree_refuses_a_branch_when_none_has_room() -> None:
    system = System(_machine(MACHINE_FILES[1]))
    alloc = fast.FastCpuTreeAllocator(cpu_tree_from_system(system), False)
    with pytest.raises(TreeError, match="not enough free CPUs"):
        alloc._max_local_set(CPUSet(), CPUSet([0, 1]), 3)


def test_copies_of_a_node_share_the_fast_tree_allocator() -> None:
    import copy

    system = System(_machine(MACHINE_FILES[1]))
    alloc = fast.FastCpuTreeAllocator(cpu_tree_from_system(system), False)
    assert copy.deepcopy([alloc])[0] is alloc


def test_the_remembering_cpu_allocator_answers_as_the_allocator_it_wraps() -> None:
    system = System(_machine(MACHINE_FILES[0]))
    plain = CPUAllocator(system)
    remembering = fast.RememberingCPUAllocator(CPUAllocator(system))
    cpus = list(system.cpu_set)
    rng = random.Random(11)
    for _ in range(200):
        frm = _random_cpus(rng, cpus, rng.random())
        cnt = rng.randint(0, frm.size())
        prio = rng.choice((PRIORITY_HIGH, PRIORITY_NORMAL, PRIORITY_LOW, PRIORITY_NONE))
        for _ in range(2):   # the second answer is the remembered one
            assert remembering.allocate_cpus(frm, cnt, prio) == plain.allocate_cpus(frm, cnt, prio)
            assert remembering.release_cpus(frm, cnt, prio) == plain.release_cpus(frm, cnt, prio)


def test_the_remembering_cpu_allocator_refuses_each_time_and_remembers_no_refusal() -> None:
    remembering = fast.RememberingCPUAllocator(CPUAllocator(System(_machine(MACHINE_FILES[1]))))
    for _ in range(2):
        with pytest.raises(AllocationError, match="does not have 3 CPUs"):
            remembering.allocate_cpus(CPUSet([0, 1]), 3)
    assert not remembering.answers


def test_copies_of_a_node_share_the_remembering_cpu_allocator() -> None:
    import copy

    remembering = fast.RememberingCPUAllocator(CPUAllocator(System(_machine(MACHINE_FILES[1]))))
    assert copy.deepcopy([remembering])[0] is remembering


def test_the_registry_starts_the_fast_policy_unless_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert type(new_policy("balloons")) is fast.FastBalloonsPolicy
    monkeypatch.setattr(fast, "ENABLED", False)
    assert type(new_policy("balloons")) is fast.BalloonsPolicy


# --- whole runs --------------------------------------------------------------------------------
NAMESPACES = ("default", "team-a", "team-b", "kube-system", "batch")


def _balloon_type(rng: random.Random, i: int, levels: tuple[str, ...]) -> dict[str, Any]:
    bt: dict[str, Any] = {"name": f"t{i}"}
    pick = rng.random
    if pick() < 0.5:
        bt["matchExpressions"] = [rng.choice((
            {"key": "qosclass", "operator": "In", "values": [rng.choice(("Guaranteed", "Burstable", "BestEffort"))]},
            {"key": "namespace", "operator": "In", "values": rng.sample(NAMESPACES, 2)},
            {"key": "labels/app", "operator": "Exists"},
            {"key": "labels/tier", "operator": "In", "values": ["web"]}))]
    if pick() < 0.4:
        bt["namespaces"] = rng.sample(("team-*", "default", "batch", "*", "kube-*"), rng.randint(1, 2))
    if pick() < 0.5:
        bt["minCPUs"] = rng.choice((0, 1, 2, 3))
    if pick() < 0.4:
        bt["maxCPUs"] = max(bt.get("minCPUs", 0), rng.choice((1, 2, 4, 6)))
    if pick() < 0.3:
        bt["minBalloons"] = rng.choice((0, 1, 2))
    if pick() < 0.4:
        bt["maxBalloons"] = max(bt.get("minBalloons", 0), rng.choice((1, 2, 3)))
    if pick() < 0.5:
        bt["allocatorPriority"] = rng.choice(("high", "normal", "low", "none"))
    for key in ("preferNewBalloons", "preferSpreadingPods", "preferPerNamespaceBalloon", "allocatorTopologyBalancing",
                "hideHyperthreads", "pinMemory", "showContainersInNrt"):
        if pick() < 0.3:
            bt[key] = pick() < 0.6
    if pick() < 0.4:
        bt["shareIdleCPUsInSame"] = rng.choice(levels)
    if pick() < 0.2:
        bt["cpuClass"] = rng.choice(("normal", "turbo"))
    if pick() < 0.15:
        bt["groupBy"] = rng.choice(("${pod/labels/app}", "${pod/namespace}-x"))
    return bt


def _policy_doc(rng: random.Random, cpus: int) -> dict[str, Any]:
    types = [_balloon_type(rng, i, LEVELS) for i in range(rng.randint(1, 4))]
    spec: dict[str, Any] = {"balloonTypes": types,
                            "reservedResources": {"cpu": rng.choice(("1", "750m", "2", "cpuset:0", "cpuset:0-1"))}}
    if rng.random() < 0.4:
        spec["allocatorTopologyBalancing"] = rng.random() < 0.5
    if rng.random() < 0.2:
        spec["pinMemory"] = rng.random() < 0.5
    if rng.random() < 0.2:
        spec["showContainersInNrt"] = True
    if rng.random() < 0.15:
        spec["availableResources"] = {"cpu": f"cpuset:0-{cpus // 2 + 1}"}
    if rng.random() < 0.2:
        spec["idleCPUClass"] = "idle"
    if rng.random() < 0.2:
        spec["reservedPoolNamespaces"] = ["batch"]
    return {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy", "metadata": {"name": "default"},
            "spec": spec}


def _pod(rng: random.Random, k: int, type_names: list[str]) -> Any:
    qos = rng.choice(("guaranteed", "guaranteed", "burstable", "besteffort"))
    containers = []
    for j in range(rng.choice((1, 1, 1, 2, 3))):
        res: dict[str, Any] = {}
        if qos != "besteffort":
            cpu = rng.choice(("100m", "250m", "500m", "1", "1", "2", "3"))
            mem = rng.choice(("64Mi", "256Mi", "1Gi"))
            res = {"requests": {"cpu": cpu, "memory": mem}}
            if qos == "guaranteed":
                res["limits"] = dict(res["requests"])
            elif rng.random() < 0.3:
                res["limits"] = {"cpu": "4"}
        containers.append({"name": f"c{j}", "resources": res})
    meta: dict[str, Any] = {"name": f"p{k}", "uid": f"uid-{k}", "namespace": rng.choice(NAMESPACES)}
    if rng.random() < 0.4:
        meta["labels"] = {"app": rng.choice(("a", "b")), "tier": rng.choice(("web", "db"))}
    ann: dict[str, str] = {}
    if rng.random() < 0.25:
        ann["balloon.balloons.resource-policy.nri.io"] = rng.choice(type_names + ["default", "reserved"])
    if rng.random() < 0.1:
        ann["hide-hyperthreads.resource-policy.nri.io"] = rng.choice(("true", "false", "bad"))
    if rng.random() < 0.05:
        ann["memory-type.resource-policy.nri.io"] = rng.choice(("dram", "pmem"))
    if ann:
        meta["annotations"] = ann
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": containers}})


def _steps(rng: random.Random, count: int, type_names: list[str]) -> Iterator[tuple[str, Any]]:
    live: list[str] = []
    for k in range(count):
        if live and rng.random() < 0.35:
            yield "delete", live.pop(rng.randrange(len(live)))
        pod = _pod(rng, k, type_names)
        live.append(pod.key)
        yield "create", pod


def _snapshot(rn: RuntimeNode, outcome: Any) -> str:
    """Everything the run shows after a step: the outcome, each container's resources, grant and
    placement (the simulation's figures), the pools and the exported topology."""
    policy = rn.resmgr.policy if rn.resmgr is not None else None
    containers = []
    for p, r in rn.running():
        grant = placement = None
        if policy is not None:
            c = rn.resmgr.cache.lookup_container(r.ctr.id) if rn.resmgr is not None else None
            grant = policy.describe_container(c) if c is not None else None
            placement = policy.container_placement(c) if c is not None else None
        containers.append({"pod": p.key, "name": r.name, "linux": api.to_json(r.ctr.linux), "grant": grant,
                           "placement": placement, "adjustment": r.adjustment})
    return json.dumps({"outcome": outcome, "containers": containers,
                       "pools": policy.describe() if policy is not None else None,
                       "reserved": str(policy.reserved_cpus()) if policy is not None else None,
                       "nrt": nrt.export(rn, "n0")}, sort_keys=True, default=str)


def _run(machine: Any, doc: dict[str, Any], steps: list[tuple[str, Any]], isolated: CPUSet,
         enabled: bool, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setattr(fast, "ENABLED", enabled)
    config = KubeletConfiguration.from_dict({"kubeReserved": {"cpu": "1", "memory": "1Gi"}})
    try:
        rn = RuntimeNode(machine, decode_policy(doc, "policy.yaml"), config, isolated=isolated)
    except (PolicyError, InputError) as exc:
        return [f"start: {type(exc).__name__}: {exc}"]
    out = []
    seen = len(rn.adaptation.trace)
    for kind, arg in steps:
        if kind == "create":
            r = rn.create_pod(arg)
            outcome: Any = r.to_json() if r is not None else None
        else:
            outcome = rn.delete_pod(arg)
        # every NRI event of the step and each plugin's reply: adjustments, updates in order
        events = json.dumps([e.to_json() for e in rn.adaptation.trace[seen:]], sort_keys=True, default=str)
        seen = len(rn.adaptation.trace)
        out.append(events + _snapshot(rn, outcome))
    return out


@pytest.mark.parametrize("machine", MACHINE_FILES)
@pytest.mark.parametrize("seed", range(4))
def test_random_balloon_types_and_pods_run_as_on_the_plain_policy(machine: str, seed: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    m = _machine(machine)
    rng = random.Random(f"{machine}/{seed}")
    cpus = System(m).cpu_set.size()
    doc = _policy_doc(rng, cpus)
    names = [bt["name"] for bt in doc["spec"]["balloonTypes"]]
    isolated = CPUSet([cpus - 1]) if rng.random() < 0.3 else CPUSet()
    steps = list(_steps(rng, 40, names))
    plain = _run(m, doc, steps, isolated, False, monkeypatch)
    quick = _run(m, doc, steps, isolated, True, monkeypatch)
    for i, (a, b) in enumerate(zip(plain, quick)):
        assert b == a, f"step {i}: {steps[i][0]} {getattr(steps[i][1], 'key', steps[i][1])}"
    assert len(quick) == len(plain)


@pytest.mark.parametrize("machine", MACHINE_FILES[:3])
def test_the_charts_default_policy_runs_as_the_plain_policy(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the Helm chart's config: Guaranteed pods in balloons of their own (preferNewBalloons,
    # preferSpreadingPods), the others in up to two balloons sharing idle CPUs in their package
    from kubetwin.runtime.config import load_policy

    m = _machine(machine)
    resource = load_policy("balloons")
    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy", "metadata": {"name": "default"},
           "spec": resource.spec}
    steps = list(_steps(random.Random(machine), 60, []))
    plain = _run(m, doc, steps, CPUSet(), False, monkeypatch)
    quick = _run(m, doc, steps, CPUSet(), True, monkeypatch)
    assert quick == plain
    assert sum('"outcome": null' in s for s in quick) > 20


@pytest.mark.parametrize("machine", MACHINE_FILES)
def test_the_search_on_cpu_masks_finds_the_branch_the_search_on_positions_finds(machine: str) -> None:
    system = System(_machine(machine))
    flat = fast.FlatTree(cpu_tree_from_system(system))
    assert flat.nested
    cpus = list(system.cpu_set)
    rng = random.Random(f"masks/{machine}")
    for _ in range(400):
        current = _random_cpus(rng, cpus, rng.random()).mask
        free = _random_cpus(rng, cpus, 0.5).mask & ~current
        delta = rng.choice((1, 1, 2, 3, 4, 8, -1, -2, -3))
        balancing = rng.random() < 0.5
        assert flat._search_masks(balancing, current, free, delta) == \
            flat._search_positions(balancing, current, free, delta)


def test_a_tree_whose_levels_overlap_is_searched_on_positions() -> None:
    from kubetwin.runtime.policies.balloons.cputree import CpuTreeNode

    root = CpuTreeNode("root", "system", cpus=CPUSet([0, 1, 2, 3]))
    for name, cpus in (("a", [0, 1, 2]), ("b", [2, 3])):   # CPU 2 in both: not a tree of disjoint branches
        root.add_child(CpuTreeNode(name, "package", cpus=CPUSet(cpus)))
    flat = fast.FlatTree(root)
    assert not flat.nested
    assert flat._search(True, 0, 0b1111, 1) == flat._search_positions(True, 0, 0b1111, 1)


def test_the_flat_tree_knows_levels_whose_nodes_are_their_parents_only_child() -> None:
    # simulate's machine: each L2 cache holds one core, so the core level repeats the L2 level
    # (its nodes are skipped in a search: their counts are their parents')
    flat = fast.FlatTree(cpu_tree_from_system(System(load_machine("2s2n16c2t"))))
    assert flat.only_child == (False, False, True, False, False, True, False)


@pytest.mark.parametrize("machine", MACHINE_FILES[:3])
def test_a_containers_placement_found_alone_is_the_one_the_map_of_every_container_holds(
        machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    m = _machine(machine)
    rng = random.Random(f"lone/{machine}")
    cpus = System(m).cpu_set.size()
    doc = _policy_doc(rng, cpus)
    names = [bt["name"] for bt in doc["spec"]["balloonTypes"]]
    monkeypatch.setattr(fast, "ENABLED", True)
    config = KubeletConfiguration.from_dict({"kubeReserved": {"cpu": "1", "memory": "1Gi"}})
    try:
        rn = RuntimeNode(m, decode_policy(doc, "policy.yaml"), config)
    except (PolicyError, InputError):
        pytest.skip("a policy that does not start")
    assert rn.resmgr is not None
    policy = rn.resmgr.policy
    assert isinstance(policy, fast.FastBalloonsPolicy)
    asked = 0
    for kind, arg in _steps(rng, 40, names):
        if kind == "create":
            rn.create_pod(arg)
        else:
            rn.delete_pod(arg)
        cached = list(rn.resmgr.cache.containers.values())
        alone = [policy.container_placement(c) for c in cached]
        assert policy.placements is None   # found alone: no map made
        every = policy._placements()
        assert alone == [every.get(c.id) for c in cached]
        assert [policy.container_placement(c) for c in cached] == alone   # now from the map
        policy.placements = None
        asked += len(cached)
    assert asked
