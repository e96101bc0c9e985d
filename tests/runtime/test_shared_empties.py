"""The shared empty parts of the messages a creation on :mod:`kubetwin.runtime.fastpod`'s path makes
(:data:`kubetwin.runtime.fastcreate.SHARED_EMPTIES`, :data:`kubetwin.runtime.fastpod.SHARED_EMPTIES`, the
cached container's tags and hints: :data:`kubetwin.runtime.resmgr.cache.SHARED_EMPTIES`):
random create/delete sequences of both policies give the same records, messages, caches, topology and
rejections with them on and off; nothing ever writes them (they are still empty after the runs and after
replies merged by the plain merge, which writes the container's own); a sandbox of a pod with annotations
and the containers' resources are their own."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from kubetwin.runtime import fastcreate, fastpod
from kubetwin.runtime.nri import api
from kubetwin.runtime.resmgr import cache
from kubetwin.runtime.resmgr.manager import ResourceManager

from . import fastpath_runs as runs
from .test_fastpod import RDT_ANNOTATIONS, _create, _node, _pod, _state, _steps, _trace


def _empties() -> list[Any]:
    hooks = fastcreate._KEPT_HOOKS
    return [fastcreate._KEPT_RLIMITS, fastcreate._KEPT_CDI_DEVICES, fastcreate._KEPT_SYSCTL,
            fastcreate._KEPT_NET_DEVICES, fastcreate._KEPT_ANNOTATIONS, fastcreate._KEPT_NAMESPACES,
            fastcreate._KEPT_IPS, fastcreate._KEPT_ARGS, fastcreate._KEPT_ENV, fastcreate._KEPT_MOUNTS,
            fastcreate._KEPT_DEVICES, hooks.prestart, hooks.create_runtime, hooks.create_container,
            hooks.start_container, hooks.poststart, hooks.poststop, fastpod._NO_ADJUSTMENT, fastpod._NO_REPLIES,
            fastpod._NO_OWNERS, cache._NO_TAGS, cache._NO_HINTS]


def _both(monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    monkeypatch.setattr(fastcreate, "SHARED_EMPTIES", on)
    monkeypatch.setattr(fastpod, "SHARED_EMPTIES", on)
    monkeypatch.setattr(cache, "SHARED_EMPTIES", on)


@pytest.mark.parametrize("machine", runs.MACHINES[:2])
@pytest.mark.parametrize("policy", ("topology-aware", "balloons", "classes"))
def test_random_runs_give_the_same_records_messages_and_caches_with_shared_empties_on_and_off(
        machine: str, policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    annotations = {"balloons": runs.BALLOONS_ANNOTATIONS, "classes": RDT_ANNOTATIONS}.get(
        policy, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    steps = _steps(17, annotations, 70)
    _both(monkeypatch, True)
    shared = _trace(machine, policy, steps)
    assert not any(_empties())
    _both(monkeypatch, False)
    assert shared == _trace(machine, policy, steps)


def test_a_reply_merged_by_the_plain_merge_writes_the_containers_own_hooks_rlimits_and_sysctls(
        monkeypatch: pytest.MonkeyPatch) -> None:
    plain = ResourceManager.create_container

    def hooked(self: ResourceManager, pod: api.PodSandbox, ctr: api.Container) -> Any:
        adjust, updates = plain(self, pod, ctr)
        adjust = adjust or api.ContainerAdjustment()
        adjust.hooks = api.Hooks(prestart=[api.Hook("/bin/hook")])
        adjust.rlimits.append(api.POSIXRlimit("RLIMIT_NOFILE", 1024, 1024))
        adjust.ensure_linux().sysctl["net.core.somaxconn"] = "1024"
        adjust.ensure_linux().net_devices["eth1"] = api.LinuxNetDevice("net1")
        adjust.add_env("A", "1")
        adjust.set_args(["sleep", "1"])
        return adjust, updates

    def outcome(on: bool) -> str:
        with monkeypatch.context() as m:
            _both(m, on)
            rn = _node(runs.MACHINES[1], "topology-aware")
            shapes: dict[str, Any] = {}
            first = _create(rn, _pod("a"), shapes)
            m.setattr(ResourceManager, "create_container", hooked)
            second = _create(rn, _pod("b", "2"), shapes)
            merged = rn.pods["default/b"].containers[0].ctr
            assert merged.hooks is not fastcreate._KEPT_HOOKS and merged.hooks.prestart
            assert merged.rlimits and merged.linux is not None and merged.linux.sysctl and merged.linux.net_devices
            return json.dumps([first, second, _state(rn)], sort_keys=True, default=str)

    shared = outcome(True)
    assert "/bin/hook" in shared and "somaxconn" in shared and "RLIMIT_NOFILE" in shared
    assert not any(_empties())
    assert shared == outcome(False)


def test_the_containers_share_the_empties_and_own_their_resources_and_the_copy_its_annotations() -> None:
    rng = random.Random(3)
    sandbox = fastcreate.sandbox(_node(runs.MACHINES[0], "balloons"), _pod("s"), "Guaranteed")
    cri = {"cpuShares": 1024, "memoryLimitInBytes": 1 << 30, "hugepageLimits": [{"pageSize": "2MB", "limit": 0}],
           "unified": {"memory.oom.group": "1"}, "oomScoreAdj": rng.choice((-997, 1000))}
    ctr, mine = fastcreate.prepared(sandbox, "c", "cid", cri)
    assert ctr.hooks is mine.hooks is fastcreate._KEPT_HOOKS
    assert ctr.args is mine.args is fastcreate._KEPT_ARGS and ctr.mounts is mine.mounts is fastcreate._KEPT_MOUNTS
    assert ctr.annotations == mine.annotations and ctr.annotations is not mine.annotations
    assert ctr.linux is not None and mine.linux is not None
    theirs, own = ctr.linux.resources, mine.linux.resources
    assert theirs is not None and own is not None
    assert theirs == own and theirs is not own
    assert theirs.memory is not own.memory and theirs.cpu is not own.cpu
    # lists shared per CRI dict; the runtime's unified map its own (an update writes it in place)
    other, again = fastcreate.prepared(sandbox, "d", "cid2", cri)
    assert again.linux is not None and again.linux.resources is not None
    assert other.linux is not None and other.linux.resources is not None
    assert again.linux.resources.hugepage_limits is own.hugepage_limits and again.linux.resources.unified is own.unified
    assert other.linux.resources.hugepage_limits is theirs.hugepage_limits
    assert other.linux.resources.devices is theirs.devices
    assert other.linux.resources.unified is not theirs.unified
    # the same messages as the switch off builds
    off = fastcreate.SHARED_EMPTIES
    try:
        fastcreate.SHARED_EMPTIES = False
        plain_ctr, plain_mine = fastcreate.prepared(sandbox, "c", "cid", cri)
    finally:
        fastcreate.SHARED_EMPTIES = off
    assert api.to_json(ctr) == api.to_json(plain_ctr) and api.to_json(mine) == api.to_json(plain_mine)


def test_a_sandbox_of_a_pod_with_annotations_owns_a_copy_of_them() -> None:
    rn = _node(runs.MACHINES[0], "balloons")
    pod = _pod("s")
    pod.metadata.annotations["example.com/a"] = "1"
    got = fastcreate.sandbox(rn, pod, "Guaranteed")
    assert got.annotations == {"example.com/a": "1"} and got.annotations is not pod.metadata.annotations
    assert got == rn._sandbox(pod, "Guaranteed")
    bare = fastcreate.sandbox(rn, _pod("t"), "Guaranteed")
    assert bare.annotations is fastcreate._KEPT_ANNOTATIONS and bare.ips is fastcreate._KEPT_IPS
    assert bare == rn._sandbox(_pod("t"), "Guaranteed")


@pytest.mark.parametrize("plain_shape", (True, False))
def test_hugepage_limits_and_device_rules_of_a_reply_go_to_the_containers_own_lists(
        plain_shape: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # the fast merge (a reply of the plain shape) and the plain merge (another shape) both write
    # them: the container gets new lists, the ones shared per CRI dict stay as they were
    plain = ResourceManager.create_container

    def limited(self: ResourceManager, pod: api.PodSandbox, ctr: api.Container) -> Any:
        adjust, updates = plain(self, pod, ctr)
        adjust = adjust or api.ContainerAdjustment()
        adjust.add_linux_hugepage_limit("4MB", 1 << 22)
        adjust.ensure_linux().resources.devices.append(api.LinuxDeviceCgroup(True, "c", 1, 3, "rwm"))  # type: ignore[union-attr]
        if not plain_shape:
            adjust.add_annotation("seen-by", "test")
        return adjust, updates

    def outcome(on: bool) -> str:
        with monkeypatch.context() as m:
            _both(m, on)
            rn = _node(runs.MACHINES[1], "topology-aware")
            shapes: dict[str, Any] = {}
            first = _create(rn, _pod("a"), shapes)
            m.setattr(ResourceManager, "create_container", limited)
            second = _create(rn, _pod("b"), shapes)
            m.setattr(ResourceManager, "create_container", plain)
            third = _create(rn, _pod("c"), shapes)
            res = {k: rn.pods[f"default/{k}"].containers[0].ctr.resources() for k in "abc"}
            assert len(res["b"].hugepage_limits) == len(res["a"].hugepage_limits) + 1 and res["b"].devices
            assert not res["a"].devices and not res["c"].devices
            assert len(res["c"].hugepage_limits) == len(res["a"].hugepage_limits)
            return json.dumps([first, second, third, _state(rn)], sort_keys=True, default=str)

    shared = outcome(True)
    assert "4MB" in shared
    assert shared == outcome(False)
