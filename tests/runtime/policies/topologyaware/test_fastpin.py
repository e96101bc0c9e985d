"""The topology-aware policy's re-pinning fast path (``fastpin``) against the plain
``update_shared_allocations`` / ``_set_preferred_cpuset``: cpuset texts as the plain code
formats them, and random runs (every QoS class, hide-hyperthreads and the other annotations,
creations and deletions) that end with the same containers, NRI updates and placements."""

from __future__ import annotations

from typing import Any

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.runtime.policies.topologyaware import fastpin
from kubetwin.runtime.sysfs import System

from ... import fastpath_runs as runs


@pytest.mark.parametrize("hide", (False, True))
def test_cpuset_texts_are_the_plain_texts(hide: bool) -> None:
    sys = System(load_machine(str(runs.SHARED / "machines" / runs.MACHINES[0])), CPUSet())
    for text in ("0-3", "1,3,5,33", "0-63", "4,36"):
        cpus = CPUSet.parse(text)
        want = str(sys.single_thread_for_cpus(cpus) if hide else cpus)
        assert fastpin.cpuset_text(sys, cpus, hide) == want
        assert fastpin.cpuset_text(sys, cpus, hide) == want   # remembered


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_run_re_pinned_by_the_fast_path_ends_as_the_plain_one(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(31, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastpin, "ENABLED", False)
    assert fast == runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)


def test_memory_node_texts_are_the_plain_texts() -> None:
    from kubetwin.runtime.libmem import memset_string

    for mask in (0, 1, 0b1011, 0b11110000, (1 << 40) | 7):
        assert fastpin.memset_text(mask) == memset_string(mask)
        assert fastpin.memset_text(mask) == memset_string(mask)   # remembered


def _classes_policy() -> Any:
    from kubetwin.runtime.config import decode_policy
    from kubetwin.sim.runtime_policies import RuntimePolicy

    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy", "metadata": {"name": "default"},
           "spec": {"reservedResources": {"cpu": "750m"},
                    "schedulingClasses": [{"name": "rt", "policy": "fifo", "priority": 42, "ioClass": "rt",
                                           "ioPriority": 2}, {"name": "idle", "policy": "idle", "nice": 5}],
                    "namespaceSchedulingClasses": {"team": "idle"},
                    "cpuClasses": [{"name": "turbo"}, {"name": "normal"}], "sharedPoolCPUClass": "normal",
                    "defaultExclusiveCPUClass": "turbo"}}
    return RuntimePolicy("topology-aware", decode_policy(doc, "policy.yaml"))


def _grants_trace(machine: str, rp: Any, annotations: list[dict[str, str]], seed: int) -> str:
    import json
    import random

    from kubetwin.model.kubelet_config import KubeletConfiguration
    from kubetwin.model.pod import pod_from_dict
    from kubetwin.runtime.node import RuntimeNode
    from kubetwin.runtime.nri.api import to_json

    rn = RuntimeNode(load_machine(str(runs.SHARED / "machines" / machine)), rp.resource,
                     KubeletConfiguration.from_dict(runs.NONE))
    rng = random.Random(seed)
    live: list[str] = []
    out: list[Any] = []
    for k in range(60):
        if live and rng.random() < 0.3:
            key = live.pop(rng.randrange(len(live)))
            out.append(["delete", key, rn.delete_pod(key)])
            continue
        doc = runs.pod_doc(rng, annotations)
        doc["metadata"].update(name=f"p{k}", uid=f"uid-{k}")
        pod = pod_from_dict(doc)
        refused = rn.create_pod(pod)
        out.append(["create", pod.key, None if refused is None else refused.message])
        live.append(pod.key)
        out.append({f"{p.key}/{r.name}": [to_json(r.ctr.resources()), r.replies] for p, r in rn.running()})
    return json.dumps(out, sort_keys=True, default=str)


@pytest.mark.parametrize("classes", (False, True))
@pytest.mark.parametrize("machine", runs.MACHINES)
def test_grants_applied_by_the_fast_path_give_the_plain_containers_and_replies(
        machine: str, classes: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # with scheduling and CPU classes (namespace- and annotation-chosen, an unknown one) and without
    rp = _classes_policy() if classes else runs.topology_aware()
    annotations = runs.TOPOLOGY_AWARE_ANNOTATIONS + [
        {"scheduling-class.resource-policy.nri.io/pod": "rt"},
        {"scheduling-class.resource-policy.nri.io/container.c": "idle"},
        {"scheduling-class.resource-policy.nri.io/pod": "nosuch"}]
    fast = _grants_trace(machine, rp, annotations, 17)
    monkeypatch.setattr(fastpin, "ENABLED", False)
    plain = _grants_trace(machine, rp, annotations, 17)
    assert fast == plain
    assert ('"SCHED_FIFO"' in plain) == classes and '"cpus"' in plain


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_the_kept_re_pinned_containers_are_those_of_a_pass_over_the_grants_at_every_re_pinning(
        machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """At every re-pinning of random workloads (grants and releases), the container ids the
    policy kept equal those a pass over its grants picks, in the same order, and most passes
    read them as kept."""
    kept = fastpin._kept
    seen = {"kept": 0, "found": 0}

    def checked(p: Any) -> Any:
        before = p.__dict__.get("_repinned")
        got = kept(p)
        seen["kept" if before is not None and got is before[1] else "found"] += 1
        assert got == tuple(cid for cid, g in p.allocations.items() if fastpin._repinned(g))
        return got

    monkeypatch.setattr(fastpin, "_kept", checked)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(32, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert runs.placed(result) > 0 and seen["kept"] > 3 * seen["found"] > 0, seen


def test_the_re_pinned_containers_are_dropped_when_not_those_of_the_grants_before_a_change() -> None:
    from types import SimpleNamespace

    from kubetwin.model.cpuset import EMPTY

    def grant(cid: str, exclusive: CPUSet, portion: int) -> Any:
        return SimpleNamespace(cpu_type=0, exclusive=exclusive, cpu_portion=portion,
                               container=SimpleNamespace(id=cid))

    shared, alone = grant("a", EMPTY, 500), grant("b", CPUSet.parse("2"), 0)
    p: Any = SimpleNamespace(allocations={})
    assert fastpin._kept(p) == ()
    p.allocations["a"] = shared
    fastpin.granted(p, shared)
    p.allocations["b"] = alone
    fastpin.granted(p, alone)
    assert p.__dict__["_repinned"] == (2, ("a",))
    del p.allocations["a"]
    fastpin.released(p, shared)
    assert p.__dict__["_repinned"] == (1, ())
    p.allocations["a"] = shared
    p.allocations["c"] = shared
    fastpin.granted(p, shared)   # two added, one told: stale
    assert "_repinned" not in p.__dict__ and fastpin._kept(p) == ("a", "c")


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_run_re_pinning_the_kept_containers_ends_as_with_every_grant_read(machine: str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(33, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastpin, "KEPT", False)
    assert fast == runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
