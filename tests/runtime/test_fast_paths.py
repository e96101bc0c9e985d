"""All of the runtime policies' placement fast paths at once against the plain code, below the
simulation: random create/delete sequences of random pods (QoS classes, sizes, annotations,
namespaces) on runtime nodes of the conformance machines, for both nri-plugins policies — every
container's final NRI resources (cpusets, memory nodes, classes), the adjustments and updates
each plugin replied, the field owners, and the NodeResourceTopology the policy exports after
every step are the same with the fast paths on and off."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime import cpuallocator_keys, cpuallocator_memo, libmem_offers
from kubetwin.runtime.node import RuntimeNode
from kubetwin.runtime.nri.api import to_json
from kubetwin.runtime.nrt import export
from kubetwin.runtime.policies.balloons import cputree_memo
from kubetwin.runtime.policies.topologyaware import fastpick, fastpin, fastscore, fastslice
from kubetwin.runtime.resmgr.manager import ResourceManager

from . import fastpath_runs as runs


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


def _trace(machine: str, rp: Any, steps: list[tuple[str, Any]], traced: bool = True) -> str:
    from kubetwin.machine import load_machine

    rn = RuntimeNode(load_machine(str(runs.SHARED / "machines" / machine)), rp.resource,
                     KubeletConfiguration.from_dict(runs.NONE), traced=traced)
    out: list[Any] = []
    for op, arg in steps:
        if op == "create":
            refused = rn.create_pod(arg)
            out.append(["create", arg.key, None if refused is None else [refused.reason, refused.message]])
        else:
            out.append(["delete", arg, rn.delete_pod(arg)])
        out.append({f"{p.key}/{r.name}": [r.state, to_json(r.ctr.resources()), r.replies, r.owners, r.cri, r.qos]
                    for p, r in rn.running()})
        out.append(export(rn, "node"))
    return json.dumps(out, sort_keys=True, default=str)


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in (cpuallocator_keys, cpuallocator_memo, fastscore, fastpick, fastpin, fastslice, libmem_offers,
                   cputree_memo):
        monkeypatch.setattr(module, "ENABLED", False)
    monkeypatch.setattr(ResourceManager, "_nri_readonly_events", frozenset())


@pytest.mark.parametrize("machine", runs.MACHINES)
@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_the_fast_paths_give_the_plain_codes_containers_replies_and_topology(
        machine: str, policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rp = runs.topology_aware() if policy == "topology-aware" else runs.balloons()
    annotations = runs.TOPOLOGY_AWARE_ANNOTATIONS if policy == "topology-aware" else runs.BALLOONS_ANNOTATIONS
    steps = _steps(71, annotations, 80)
    fast = _trace(machine, rp, steps)
    _plain(monkeypatch)
    plain = _trace(machine, rp, steps)
    assert fast == plain
    assert '"cpusetCpus"' in plain or '"cpus"' in plain


def _forked_traces(machine_file: str, rp: Any, runs_of: list[list[tuple[str, Any]]]) -> list[str]:
    """Each sequence of steps on its own node, forked from one started node as ``simulate``
    does (so the nodes share the machine's sysfs view and the tables kept per machine)."""
    from kubetwin.kubelet.admission import NodeAdmission
    from kubetwin.machine import load_machine
    from kubetwin.sim.runtime_policies import fork_runtime_node

    machine = load_machine(str(runs.SHARED / "machines" / machine_file))
    config = KubeletConfiguration.from_dict(runs.NONE)
    out = []
    for steps in runs_of:
        rn = fork_runtime_node(machine, rp, config, NodeAdmission(machine, config))
        trace: list[Any] = []
        for op, arg in steps:
            trace.append(["create", arg.key, rn.create_pod(arg) is None] if op == "create"
                         else ["delete", arg, rn.delete_pod(arg)])
            trace.append({f"{p.key}/{r.name}": to_json(r.ctr.resources()) for p, r in rn.running()})
            trace.append(export(rn, "node"))
        out.append(json.dumps(trace, sort_keys=True, default=str))
    return out


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_forked_untraced_nodes_give_the_plain_codes_containers_and_topology(
        machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Untraced nodes forked from one started node, as ``simulate`` runs them (no pool scores
    kept, the tables kept per machine shared): nodes through the same and through different
    sequences place and export as with every fast path off."""
    rp = runs.topology_aware()
    runs_of = [_steps(seed, runs.TOPOLOGY_AWARE_ANNOTATIONS, 60) for seed in (71, 71, 72, 73)]
    fast = _forked_traces(machine, rp, runs_of)
    _plain(monkeypatch)
    assert fast == _forked_traces(machine, rp, runs_of)


def _renamed(pod: Any) -> Any:
    import msgspec

    meta = msgspec.structs.replace(pod.metadata, name=pod.metadata.name + "-other", uid=pod.metadata.uid + "-other")
    return msgspec.structs.replace(pod, metadata=meta)


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_cri_resources_given_per_pod_shape_give_the_plain_containers_replies_and_topology(
        policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # simulate's table computes the kubelet's CRI resources once per pod shape (managers off):
    # taken from another pod of the same shape, the node ends exactly where the kubelet's own take it
    from kubetwin.kubelet.admission import NodeAdmission, container_resources_for
    from kubetwin.machine import load_machine

    rp = runs.topology_aware() if policy == "topology-aware" else runs.balloons()
    annotations = runs.TOPOLOGY_AWARE_ANNOTATIONS if policy == "topology-aware" else runs.BALLOONS_ANNOTATIONS
    steps = _steps(72, annotations, 60)
    machine = load_machine(str(runs.SHARED / "machines" / runs.MACHINES[0]))
    config = KubeletConfiguration.from_dict(runs.NONE)
    other = NodeAdmission(machine, config)

    def start_with_given_cri(rn: RuntimeNode, pod: Any) -> Any:
        decision = rn.kubelet.admit(pod)
        if not decision.admitted:
            return rn._reject(pod, decision.reason, decision.message)
        twin = _renamed(pod)
        cri = tuple(container_resources_for(other, twin, c) for c, _ in twin.all_containers())
        return rn.start_pod(pod, cri)

    plain = _trace(runs.MACHINES[0], rp, steps)
    monkeypatch.setattr(RuntimeNode, "create_pod", start_with_given_cri)
    given = _trace(runs.MACHINES[0], rp, steps)
    assert given == plain
    assert '"cpuShares"' in plain or '"shares"' in plain
