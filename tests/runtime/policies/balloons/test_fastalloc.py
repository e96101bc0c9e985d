"""The balloons policy's allocation fast path (``kubetwin.runtime.policies.balloons.fastalloc``)
answers as the plain policy: whole runs of random balloon types and random pods (with and
without annotations, some with memory limits large enough to overcommit a memory node) on the
conformance machines and on simulate's machine with the Helm chart's policy — every NRI event
and reply (adjustments, updates in order), container, pool and export after every step — with
the switch on, against the plain policy and against the fast policy with the switch off."""

from __future__ import annotations

import random
from typing import Any, Iterator

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.policies.balloons import fast, fastalloc
from kubetwin.runtime.sysfs import System

from .test_fast import MACHINE_FILES, NAMESPACES, _machine, _policy_doc, _run


def _pod(rng: random.Random, k: int, type_names: list[str], plain_share: float) -> Any:
    """A random pod; with probability ``plain_share`` without annotations (the fast path's case)."""
    qos = rng.choice(("guaranteed", "guaranteed", "burstable", "burstable", "besteffort"))
    containers = []
    for j in range(rng.choice((1, 1, 1, 2, 3))):
        res: dict[str, Any] = {}
        if qos != "besteffort":
            cpu = rng.choice(("100m", "250m", "500m", "1", "1", "2", "3", "4"))
            res = {"requests": {"cpu": cpu, "memory": rng.choice(("64Mi", "256Mi", "1Gi", "4Gi", "24Gi"))}}
            if qos == "guaranteed":
                res["limits"] = dict(res["requests"])
            elif rng.random() < 0.3:
                res["limits"] = {"cpu": "4", "memory": rng.choice(("32Gi", "64Gi"))}
        containers.append({"name": f"c{j}", "resources": res})
    meta: dict[str, Any] = {"name": f"p{k}", "uid": f"uid-{k}", "namespace": rng.choice(NAMESPACES)}
    if rng.random() < 0.4:
        meta["labels"] = {"app": rng.choice(("a", "b")), "tier": rng.choice(("web", "db"))}
    if rng.random() >= plain_share:
        ann: dict[str, str] = {}
        if rng.random() < 0.4:
            ann["balloon.balloons.resource-policy.nri.io"] = rng.choice(type_names + ["default"])
        if rng.random() < 0.3:
            ann["hide-hyperthreads.resource-policy.nri.io"] = rng.choice(("true", "false"))
        if rng.random() < 0.15:
            ann["memory-type.resource-policy.nri.io"] = rng.choice(("dram", "pmem"))
        if rng.random() < 0.08:
            ann["memory.preserve.resource-policy.nri.io"] = rng.choice(("true", "false"))
        ann["example.com/other"] = "x"
        meta["annotations"] = ann
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": containers}})


def _steps(rng: random.Random, count: int, type_names: list[str], plain_share: float = 0.8
           ) -> Iterator[tuple[str, Any]]:
    live: list[str] = []
    for k in range(count):
        if live and rng.random() < 0.3:
            yield "delete", live.pop(rng.randrange(len(live)))
        pod = _pod(rng, k, type_names, plain_share)
        live.append(pod.key)
        yield "create", pod


def _compare(m: Any, doc: dict[str, Any], steps: list[tuple[str, Any]], isolated: CPUSet,
             monkeypatch: pytest.MonkeyPatch) -> list[str]:
    plain = _run(m, doc, steps, isolated, False, monkeypatch)
    monkeypatch.setattr(fastalloc, "ENABLED", False)
    hooks_only = _run(m, doc, steps, isolated, True, monkeypatch)
    monkeypatch.setattr(fastalloc, "ENABLED", True)
    quick = _run(m, doc, steps, isolated, True, monkeypatch)
    assert len(quick) == len(plain) == len(hooks_only)
    for i, (a, b, q) in enumerate(zip(plain, hooks_only, quick)):
        where = f"step {i}: {steps[i][0]} {getattr(steps[i][1], 'key', steps[i][1])}"
        assert q == a, where
        assert q == b, where
    return quick


@pytest.mark.parametrize("machine", MACHINE_FILES)
@pytest.mark.parametrize("seed", range(4))
def test_random_balloon_types_and_pods_allocate_as_the_plain_policy(machine: str, seed: int,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    m = _machine(machine)
    rng = random.Random(f"fastalloc/{machine}/{seed}")
    cpus = System(m).cpu_set.size()
    doc = _policy_doc(rng, cpus)
    names = [bt["name"] for bt in doc["spec"]["balloonTypes"]]
    isolated = CPUSet([cpus - 1]) if rng.random() < 0.3 else CPUSet()
    _compare(m, doc, list(_steps(rng, 45, names)), isolated, monkeypatch)


@pytest.mark.parametrize("seed", range(3))
def test_the_charts_policy_on_simulates_machine_allocates_as_the_plain_policy(seed: int,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # simulate's case: Guaranteed pods in balloons of their own, the others in two balloons
    # sharing the idle CPUs of their package, pods without annotations
    from kubetwin.runtime.config import load_policy

    m = load_machine("2s2n16c2t")
    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy", "metadata": {"name": "default"},
           "spec": load_policy("balloons").spec}
    steps = list(_steps(random.Random(f"chart/{seed}"), 70, [], plain_share=0.95))
    quick = _compare(m, doc, steps, CPUSet(), monkeypatch)
    assert any('"mems"' in s for s in quick)


@pytest.mark.parametrize("machine", MACHINE_FILES[:2])
def test_memory_overcommitted_by_new_containers_is_resolved_as_the_plain_policy(machine: str,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # large memory limits: the node's limits soon exceed a memory node, and new containers'
    # offers go the plain way (the allocator moves other containers' zones)
    from kubetwin.runtime.config import load_policy

    m = _machine(machine)
    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy", "metadata": {"name": "default"},
           "spec": load_policy("balloons").spec}
    rng = random.Random(f"overcommit/{machine}")
    steps: list[tuple[str, Any]] = []
    for k in range(30):
        mem = rng.choice(("8Gi", "16Gi", "32Gi"))
        res = {"requests": {"cpu": "1", "memory": mem}, "limits": {"cpu": "1", "memory": mem}}
        pod = pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                             "metadata": {"name": f"m{k}", "uid": f"m{k}", "namespace": "default"},
                             "spec": {"containers": [{"name": "c", "resources": res}]}})
        steps.append(("create", pod))
    _compare(m, doc, steps, CPUSet(), monkeypatch)


def test_the_fast_path_takes_pods_without_annotations_only() -> None:
    from kubetwin.kubelet.admission import NodeAdmission  # noqa: F401 - the runtime node's kubelet
    from kubetwin.model.kubelet_config import KubeletConfiguration
    from kubetwin.runtime.config import load_policy
    from kubetwin.runtime.node import RuntimeNode

    rn = RuntimeNode(load_machine("2s2n16c2t"), load_policy("balloons"),
                     KubeletConfiguration.from_dict({"kubeReserved": {"cpu": "1", "memory": "1Gi"}}))
    assert rn.resmgr is not None
    policy = rn.resmgr.policy
    assert isinstance(policy, fast.FastBalloonsPolicy)
    for name, ann in (("bare", None), ("annotated", {"example.com/x": "y"})):
        meta: dict[str, Any] = {"name": name, "uid": name, "namespace": "default"}
        if ann:
            meta["annotations"] = ann
        pod = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                             "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})
        assert rn.create_pod(pod) is None
    cache = rn.resmgr.cache
    taken = {cache.pods[c.pod_id].name: fastalloc.handles(policy, c) for c in cache.containers.values()}
    assert taken == {"bare": True, "annotated": False}


def test_new_containers_memory_zone_is_the_plain_offers_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    # the allocator after a fast offer: the same requests, zones, users and version as after
    # the plain GetOffer and Commit
    from kubetwin.model.kubelet_config import KubeletConfiguration
    from kubetwin.runtime.config import load_policy
    from kubetwin.runtime.node import RuntimeNode

    def allocator_after(enabled: bool) -> Any:
        monkeypatch.setattr(fastalloc, "ENABLED", enabled)
        rn = RuntimeNode(load_machine("2s2n16c2t"), load_policy("balloons"),
                         KubeletConfiguration.from_dict({"kubeReserved": {"cpu": "1", "memory": "1Gi"}}))
        for k in range(6):
            res = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
            pod = pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                                 "metadata": {"name": f"g{k}", "uid": f"g{k}", "namespace": "default"},
                                 "spec": {"containers": [{"name": "c", "resources": res}]}})
            assert rn.create_pod(pod) is None
        assert rn.resmgr is not None
        a = rn.resmgr.policy.mem_allocator
        return ([(rid, r.zone, r.limit, r.types, r.priority) for rid, r in a.requests.items()],
                [(z, sorted(zone.users)) for z, zone in a.zones.items()], dict(a.users), a.version, a.overcommits)

    assert allocator_after(True) == allocator_after(False)


@pytest.mark.parametrize("machine", MACHINE_FILES)
def test_a_requests_resolution_is_the_allocators_for_every_affinity(machine: str) -> None:
    # types, initial zone, the zone's types and capacity: what GetOffer resolves a request of
    # no memory types to, kept per affinity on the machine (failures as None)
    from kubetwin.runtime.libmem import Allocator, MemoryError_, Request

    alloc = Allocator(System(_machine(machine)))
    for affinity in range(1 << len(alloc.nodes)):
        req = Request("r", "", 0, affinity)
        try:
            alloc._validate_request(req)
            alloc._find_initial_zone(req)
            alloc._ensure_normal_memory(req)
            want: Any = (req.types, req.zone, alloc._zone_type(req.zone), alloc._zone_capacity(req.zone))
        except MemoryError_:
            want = None
        assert fastalloc._resolved(alloc, affinity) == want, affinity
        assert fastalloc._resolved(alloc, affinity) == want, affinity   # the remembered answer


def test_the_smallest_normal_memory_node_bounds_the_fast_offers() -> None:
    from kubetwin.runtime.libmem import Allocator

    alloc = Allocator(System(load_machine("2s2n16c2t")))
    sizes = [n.capacity for n in alloc.nodes.values() if n.has_memory and n.normal]
    assert fastalloc._smallest_normal(alloc) == min(sizes)


@pytest.mark.parametrize("seed", range(3))
def test_an_inflated_shared_balloon_is_pinned_once_where_the_pins_write_the_same(seed: int,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # the chart's shared balloons: a Burstable pod joining one inflates it, its shared idle CPUs
    # shrink, and the plain flow pins its containers for that, at the end of the resize and for
    # the new container; with PIN_ONCE the last alone — the same NRI replies, fewer pins
    from kubetwin.runtime.config import load_policy

    m = load_machine("2s2n16c2t")
    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy", "metadata": {"name": "default"},
           "spec": load_policy("balloons").spec}
    steps = list(_steps(random.Random(f"pin-once/{seed}"), 60, [], plain_share=1.0))
    pinned: list[int] = []
    pin = fastalloc.update_pinning

    def counting(p: Any, blns: list[Any]) -> None:
        pinned.append(sum(b.container_count() for b in blns))
        pin(p, blns)

    monkeypatch.setattr(fastalloc, "update_pinning", counting)
    runs, pins = [], []
    for once in (False, True):
        monkeypatch.setattr(fastalloc, "PIN_ONCE", once)
        pinned.clear()
        runs.append(_run(m, doc, steps, CPUSet(), True, monkeypatch))
        pins.append(sum(pinned))
    assert runs[1] == runs[0]
    assert pins[1] < pins[0]


@pytest.mark.parametrize("seed", range(3))
def test_an_inflate_of_exactly_the_chosen_cpus_takes_them_without_the_cpu_allocator(seed: int,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # a new Guaranteed balloon inflated to a branch of the tree with exactly as many free CPUs
    # as it needs: AllocateCpus would answer those CPUs themselves (WHOLE_BRANCH)
    from kubetwin.runtime.config import load_policy
    from kubetwin.runtime.cpuallocator import CPUAllocator

    m = load_machine("2s2n16c2t")
    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy", "metadata": {"name": "default"},
           "spec": load_policy("balloons").spec}
    steps = list(_steps(random.Random(f"whole/{seed}"), 60, [], plain_share=1.0))
    asked: list[int] = []
    allocate = CPUAllocator.allocate_cpus

    def counting(self: Any, frm: CPUSet, cnt: int, prefer: int = 0) -> Any:
        asked.append(cnt)
        return allocate(self, frm, cnt, prefer)

    monkeypatch.setattr(CPUAllocator, "allocate_cpus", counting)
    runs, counts = [], []
    for whole in (False, True):
        monkeypatch.setattr(fastalloc, "WHOLE_BRANCH", whole)
        monkeypatch.setattr(fast, "MAX_ANSWERS", 0)   # no remembered answers: every ask reaches the allocator
        asked.clear()
        runs.append(_run(m, doc, steps, CPUSet(), True, monkeypatch))
        counts.append(len(asked))
    assert runs[1] == runs[0]
    assert counts[1] < counts[0]


@pytest.mark.parametrize("machine", MACHINE_FILES[:3])
def test_random_balloon_types_and_pods_allocate_the_same_with_and_without_whole_branches(
        machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    m = _machine(machine)
    rng = random.Random(f"whole-random/{machine}")
    cpus = System(m).cpu_set.size()
    doc = _policy_doc(rng, cpus)
    names = [bt["name"] for bt in doc["spec"]["balloonTypes"]]
    steps = list(_steps(rng, 45, names))
    runs = []
    for whole in (False, True):
        monkeypatch.setattr(fastalloc, "WHOLE_BRANCH", whole)
        runs.append(_run(m, doc, steps, CPUSet(), True, monkeypatch))
    assert runs[1] == runs[0]


def test_only_the_plain_cpu_allocator_is_taken_to_answer_a_whole_branch_with_itself() -> None:
    from kubetwin.runtime.cpuallocator import CPUAllocator

    class Other(CPUAllocator):
        pass

    system = System(load_machine("2s2n16c2t"))
    plain, other = CPUAllocator(system), Other(system)
    assert fastalloc._asks_plain(plain)
    assert fastalloc._asks_plain(fast.RememberingCPUAllocator(plain))
    assert not fastalloc._asks_plain(other)
    assert not fastalloc._asks_plain(fast.RememberingCPUAllocator(other))
    # what the plain allocator answers for a set of exactly the CPUs asked
    frm = CPUSet([3, 4, 9])
    assert plain.allocate_cpus(frm, 3)[0] == frm
