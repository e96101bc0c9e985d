"""Hits of the runtime table applied lean (``kubetwin.sim.runtime_hit``): the same run, byte for
byte, as the table's own hit code and as the plain NRI path — every placement row (with its keys
in the same order), the pods' CPUs and memory nodes, rejections, node figures — on random
workloads with deletions and refusals, for both nri-plugins policies; the lean event key is
``pod_event``'s; the pods' positions brought in late are the ones kept at every event."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from kubetwin.errors import InputError
from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.cgroup_paths import CgroupLayout
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.config import load_policy
from kubetwin.sim import runtime_hit, runtime_memo
from kubetwin.sim.loop import Simulator
from kubetwin.sim.runtime_policies import RuntimePolicy
from kubetwin.sim.scenario import Scenario, parse_scheduler_config
from kubetwin.sim.workload import Arrival
from tests.runtime.fastpath_runs import BALLOONS_CASE, MACHINES, NONE, SHARED
from tests.runtime.fastpath_runs import balloons as _balloons
from tests.runtime.fastpath_runs import nodes as _nodes
from tests.sim.test_runtime_memo import _pods


def _run(rp: RuntimePolicy, machine: str, arrivals: list[Arrival], *, table: bool, lean: bool,
         nodes: int = 8) -> tuple[str, list[list[str]], Simulator]:
    """The run's results as JSON, the keys of every placement row in order, and the simulator."""
    runtime_memo.ENABLED, runtime_hit.ENABLED = table, lean
    try:
        sim = Simulator(Scenario("hit", _nodes(machine, nodes, rp), arrivals, profile=parse_scheduler_config(None)))
        result = sim.run()
    finally:
        runtime_memo.ENABLED = runtime_hit.ENABLED = True
    out = result.to_json()
    out["summary"] = {k: v for k, v in out["summary"].items()
                      if k not in ("wallSeconds", "schedulingAttemptsPerSecond")}
    return json.dumps(out, sort_keys=True, default=str), [list(r) for r in sim.runtime.placed], sim


def _same(rp: RuntimePolicy, machine: str, seed: int, annotations: list[dict[str, str]], pods: int = 200,
          nodes: int = 8, staying: int = 0) -> tuple[Simulator, Simulator, str]:
    """``staying``: the last pods never leave (so nodes end on creations)."""
    arrivals = list(_pods(random.Random(seed), pods, annotations))
    arrivals[len(arrivals) - staying:] = [Arrival(a.time, a.pod) for a in arrivals[len(arrivals) - staying:]]
    plain, plain_order, _ = _run(rp, machine, arrivals, table=False, lean=False, nodes=nodes)
    own, own_order, own_sim = _run(rp, machine, arrivals, table=True, lean=False, nodes=nodes)
    lean, lean_order, lean_sim = _run(rp, machine, arrivals, table=True, lean=True, nodes=nodes)
    assert lean == own == plain
    assert lean_order == own_order == plain_order
    return lean_sim, own_sim, lean


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("seed", (1, 2))
def test_topology_aware_hits_applied_lean_give_the_plain_paths_run(machine: str, seed: int) -> None:
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    sim, _, _ = _same(rp, machine, seed, [{}, {}, {"prefer-shared-cpus.resource-policy.nri.io/pod": "true"}])
    assert sum(t.hits for t in sim.runtime.memo.tables.values()) > 0


@pytest.mark.parametrize("machine", MACHINES[:2])
@pytest.mark.parametrize("seed", (3, 4))
def test_balloons_hits_applied_lean_give_the_plain_paths_run(machine: str, seed: int) -> None:
    if not BALLOONS_CASE.is_file():
        pytest.skip("the shared conformance cases are not here")
    sim, _, _ = _same(_balloons(), machine, seed, [{}, {"balloon.balloons.resource-policy.nri.io": "two-cpu"},
                                                   {"balloon.balloons.resource-policy.nri.io": "four-cpu"}])
    assert sum(t.hits for t in sim.runtime.memo.tables.values()) > 0


def test_refused_pods_among_lean_hits_give_the_plain_paths_run() -> None:
    # topology-aware refuses a container asking for PMEM on a machine without any
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    _, _, out = _same(rp, "single-socket-ht.json", 7, [{}, {"memory-type.resource-policy.nri.io/pod": "pmem"}],
                      pods=80, nodes=3)
    assert json.loads(out)["placement"]["totals"]["rejectedByRuntime"] > 0


@pytest.mark.parametrize("seed", (5, 6))
def test_pod_positions_brought_in_late_are_the_ones_kept_at_every_event(seed: int) -> None:
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    lean, own, _ = _same(rp, MACHINES[0], seed, [{}], pods=240, nodes=24, staying=160)
    lagging = 0
    for i, v in lean.runtime.memo.nodes.items():
        lagging += v.lag > 0
        runtime_hit.sync(v)
        assert v.lag == 0 and v.slots == own.runtime.memo.nodes[i].slots
    assert lagging


def _layouts() -> list[CgroupLayout]:
    return [CgroupLayout("cgroupfs", "", True), CgroupLayout("systemd", "", True), CgroupLayout("systemd", "/burst", True)]


@pytest.mark.parametrize("layout", _layouts(), ids=lambda lay: f"{lay.driver}:{lay.root or '/'}")
def test_event_keys_are_pod_events_keys(layout: CgroupLayout) -> None:
    machine = load_machine(str(SHARED / "machines" / MACHINES[0]))
    kubelet = NodeAdmission(machine, KubeletConfiguration.from_dict(NONE))
    table = runtime_memo.Table(None, kubelet, layout)
    pods = [a.pod for a in _pods(random.Random(11), 80, [{}, {"prefer-shared-cpus.resource-policy.nri.io/pod": "true"},
                                                         {"resource-policy.nri.io/affinity": "c: [c]"},
                                                         {"x.resource-policy.nri.io/anti-affinity": "c: [c]"}])]
    extra: list[dict[str, Any]] = []
    for k, uid in enumerate(("burstable-1", "besteffort-2", "x", "a/b", "a/c", "", "default/p1")):
        meta: dict[str, Any] = {"name": f"q{k}", "namespace": "default"}
        if uid:
            meta["uid"] = uid
        res = {"requests": {"cpu": "1", "memory": "1Gi"}} if k % 2 else {}
        extra.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                      "spec": {"containers": [{"name": "c", "resources": res}]},
                      **({"status": {"startTime": "2024-01-01T00:00:00Z", "nominatedNodeName": "n1"}} if k % 3 == 0
                         else {})})
    extra.append({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "aff", "annotations": {"resource-policy.nri.io/affinity": "c: [c]"}},
                  "spec": {"containers": [{"name": "c"}]}})
    pods += [pod_from_dict(d) for d in extra]

    def key(f: Any, p: Any) -> Any:
        try:
            return f(p)
        except InputError as e:   # a UID no systemd slice can hold: refused alike
            return str(e)

    keys = [key(lambda p: runtime_hit.event_key(table, p, kubelet), p) for p in pods]
    again = [key(lambda p: runtime_hit.event_key(table, p, kubelet), p) for p in pods]   # read back
    plain = [key(lambda p: runtime_memo.pod_event(p, layout, kubelet), p) for p in pods]
    assert keys == again == plain
    assert None in keys and len({k for k in keys if k is not None}) > 4
    assert table.hit_keys


def test_a_miss_on_pod_keyed_states_leaves_its_positions_to_be_brought_in_late() -> None:
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    lean, own, _ = _same(rp, MACHINES[0], 8, [{}], pods=160, nodes=12, staying=160)   # creations only
    after_miss = 0
    for i, v in lean.runtime.memo.nodes.items():
        assert v.lag == sum(1 for kind, _, _ in v.history if kind == "c")   # never brought in: no deletion
        after_miss += v.real is not None   # the node's last event was a miss
        runtime_hit.sync(v)
        assert v.slots == own.runtime.memo.nodes[i].slots
    assert after_miss


def test_runtime_policies_ask_the_lean_hit_not_the_tables_start(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_: Any) -> Any:
        raise AssertionError("MemoNodes.start asked with runtime_hit on")

    monkeypatch.setattr(runtime_memo.MemoNodes, "start", refused)
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    arrivals = list(_pods(random.Random(9), 60, [{}]))
    _, _, sim = _run(rp, MACHINES[0], arrivals, table=True, lean=True, nodes=4)
    tables = sim.runtime.memo.tables.values()
    assert sum(t.hits for t in tables) > 0 and sum(t.misses for t in tables) > 0


def _lean_run(seed: int, rp: RuntimePolicy | None = None, annotations: list[dict[str, str]] | None = None,
              pods: int = 200, nodes: int = 8) -> Simulator:
    rp = rp or RuntimePolicy("topology-aware", load_policy("topology-aware"))
    arrivals = list(_pods(random.Random(seed), pods, annotations or [{}]))
    return _run(rp, MACHINES[0], arrivals, table=True, lean=True, nodes=nodes)[2]


@pytest.mark.parametrize("seed", (12, 13))
def test_a_hit_finds_its_edge_by_state_in_its_events_own_index(seed: int) -> None:
    sim = _lean_run(seed, annotations=[{}, {"prefer-shared-cpus.resource-policy.nri.io/pod": "true"}])
    indexed = 0
    for table in sim.runtime.memo.tables.values():
        for ev, by_state in table.by_event.items():
            for state, edge in by_state.items():
                assert table.edges[(state, ev)] is edge
                indexed += 1
        # every creation edge of a pod's own key is in its event's index
        for (state, ev), edge in table.edges.items():
            if ev[0] == "c":
                assert table.by_event[ev][state] is edge
        for key, by_state in table.hit_keys.values():
            assert table.by_event[key] is by_state
    assert indexed


@pytest.mark.parametrize("seed", (14, 15))
def test_hits_copy_one_form_per_content_and_table(seed: int) -> None:
    sim = _lean_run(seed, pods=240, nodes=6)
    shared = 0
    for table in sim.runtime.memo.tables.values():
        forms = [f for edge in table.edges.values() if edge.forms for f in edge.forms]
        for f in forms:
            assert table.forms[tuple(f.items())] is f
        assert len({id(f) for f in forms}) == len({tuple(f.items()) for f in forms})
        shared += len(forms) - len({id(f) for f in forms})
    assert shared > 0   # edges that share a form


def test_a_hit_does_not_count_the_nodes_topology_version() -> None:
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    arrivals = [Arrival(a.time, a.pod) for a in _pods(random.Random(16), 120, [{}])]   # creations only
    sim = _run(rp, MACHINES[0], arrivals, table=True, lean=True, nodes=4)[2]
    assert sim.sched.handle.live_nrt is None   # nothing reads the versions of the table's nodes
    memo = sim.runtime.memo
    assert sum(t.hits for t in memo.tables.values()) > 0
    # a miss (the NRI path ran) counts one version, a hit none
    assert sum(sim.runtime.versions[i] for i in memo.nodes) == sum(t.misses for t in memo.tables.values())


@pytest.mark.parametrize("seed", (17, 18))
def test_a_hit_finds_its_node_by_index_as_the_tables_nodes_hold_it(seed: int) -> None:
    # pods with an affinity annotation are never keyed: their nodes leave the table (``_leave``)
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    sim, _, _ = _same(rp, MACHINES[0], seed, [{}] * 5 + [{"example.com/affinity": "x"}], pods=120, nodes=24)
    memo = sim.runtime.memo
    assert memo.rt.plain and memo.nodes   # nodes that left, nodes still on the table
    assert len(memo.at) == len(sim.runtime.nodes)
    for i, v in enumerate(memo.at):
        assert v is memo.nodes.get(i)
    assert sum(t.hits for t in memo.tables.values()) > 0


@pytest.mark.parametrize("seed", (14, 15))
def test_a_hit_copies_an_edge_of_one_row_from_its_form_alone(seed: int) -> None:
    sim = _lean_run(seed, pods=240, nodes=6)
    one = more = 0
    for table in sim.runtime.memo.tables.values():
        for edge in table.edges.values():
            if edge.forms is None:   # no hit yet
                assert edge.form is None
            elif len(edge.forms) == 1:
                assert edge.form is edge.forms[0]
                one += 1
            else:
                assert edge.form is None
                more += len(edge.forms) > 1
    assert one and more   # edges of one container's row and of two
