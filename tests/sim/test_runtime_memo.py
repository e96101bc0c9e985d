"""The runtime-policy fast path (``kubetwin.sim.runtime_memo``): a run answered from the table of
node histories gives, byte for byte, the results of the plain path — every container's cpusets,
memory nodes, pool and alignment, the pods' CPUs, rejections and the node figures — on random
workloads (creations and deletions, several shapes, namespaces, annotations) over conformance
machines, for both nri-plugins policies."""

from __future__ import annotations

import json
import random
from typing import Any, Iterator

import pytest
import yaml

from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.config import decode_policy, load_policy
from kubetwin.sim import runtime_memo, runtime_policies, runtime_snapshot
from kubetwin.sim.loop import Simulator
from kubetwin.sim.runtime_policies import RuntimePolicy
from kubetwin.sim.scenario import Scenario, SimNode, parse_scheduler_config
from kubetwin.sim.workload import Arrival
from tests.runtime.fastpath_runs import BALLOONS_CASE, MACHINES, NONE, SHARED
from tests.runtime.fastpath_runs import balloons as _balloons
from tests.runtime.fastpath_runs import nodes as _nodes


def _template(rng: random.Random, annotations: list[dict[str, str]]) -> dict[str, Any]:
    cpu = rng.choice(("250m", "1", "1", "2", "2", "3"))
    mem = rng.choice(("256Mi", "1Gi"))
    qos = rng.choice(("guaranteed", "guaranteed", "burstable", "besteffort"))
    res: dict[str, Any] = {}
    if qos != "besteffort":
        res["requests"] = {"cpu": cpu, "memory": mem}
        if qos == "guaranteed":
            res["limits"] = dict(res["requests"])
    containers = [{"name": "c", "resources": res}]
    if rng.random() < 0.2:
        containers.append({"name": "side", "resources": res})
    meta: dict[str, Any] = {"namespace": rng.choice(("default", "default", "team", "kube-system"))}
    ann = rng.choice(annotations)
    if ann:
        meta["annotations"] = ann
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": containers}}


def _pods(rng: random.Random, count: int, annotations: list[dict[str, str]]) -> Iterator[Arrival]:
    """``count`` pods of a few random templates (so that node histories repeat), arriving every
    half second, some of them leaving again."""
    templates = [_template(rng, annotations) for _ in range(4)]
    for k in range(count):
        doc = json.loads(json.dumps(rng.choice(templates)))
        doc["metadata"].update(name=f"p{k}", uid=f"uid-{k}")
        yield Arrival(k * 0.5, pod_from_dict(doc), duration=rng.choice((None, 3.0, 7.0, 20.0)))


def _run(nodes: list[SimNode], arrivals: list[Arrival], enabled: bool) -> tuple[str, Any]:
    """``enabled``: the fast paths (the table, nodes copied by ``runtime_copy``); else the plain
    path with ``copy.deepcopy``."""
    runtime_memo.ENABLED = runtime_policies.FAST_COPY = enabled
    try:
        sim = Simulator(Scenario("memo", nodes, arrivals, profile=parse_scheduler_config(None)))
        result = sim.run()
    finally:
        runtime_memo.ENABLED = runtime_policies.FAST_COPY = True
    out = result.to_json()
    out["summary"] = {k: v for k, v in out["summary"].items()
                      if k not in ("wallSeconds", "schedulingAttemptsPerSecond")}
    return json.dumps(out, sort_keys=True, default=str), sim.runtime.memo


def _same(machine: str, rp: RuntimePolicy, seed: int, annotations: list[dict[str, str]], *, nodes: int = 8,
          pods: int = 160) -> Any:
    arrivals = list(_pods(random.Random(seed), pods, annotations))
    plain, _ = _run(_nodes(machine, nodes, rp), arrivals, False)
    fast, memo = _run(_nodes(machine, nodes, rp), arrivals, True)
    assert fast == plain
    memo.result = json.loads(plain)
    return memo


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("seed", (1, 2))
def test_topology_aware_answers_from_the_table_are_the_plain_paths(machine: str, seed: int) -> None:
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    memo = _same(machine, rp, seed, [{}, {}, {"prefer-shared-cpus.resource-policy.nri.io/pod": "true"}])
    assert sum(t.hits for t in memo.tables.values()) > 0


@pytest.mark.parametrize("machine", MACHINES[:2])
@pytest.mark.parametrize("seed", (3, 4))
def test_balloons_answers_from_the_table_are_the_plain_paths(machine: str, seed: int) -> None:
    pytest.importorskip("yaml")
    if not BALLOONS_CASE.is_file():
        pytest.skip("the shared conformance cases are not here")
    memo = _same(machine, _balloons(), seed, [{}, {"balloon.balloons.resource-policy.nri.io": "two-cpu"},
                                              {"balloon.balloons.resource-policy.nri.io": "four-cpu"}])
    assert sum(t.hits for t in memo.tables.values()) > 0


def test_the_default_balloons_policy_answers_from_the_table_as_the_plain_path() -> None:
    _same(MACHINES[0], RuntimePolicy("balloons", load_policy("balloons")), 5, [{}])


def test_a_pod_with_affinity_annotations_sends_its_node_to_the_plain_path() -> None:
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    memo = _same(MACHINES[0], rp, 6, [{"resource-policy.nri.io/affinity": "c: [c]"}])
    assert memo.rt.plain and not memo.nodes


def test_a_refused_pod_sends_its_node_to_the_plain_path_with_the_same_outcome() -> None:
    # topology-aware refuses a container asking for PMEM on a machine without any: the rejection
    # names the pod, so the node leaves the table
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    memo = _same("single-socket-ht.json", rp, 7, [{}, {"memory-type.resource-policy.nri.io/pod": "pmem"}],
                 nodes=3, pods=60)
    assert memo.result["placement"]["totals"]["rejectedByRuntime"] > 0
    assert memo.rt.plain


def test_a_kubelet_with_its_own_cpu_manager_keeps_every_node_on_the_plain_path() -> None:
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    cfg = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1", "memory": "1Gi"}}
    arrivals = list(_pods(random.Random(8), 40, [{}]))
    plain, _ = _run(_nodes(MACHINES[0], 3, rp, cfg), arrivals, False)
    fast, memo = _run(_nodes(MACHINES[0], 3, rp, cfg), arrivals, True)
    assert fast == plain
    assert not memo.nodes and not memo.tables


def test_policy_resources_with_match_expressions_are_not_answered_from_the_table() -> None:
    doc = yaml.safe_load(BALLOONS_CASE.read_text())["policy"]
    doc["spec"]["balloonTypes"][0]["matchExpressions"] = [{"key": "name", "operator": "In", "values": ["p1"]}]
    assert not runtime_memo.policy_memoizable(decode_policy(doc, "x.yaml"))
    assert runtime_memo.policy_memoizable(_balloons().resource)


def _grouping_balloons(group_by: str) -> RuntimePolicy:
    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy", "metadata": {"name": "default"},
           "spec": {"reservedResources": {"cpu": "1"}, "pinMemory": False,
                    "balloonTypes": [{"name": "grp", "namespaces": ["a", "b"], "groupBy": group_by,
                                      "preferNewBalloons": True, "maxCPUs": 8}]}}
    return RuntimePolicy("balloons", decode_policy(doc, "x.yaml"))


@pytest.mark.parametrize("group_by", ("${pod/name}", "${pod/uid}", "${id}", "${name}", "${labels/io.kubernetes.pod.name}",
                                      "${:,:namespace,pod/name}", "${unterminated"))
def test_balloons_grouping_by_names_or_ids_is_not_answered_from_the_table(group_by: str) -> None:
    assert not runtime_memo.policy_memoizable(_grouping_balloons(group_by).resource)


@pytest.mark.parametrize("group_by", ("", "${pod/namespace}", "$pod/labels/app", "${qosclass}-${pod/labels/tier}",
                                      "${:,:namespace,qosclass}"))
def test_balloons_grouping_by_namespaces_qos_classes_and_labels_keeps_the_table(group_by: str) -> None:
    assert runtime_memo.policy_memoizable(_grouping_balloons(group_by).resource)


def test_pods_grouped_by_name_get_the_plain_paths_balloons() -> None:
    # two nodes with the same history of pod shapes: on n1 the second pod has the first one's name
    # (in another namespace) and joins its balloon; on n0 it has a name of its own and gets a new one
    def pod(name: str, namespace: str, t: float) -> Arrival:
        return Arrival(t, pod_from_dict({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace,
                                                            "uid": f"{namespace}-{name}"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "64Mi"}}}]}}))

    arrivals = [pod("x", "a", 0), pod("y", "a", 1), pod("x", "b", 2), pod("z", "b", 3)]
    rp = _grouping_balloons("${pod/name}")
    plain, _ = _run(_nodes(MACHINES[0], 2, rp), arrivals, False)
    fast, _ = _run(_nodes(MACHINES[0], 2, rp), arrivals, True)
    pools = {r["pod"]: r["pool"] for r in json.loads(plain)["placement"]["containers"]}
    assert pools["b/x"] == pools["a/x"] and pools["b/z"] != pools["a/y"]
    assert fast == plain


def test_topology_aware_with_colocate_pods_is_not_answered_from_the_table() -> None:
    # colocatePods' implicit affinity is scoped by pod name: names matter, the history key drops them
    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy", "metadata": {"name": "default"},
           "spec": {"reservedResources": {"cpu": "750m"}, "colocatePods": True}}
    assert not runtime_memo.policy_memoizable(decode_policy(doc, "x.yaml"))
    doc["spec"]["colocatePods"] = False
    assert runtime_memo.policy_memoizable(decode_policy(doc, "x.yaml"))


@pytest.mark.parametrize("depth", (-1, 0, 100))
def test_misses_replayed_on_parked_copies_or_fresh_nodes_give_the_plain_answer(depth: int, monkeypatch) -> None:
    # -1: no copies (every miss off the holder's path replays its history), 100: a copy everywhere;
    # no snapshots (with them a miss restores its own state's)
    monkeypatch.setattr(runtime_memo, "CLONE_DEPTH", depth)
    monkeypatch.setattr(runtime_snapshot, "ENABLED", False)
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    memo = _same(MACHINES[0], rp, 9, [{}])
    assert sum(t.replayed for t in memo.tables.values()) > 0 or depth == 100


def test_match_expressions_on_qos_class_namespace_and_labels_keep_the_table() -> None:
    # the Helm chart's default balloons config matches Guaranteed pods by qosclass
    assert runtime_memo.policy_memoizable(load_policy("balloons"))
    doc = yaml.safe_load(BALLOONS_CASE.read_text())["policy"]
    doc["spec"]["balloonTypes"][0]["matchExpressions"] = [{"key": "labels/io.kubernetes.pod.name", "operator": "In",
                                                           "values": ["p1"]}]
    assert not runtime_memo.policy_memoizable(decode_policy(doc, "x.yaml"))


def test_pod_keys_with_the_qos_classes_remembered_are_the_keys_computed_afresh() -> None:
    from kubetwin.kubelet.admission import NodeAdmission
    from kubetwin.kubelet.cgroup_paths import CgroupLayout

    machine = load_machine(str(SHARED / "machines" / MACHINES[0]))
    layout = CgroupLayout("systemd", "/", True)
    kubelet = NodeAdmission(machine, KubeletConfiguration.from_dict(NONE))
    arrivals = list(_pods(random.Random(10), 60, [{}, {"prefer-shared-cpus.resource-policy.nri.io/pod": "true"}]))
    # uids that spell a QoS class show in the key (the cgroup parent holds the uid)
    docs = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"q{k}", "uid": uid},
             "spec": {"containers": [{"name": "c"}]}} for k, uid in enumerate(("burstable-1", "besteffort-2", "x"))]
    pods = [a.pod for a in arrivals] + [pod_from_dict(d) for d in docs]
    remembered: dict[bytes, str] = {}
    keys = [runtime_memo.pod_event(p, layout, kubelet, remembered) for p in pods]
    assert keys == [runtime_memo.pod_event(p, layout, kubelet) for p in pods]
    assert len(remembered) < len(pods) and len({k[2:] for k in keys if k is not None}) > 1


@pytest.mark.parametrize("driver,root", [("cgroupfs", ""), ("systemd", ""), ("cgroupfs", "/custom/best"),
                                         ("systemd", "/burst")])
def test_the_qos_substrings_of_a_cgroup_parent_read_once_per_class_equal_the_rendered_ones(
        driver: str, root: str, monkeypatch: pytest.MonkeyPatch) -> None:

    from kubetwin.errors import InputError
    from kubetwin.kubelet.cgroup_paths import CgroupLayout

    layout = CgroupLayout(driver, root, True)
    rng = random.Random(7)
    uids = ["0", "default/p3", "3f2a-11ee-9c4d", "besteffort", "xburstable-1", "b", "ffort", "rstable", "pod-d"]
    uids += ["".join(rng.choice("0123456789abcdef-/_.bdeforstuil") for _ in range(rng.randrange(1, 14)))
             for _ in range(300)]
    compared = 0
    for uid in uids:
        for cls in ("Guaranteed", "Burstable", "BestEffort"):
            monkeypatch.setattr(runtime_memo, "FAST_PARENT", False)
            try:
                plain = runtime_memo._qos_substrings(layout, cls, uid)
            except InputError:
                plain = None
            monkeypatch.setattr(runtime_memo, "FAST_PARENT", True)
            try:
                fast = runtime_memo._qos_substrings(layout, cls, uid)
            except InputError:
                fast = None
            assert fast == plain, (uid, cls)
            compared += plain is not None
    assert compared


def test_a_miss_in_a_state_another_node_holds_a_real_node_in_copies_it_instead_of_replaying(monkeypatch) -> None:
    monkeypatch.setattr(runtime_memo, "CLONE_DEPTH", -1)   # no parked copies: replays would be the only other way
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    memo = _same(MACHINES[0], rp, 9, [{}])
    assert sum(t.copied_held for t in memo.tables.values()) > 0


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_misses_restored_from_snapshots_give_the_plain_answer_without_replays(policy: str, monkeypatch) -> None:
    monkeypatch.setattr(runtime_snapshot, "ENABLED", True)
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware")) if policy == "topology-aware" else _balloons()
    memo = _same(MACHINES[0], rp, 9, [{}], nodes=10, pods=240)
    tables = memo.tables.values()
    assert sum(t.restored for t in tables) > 0 and sum(t.replayed for t in tables) == 0


def _freezes(monkeypatch, run) -> int:
    """How many times ``run()`` froze the collector's objects (``gc.freeze``)."""
    import gc

    calls = []
    freeze = gc.freeze
    monkeypatch.setattr(gc, "freeze", lambda: (calls.append(1), freeze())[1])
    run()
    return len(calls)


def _memo_scenario() -> Scenario:
    rp = RuntimePolicy("topology-aware", load_policy("topology-aware"))
    return Scenario("memo", _nodes(MACHINES[0], 4, rp), list(_pods(random.Random(11), 40, [{}])),
                    profile=parse_scheduler_config(None))


def test_misses_in_a_run_of_simulate_freeze_the_tables_new_objects_out_of_the_collector(monkeypatch) -> None:
    import gc

    from kubetwin.sim.loop import simulate

    frozen_before = gc.get_freeze_count()
    assert _freezes(monkeypatch, lambda: simulate(_memo_scenario())) > 1   # simulate's own freeze, then misses'
    assert gc.get_freeze_count() <= frozen_before   # simulate unfroze them at the end of the run


def test_with_the_freeze_off_only_simulate_itself_freezes(monkeypatch) -> None:
    from kubetwin.sim.loop import simulate

    monkeypatch.setattr(runtime_memo, "FREEZE_AFTER_MISS", False)
    assert _freezes(monkeypatch, lambda: simulate(_memo_scenario())) == 1


def test_a_bare_simulator_run_leaves_the_collector_alone(monkeypatch) -> None:
    assert _freezes(monkeypatch, lambda: Simulator(_memo_scenario()).run()) == 0
