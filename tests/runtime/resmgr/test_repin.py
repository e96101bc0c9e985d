"""Re-pinning the containers on a node at each creation (:data:`kubetwin.runtime.resmgr.cache.SAME_SKIPPED`):
a ``Set*`` call whose value the cached container and the runtime's record of it hold already, nothing pending
for it, is skipped while the runtime lends its records for a creation
(:meth:`kubetwin.runtime.resmgr.manager.ResourceManager.create_container_held`, called by
:mod:`kubetwin.runtime.fastpod`). Random create/delete sequences of both policies give the same records,
messages, caches, topology and rejections with the skip on and off; one behaviour per test below."""

from __future__ import annotations

from typing import Any

import pytest

from kubetwin.runtime.nri.api import (
    Container,
    LinuxContainer,
    LinuxCPU,
    LinuxMemory,
    LinuxPodSandbox,
    LinuxResources,
    PodSandbox,
    to_json,
)
from kubetwin.runtime.resmgr import cache
from kubetwin.runtime.resmgr.manager import ResourceManager

from .. import fastpath_runs as runs
from ..test_fastpod import RDT_ANNOTATIONS, _node, _steps, _trace


@pytest.mark.parametrize("machine", runs.MACHINES[:2])
@pytest.mark.parametrize("policy", ("topology-aware", "balloons", "classes"))
def test_skipped_unchanged_values_give_the_plain_records_messages_caches_topology_and_rejections(
        machine: str, policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    annotations = {"balloons": runs.BALLOONS_ANNOTATIONS, "classes": RDT_ANNOTATIONS}.get(
        policy, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    steps = _steps(47, annotations, 70)
    counts: list[int] = []
    pending = ResourceManager._pending_updates

    def counted(self: ResourceManager, skip: str | None = None) -> Any:
        out = pending(self, skip)
        counts.append(len(out))
        return out

    monkeypatch.setattr(ResourceManager, "_pending_updates", counted)
    skipped = _trace(machine, policy, steps)
    fewer = sum(counts)
    counts.clear()
    monkeypatch.setattr(cache, "SAME_SKIPPED", False)
    assert skipped == _trace(machine, policy, steps)
    if policy != "classes":   # classes: records never lent
        assert fewer < sum(counts), "no unchanged value was skipped"


# --- one behaviour per test ---------------------------------------------------------------------------
class _Record:
    """The runtime's record of a container, as :meth:`.node.RuntimeNode._apply_updates` reads it."""

    def __init__(self, ctr: Container, state: str = "running"):
        self.ctr = ctr
        self.state = state


def _running(cpus: str = "0-3", mems: str = "0", shares: int = 512) -> tuple[cache.Cache, cache.CachedContainer, Container]:
    """A cache with one running container and the runtime's own message of it, holding the same values."""
    c = cache.Cache(64 << 30)
    c.insert_pod(PodSandbox(id="pod", name="p", linux=LinuxPodSandbox(cgroup_parent="/kubepods/burstable/pod1")))

    def message() -> Container:
        res = LinuxResources(LinuxMemory(limit=1 << 30), LinuxCPU(shares=shares, cpus=cpus, mems=mems))
        return Container(id="ctr", pod_sandbox_id="pod", name="c", linux=LinuxContainer(resources=res))

    cc = c.insert_container(message(), cache.RUNNING)
    return c, cc, message()


@pytest.mark.parametrize("name, value", [("set_cpuset_cpus", "0-3"), ("set_cpuset_mems", "0"), ("set_cpu_shares", 512)])
def test_a_value_the_container_and_its_runtime_record_hold_makes_no_update(name: str, value: Any) -> None:
    c, cc, runtime = _running()
    c.runtime = {"ctr": _Record(runtime)}
    getattr(cc, name)(value)
    assert cc.request is None and not cc.pending and c.pending_containers() == []


def test_a_changed_value_makes_its_update_with_the_records_lent() -> None:
    c, cc, runtime = _running()
    c.runtime = {"ctr": _Record(runtime)}
    cc.set_cpuset_cpus("0-7")
    assert c.pending_containers() == [cc]
    u = cc.take_pending_update()
    assert u is not None and u.linux is not None and u.linux.resources is not None
    assert u.linux.resources.cpu == LinuxCPU(cpus="0-7") and u.linux.resources.memory == LinuxMemory()
    assert cc.cpuset_cpus() == "0-7"


def test_a_value_the_runtime_record_does_not_hold_makes_its_update() -> None:
    c, cc, runtime = _running()
    assert runtime.linux is not None and runtime.linux.resources is not None and runtime.linux.resources.cpu
    runtime.linux.resources.cpu.cpus = "4-7"   # the runtime never got the cache's value
    c.runtime = {"ctr": _Record(runtime)}
    cc.set_cpuset_cpus("0-3")
    assert c.pending_containers() == [cc]


def test_a_container_the_runtime_has_no_record_of_gets_its_update() -> None:
    c, cc, _ = _running()
    c.runtime = {}
    cc.set_cpuset_cpus("0-3")
    assert c.pending_containers() == [cc]


def test_without_lent_records_every_set_call_makes_its_update() -> None:
    c, cc, _ = _running()
    cc.set_cpuset_cpus("0-3")
    u = cc.take_pending_update()
    assert u is not None and to_json(u)["linux"]["resources"]["cpu"] == {"cpus": "0-3"}


def test_a_container_with_a_pending_request_is_set_as_always() -> None:
    c, cc, runtime = _running()
    c.runtime = {"ctr": _Record(runtime)}
    cc.set_cpuset_cpus("0-7")
    cc.set_cpuset_cpus("0-3")   # back to what the runtime holds: the pending update carries it
    u = cc.take_pending_update()
    assert u is not None and u.linux is not None and u.linux.resources is not None
    assert u.linux.resources.cpu is not None and u.linux.resources.cpu.cpus == "0-3"


def test_a_container_being_created_gets_its_adjustment() -> None:
    c, cc, runtime = _running()
    cc.state = cache.CREATING
    c.runtime = {"ctr": _Record(runtime)}
    cc.set_cpuset_cpus("0-3")
    assert cc.take_pending_adjustment() is not None


@pytest.mark.parametrize("policy, lent", [("topology-aware", True), ("classes", False)])
def test_records_are_lent_for_one_creation_and_not_when_updates_get_default_classes(
        policy: str, lent: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    rn = _node(runs.MACHINES[0], policy)
    rm = rn.resmgr
    assert rm is not None
    seen: list[Any] = []
    allocate = rm.policy.allocate_resources

    def spy(c: cache.CachedContainer) -> None:
        seen.append(rm.cache.runtime)
        allocate(c)

    monkeypatch.setattr(rm.policy, "allocate_resources", spy)
    steps = _steps(5, [{}], 3)
    shapes: dict[str, Any] = {}
    from ..test_fastpod import _create

    for op, pod in steps:
        if op == "create":
            _create(rn, pod, shapes)
    assert seen and all((s is rn.by_container) if lent else (s is None) for s in seen)
    assert rm.cache.runtime is None


def test_records_are_not_lent_with_the_switch_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "SAME_SKIPPED", False)
    test_records_are_lent_for_one_creation_and_not_when_updates_get_default_classes("classes", False, monkeypatch)


# --- balloons' own pinning (fastalloc.update_pinning writes its requests itself) ----------------------
def _balloons_node(count: int = 6) -> tuple[Any, Any]:
    """A balloons node after ``count`` creations of pods without annotations (the fast allocation's case)."""
    rn = _node(runs.MACHINES[0], "balloons")
    shapes: dict[str, Any] = {}
    from ..test_fastpod import _create

    for op, pod in _steps(11, [{}], count):
        if op == "create":
            _create(rn, pod, shapes)
    rm = rn.resmgr
    assert rm is not None and not rm.cache.pending
    return rn, rm.policy


def _pinned(p: Any) -> list[Any]:
    """The balloons holding containers."""
    got = [b for b in p.balloons if b.pod_ids]
    assert got
    return got


def _requests(p: Any) -> dict[str, Any]:
    """The pending requests by container id, taken."""
    out = {c.id: to_json(c.request) for c in p.cache.pending_containers()}
    for c in p.cache.containers.values():
        c.request, c.pending = None, False
    return out


def test_balloons_pinning_of_containers_holding_their_values_makes_no_update() -> None:
    from kubetwin.runtime.policies.balloons import fastalloc

    rn, p = _balloons_node()
    p.cache.runtime = rn.by_container
    try:
        fastalloc.update_pinning(p, _pinned(p))
    finally:
        p.cache.runtime = None
    assert _requests(p) == {}
    fastalloc.update_pinning(p, _pinned(p))   # no records lent: every container its update, as upstream
    assert len(_requests(p)) == sum(len(ids) for b in _pinned(p) for ids in b.pod_ids.values())


def test_balloons_pinning_of_a_value_the_runtime_record_does_not_hold_makes_the_plain_update() -> None:
    from kubetwin.runtime.policies.balloons import fastalloc

    rn, p = _balloons_node()
    fastalloc.update_pinning(p, _pinned(p))
    plain = _requests(p)
    cid = next(iter(plain))
    record = rn.by_container[cid]
    record.ctr.linux.resources.cpu.cpus = "0"   # the runtime never got the cache's value
    p.cache.runtime = rn.by_container
    try:
        fastalloc.update_pinning(p, _pinned(p))
    finally:
        p.cache.runtime = None
    assert _requests(p) == {cid: plain[cid]}


def test_balloons_pinning_skips_nothing_with_the_switch_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubetwin.runtime.policies.balloons import fastalloc

    rn, p = _balloons_node()
    monkeypatch.setattr(cache, "SAME_SKIPPED", False)
    p.cache.runtime = rn.by_container
    try:
        fastalloc.update_pinning(p, _pinned(p))
    finally:
        p.cache.runtime = None
    assert len(_requests(p)) == sum(len(ids) for b in _pinned(p) for ids in b.pod_ids.values())


@pytest.mark.parametrize("state", [cache.CREATING, cache.RUNNING])
def test_a_pending_cpu_request_made_in_one_step_is_the_one_pending_and_res_make(
        state: str, monkeypatch: pytest.MonkeyPatch) -> None:
    made = []
    for quick in (True, False):
        monkeypatch.setattr(cache, "QUICK_REQUESTS", quick)
        c, cc, _ = _running()
        cc.state = state
        cpu = cc._pending_cpu()
        cpu.cpus = "0-3"
        assert c.pending_containers() == [cc] and cc.pending
        req = cc.request
        assert req is not None and req.linux is not None and req.linux.resources is not None
        assert req.linux.resources.cpu is cpu
        made.append((type(req), type(req.linux), to_json(req)))
    assert made[0] == made[1]
