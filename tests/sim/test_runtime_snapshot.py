"""``kubetwin.sim.runtime_snapshot``: a runtime node restored from a snapshot answers every later
event as the node it was taken from; what its copies share stays shared; nodes that can not be
kept (Python NRI plugins, unpicklable state) are refused, never half-kept."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.config import load_policy
from kubetwin.runtime.nri.stub import ContainerAdjustment, Plugin
from kubetwin.sim.runtime_policies import RuntimePolicy, fork_runtime_node, runtime_figures, shared_objects
from kubetwin.sim.runtime_snapshot import Snapshots
from tests.runtime.fastpath_runs import MACHINES, SHARED
from tests.runtime.fastpath_runs import balloons as _balloons

POLICIES = ("topology-aware", "balloons")


def _policy(name: str) -> RuntimePolicy:
    return _balloons() if name == "balloons" else RuntimePolicy(name, load_policy(name))


def _node(policy: str, machine: str = MACHINES[0]) -> tuple[Any, Snapshots]:
    m = load_machine(str(SHARED / "machines" / machine))
    config = KubeletConfiguration.from_dict({"kubeReserved": {"cpu": "1", "memory": "1Gi"}})
    rp = _policy(policy)
    rn = fork_runtime_node(m, rp, config, NodeAdmission(m, config))
    return rn, Snapshots(shared_objects(rn, rp, config))


def _pod(rng: random.Random, k: int) -> Any:
    cpu = rng.choice(("250m", "1", "2", "3"))
    res: dict[str, Any] = {"requests": {"cpu": cpu, "memory": rng.choice(("256Mi", "1Gi"))}}
    if rng.random() < 0.5:
        res["limits"] = dict(res["requests"])
    containers = [{"name": "c", "resources": res}]
    if rng.random() < 0.25:
        containers.append({"name": "side", "resources": res})
    ann = rng.choice(({}, {"balloon.balloons.resource-policy.nri.io": "two-cpu"},
                      {"prefer-shared-cpus.resource-policy.nri.io/pod": "true"}))
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"p{k}", "uid": f"u{k}", "annotations": ann},
                          "spec": {"containers": containers}})


def _events(rng: random.Random, start: int, count: int) -> list[tuple[str, Any]]:
    """Random creations and deletions (deletions name a pod created before, by position)."""
    out: list[tuple[str, Any]] = []
    for k in range(start, start + count):
        if rng.random() < 0.35:
            out.append(("d", rng.random()))
        else:
            out.append(("c", _pod(rng, k)))
    return out


def _apply(rn: Any, event: tuple[str, Any]) -> Any:
    kind, arg = event
    if kind == "c":
        refused = rn.start_pod(arg)
        return None if refused is None else refused.to_json()
    keys = sorted(rn.pods)
    if keys:
        rn.delete_pod(keys[int(arg * len(keys))])
    return None


def _state(rn: Any) -> Any:
    """Everything later events and the run's figures read: each container's resources, the
    resource manager's cached containers, the node figures and the rejections."""
    rows = [(p.key, r.name, r.state, repr(r.ctr.linux.resources), r.ctr.state) for p, r in rn.running()]
    cache = sorted((cid, repr(c.ctr.linux.resources)) for cid, c in rn.resmgr.cache.containers.items())
    return rows, cache, repr(runtime_figures(rn)), [r.to_json() for r in rn.rejected]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", (1, 2, 3))
def test_a_restored_node_answers_the_next_events_as_the_node_it_was_taken_from(policy: str, seed: int) -> None:
    rng = random.Random(seed)
    rn, snaps = _node(policy)
    for event in _events(rng, 0, 12):
        _apply(rn, event)
    data = snaps.take(rn)
    assert data is not None
    twin = snaps.restore(data)
    assert _state(twin) == _state(rn)
    for event in _events(rng, 100, 25):
        assert _apply(twin, event) == _apply(rn, event)
        assert _state(twin) == _state(rn)


@pytest.mark.parametrize("policy", POLICIES)
def test_one_snapshot_restores_into_independent_nodes(policy: str) -> None:
    rng = random.Random(7)
    rn, snaps = _node(policy)
    for event in _events(rng, 0, 8):
        _apply(rn, event)
    before = _state(rn)
    data = snaps.take(rn)
    assert data is not None
    first, second = snaps.restore(data), snaps.restore(data)
    for event in _events(rng, 50, 10):
        _apply(first, event)
    assert _state(second) == before and _state(rn) == before
    again = snaps.take(rn)   # taking a snapshot changes nothing either
    assert again is not None and _state(snaps.restore(again)) == before


def test_what_copies_share_is_shared_by_a_restored_node_and_the_rest_is_its_own() -> None:
    rn, snaps = _node("topology-aware")
    rng = random.Random(4)
    for k in range(4):
        assert rn.start_pod(_pod(rng, k)) is None
    data = snaps.take(rn)
    assert data is not None
    twin = snaps.restore(data)
    assert twin.machine is rn.machine and twin.kubelet is rn.kubelet and twin.system is rn.system
    assert twin.resmgr is not rn.resmgr and twin.resmgr.policy is not rn.resmgr.policy
    for key, rec in rn.pods.items():
        copied = twin.pods[key]
        assert copied is not rec and copied.pod is rec.pod and copied.sandbox is rec.sandbox
        for a, b in zip(rec.containers, copied.containers):
            assert b.ctr is not a.ctr and b.ctr.labels is a.ctr.labels and b.ctr.mounts is a.ctr.mounts
            assert b.ctr.linux is not a.ctr.linux and b.ctr.linux.resources is not a.ctr.linux.resources
            assert b.ctr.linux.resources == a.ctr.linux.resources and b.ctr.state == a.ctr.state
    for cid, c in rn.resmgr.cache.containers.items():
        t = twin.resmgr.cache.containers[cid]
        assert t.cache is twin.resmgr.cache and t.ctr.linux.resources is not c.ctr.linux.resources


def test_a_container_written_after_the_snapshot_is_restored_as_it_was_then() -> None:
    rn, snaps = _node("topology-aware")
    rng = random.Random(5)
    for k in range(3):
        assert rn.start_pod(_pod(rng, k)) is None
    data = snaps.take(rn)
    assert data is not None
    before = _state(rn)
    for k in range(3, 9):   # rebalancing the shared pools writes the earlier containers' resources
        rn.start_pod(_pod(rng, k))
    rn.delete_pod(sorted(rn.pods)[0])
    assert _state(snaps.restore(data)) == before


def test_snapshots_taken_before_a_new_kind_of_object_was_met_still_restore() -> None:
    rn, snaps = _node("balloons")
    early = snaps.take(rn)
    assert early is not None
    expected = _state(rn)
    rng = random.Random(6)
    for k in range(5):
        rn.start_pod(_pod(rng, k))
    later = snaps.take(rn)   # meets pod records, messages, ...: new memo roots
    assert later is not None
    assert _state(snaps.restore(early)) == expected and _state(snaps.restore(later)) == _state(rn)


class _Pinner(Plugin):
    name = "pinner"
    index = "10"

    def create_container(self, pod: Any, ctr: Any) -> tuple[ContainerAdjustment, list[Any]]:
        adj = ContainerAdjustment()
        adj.set_linux_cpuset_cpus("0")
        return adj, []


def test_a_node_with_a_python_nri_plugin_is_not_kept() -> None:
    from kubetwin.runtime.node import RuntimeNode

    m = load_machine(str(SHARED / "machines" / MACHINES[0]))
    config = KubeletConfiguration.from_dict({"kubeReserved": {"cpu": "1", "memory": "1Gi"}})
    rn = RuntimeNode(m, None, config, plugins=[_Pinner()], traced=False)
    assert Snapshots([m, config, rn.kubelet]).take(rn) is None


def test_a_node_holding_something_pickle_can_not_write_is_not_kept() -> None:
    rn, snaps = _node("topology-aware")
    rn.resmgr.policy.hook = lambda: None   # type: ignore[attr-defined]
    assert snaps.take(rn) is None
