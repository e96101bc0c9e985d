"""The resource manager's cache: its kept estimates (a fast path) answer as the estimate itself,
and a cached container's identity is its message's."""

from __future__ import annotations

import random

import pytest

from kubetwin.runtime.kubernetes import estimate_resource_requirements
from kubetwin.runtime.nri.api import (
    Container,
    LinuxContainer,
    LinuxCPU,
    LinuxMemory,
    LinuxPodSandbox,
    LinuxResources,
    PodSandbox,
)
from kubetwin.runtime.resmgr import cache


def _container(rng: random.Random, k: int) -> Container:
    return Container(id=f"c{k}", pod_sandbox_id="pod", name=f"n{k}", linux=LinuxContainer(
        oom_score_adj=rng.choice([None, -997, 1000, 2, 500, 999]),
        resources=LinuxResources(cpu=LinuxCPU(shares=rng.choice([None, 2, 102, 1024, 4096]),
                                              quota=rng.choice([None, 0, 50000, 200000]),
                                              period=rng.choice([None, 100000])),
                                 memory=LinuxMemory(limit=rng.choice([None, 0, 1 << 30, 3 << 28])))))


def _requirements(parent: str) -> list[object]:
    rng = random.Random(parent)
    c = cache.Cache(64 << 30)
    c.insert_pod(PodSandbox(id="pod", name="p", linux=LinuxPodSandbox(cgroup_parent=parent)))
    return [c.insert_container(_container(rng, k)).requirements for k in range(300)]


@pytest.mark.parametrize("parent", ["/kubepods/pod1", "/kubepods/burstable/pod1", "/kubepods/besteffort/pod1"])
def test_kept_estimates_are_the_estimates_of_every_container(parent: str, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = _requirements(parent)
    monkeypatch.setattr(cache, "ESTIMATES_KEPT", False)
    assert kept == _requirements(parent)
    qos = {"/kubepods/pod1": "Guaranteed", "/kubepods/burstable/pod1": "Burstable"}.get(parent, "BestEffort")
    rng = random.Random(parent)
    for got in kept[:50]:
        r = _container(rng, 0)
        res = r.resources()
        assert got == estimate_resource_requirements(res.cpu.shares or 0, res.cpu.quota or 0, res.cpu.period or 0,
                                                     res.memory.limit or 0, qos, r.linux.oom_score_adj or 0, 64 << 30)


def test_a_cached_container_and_pod_carry_their_messages_identity() -> None:
    c = cache.Cache(1 << 30)
    pod = c.insert_pod(PodSandbox(id="pod", name="p", uid="u", namespace="ns"))
    got = c.insert_container(Container(id="c1", pod_sandbox_id="pod", name="main"))
    assert (got.id, got.pod_id, got.name) == ("c1", "pod", "main")
    assert (pod.id, pod.uid, pod.name, pod.namespace) == ("pod", "u", "p", "ns")
    assert got.pod is pod and got.namespace == "ns"


# --- the Set* calls reaching both resources in one step (a fast path) ------------------------------
def _set_calls(seed: int) -> str:
    """Random ``Set*`` calls on cached containers of random shapes (no ``linux``, no resources,
    no memory or CPU part, a request already pending or not, being created or running): every
    pending request and every container message as JSON."""
    from kubetwin.runtime.nri.api import ContainerUpdate, LinuxContainerUpdate, to_json

    rng = random.Random(seed)
    c = cache.Cache(64 << 30)
    c.insert_pod(PodSandbox(id="pod", name="p", linux=LinuxPodSandbox(cgroup_parent="/kubepods/pod1")))
    out = []
    for k in range(60):
        ctr = _container(rng, k)
        shape = rng.randrange(5)
        if shape == 1:
            ctr.linux = None
        elif shape == 2:
            assert ctr.linux is not None
            ctr.linux.resources = None
        elif shape == 3:
            assert ctr.linux is not None and ctr.linux.resources is not None
            ctr.linux.resources.memory = None
        elif shape == 4:
            assert ctr.linux is not None and ctr.linux.resources is not None
            ctr.linux.resources.cpu = None
        cc = c.insert_container(ctr, rng.choice([cache.CREATING, cache.RUNNING]))
        if rng.random() < 0.3:
            cc.request = ContainerUpdate(cc.id, rng.choice([None, LinuxContainerUpdate(),
                                                            LinuxContainerUpdate(LinuxResources())]))
        for _ in range(rng.randrange(1, 6)):
            name = rng.choice(["set_cpu_shares", "set_cpu_quota", "set_cpu_period", "set_cpuset_cpus",
                               "set_cpuset_mems", "set_memory_limit", "set_memory_swap"])
            value = rng.choice(["0-3", "1"]) if name.startswith("set_cpuset") else rng.choice([0, 2, 1 << 30])
            getattr(cc, name)(value)
        req = cc.take_pending_adjustment() if cc.state == cache.CREATING else cc.take_pending_update()
        out.append([to_json(ctr), None if req is None else to_json(req), type(req).__name__])
    return repr(out)


@pytest.mark.parametrize("seed", range(6))
def test_the_quick_set_calls_make_the_plain_requests_and_container_resources(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    quick = _set_calls(seed)
    monkeypatch.setattr(cache, "QUICK_REQUESTS", False)
    assert quick == _set_calls(seed)
    assert "'cpus'" in quick and "'ContainerUpdate'" in quick and "'ContainerAdjustment'" in quick
