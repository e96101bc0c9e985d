"""The name-free, order-free state key (``kubetwin.sim.runtime_canon``): a run whose table joins
states by that key gives, byte for byte, the plain path's results (every container's cpusets,
memory nodes, pool and alignment, the pods' CPUs, rejections, node figures) on random workloads
with deletions, several namespaces, annotations, affinity annotations and memory pressure; two
histories that differ only in order share a state, and two whose order shows do not."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.config import load_policy
from kubetwin.runtime.node import RuntimeNode
from kubetwin.sim import runtime_canon, runtime_memo, runtime_policies
from kubetwin.sim.loop import Simulator
from kubetwin.sim.runtime_policies import RuntimePolicy
from kubetwin.sim.scenario import Scenario, parse_scheduler_config
from kubetwin.sim.workload import Arrival
from tests.runtime.fastpath_runs import (
    BALLOONS_ANNOTATIONS,
    BALLOONS_CASE,
    MACHINES,
    NONE,
    SHARED,
    TOPOLOGY_AWARE_ANNOTATIONS,
    balloons,
    nodes,
    topology_aware,
)

DUAL = MACHINES[0]   # 4 NUMA nodes of 20 CPUs and 128Gi


def _pod(name: str, namespace: str, cpu: str, qos: str, memory: str = "1Gi",
         annotations: dict[str, str] | None = None) -> Any:
    res: dict[str, Any] = {}
    if qos != "besteffort":
        res["requests"] = {"cpu": cpu, "memory": memory}
        if qos == "guaranteed":
            res["limits"] = dict(res["requests"])
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if annotations:
        meta["annotations"] = annotations
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                          "spec": {"containers": [{"name": "c", "resources": res}]}})


def _arrivals(rng: random.Random, count: int, annotations: list[dict[str, str]],
              memories: tuple[str, ...] = ("256Mi", "1Gi")) -> list[Arrival]:
    """``count`` pods of six random shapes (so that histories repeat in other orders), every
    half second, most of them leaving again."""
    shapes = [(rng.choice(("default", "team", "kube-system")), rng.choice(("250m", "1", "2", "3")),
               rng.choice(("guaranteed", "guaranteed", "burstable", "besteffort")), rng.choice(memories),
               rng.choice(annotations)) for _ in range(6)]
    out = []
    for k in range(count):
        ns, cpu, qos, mem, ann = rng.choice(shapes)
        out.append(Arrival(k * 0.5, _pod(f"p{k}", ns, cpu, qos, mem, ann), duration=rng.choice((None, 3.0, 7.0, 20.0))))
    return out


def _run(rp: RuntimePolicy, machine: str, count: int, arrivals: list[Arrival], *, table: bool,
         canon: bool = True) -> tuple[str, Any]:
    runtime_memo.ENABLED = runtime_policies.FAST_COPY = table
    runtime_canon.ENABLED = canon
    try:
        sim = Simulator(Scenario("canon", nodes(machine, count, rp), arrivals, profile=parse_scheduler_config(None)))
        result = sim.run()
    finally:
        runtime_memo.ENABLED = runtime_policies.FAST_COPY = runtime_canon.ENABLED = True
    out = result.to_json()
    out["summary"] = {k: v for k, v in out["summary"].items() if k not in ("wallSeconds", "schedulingAttemptsPerSecond")}
    return json.dumps(out, sort_keys=True, default=str), sim.runtime.memo


def _same(rp: RuntimePolicy, machine: str, seed: int, annotations: list[dict[str, str]], *, count: int = 8,
          pods: int = 200, memories: tuple[str, ...] = ("256Mi", "1Gi")) -> Any:
    arrivals = _arrivals(random.Random(seed), pods, annotations, memories)
    plain, _ = _run(rp, machine, count, arrivals, table=False)
    joined, memo = _run(rp, machine, count, arrivals, table=True)
    assert joined == plain
    memo.result = json.loads(plain)
    return memo


def _joins(memo: Any) -> int:
    return sum(t.joins for t in memo.tables.values())


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("seed", (11, 12, 13))
def test_topology_aware_with_joined_states_answers_as_the_plain_path(machine: str, seed: int) -> None:
    memo = _same(topology_aware(), machine, seed, TOPOLOGY_AWARE_ANNOTATIONS)
    assert all(t.canon is not None for t in memo.tables.values())


def test_random_workloads_do_join_states() -> None:
    joins = sum(_joins(_same(topology_aware(), DUAL, seed, [{}], pods=300)) for seed in (21, 22))
    assert joins > 0


def test_joined_states_leave_fewer_misses_than_histories() -> None:
    arrivals = _arrivals(random.Random(23), 300, [{}])
    _, joined = _run(topology_aware(), DUAL, 8, arrivals, table=True)
    _, history = _run(topology_aware(), DUAL, 8, arrivals, table=True, canon=False)
    assert sum(t.misses for t in joined.tables.values()) < sum(t.misses for t in history.tables.values())
    assert all(t.canon is None for t in history.tables.values())


@pytest.mark.parametrize("seed", (31, 32))
def test_memory_pressure_sends_nodes_that_meet_an_overcommit_to_the_plain_path(seed: int) -> None:
    # 40-100Gi containers on 128Gi NUMA nodes: zones overflow and libmem moves allocations
    # (picking among equal ones by creation order, which the key does not hold)
    memo = _same(topology_aware(), DUAL, seed, [{}], count=4, pods=120, memories=("40Gi", "70Gi", "100Gi"))
    # no pod is refused here: the nodes on the plain path left the table for an overcommit
    assert memo.result["placement"]["totals"]["rejectedByRuntime"] == 0
    assert memo.rt.plain


def test_affinity_annotations_with_joined_states_answer_as_the_plain_path() -> None:
    memo = _same(topology_aware(), DUAL, 41, [{}, {}, {"resource-policy.nri.io/affinity": "c: [c]"}])
    assert memo.rt.plain


def test_balloons_takes_its_own_key_and_the_plain_answers() -> None:
    # balloons states are keyed by kubetwin.sim.runtime_canon_balloons, not by this module
    if not BALLOONS_CASE.is_file():
        pytest.skip("the shared conformance cases are not here")
    assert not runtime_canon.applies(balloons())
    memo = _same(balloons(), DUAL, 51, BALLOONS_ANNOTATIONS)
    assert memo.tables and all(t.keyer is not runtime_canon.snapshot for t in memo.tables.values())


def test_colocate_pods_keeps_the_history_key() -> None:
    # colocatePods matches containers by pod *name*: names matter, so no name-free key
    rp = topology_aware()
    assert runtime_canon.applies(rp)
    assert rp.resource is not None
    resource = dataclasses.replace(rp.resource, config=dataclasses.replace(rp.resource.config, colocate_pods=True))
    assert not runtime_canon.applies(RuntimePolicy("topology-aware", resource))


# --- the key itself -------------------------------------------------------------------------------
_SHAPES = {"g2": ("default", "2", "guaranteed"), "b1": ("default", "1", "burstable"),
           "g2-team": ("team", "2", "guaranteed")}


def _state(order: list[tuple[str, str]]) -> tuple[Any, list[str]]:
    """The key of a fresh topology-aware node after creating ``(name, shape)`` in order."""
    machine = load_machine(str(SHARED / "machines" / DUAL))
    rn = RuntimeNode(machine, load_policy("topology-aware"), KubeletConfiguration.from_dict(NONE), traced=False)
    evs = {}
    for name, shape in order:
        pod = _pod(name, *_SHAPES[shape])
        assert rn.start_pod(pod) is None
        evs[pod.key] = list(_SHAPES).index(shape)
    return runtime_canon.snapshot(rn, evs)


def test_two_histories_differing_only_in_order_share_a_state() -> None:
    # a Guaranteed pod's exclusive CPUs and a Burstable pod's shared pool come out the same
    # whichever came first
    key1, order1 = _state([("x", "g2"), ("y", "b1")])
    key2, order2 = _state([("y", "b1"), ("x", "g2")])
    assert key1 == key2 and order1 == order2


def test_two_histories_whose_order_shows_have_different_states() -> None:
    # two Guaranteed pods of two namespaces: the first takes the first CPUs
    key1, _ = _state([("x", "g2"), ("y", "g2-team")])
    key2, _ = _state([("y", "g2-team"), ("x", "g2")])
    assert key1 != key2


def test_the_key_holds_no_names() -> None:
    key1, order1 = _state([("x", "g2"), ("y", "b1")])
    key2, order2 = _state([("u", "g2"), ("v", "b1")])
    assert key1 == key2 and order1 != order2


def test_positions_follow_the_canonical_order_through_an_event() -> None:
    perm, born = runtime_canon.permutation(["a", "b", "c"], ["c", "new", "a"], "new")
    assert (perm, born) == ((2, -1, 0), 1)
    assert runtime_canon.follow(["A", "B", "C"], perm, born, "N") == ["C", "N", "A"]
    slots = {"a": 0, "c": 2}
    runtime_canon.remap(slots, perm, born, "new")
    assert slots == {"a": 2, "c": 0, "new": 1}
