"""The pod key of balloons states (``kubetwin.sim.runtime_canon_balloons``): a run whose table joins
balloons states by that key gives, byte for byte, the plain path's results (every container's
cpusets, memory nodes, pool and alignment, the pods' CPUs, rejections, node figures) on random
workloads with creations and deletions under several balloons configurations; histories that
differ only in the order of the pods inside a balloon share a state, others do not; past the memory
bound (where libmem's order could show) a creation is kept per order of the node's pods and the
states after it are never joined."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace
from typing import Any

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.config import decode_policy
from kubetwin.runtime.node import RuntimeNode
from kubetwin.sim import runtime_canon, runtime_canon_balloons, runtime_memo, runtime_policies
from kubetwin.sim.loop import Simulator
from kubetwin.sim.runtime_policies import RuntimePolicy
from kubetwin.sim.scenario import Scenario, parse_scheduler_config
from kubetwin.sim.workload import Arrival
from tests.runtime.fastpath_runs import BALLOONS_ANNOTATIONS, BALLOONS_CASE, MACHINES, NONE, SHARED, balloons, nodes

DUAL = MACHINES[0]   # 4 NUMA nodes of 20 CPUs and 128Gi
GIB = 1 << 30


def _policy(spec: dict[str, Any]) -> RuntimePolicy:
    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy", "metadata": {"name": "default"},
           "spec": {"reservedResources": {"cpu": "1"}, "pinCPU": True, "pinMemory": True, **spec}}
    return RuntimePolicy("balloons", decode_policy(doc, "balloons.yaml"))


#: the chart's default types (the benchmark's): a new balloon per Guaranteed container, two shared
#: balloons for the rest sharing the idle CPUs of their package
CHART = {"allocatorTopologyBalancing": True, "balloonTypes": [
    {"name": "dedicated-cpus", "matchExpressions": [{"key": "qosclass", "operator": "In", "values": ["Guaranteed"]}],
     "preferNewBalloons": True, "preferSpreadingPods": True},
    {"name": "shared-local-cpus",
     "matchExpressions": [{"key": "qosclass", "operator": "In", "values": ["BestEffort", "Burstable"]}],
     "shareIdleCPUsInSame": "package", "preferNewBalloons": True, "maxBalloons": 2}]}
#: fixed-size balloons by namespace, bounded growth, spreading and packing
SIZES = {"balloonTypes": [
    {"name": "team", "namespaces": ["team"], "minCPUs": 2, "maxCPUs": 6, "preferNewBalloons": True},
    {"name": "spread", "namespaces": ["default"], "maxCPUs": 8, "preferSpreadingPods": True, "minBalloons": 1,
     "shareIdleCPUsInSame": "numa"}]}
#: balloons per namespace and per label value
GROUPS = {"balloonTypes": [
    {"name": "per-ns", "namespaces": ["team"], "preferPerNamespaceBalloon": True, "maxCPUs": 6},
    {"name": "by-app", "groupBy": "${pod/labels/app}", "minCPUs": 1, "preferSpreadingPods": True,
     "matchExpressions": [{"key": "pod/labels/tier", "operator": "In", "values": ["web"]}]}]}
CONFIGS = {"chart": CHART, "sizes": SIZES, "groups": GROUPS}


def _pod(name: str, namespace: str, cpu: str, qos: str, memory: str = "1Gi", labels: dict[str, str] | None = None,
         annotations: dict[str, str] | None = None, containers: int = 1) -> Any:
    res: dict[str, Any] = {}
    if qos != "besteffort":
        res["requests"] = {"cpu": cpu, "memory": memory}
        if qos == "guaranteed":
            res["limits"] = dict(res["requests"])
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    ctrs = [{"name": f"c{j}", "resources": res} for j in range(containers)]
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": ctrs}})


def _arrivals(rng: random.Random, count: int, annotations: list[dict[str, str]],
              memories: tuple[str, ...] = ("256Mi", "1Gi")) -> list[Arrival]:
    """``count`` pods of eight random shapes (so that histories repeat in other orders), every half
    second, most of them leaving again."""
    shapes = [(rng.choice(("default", "team", "kube-system")), rng.choice(("250m", "500m", "1", "2", "3")),
               rng.choice(("guaranteed", "guaranteed", "burstable", "besteffort")), rng.choice(memories),
               {"app": rng.choice(("a", "b")), "tier": rng.choice(("web", "db"))}, rng.choice(annotations),
               rng.choice((1, 1, 1, 2))) for _ in range(8)]
    out = []
    for k in range(count):
        ns, cpu, qos, mem, labels, ann, ctrs = rng.choice(shapes)
        out.append(Arrival(k * 0.5, _pod(f"p{k}", ns, cpu, qos, mem, labels, ann, ctrs),
                           duration=rng.choice((None, 3.0, 7.0, 20.0))))
    return out


def _run(rp: RuntimePolicy, machine: str, count: int, arrivals: list[Arrival], *, table: bool,
         key: bool = True) -> tuple[str, Any]:
    runtime_memo.ENABLED = runtime_policies.FAST_COPY = table
    runtime_canon_balloons.ENABLED = key
    try:
        sim = Simulator(Scenario("canon", nodes(machine, count, rp), arrivals, profile=parse_scheduler_config(None)))
        result = sim.run()
    finally:
        runtime_memo.ENABLED = runtime_policies.FAST_COPY = runtime_canon_balloons.ENABLED = True
    out = result.to_json()
    out["summary"] = {k: v for k, v in out["summary"].items() if k not in ("wallSeconds", "schedulingAttemptsPerSecond")}
    return json.dumps(out, sort_keys=True, default=str), sim.runtime.memo


def _same(rp: RuntimePolicy, machine: str, seed: int, annotations: list[dict[str, str]] | None = None, *,
          count: int = 8, pods: int = 240, memories: tuple[str, ...] = ("256Mi", "1Gi")) -> Any:
    arrivals = _arrivals(random.Random(seed), pods, annotations or [{}], memories)
    plain, _ = _run(rp, machine, count, arrivals, table=False)
    joined, memo = _run(rp, machine, count, arrivals, table=True)
    assert joined == plain
    memo.result = json.loads(plain)
    assert memo.result["placement"]["containers"]
    return memo


def _joins(memo: Any) -> int:
    return sum(t.joins for t in memo.tables.values())


def _misses(memo: Any) -> int:
    return sum(t.misses for t in memo.tables.values())


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("seed", (61, 62))
def test_balloons_with_joined_states_answer_as_the_plain_path(config: str, machine: str, seed: int) -> None:
    memo = _same(_policy(CONFIGS[config]), machine, seed)
    assert memo.tables and all(t.canon is not None and t.guard is not None for t in memo.tables.values())


@pytest.mark.parametrize("seed", (63, 64))
def test_the_conformance_policy_with_annotations_answers_as_the_plain_path(seed: int) -> None:
    if not BALLOONS_CASE.is_file():
        pytest.skip("the shared conformance cases are not here")
    _same(balloons(), DUAL, seed, BALLOONS_ANNOTATIONS)


def test_random_balloons_workloads_do_join_states() -> None:
    joins = sum(_joins(_same(_policy(config), DUAL, seed, pods=300)) for config in (CHART, GROUPS)
                for seed in (65, 66))
    assert joins > 0


def test_joined_states_leave_no_more_misses_than_histories() -> None:
    arrivals = _arrivals(random.Random(67), 300, [{}])
    _, joined = _run(_policy(CHART), DUAL, 8, arrivals, table=True)
    _, history = _run(_policy(CHART), DUAL, 8, arrivals, table=True, key=False)
    assert all(t.canon is None for t in history.tables.values())
    assert _misses(joined) <= _misses(history)
    assert _joins(joined) > 0


# --- the memory bound -----------------------------------------------------------------------------
@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("seed", (71, 72, 73))
def test_memory_heavy_nodes_past_the_bound_answer_as_the_plain_path(config: str, seed: int) -> None:
    # 30-70Gi containers on 128Gi NUMA nodes: a few of them pass the bound, after which an order
    # of libmem's calls could overcommit a zone (and libmem picks what to move by creation order)
    memo = _same(_policy(CONFIGS[config]), DUAL, seed, count=4, pods=160, memories=("256Mi", "30Gi", "70Gi"))
    assert any(t.ordered for t in memo.tables.values())
    assert any(e.next < 0 for t in memo.tables.values() for e in t.edges.values())


def _node(spec: dict[str, Any] = CHART) -> RuntimeNode:
    machine = load_machine(str(SHARED / "machines" / DUAL))
    assert _policy(spec).resource is not None
    return RuntimeNode(machine, _policy(spec).resource, KubeletConfiguration.from_dict(NONE), traced=False)


def test_the_memory_bound_is_the_smallest_normal_memory_node() -> None:
    assert runtime_canon_balloons.memory_bound(_node()) == 128 * GIB


def test_requests_within_the_bound_are_order_free() -> None:
    rn = _node()
    assert runtime_canon_balloons.order_free(rn)
    for name, mem in (("x", "60Gi"), ("y", "68Gi")):
        assert rn.start_pod(_pod(name, "default", "2", "guaranteed", mem)) is None
    assert runtime_canon_balloons.order_free(rn)   # 128Gi: every zone still holds them all


def test_requests_past_the_bound_are_not_order_free() -> None:
    rn = _node()
    for name, mem in (("x", "60Gi"), ("y", "69Gi")):
        assert rn.start_pod(_pod(name, "default", "2", "guaranteed", mem)) is None
    assert not runtime_canon_balloons.order_free(rn)


def test_containers_without_a_memory_limit_count_nothing() -> None:
    rn = _node()
    for k in range(3):
        assert rn.start_pod(_pod(f"b{k}", "default", "1", "burstable", "100Gi")) is None
    assert runtime_canon_balloons.order_free(rn)


def _plain_nodes(memo: Any) -> set[int]:
    return set(memo.rt.plain)


def test_a_creation_past_the_bound_is_kept_for_the_order_of_the_nodes_pods() -> None:
    pods = [_pod("x", "default", "2", "guaranteed", "60Gi"), _pod("y", "default", "2", "guaranteed", "69Gi")]
    arrivals = [Arrival(k, p) for k, p in enumerate(pods)]
    plain, _ = _run(_policy(CHART), DUAL, 1, arrivals, table=False)
    joined, memo = _run(_policy(CHART), DUAL, 1, arrivals, table=True)
    assert joined == plain
    assert not _plain_nodes(memo) and 0 in memo.nodes
    (table,) = memo.tables.values()
    v = memo.nodes[0]
    _, _, ev = v.history[1]
    assert ev[0] == runtime_canon_balloons.ORDERED and ev[2] == (0,)    # one pod before, at position 0
    assert table.edges[(v.path[1], ev[1])].next == -1                   # the event itself: see the order
    assert v.state in table.ordered and v.state not in table.canon.values()


def test_a_creation_at_the_bound_stays_on_the_table() -> None:
    pods = [_pod("x", "default", "2", "guaranteed", "60Gi"), _pod("y", "default", "2", "guaranteed", "68Gi")]
    arrivals = [Arrival(k, p) for k, p in enumerate(pods)]
    plain, _ = _run(_policy(CHART), DUAL, 1, arrivals, table=False)
    joined, memo = _run(_policy(CHART), DUAL, 1, arrivals, table=True)
    assert joined == plain
    assert not _plain_nodes(memo) and 0 in memo.nodes


def test_a_deletion_back_within_the_bound_joins_states_again() -> None:
    pods = [_pod("x", "default", "2", "guaranteed", "60Gi"), _pod("y", "default", "2", "guaranteed", "69Gi")]
    arrivals = [Arrival(0, pods[0]), Arrival(1, pods[1], duration=2.0)]
    plain, _ = _run(_policy(CHART), DUAL, 1, arrivals, table=False)
    joined, memo = _run(_policy(CHART), DUAL, 1, arrivals, table=True)
    assert joined == plain
    (table,) = memo.tables.values()
    v = memo.nodes[0]
    assert v.path[2] in table.ordered
    assert v.state == v.path[1] and v.state not in table.ordered   # the state the first pod left


def test_deletions_from_states_at_the_bound_stay_on_the_table() -> None:
    # deletions release memory requests and add none: a state within the bound stays within it
    pods = [_pod("x", "default", "2", "guaranteed", "60Gi"), _pod("y", "default", "1", "burstable", "68Gi"),
            _pod("z", "team", "2", "guaranteed", "60Gi")]
    arrivals = [Arrival(0, pods[0], duration=5.0), Arrival(1, pods[1], duration=2.0), Arrival(10, pods[2])]
    plain, _ = _run(_policy(CHART), DUAL, 1, arrivals, table=False)
    joined, memo = _run(_policy(CHART), DUAL, 1, arrivals, table=True)
    assert joined == plain
    assert not _plain_nodes(memo) and 0 in memo.nodes


def test_the_order_of_a_nodes_pods_is_the_order_they_were_created() -> None:
    v = SimpleNamespace(slots={"b": 2, "a": 0, "c": 1}, lag=0)
    assert runtime_canon_balloons.ordered_event("ev", v) == ("o", "ev", (2, 0, 1))  # type: ignore[arg-type]


def test_a_real_node_holds_a_nodes_order_when_its_pods_came_in_that_order() -> None:
    v = SimpleNamespace(slots={"b": 1, "a": 0}, lag=0)
    same = SimpleNamespace(keys=["q", "p"], evs={"p": 0, "q": 0})      # p created first, at position 1
    other = SimpleNamespace(keys=["q", "p"], evs={"q": 0, "p": 0})
    assert runtime_canon_balloons.same_order(v, same)  # type: ignore[arg-type]
    assert not runtime_canon_balloons.same_order(v, other)  # type: ignore[arg-type]


def test_replays_start_after_the_last_creation_kept_for_an_order() -> None:
    history = [("c", None, "e1"), ("c", None, ("o", "e2", (0,))), ("d", 0, None), ("c", None, "e3")]
    assert runtime_canon_balloons.replay_floor(history) == 2
    assert runtime_canon_balloons.replay_floor(history[:1]) == 0


def test_libmem_requests_are_made_in_the_order_of_creation() -> None:
    rn = _node()
    evs = {}
    for name in ("x", "y", "z"):
        pod = _pod(name, "default", "1", "guaranteed", "1Gi")
        assert rn.start_pod(pod) is None
        evs[pod.key] = 0
    assert runtime_canon_balloons.created_in_order(rn, evs)
    assert not runtime_canon_balloons.created_in_order(rn, dict(reversed(evs.items())))


# --- the key itself -------------------------------------------------------------------------------
_SHAPES = {"b1": ("default", "1", "burstable"), "b500": ("default", "500m", "burstable"),
           "g2": ("default", "2", "guaranteed"), "g2-team": ("team", "2", "guaranteed")}


def _state(order: list[tuple[str, str]], spec: dict[str, Any] = CHART) -> tuple[Any, list[str]]:
    """The key of a fresh balloons node after creating ``(name, shape)`` in order."""
    rn = _node(spec)
    evs = {}
    for name, shape in order:
        pod = _pod(name, *_SHAPES[shape])
        assert rn.start_pod(pod) is None
        evs[pod.key] = list(_SHAPES).index(shape)
    return runtime_canon_balloons.snapshot(rn, evs)


def test_two_histories_differing_only_in_the_order_inside_a_balloon_share_a_state() -> None:
    # the two pods of the default namespace share the one spread balloon whichever came first
    key1, order1 = _state([("x", "b1"), ("y", "b500")], SIZES)
    key2, order2 = _state([("y", "b500"), ("x", "b1")], SIZES)
    assert key1 == key2 and order1 == order2


def test_two_histories_whose_order_shows_have_different_states() -> None:
    # two Guaranteed pods of two namespaces get balloons of their own: the first comes first in
    # the list and takes the first CPUs
    key1, _ = _state([("x", "g2"), ("y", "g2-team")])
    key2, _ = _state([("y", "g2-team"), ("x", "g2")])
    assert key1 != key2


def test_the_key_holds_no_names() -> None:
    key1, order1 = _state([("x", "g2"), ("y", "b1")])
    key2, order2 = _state([("u", "g2"), ("v", "b1")])
    assert key1 == key2 and order1 != order2


def test_balloons_tables_use_the_balloons_key_and_the_switch_turns_it_off() -> None:
    rp = _policy(CHART)
    assert runtime_canon_balloons.applies(rp) and not runtime_canon.applies(rp)
    runtime_canon_balloons.ENABLED = False
    try:
        assert not runtime_canon_balloons.applies(rp)
    finally:
        runtime_canon_balloons.ENABLED = True
