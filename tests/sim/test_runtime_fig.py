"""The table's bookkeeping made lean (``kubetwin.sim.runtime_fig``): with figures taken from the
states' keys and the rows of a miss built lean, a run gives, byte for byte, the table's own
bookkeeping's results and the plain NRI path's — every placement row (keys in the same order),
the pods' CPUs and memory nodes, rejections, node figures — on random workloads with creations
and deletions, init containers and sidecars, for both nri-plugins policies; a state's figures
from its key are the real node's figures."""

from __future__ import annotations

import json
import random
from typing import Any, Iterator

import pytest

from kubetwin.model.pod import pod_from_dict
from kubetwin.sim import runtime_canon, runtime_fig, runtime_inckey, runtime_memo, runtime_policies
from kubetwin.sim.loop import Simulator
from kubetwin.sim.runtime_policies import RuntimePolicy
from kubetwin.sim.scenario import Scenario, parse_scheduler_config
from kubetwin.sim.workload import Arrival
from tests.runtime.fastpath_runs import BALLOONS_ANNOTATIONS, BALLOONS_CASE, MACHINES, TOPOLOGY_AWARE_ANNOTATIONS
from tests.runtime.fastpath_runs import balloons as _balloons
from tests.runtime.fastpath_runs import nodes as _nodes
from tests.runtime.fastpath_runs import topology_aware as _topology_aware


def _template(rng: random.Random, annotations: list[dict[str, str]], guaranteed: bool = False) -> dict[str, Any]:
    def resources() -> dict[str, Any]:
        cpu = "2" if guaranteed else rng.choice(("250m", "1", "1", "2", "3"))
        mem = rng.choice(("256Mi", "1Gi"))
        qos = "guaranteed" if guaranteed else rng.choice(("guaranteed", "guaranteed", "burstable", "besteffort"))
        if qos == "besteffort":
            return {}
        req = {"cpu": cpu, "memory": mem}
        return {"requests": req, "limits": dict(req)} if qos == "guaranteed" else {"requests": req}

    res = resources()
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": res}]}
    if rng.random() < 0.3:
        spec["containers"].append({"name": "side", "resources": res if rng.random() < 0.5 else resources()})
    if rng.random() < 0.3:   # an init container: exited once the pod runs
        spec["initContainers"] = [{"name": "init", "resources": res}]
    meta: dict[str, Any] = {"namespace": rng.choice(("default", "default", "team"))}
    ann = {} if guaranteed else rng.choice(annotations)
    if ann:
        meta["annotations"] = ann
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _pods(rng: random.Random, count: int, annotations: list[dict[str, str]]) -> Iterator[Arrival]:
    """``count`` pods of a few random templates (so that node states repeat), some leaving again."""
    templates = [_template(rng, annotations, guaranteed=k == 0) for k in range(5)]
    for k in range(count):
        doc = json.loads(json.dumps(rng.choice(templates)))
        doc["metadata"].update(name=f"p{k}", uid=f"uid-{k}")
        yield Arrival(k * 0.5, pod_from_dict(doc), duration=rng.choice((None, None, 3.0, 7.0, 20.0)))


def _run(rp: RuntimePolicy, machine: str, arrivals: list[Arrival], *, table: bool, lean: bool,
         nodes: int = 8) -> tuple[str, list[list[str]], Simulator]:
    """The run's results as JSON, the keys of every placement row in order, and the simulator."""
    runtime_memo.ENABLED, runtime_fig.ENABLED = table, lean
    try:
        sim = Simulator(Scenario("fig", _nodes(machine, nodes, rp), arrivals, profile=parse_scheduler_config(None)))
        result = sim.run()
    finally:
        runtime_memo.ENABLED = runtime_fig.ENABLED = True
    out = result.to_json()
    out["summary"] = {k: v for k, v in out["summary"].items()
                      if k not in ("wallSeconds", "schedulingAttemptsPerSecond")}
    return json.dumps(out, sort_keys=True, default=str), [list(r) for r in sim.runtime.placed], sim


def _same(rp: RuntimePolicy, machine: str, seed: int, annotations: list[dict[str, str]],
          pods: int = 200) -> tuple[Simulator, dict[str, Any]]:
    arrivals = list(_pods(random.Random(seed), pods, annotations))
    plain, plain_order, _ = _run(rp, machine, arrivals, table=False, lean=False)
    own, own_order, _ = _run(rp, machine, arrivals, table=True, lean=False)
    lean, lean_order, sim = _run(rp, machine, arrivals, table=True, lean=True)
    assert lean == own == plain
    assert lean_order == own_order == plain_order
    return sim, json.loads(lean)


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("seed", (1, 2))
def test_topology_aware_runs_with_lean_bookkeeping_are_the_plain_paths(machine: str, seed: int) -> None:
    sim, out = _same(_topology_aware(), machine, seed, TOPOLOGY_AWARE_ANNOTATIONS)
    tables = list(sim.runtime.memo.tables.values())
    assert sum(t.misses for t in tables) > 0 and sum(t.hits for t in tables) > 0
    assert any(st.key is not None for t in tables for st in t.states)   # figures from keys were read
    assert any(r.get("exclusive") for r in out["placement"]["containers"])


@pytest.mark.parametrize("machine", MACHINES[:2])
@pytest.mark.parametrize("seed", (3, 4))
def test_balloons_runs_with_lean_rows_are_the_plain_paths(machine: str, seed: int) -> None:
    if not BALLOONS_CASE.is_file():
        pytest.skip("the shared conformance cases are not here")
    sim, _ = _same(_balloons(), machine, seed, BALLOONS_ANNOTATIONS)
    assert sum(t.misses for t in sim.runtime.memo.tables.values()) > 0


def test_init_containers_and_deletions_are_in_the_compared_runs() -> None:
    arrivals = list(_pods(random.Random(1), 200, TOPOLOGY_AWARE_ANNOTATIONS))
    assert any(a.pod.spec.init_containers for a in arrivals)
    assert any(a.duration is not None for a in arrivals)


@pytest.mark.parametrize("seed", (5, 6))
def test_figures_from_a_states_key_are_its_real_nodes_figures(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    checked: list[bool] = []
    arrive = runtime_memo.MemoNodes._arrive

    def checking(table: Any, edge: Any, real: Any, created: Any) -> None:
        arrive(table, edge, real, created)
        if table.key_figures is not None:
            key, _ = runtime_canon.snapshot(real.rn, real.evs)
            got = runtime_fig.key_figures(table.key_figures, key)
            assert got == runtime_policies.runtime_figures(real.rn)   # the lean walk
            runtime_policies.LEAN_FIGURES = False
            try:
                assert got == runtime_policies.runtime_figures(real.rn)   # the plain walk
            finally:
                runtime_policies.LEAN_FIGURES = True
            checked.append(got[0] > 0)

    monkeypatch.setattr(runtime_memo.MemoNodes, "_arrive", staticmethod(checking))
    arrivals = list(_pods(random.Random(seed), 160, TOPOLOGY_AWARE_ANNOTATIONS))
    _run(_topology_aware(), MACHINES[0], arrivals, table=True, lean=True)
    assert any(checked)


def test_states_keep_their_keys_only_on_pod_keyed_tables() -> None:
    arrivals = list(_pods(random.Random(7), 80, TOPOLOGY_AWARE_ANNOTATIONS))
    _, _, sim = _run(_topology_aware(), MACHINES[1], arrivals, table=True, lean=True)
    for t in sim.runtime.memo.tables.values():
        assert (t.key_figures is not None) == (t.canon is not None)
        # a state made by a miss keeps its key, not figures (those are made when read)
        assert all(st.key is not None for st in t.states[1:])


@pytest.mark.parametrize("policy", ("topology-aware", "balloons", "balloons-plain"))
def test_a_new_states_lean_figures_are_its_real_nodes_figures(monkeypatch: pytest.MonkeyPatch, policy: str) -> None:
    if policy != "topology-aware" and not BALLOONS_CASE.is_file():
        pytest.skip("the shared conformance cases are not here")
    from kubetwin.runtime.policies.balloons import fast as balloons_fast

    checked: list[bool] = []
    arrive = runtime_memo.MemoNodes._arrive

    def checking(table: Any, edge: Any, real: Any, created: Any) -> None:
        got = runtime_policies._lean_runtime_figures(real.rn)
        monkeypatch.setattr(runtime_policies, "LEAN_FIGURES", False)
        assert got == runtime_policies.runtime_figures(real.rn)   # through a placement row per container
        monkeypatch.setattr(runtime_policies, "LEAN_FIGURES", True)
        checked.append(got[0] > 0)
        arrive(table, edge, real, created)

    monkeypatch.setattr(runtime_memo.MemoNodes, "_arrive", staticmethod(checking))
    # balloons-plain: the plain balloons policy (no map of every container's placement)
    monkeypatch.setattr(balloons_fast, "ENABLED", policy != "balloons-plain")
    monkeypatch.setattr(runtime_canon, "ENABLED", False)   # history-keyed states: figures at every new one
    rp = _topology_aware() if policy == "topology-aware" else _balloons()
    annotations = TOPOLOGY_AWARE_ANNOTATIONS if policy == "topology-aware" else BALLOONS_ANNOTATIONS
    _run(rp, MACHINES[0], list(_pods(random.Random(8), 160, annotations)), table=True, lean=True)
    assert any(checked)


@pytest.mark.parametrize("machine", MACHINES)
def test_the_lean_canonical_key_is_runtime_canons_key(monkeypatch: pytest.MonkeyPatch, machine: str) -> None:
    checked: list[int] = []
    arrive = runtime_memo.MemoNodes._arrive

    def checking(table: Any, edge: Any, real: Any, created: Any) -> None:
        if table.canon is not None:
            got = runtime_fig.snapshot(real.rn, real.evs)
            assert got == runtime_canon.snapshot(real.rn, real.evs)
            checked.append(len(got[1]))
        arrive(table, edge, real, created)

    monkeypatch.setattr(runtime_memo.MemoNodes, "_arrive", staticmethod(checking))
    _run(_topology_aware(), machine, list(_pods(random.Random(9), 160, TOPOLOGY_AWARE_ANNOTATIONS)),
         table=True, lean=True)
    assert max(checked) > 1


def test_plain_figures_switched_on_keep_figures_not_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime_policies, "LEAN_FIGURES", False)
    arrivals = list(_pods(random.Random(7), 80, TOPOLOGY_AWARE_ANNOTATIONS))
    out, _, sim = _run(_topology_aware(), MACHINES[1], arrivals, table=True, lean=True)
    tables = list(sim.runtime.memo.tables.values())
    assert tables and all(t.key_figures is None and t.canon is not None for t in tables)
    assert all(st.figures is not None for t in tables for st in t.states[1:])
    # keys kept only as the parent keys of later misses (runtime_inckey)
    assert all((st.key is not None) == runtime_inckey.INCREMENTAL for t in tables for st in t.states[1:])
    assert out == _run(_topology_aware(), MACHINES[1], arrivals, table=False, lean=False)[0]


@pytest.mark.parametrize("seed", (1, 2))
def test_texts_kept_per_mask_are_the_plain_texts(seed: int) -> None:
    from kubetwin.model.cpuset import CPUSet

    rng = random.Random(seed)
    for _ in range(300):
        mask = rng.getrandbits(rng.choice((4, 16, 64, 256))) if rng.random() < 0.9 else 0
        assert runtime_fig._mask_text(mask) == runtime_policies._cpuset_text(CPUSet.from_mask(mask))
        assert runtime_fig._mask_text(mask) == runtime_fig._mask_text(mask)   # read back
        assert runtime_fig._mems_text(mask) == ",".join(str(m) for m in CPUSet.from_mask(mask))
    assert runtime_fig._NONE_TEXT == runtime_policies._cpuset_text(CPUSet())


def test_a_misss_row_templates_are_its_rows_without_pod_time_and_node(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    record = runtime_fig.record

    def checking(rt: Any, i: int, rn: Any, sp: Any, templates: Any = None, *rest: Any) -> Any:
        assert templates == []
        rows = record(rt, i, rn, sp, templates, *rest)
        assert templates == [{k: v for k, v in r.items() if k not in ("pod", "time", "node")} for r in rows]
        assert [["pod", *t, "time", "node"] for t in templates] == [list(r) for r in rows]   # the keys' order
        seen.append(len(rows))
        return rows

    monkeypatch.setattr(runtime_fig, "record", checking)
    _run(_topology_aware(), MACHINES[0], list(_pods(random.Random(3), 120, TOPOLOGY_AWARE_ANNOTATIONS)),
         table=True, lean=True)
    assert seen


@pytest.mark.parametrize("seed", (21, 22))
def test_a_misss_rows_read_its_wanted_cpus_once_per_event_key(seed: int) -> None:
    _, _, sim = _run(_topology_aware(), MACHINES[0], list(_pods(random.Random(seed), 160, TOPOLOGY_AWARE_ANNOTATIONS)),
                     table=True, lean=True)
    checked = 0
    for v in sim.runtime.memo.nodes.values():
        table = v.table
        for kind, pod, ev in v.history:
            if kind == "c" and ev in table.wanted:
                assert table.wanted[ev] == runtime_policies.pod_wanted(pod)
                checked += 1
    assert checked
    assert all(len(t.wanted) <= len(t.ev_ids) for t in sim.runtime.memo.tables.values())
