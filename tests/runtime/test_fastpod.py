"""The creation of a pod with the resource manager as the lone NRI plugin (:mod:`kubetwin.runtime.fastpod`)
against the adaptation's relay: random create/delete sequences on untraced nodes of both policies, driven as
``simulate`` drives them (the kubelet's CRI resources given once per pod shape), give the same records,
messages, caches, topology, rejections and lookups with the fast path on and off; a node it does not fit
takes the plain relay; errors and replies of another shape end as on the plain path."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from kubetwin.kubelet.admission import container_resources_for
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import Pod, pod_from_dict
from kubetwin.runtime import fastcreate, fastpod
from kubetwin.runtime.config import PolicyResource, decode_policy
from kubetwin.runtime.node import RuntimeNode
from kubetwin.runtime.nri import api, fastmerge, message_copy
from kubetwin.runtime.nri.api import to_json
from kubetwin.runtime.nri.stub import Plugin
from kubetwin.runtime.nrt import export
from kubetwin.runtime.resmgr.manager import ResourceManager
from kubetwin.runtime.resmgr.policy import PolicyError

from . import fastpath_runs as runs

RDT_ANNOTATIONS: list[dict[str, str]] = [
    {}, {"rdtclass.resource-policy.nri.io/pod": "gold"}, {"blockioclass.resource-policy.nri.io/pod": "slow"},
    {"prefer-shared-cpus.resource-policy.nri.io/pod": "true"},
]


def _classes_policy() -> PolicyResource:
    """topology-aware with RDT and Block I/O control, the pod's QoS class as default class."""
    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy", "metadata": {"name": "default"},
           "spec": {"reservedResources": {"cpu": "750m"},
                    "control": {"rdt": {"enable": True, "usePodQoSAsDefaultClass": True},
                                "blockio": {"enable": True, "usePodQoSAsDefaultClass": True}}}}
    return decode_policy(doc, "<test>")


def _policy(name: str) -> PolicyResource:
    if name == "classes":
        return _classes_policy()
    return (runs.topology_aware() if name == "topology-aware" else runs.balloons()).resource


def _node(machine: str, policy: str, traced: bool = False) -> RuntimeNode:
    return RuntimeNode(load_machine(str(runs.SHARED / "machines" / machine)), _policy(policy),
                       KubeletConfiguration.from_dict(runs.NONE), traced=traced)


def _create(rn: RuntimeNode, pod: Pod, shapes: dict[str, Any]) -> Any:
    decision = rn.kubelet.admit(pod)
    if not decision.admitted:
        return ["refused", decision.reason]
    shape = repr([(c.name, init, c.resources) for c, init in pod.all_containers()])
    cri = shapes.get(shape)
    if cri is None:   # once per pod shape, as the table of node histories computes them
        cri = shapes[shape] = tuple(container_resources_for(rn.kubelet, pod, c) for c, _ in pod.all_containers())
    refused = rn.start_pod(pod, cri)
    return None if refused is None else [refused.reason, refused.message]


def _state(rn: RuntimeNode) -> list[Any]:
    assert rn.resmgr is not None
    records = {f"{p.key}/{r.name}": [r.kind, r.state, to_json(r.ctr), r.adjustment, r.replies, r.cri, r.qos, r.owners]
               for p in rn.pods.values() for r in p.containers}
    sandboxes = {k: to_json(p.sandbox) for k, p in rn.pods.items()}
    cache = {c.id: [c.state, c.name, c.pod_id, to_json(c.ctr), repr(c.requirements), c.pending]
             for c in rn.resmgr.containers()}
    pods = {k: [p.qos_class, p.name, p.namespace] for k, p in rn.resmgr.cache.pods.items()}
    lookup = {r.ctr.id: f"{p.key}/{r.name}" for p in rn.pods.values() for r in p.containers}
    index = rn.by_container
    if index is not None:   # the records by container id, where it is kept, are the plain lookup's
        assert {k: id(v) for k, v in index.items()} == {r.ctr.id: id(r) for p in rn.pods.values()
                                                        for r in p.containers}
    return [records, sandboxes, cache, pods, lookup, export(rn, "node"), [r.to_json() for r in rn.rejected]]


def _trace(machine: str, policy: str, steps: list[tuple[str, Any]]) -> str:
    rn = _node(machine, policy)
    shapes: dict[str, Any] = {}
    out: list[Any] = []
    for op, arg in steps:
        if op == "create":
            out.append(["create", arg.key, _create(rn, arg, shapes)])
        else:
            out.append(["delete", arg, rn.delete_pod(arg)])
        out.append(_state(rn))
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
        if rng.random() < 0.1:
            doc["spec"].setdefault("initContainers", []).append(
                {"name": "proxy-sidecar", "restartPolicy": "Always", "resources": doc["spec"]["containers"][0]["resources"]})
        pod = pod_from_dict(doc)
        steps.append(("create", pod))
        live.append(pod.key)
    return steps


@pytest.mark.parametrize("machine", runs.MACHINES[:2])
@pytest.mark.parametrize("policy", ("topology-aware", "balloons", "classes"))
def test_untraced_nodes_give_the_plain_relays_records_messages_caches_topology_and_rejections(
        machine: str, policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    annotations = {"balloons": runs.BALLOONS_ANNOTATIONS, "classes": RDT_ANNOTATIONS}.get(
        policy, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    steps = _steps(31, annotations, 70)
    taken: list[int] = []
    lane = fastpod.start_pod

    def counted(*args: Any) -> Any:
        taken.append(1)
        return lane(*args)

    monkeypatch.setattr(fastpod, "start_pod", counted)
    fast = _trace(machine, policy, steps)
    assert taken, "the fast path was never taken"
    monkeypatch.setattr(fastpod, "ENABLED", False)
    assert fast == _trace(machine, policy, steps)
    assert '"cpus"' in fast


def test_the_fast_path_keeps_the_plain_answer_with_every_other_generic_fast_path_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    steps = _steps(5, runs.TOPOLOGY_AWARE_ANNOTATIONS, 30)
    fast = _trace(runs.MACHINES[0], "topology-aware", steps)
    for module, switch in ((fastcreate, "ENABLED"), (fastmerge, "ENABLED"), (message_copy, "SHARED_CONTAINER")):
        with monkeypatch.context() as m:
            m.setattr(module, switch, False)
            assert _trace(runs.MACHINES[0], "topology-aware", steps) == fast


class _Watcher(Plugin):
    """A plugin that only watches started containers."""

    name = "watcher"
    index = "50"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def post_start_container(self, pod: api.PodSandbox, container: api.Container) -> None:
        self.seen.append(container.name)


def test_the_fast_path_is_taken_only_with_the_resource_manager_alone_on_an_untraced_node() -> None:
    rn = _node(runs.MACHINES[1], "topology-aware")
    r = fastpod.lone_plugin(rn)
    assert r is not None and r.plugin is rn.resmgr
    assert rn.adaptation.lone is not None and rn.adaptation.lone[1] is r   # kept for the registrations
    assert fastpod.lone_plugin(_node(runs.MACHINES[1], "topology-aware", traced=True)) is None
    watched = RuntimeNode(load_machine(str(runs.SHARED / "machines" / runs.MACHINES[1])), _policy("topology-aware"),
                          KubeletConfiguration.from_dict(runs.NONE), plugins=[_Watcher()], traced=False)
    assert fastpod.lone_plugin(watched) is None
    bare = RuntimeNode(load_machine(str(runs.SHARED / "machines" / runs.MACHINES[1])), None,
                       KubeletConfiguration.from_dict(runs.NONE), traced=False)
    assert fastpod.lone_plugin(bare) is None
    # a plugin registered later: the answer kept for the old registrations is not used
    rn.adaptation.register(_Watcher())
    assert fastpod.lone_plugin(rn) is None


def test_a_subclassed_resource_manager_takes_the_plain_relay(monkeypatch: pytest.MonkeyPatch) -> None:
    rn = _node(runs.MACHINES[1], "topology-aware")

    class Mine(ResourceManager):
        pass

    assert rn.resmgr is not None
    rn.resmgr.__class__ = Mine
    rn.adaptation.lone = None
    assert fastpod.lone_plugin(rn) is None


def _pod(name: str, cpu: str = "1") -> Pod:
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": f"uid-{name}"},
                          "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"},
                                                                             "limits": {"cpu": cpu, "memory": "1Gi"}}}]}})


def _outcome(monkeypatch: pytest.MonkeyPatch, patch: str, behaviour: Any, enabled: bool) -> str:
    with monkeypatch.context() as m:
        m.setattr(fastpod, "ENABLED", enabled)
        rn = _node(runs.MACHINES[1], "topology-aware")
        shapes: dict[str, Any] = {}
        first = _create(rn, _pod("a"), shapes)
        m.setattr(ResourceManager, patch, behaviour)
        second = _create(rn, _pod("b", "2"), shapes)
        return json.dumps([first, second, _state(rn)], sort_keys=True, default=str)


def test_a_failed_sandbox_rejects_the_pod_as_the_plain_relay_does(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: ResourceManager, pod: api.PodSandbox) -> None:
        raise PolicyError("no room")

    fast = _outcome(monkeypatch, "run_pod_sandbox", refuse, True)
    assert "CreatePodSandboxError" in fast
    assert fast == _outcome(monkeypatch, "run_pod_sandbox", refuse, False)


def test_a_failed_creation_is_undone_and_rejected_as_on_the_plain_relay(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: ResourceManager, pod: api.PodSandbox, ctr: api.Container) -> Any:
        raise PolicyError("no cpus")

    fast = _outcome(monkeypatch, "create_container", refuse, True)
    assert "CreateContainerError" in fast
    assert fast == _outcome(monkeypatch, "create_container", refuse, False)


def test_a_failed_start_notification_is_dropped_as_on_the_plain_relay(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: ResourceManager, pod: api.PodSandbox, ctr: api.Container) -> None:
        raise RuntimeError("start failed")

    fast = _outcome(monkeypatch, "start_container", refuse, True)
    assert fast == _outcome(monkeypatch, "start_container", refuse, False)


def test_a_reply_of_another_shape_is_merged_as_on_the_plain_relay(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = ResourceManager.create_container

    def annotated(self: ResourceManager, pod: api.PodSandbox, ctr: api.Container) -> Any:
        adjust, updates = plain(self, pod, ctr)
        adjust = adjust or api.ContainerAdjustment()
        adjust.add_annotation("seen-by", "test")
        adjust.add_env("A", "1")
        return adjust, tuple(updates)   # a tuple of updates: the adaptation's checks, not the lone shape

    fast = _outcome(monkeypatch, "create_container", annotated, True)
    assert "seen-by" in fast
    assert fast == _outcome(monkeypatch, "create_container", annotated, False)


def test_a_reply_that_is_not_a_reply_fails_the_creation_with_the_adaptations_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def wrong(self: ResourceManager, pod: api.PodSandbox, ctr: api.Container) -> Any:
        return "adjusted"

    fast = _outcome(monkeypatch, "create_container", wrong, True)
    assert "must return a ContainerAdjustment" in fast
    assert fast == _outcome(monkeypatch, "create_container", wrong, False)
