"""The creation's messages built from forms per pod shape (a fast path) against the runtime's
plain builders: the same cgroup parents, NRI resources, container messages, resource-manager
copies and applied updates for random inputs, and whole untraced nodes driven as ``simulate``
drives them (the kubelet's CRI resources given once per pod shape) giving the same containers,
caches, topology and rejections with the fast path on and off."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest

from kubetwin.errors import InputError
from kubetwin.kubelet.admission import container_resources_for
from kubetwin.kubelet.cgroup_paths import CgroupLayout
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime import fastcreate
from kubetwin.runtime.node import PodRecord, RuntimeNode, nri_resources_from_cri
from kubetwin.runtime.nri import api, fastmerge, message_copy
from kubetwin.runtime.nri.adaptation import apply_update
from kubetwin.runtime.nri.api import (
    Container,
    ContainerUpdate,
    HugepageLimit,
    LinuxContainerUpdate,
    LinuxCPU,
    LinuxMemory,
    LinuxPids,
    LinuxResources,
    PodSandbox,
    to_json,
)
from kubetwin.runtime.nrt import export

from . import fastpath_runs as runs
from .nri.test_message_copy import _mutable_parts


def _random_cri(rng: random.Random) -> dict[str, Any]:
    cri: dict[str, Any] = {}
    for key, values in (("cpuShares", [0, 2, 1024]), ("cpuQuota", [0, -1, 50000]), ("cpuPeriod", [0, 100000]),
                        ("memoryLimitInBytes", [0, 1 << 30]), ("memorySwapLimitInBytes", [0, 1 << 20]),
                        ("oomScoreAdj", [-997, 0, 1000]), ("cpusetCpus", ["", "0-3"]), ("cpusetMems", ["", "1"])):
        if rng.random() < 0.7:
            cri[key] = rng.choice(values)
    if rng.random() < 0.6:
        cri["hugepageLimits"] = [{"pageSize": p, "limit": rng.choice([0, 1 << 21])}
                                 for p in rng.sample(["1GB", "2MB"], rng.randrange(3))]
    if rng.random() < 0.6:
        cri["unified"] = {k: "1" for k in rng.sample(["memory.oom.group", "memory.swap.max", "cpu.idle"], 2)}
    return cri


@pytest.mark.parametrize("driver", ("cgroupfs", "systemd"))
def test_a_cgroup_parent_is_the_layouts_pod_path(driver: str) -> None:
    for root in ("", "/", "/a", "/a/b/", "custom"):
        for per_qos in (True, False):
            layout = CgroupLayout(driver, root, per_qos)
            for qos in ("Guaranteed", "Burstable", "BestEffort"):
                for uid in ("u-1", "0b3e-a", ""):
                    assert _outcome(fastcreate.cgroup_parent, layout, qos, uid) == _outcome(_plain_parent, layout,
                                                                                              qos, uid)


def _plain_parent(layout: CgroupLayout, qos: str, uid: str) -> str:
    return layout.path(layout.pod(qos, uid)) or ""


def _outcome(fn: Any, *args: Any) -> str:
    try:
        return str(fn(*args))
    except InputError as exc:
        return f"error: {exc}"


def test_the_resources_of_a_cri_dict_are_the_plain_conversion_and_new_each_time() -> None:
    rng = random.Random(3)
    for _ in range(300):
        cri = _random_cri(rng)
        make = fastcreate.resources_maker(cri)
        assert fastcreate.resources_maker(cri) is make
        one, two = make(), make()
        assert one == nri_resources_from_cri(cri) == two
        assert to_json(one) == to_json(nri_resources_from_cri(cri))
        assert not _owned(one) & _owned(two)
        # the hugepage entries are shared (replaced, never written), their lists are not
        assert all(a is b for a, b in zip(one.hugepage_limits, two.hugepage_limits))


def _owned(res: Any) -> set[int]:
    """The ids of the mutable parts of a message but its hugepage limit entries (shared: an entry is
    replaced, never written)."""
    return {id(x) for x in _mutable_parts(res, []) if type(x) is not HugepageLimit}


def _sandbox(rng: random.Random) -> PodSandbox:
    return PodSandbox(id=f"s{rng.randrange(9)}", name="p", uid=f"u{rng.randrange(9)}", namespace="ns",
                      linux=api.LinuxPodSandbox(cgroup_parent=rng.choice(["", "/kubepods/burstable/podu"])))


def test_a_container_is_the_plain_message_and_its_copy_the_resources_only_copy() -> None:
    rng = random.Random(4)
    machine = load_machine(str(runs.SHARED / "machines" / runs.MACHINES[1]))
    rn = RuntimeNode(machine, None, KubeletConfiguration.from_dict(runs.NONE), traced=False)
    for _ in range(200):
        cri, sandbox = _random_cri(rng), _sandbox(rng)
        pod = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": sandbox.uid},
                             "spec": {"containers": [{"name": "c"}]}})
        plain = rn._container(pod, PodRecord(pod, sandbox), pod.spec.containers[0], cri)
        ctr, twin = fastcreate.container(sandbox, "c", plain.id, cri)
        assert ctr == plain and to_json(ctr) == to_json(plain)
        fastmerge.prepare(ctr)
        copy = twin()
        assert copy is not None
        expected = message_copy.resources_only_copy(ctr, api.clone)
        assert copy == expected and to_json(copy) == to_json(expected)
        # shared and owned exactly as the copy shares and owns them
        for name in ("labels", "args", "env", "mounts"):
            assert (getattr(copy, name) is getattr(ctr, name)) == (getattr(expected, name) is getattr(ctr, name))
        for name in ("namespaces", "devices"):
            assert (getattr(copy.linux, name) is getattr(ctr.linux, name)) == (
                getattr(expected.linux, name) is getattr(ctr.linux, name))
        assert copy.linux is not None and ctr.linux is not None
        for mine, theirs in ((copy.annotations, ctr.annotations), (copy.rlimits, ctr.rlimits), (copy.hooks, ctr.hooks),
                             (copy.linux.sysctl, ctr.linux.sysctl), (copy.linux.net_devices, ctr.linux.net_devices)):
            assert mine is not theirs
        assert not _owned(copy.linux.resources) & _owned(ctr.linux.resources)


def test_a_container_changed_before_its_copy_gets_no_copy_from_the_form() -> None:
    ctr, twin = fastcreate.container(_sandbox(random.Random(1)), "c", "cid", {"cpuShares": 2})
    fastmerge.prepare(ctr)
    ctr.annotations = {"changed": "yes"}
    assert twin() is None


def _random_update(rng: random.Random) -> ContainerUpdate:
    u = ContainerUpdate("c")
    if rng.random() < 0.1:
        return u
    res = LinuxResources()
    u.linux = LinuxContainerUpdate(None if rng.random() < 0.1 else res)
    if rng.random() < 0.8:
        res.cpu = LinuxCPU(shares=rng.choice([None, 0, 512]), quota=rng.choice([None, 50000]),
                           period=rng.choice([None, 100000]), realtime_runtime=rng.choice([None, 5]),
                           cpus=rng.choice(["", "0-3", "4"]), mems=rng.choice(["", "0", "1"]))
    if rng.random() < 0.8:
        res.memory = LinuxMemory(limit=rng.choice([None, 0, 1 << 30]), swap=rng.choice([None, 5]),
                                 swappiness=rng.choice([None, 60]), disable_oom_killer=rng.choice([None, True]))
    res.hugepage_limits = [HugepageLimit(p, rng.choice([0, 7])) for p in rng.sample(["1GB", "2MB"], rng.randrange(3))]
    res.unified = {"memory.high": "max"} if rng.random() < 0.3 else {}
    res.blockio_class = rng.choice([None, "", "slow"])
    res.rdt_class = rng.choice([None, "gold"])
    res.pids = rng.choice([None, LinuxPids(5)])
    return u


@pytest.mark.parametrize("seed", range(5))
def test_an_update_is_applied_as_the_runtime_applies_it(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(200):
        base = Container(id="c", linux=api.LinuxContainer(resources=nri_resources_from_cri(_random_cri(rng))))
        if rng.random() < 0.1:
            base.linux = None
        fast, plain = api.clone(base), api.clone(base)
        for _ in range(rng.randrange(1, 4)):
            u = _random_update(rng)
            fastcreate.apply_update(fast, u)
            apply_update(plain, u)
        assert fast == plain and to_json(fast) == to_json(plain)


def test_an_update_of_another_shape_is_applied_by_the_plain_function() -> None:
    @dataclasses.dataclass
    class OddCPU(LinuxCPU):
        pass

    fast, plain = Container(id="c"), Container(id="c")
    u = ContainerUpdate("c", LinuxContainerUpdate(LinuxResources(cpu=OddCPU(shares=5, cpus="1"))))
    fastcreate.apply_update(fast, u)
    apply_update(plain, u)
    cpu = fast.resources().cpu
    assert fast == plain and cpu is not None and cpu.shares == 5


# --- whole nodes, driven as simulate drives them ------------------------------------------------------
def _node_trace(machine: str, policy: str, steps: list[tuple[str, Any]]) -> str:
    rp = runs.topology_aware() if policy == "topology-aware" else runs.balloons()
    rn = RuntimeNode(load_machine(str(runs.SHARED / "machines" / machine)), rp.resource,
                     KubeletConfiguration.from_dict(runs.NONE), traced=False)
    shapes: dict[str, Any] = {}
    out: list[Any] = []
    for op, arg in steps:
        if op == "create":
            decision = rn.kubelet.admit(arg)
            if not decision.admitted:
                out.append(["refused", arg.key, decision.reason])
                continue
            shape = repr([(c.name, init, c.resources) for c, init in arg.all_containers()])
            cri = shapes.get(shape)
            if cri is None:   # once per pod shape, as the table of node histories computes them
                cri = shapes[shape] = tuple(container_resources_for(rn.kubelet, arg, c)
                                            for c, _ in arg.all_containers())
            refused = rn.start_pod(arg, cri)
            out.append(["create", arg.key, None if refused is None else [refused.reason, refused.message]])
        else:
            out.append(["delete", arg, rn.delete_pod(arg)])
        out.append({f"{p.key}/{r.name}": [r.state, to_json(r.ctr), to_json(p.sandbox)] for p, r in rn.running()})
        assert rn.resmgr is not None
        out.append(export(rn, "node"))
        out.append({c.id: [c.state, to_json(c.ctr)] for c in rn.resmgr.containers()})
    return json.dumps(out, sort_keys=True, default=str)


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
        if rng.random() < 0.2:
            doc["spec"]["initContainers"] = [{"name": "init", "resources": doc["spec"]["containers"][0]["resources"]}]
        pod = pod_from_dict(doc)
        steps.append(("create", pod))
        live.append(pod.key)
    return steps


@pytest.mark.parametrize("machine", runs.MACHINES[:2])
@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_untraced_nodes_give_the_plain_builders_containers_caches_topology_and_rejections(
        machine: str, policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    annotations = runs.BALLOONS_ANNOTATIONS if policy == "balloons" else runs.TOPOLOGY_AWARE_ANNOTATIONS
    steps = _steps(29, annotations, 60)
    fast = _node_trace(machine, policy, steps)
    monkeypatch.setattr(fastcreate, "ENABLED", False)
    assert fast == _node_trace(machine, policy, steps)
    assert '"cpus"' in fast


def test_the_resource_managers_copy_comes_from_the_form(monkeypatch: pytest.MonkeyPatch) -> None:
    copies: list[int] = []
    plain = message_copy.resources_only_copy

    def counted(ctr: Any, clone: Any) -> Any:
        copies.append(1)
        return plain(ctr, clone)

    monkeypatch.setattr(message_copy, "resources_only_copy", counted)
    _node_trace(runs.MACHINES[0], "topology-aware", _steps(3, runs.TOPOLOGY_AWARE_ANNOTATIONS, 20))
    assert copies == []


def test_an_update_of_cpuset_texts_alone_is_applied_as_the_runtime_applies_it() -> None:
    rng = random.Random(3)
    for cpus, mems in (("0-3", ""), ("", "1"), ("4", "0"), ("", "")):
        base = Container(id="c", linux=api.LinuxContainer(resources=nri_resources_from_cri(_random_cri(rng))))
        fast, plain = api.clone(base), api.clone(base)
        u = ContainerUpdate("c", LinuxContainerUpdate(LinuxResources(LinuxMemory(), LinuxCPU(cpus=cpus, mems=mems))))
        fastcreate.apply_update(fast, u)
        apply_update(plain, u)
        assert fast == plain and to_json(fast) == to_json(plain)
