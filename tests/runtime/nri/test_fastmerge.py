"""The merge of a lone plugin's reply by its writes alone (a fast path) against NRI's plain
merge with field owners: the same container, the same updates, the same errors — for random
replies of every shape (plain ones, and the ones the fast path hands to the plain merge), and
for whole nodes (both nri-plugins policies, Python plugins alone and beside them, conflicting
plugins)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime import fastcreate
from kubetwin.runtime.node import RuntimeNode
from kubetwin.runtime.nri import api, fastmerge, message_copy
from kubetwin.runtime.nri.adaptation import Adaptation, PluginError
from kubetwin.runtime.nri.api import (
    Container,
    ContainerAdjustment,
    ContainerUpdate,
    Hook,
    HugepageLimit,
    KeyValue,
    LinuxContainer,
    LinuxContainerUpdate,
    LinuxCPU,
    LinuxDeviceCgroup,
    LinuxMemory,
    LinuxPids,
    LinuxResources,
    LinuxScheduler,
    Mount,
    PodSandbox,
    POSIXRlimit,
    to_json,
)
from kubetwin.runtime.nri.stub import Plugin
from kubetwin.runtime.nrt import export
from kubetwin.runtime.resmgr import cache

from .. import fastpath_runs as runs


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastmerge, "ENABLED", False)
    monkeypatch.setattr(message_copy, "SHARED_CONTAINER", False)
    monkeypatch.setattr(cache, "ESTIMATES_KEPT", False)
    monkeypatch.setattr(cache, "QUICK_REQUESTS", False)
    monkeypatch.setattr(fastcreate, "ENABLED", False)


# --- random replies of one plugin ----------------------------------------------------------------
def _resources(rng: random.Random, update: bool) -> LinuxResources:
    res = LinuxResources()
    if rng.random() < 0.8:
        res.cpu = LinuxCPU(shares=rng.choice([None, 0, 512]), quota=rng.choice([None, 50000]),
                           cpus=rng.choice(["", "0-3", "4"]), mems=rng.choice(["", "0", "1"]))
    if rng.random() < 0.8:
        res.memory = LinuxMemory(limit=rng.choice([None, 0, 1 << 30]), swap=rng.choice([None, 5]))
    for _ in range(rng.choice([0, 0, 1, 2])):
        res.hugepage_limits.append(HugepageLimit(rng.choice(["2MB", "1GB"]), rng.randrange(3) << 21))
    if rng.random() < 0.2:
        res.unified = {"memory.high": "max"}
    if rng.random() < 0.2:
        res.rdt_class = rng.choice(["", "gold"])
    if rng.random() < 0.2:
        res.blockio_class = "slow"
    if rng.random() < 0.1:
        res.pids = LinuxPids(rng.choice([0, 100]))
    if rng.random() < 0.1:
        res.devices.append(LinuxDeviceCgroup(allow=True, type="c", major=1, minor=3, access="rw"))
    if update and rng.random() < 0.9:
        res.ensure()
    return res


def _adjustment(rng: random.Random) -> ContainerAdjustment | None:
    if rng.random() < 0.1:
        return None
    adj = ContainerAdjustment()
    for _ in range(rng.choice([0, 1, 1, 2])):
        adj.add_mount(Mount(destination=rng.choice(["/data", "/cache", "-/old"]), source="/src", type="bind"))
    if rng.random() < 0.8:
        adj.ensure_linux().resources = _resources(rng, update=False)
    if rng.random() < 0.2:
        adj.ensure_linux().cgroups_path = rng.choice(["", "/custom"])
    if rng.random() < 0.2:
        adj.set_linux_oom_score_adj(rng.choice([0, -500]))
    if rng.random() < 0.1:
        adj.set_linux_scheduler(LinuxScheduler(policy="SCHED_BATCH", nice=3))
    # shapes the fast path hands to the plain merge
    if rng.random() < 0.1:
        adj.add_annotation(rng.choice(["a", "b"]), "1")
    if rng.random() < 0.05:
        adj.remove_annotation("keep")
    if rng.random() < 0.1:
        adj.env.append(KeyValue("FOO", "1"))
    if rng.random() < 0.05:
        adj.set_args(["", "sleep"])
    if rng.random() < 0.05:
        adj.hooks = api.Hooks(prestart=[Hook(path="/bin/true")])
    if rng.random() < 0.05:
        adj.rlimits.append(POSIXRlimit("RLIMIT_NOFILE", 10, 10))
    if rng.random() < 0.05:
        adj.ensure_linux().sysctl = {"net.core.somaxconn": "1"}
    return adj


def _updates(rng: random.Random, creating: str | None) -> list[ContainerUpdate]:
    ids = ["other-1", "other-2"] + ([creating] if creating and rng.random() < 0.1 else [])
    out = []
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        u = ContainerUpdate(rng.choice(ids), ignore_failure=rng.random() < 0.2)
        if rng.random() < 0.9:
            u.linux = LinuxContainerUpdate(_resources(rng, update=True) if rng.random() < 0.95 else None)
        out.append(u)
    return out


class _Scripted(Plugin):
    """Replies what the seed draws; records what it was sent."""

    name, index = "scripted", "50"

    def __init__(self, seed: int, creating: bool):
        self.rng = random.Random(seed)
        self.creating = creating
        self.seen: list[Any] = []

    def create_container(self, pod: PodSandbox, container: Container) -> Any:
        self.seen.append(to_json(container))
        if self.rng.random() < 0.03:
            raise ValueError("refused")
        adj = _adjustment(self.rng)
        updates = _updates(self.rng, container.id)
        return adj if not updates and self.rng.random() < 0.5 else (adj, updates)

    def stop_container(self, pod: PodSandbox, container: Container) -> Any:
        self.seen.append(to_json(container))
        return _updates(self.rng, None)


def _container(rng: random.Random) -> Container:
    c = Container(id="created", pod_sandbox_id="pod", name="c", annotations={"keep": "1"},
                  mounts=[Mount(destination=rng.choice(["/data", "/etc"]))] if rng.random() < 0.7 else [],
                  env=["FOO=0"] if rng.random() < 0.5 else [],
                  linux=LinuxContainer(resources=LinuxResources(cpu=LinuxCPU(shares=2, cpus="0-7"))) if rng.random() < 0.8
                  else None)
    if rng.random() < 0.3:
        c.resources().hugepage_limits.append(HugepageLimit("2MB", 0))
    return c


def _create(seed: int) -> tuple[str, str, Any]:
    r = Adaptation(traced=False)
    p = _Scripted(seed, creating=True)
    r.register(p)
    c = _container(random.Random(seed))
    try:
        updates = r.create_container_updates(PodSandbox(id="pod", name="p"), c)
        out: Any = [to_json(u) for u in updates]
    except PluginError as exc:
        out = str(exc)
    return json.dumps(to_json(c), sort_keys=True), json.dumps(out, sort_keys=True), p.seen


@pytest.mark.parametrize("seed", range(400))
def test_a_lone_plugins_creation_reply_gives_the_plain_merges_container_updates_and_errors(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _create(seed)
    _plain(monkeypatch)
    assert fast == _create(seed)


def test_the_random_replies_take_both_paths_and_meet_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = {"fast": 0, "plain": 0}
    plain_adjustment = fastmerge.plain_adjustment

    def counted(adjust: Any) -> bool:
        ok = plain_adjustment(adjust)
        taken["fast" if ok else "plain"] += 1
        return ok

    monkeypatch.setattr(fastmerge, "plain_adjustment", counted)
    errors = sum(_create(seed)[1].startswith('"') for seed in range(400))
    assert taken["fast"] > 100 and taken["plain"] > 50
    assert errors > 10


def _stop(seed: int) -> tuple[str, Any]:
    r = Adaptation(traced=False)
    p = _Scripted(seed, creating=False)
    r.register(p)
    try:
        out: Any = [to_json(u) for u in r.stop_container(PodSandbox(id="pod", name="p"), _container(random.Random(seed)))]
    except PluginError as exc:
        out = str(exc)
    return json.dumps(out, sort_keys=True), p.seen


@pytest.mark.parametrize("seed", range(200))
def test_a_lone_plugins_stop_updates_are_the_plain_merges_updates(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _stop(seed)
    _plain(monkeypatch)
    assert fast == _stop(seed)


def test_a_reply_setting_one_key_twice_fails_as_the_plain_merge_fails() -> None:
    class Twice(Plugin):
        name, index = "twice", "10"

        def create_container(self, pod: PodSandbox, container: Container) -> Any:
            adj = ContainerAdjustment()
            adj.add_mount(Mount(destination="/a"))
            adj.add_mount(Mount(destination="/a"))
            return adj

    r = Adaptation(traced=False)
    r.register(Twice())
    with pytest.raises(PluginError, match='plugins "10-twice" and "10-twice" both tried to set Mounts /a'):
        r.create_container_updates(PodSandbox(id="pod"), Container(id="c"))


# --- the resource manager's copy of a container ----------------------------------------------------
def test_a_resources_only_copy_equals_the_container_and_shares_nothing_written_in_place() -> None:
    from .test_message_copy import _mutable_parts, _random

    rng = random.Random(5)
    for _ in range(300):
        c = _random(Container, rng)
        if c.linux is None:
            c.linux = _random(LinuxContainer, rng)
        got = message_copy.resources_only_copy(c, api.clone)
        assert got == c and got is not c and got.linux is not c.linux
        # what the runtime may still change in place while it merges (the maps and lists it adds
        # to, the hooks' lists) and what the plugin writes (the resources) are the copy's own
        for mine, theirs in ((got.annotations, c.annotations), (got.rlimits, c.rlimits),
                             (got.linux.sysctl, c.linux.sysctl), (got.linux.net_devices, c.linux.net_devices)):
            assert mine is not theirs
        if c.hooks is not None:
            assert got.hooks is not c.hooks
            assert all(getattr(got.hooks, f) is not getattr(c.hooks, f) for f in vars(c.hooks))
        if c.linux.resources is not None:
            assert not ({id(x) for x in _mutable_parts(got.linux.resources, [])}
                        & {id(x) for x in _mutable_parts(c.linux.resources, [])})


def test_a_container_of_another_shape_gets_a_full_copy() -> None:
    c = Container(id="c", linux=None)
    assert message_copy.resources_only_copy(c, api.clone) == c
    c.extra = 1   # type: ignore[attr-defined]
    got = message_copy.resources_only_copy(c, api.clone)
    assert got == c and got.extra == 1


# --- whole nodes ---------------------------------------------------------------------------------
class _Tagger(Plugin):
    """A Python plugin beside (or instead of) the resource manager: classes every container,
    optionally pins it (conflicting with the policy) and updates the others."""

    name, index = "tagger", "95"

    def __init__(self, pin: bool = False):
        self.pin = pin
        self.ids: list[str] = []

    def create_container(self, pod: PodSandbox, container: Container) -> Any:
        adj = ContainerAdjustment()
        adj.set_linux_rdt_class("gold")
        if self.pin:
            adj.set_linux_cpuset_cpus("0")
        updates = []
        for cid in self.ids[-2:]:
            u = ContainerUpdate(cid)
            u.set_linux_cpu_shares(100 + len(self.ids))
            updates.append(u)
        self.ids.append(container.id)
        return adj, updates

    def stop_container(self, pod: PodSandbox, container: Container) -> Any:
        return [ContainerUpdate(cid, LinuxContainerUpdate(LinuxResources(cpu=LinuxCPU(shares=7)).ensure()))
                for cid in self.ids[-1:] if cid != container.id]


def _steps(seed: int, annotations: list[dict[str, str]], count: int) -> list[tuple[str, Any]]:
    rng = random.Random(seed)
    steps: list[tuple[str, Any]] = []
    live: list[str] = []
    for k in range(count):
        if live and rng.random() < 0.35:
            steps.append(("delete", live.pop(rng.randrange(len(live)))))
            continue
        doc = runs.pod_doc(rng, annotations)
        doc["metadata"].update(name=f"p{k}", uid=f"uid-{k}")
        pod = pod_from_dict(doc)
        steps.append(("create", pod))
        live.append(pod.key)
    return steps


def _node_trace(machine: str, policy: str | None, plugins: list[Plugin], steps: list[tuple[str, Any]]) -> str:
    from kubetwin.machine import load_machine

    rp = None if policy is None else runs.topology_aware() if policy == "topology-aware" else runs.balloons()
    rn = RuntimeNode(load_machine(str(runs.SHARED / "machines" / machine)), None if rp is None else rp.resource,
                     KubeletConfiguration.from_dict(runs.NONE), plugins=plugins, traced=False)
    out: list[Any] = []
    for op, arg in steps:
        if op == "create":
            refused = rn.create_pod(arg)
            out.append(["create", arg.key, None if refused is None else [refused.reason, refused.message]])
        else:
            out.append(["delete", arg, rn.delete_pod(arg)])
        out.append({f"{p.key}/{r.name}": [r.state, to_json(r.ctr)] for p, r in rn.running()})
        if rn.resmgr is not None:
            out.append(export(rn, "node"))
            out.append({c.id: [c.state, to_json(c.ctr)] for c in rn.resmgr.containers()})
    return json.dumps(out, sort_keys=True, default=str)


@pytest.mark.parametrize("machine", runs.MACHINES[:2])
@pytest.mark.parametrize("policy,plugins", [
    ("topology-aware", ()), ("balloons", ()), ("topology-aware", ("tagger",)), ("balloons", ("tagger",)),
    (None, ("tagger",)), ("topology-aware", ("pinner",)),
])
def test_untraced_nodes_give_the_plain_merges_containers_caches_topology_and_rejections(
        machine: str, policy: str | None, plugins: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    annotations = runs.BALLOONS_ANNOTATIONS if policy == "balloons" else runs.TOPOLOGY_AWARE_ANNOTATIONS
    steps = _steps(17, annotations, 50)

    def made() -> list[Plugin]:
        return [_Tagger(pin=name == "pinner") for name in plugins]

    fast = _node_trace(machine, policy, made(), steps)
    _plain(monkeypatch)
    plain = _node_trace(machine, policy, made(), steps)
    assert fast == plain
    if "pinner" in plugins:   # the policy and the plugin both set CPUSetCPUs: every creation fails alike
        assert "both tried to set CPUSetCPUs" in plain
    else:
        assert ('"cpus"' if policy is not None else '"gold"') in plain


def test_the_resource_managers_lone_replies_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubetwin.runtime.nri import result

    made: list[int] = []
    init = result.Result.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        made.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(result.Result, "__init__", counted)
    _node_trace(runs.MACHINES[0], "topology-aware", [], _steps(3, runs.TOPOLOGY_AWARE_ANNOTATIONS, 30))
    assert made == []


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_simulate_gives_the_plain_merges_placements_with_the_table_of_histories_on_and_off(
        policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``simulate``'s runtime nodes (untraced, forked from one started node): every pod's
    placement, the figures and rejections the same with the generic path's fast paths off."""
    from kubetwin.sim import runtime_memo
    from kubetwin.sim.loop import Simulator
    from kubetwin.sim.scenario import Scenario, parse_scheduler_config

    rp = runs.topology_aware() if policy == "topology-aware" else runs.balloons()
    annotations = runs.TOPOLOGY_AWARE_ANNOTATIONS if policy == "topology-aware" else runs.BALLOONS_ANNOTATIONS

    def both() -> list[str]:
        out = [runs.run(runs.nodes(runs.MACHINES[0], 3, rp), runs.arrivals(23, 60, annotations))]
        assert runtime_memo.ENABLED   # and through the table of node histories
        result = Simulator(Scenario("t", runs.nodes(runs.MACHINES[0], 3, rp), runs.arrivals(23, 60, annotations),
                                    profile=parse_scheduler_config(None))).run().to_json()
        out.append(json.dumps(result["placement"], sort_keys=True, default=str))
        return out

    fast = both()
    _plain(monkeypatch)
    assert fast == both()
    assert runs.placed(fast[0]) > 20


def test_an_adjustments_mounts_on_a_container_without_mounts_are_a_list_of_its_own() -> None:
    shared: list[Mount] = []
    ctr = Container(id="c", mounts=shared, linux=LinuxContainer(resources=LinuxResources(LinuxMemory(), LinuxCPU())))
    adj = ContainerAdjustment(mounts=[Mount(destination="/data")])
    fastmerge.apply_adjustment(ctr, adj)
    assert ctr.mounts == adj.mounts and ctr.mounts is not adj.mounts and shared == []


def test_an_adjustments_memory_and_cpu_fields_are_written_each_by_name() -> None:
    rng = random.Random("fields")
    for _ in range(200):
        mem = LinuxMemory(**{f: rng.choice((None, 1, 2)) for f in ("limit", "reservation", "swap", "kernel",
                                                                      "kernel_tcp", "swappiness")},
                          disable_oom_killer=rng.choice((None, True, False)), use_hierarchy=rng.choice((None, True)))
        cpu = LinuxCPU(**{f: rng.choice((None, 3, 4)) for f in ("shares", "quota", "period", "realtime_runtime",
                                                                   "realtime_period")},
                       cpus=rng.choice(("", "0-3")), mems=rng.choice(("", "1")))
        before = LinuxResources(LinuxMemory(limit=9, swap=9), LinuxCPU(shares=9, cpus="7", mems="0"))
        ctr = Container(id="c", linux=LinuxContainer(resources=api.LinuxResources(
            LinuxMemory(**vars(before.memory)), LinuxCPU(**vars(before.cpu)))))
        fastmerge.apply_adjustment(ctr, ContainerAdjustment(linux=api.LinuxContainerAdjustment(
            resources=LinuxResources(mem, cpu))))
        got = ctr.linux.resources   # type: ignore[union-attr]
        assert got is not None and got.memory is not None and got.cpu is not None
        for f, v in vars(mem).items():
            assert getattr(got.memory, f) == (v if v is not None else getattr(before.memory, f))
        for f, v in vars(cpu).items():
            if f in ("cpus", "mems"):
                assert getattr(got.cpu, f) == (v or getattr(before.cpu, f))
            else:
                assert getattr(got.cpu, f) == (v if v is not None else getattr(before.cpu, f))
