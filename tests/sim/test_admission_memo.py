"""Pods sharing one spec object are admitted once: the same admitted pods as the whole chain run
for each (``admission_memo.ENABLED`` on and off), and nothing kept where the chain reads or
changes more than the spec."""

from __future__ import annotations

import msgspec
import pytest

from kubetwin.model.pod import Pod, pod_from_dict
from kubetwin.scheduler.admission import AdmissionRejected, admit_pod
from kubetwin.sim import admission_memo
from kubetwin.sim.admission_memo import SpecAdmissions
from kubetwin.sim.loop import Simulator
from kubetwin.sim.traces import _renamed

PCS = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}]


def _pod(name: str = "p0", **spec: object) -> Pod:
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                          "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
                                   **spec}})


def _chain(pod: Pod) -> Pod:
    return admit_pod(pod).pod


def test_pods_sharing_a_spec_get_the_chains_answer_each():
    first = _pod()
    others = [_renamed(first, f"p{k}") for k in range(1, 4)]
    memo = SpecAdmissions()
    got = [memo.admit(p, _chain) for p in [first, *others]]
    assert got == [_chain(p) for p in [first, *others]]
    assert got[1].spec is got[2].spec is got[3].spec   # one admitted spec, shared


def test_the_chain_runs_once_per_spec_object():
    first = _pod()
    calls: list[str] = []

    def chain(pod: Pod) -> Pod:
        calls.append(pod.metadata.name)
        return _chain(pod)

    memo = SpecAdmissions()
    for p in [first, _renamed(first, "p1"), _renamed(first, "p2"), _pod("p3")]:
        memo.admit(p, chain)
    assert calls == ["p0", "p3"]   # p3 has an equal spec, but not the same object


def test_an_answer_that_changes_more_than_the_spec_is_not_kept():
    first = _pod()
    calls: list[str] = []

    def annotating(pod: Pod) -> Pod:
        calls.append(pod.metadata.name)
        meta = msgspec.structs.replace(pod.metadata, annotations={"seen": pod.metadata.name})
        return msgspec.structs.replace(pod, metadata=meta)

    memo = SpecAdmissions()
    got = memo.admit(_renamed(first, "p1"), annotating)
    assert got.metadata.annotations == {"seen": "p1"}
    assert memo.admit(_renamed(first, "p2"), annotating).metadata.annotations == {"seen": "p2"}
    assert calls == ["p1", "p2"]


def test_a_rejection_is_not_kept():
    first = _pod(priorityClassName="missing")
    memo = SpecAdmissions()
    for name in ("p1", "p2"):
        with pytest.raises(AdmissionRejected, match=f'pods "{name}"'):
            memo.admit(_renamed(first, name), _chain)


def _outcomes(sc, monkeypatch, enabled: bool) -> list[tuple]:
    monkeypatch.setattr(admission_memo, "ENABLED", enabled)
    r = Simulator(sc).run()
    return [(p.name, p.phase, p.node, p.start, p.end, p.attempts, p.reason, p.message) for p in r.pods]


@pytest.mark.parametrize("limit_range", [False, True])
def test_a_simulation_admits_the_same_pods_with_and_without_the_memo(tmp_path, kit, monkeypatch, limit_range):
    spec = {"kubeletAdmission": False, "nodeGroups": [kit.group(count=2, cpu="4")],
            "workloads": [kit.workload("a", count=5, cpu="1", limits=True, arrival={"interval": "10s"}),
                          kit.workload("b", count=4, cpu="2", priorityClassName="high"),
                          kit.workload("c", count=2, cpu="1", priorityClassName="missing")]}
    extra = list(PCS)
    if limit_range:
        extra.append({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "default"},
                      "spec": {"limits": [{"type": "Container", "defaultRequest": {"memory": "256Mi"}}]}})
    sc = kit.scenario(tmp_path, spec, *extra)
    fast = _outcomes(sc, monkeypatch, True)
    assert fast == _outcomes(sc, monkeypatch, False)
    assert any(phase == "Rejected" for _, phase, *_ in fast)
