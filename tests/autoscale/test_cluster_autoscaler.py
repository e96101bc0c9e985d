"""Cluster Autoscaler binpacking estimator and expanders against upstream test cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubetwin.autoscale import clusterautoscaler as ca
from kubetwin.errors import InputError

FACTS = json.loads((Path(__file__).parent / "cluster_autoscaler_cases.json").read_text())
MIB = 1024 * 1024


def _template(name: str, cpu: int, memory: int, pods: int = 10) -> ca.NodeTemplate:
    res = {"cpu": cpu, "memory": memory, "pods": pods}
    return ca.NodeTemplate(name, res, res)


def _host_port_fit(pod: ca.CAPod, node: ca.NewNode) -> bool:
    """The resource fit plus the scheduler's NodePorts filter (one host port per node)."""
    port = pod.payload
    return ca.resource_fit(pod, node) and not (port and any(p.payload == port for p in node.pods))


@pytest.mark.parametrize("case", FACTS["binpacking"], ids=[c["test"] for c in FACTS["binpacking"]])
def test_binpacking_estimate_matches_upstream(case: dict[str, Any]) -> None:
    groups = [[ca.CAPod(f"{g.get('name', 'estimatee')}-{i}", {"cpu": g["cpu"], "memory": g["memory"]}, g.get("host_port"))
               for i in range(g["count"])] for g in case["groups"]]
    est = ca.binpacking_estimate(groups, _template("template", case["millicores"], case["memory"]), _host_port_fit,
                                 max_nodes=case["max_nodes"])
    assert (est.node_count, len(est.scheduled_pods)) == (case["expect_nodes"], case["expect_pods"])
    if "expect_processed_group" in case:
        assert all(p.name.startswith(case["expect_processed_group"]) for p in est.scheduled_pods)


def test_pod_too_big_for_the_template_adds_no_node() -> None:
    est = ca.binpacking_estimate([[ca.CAPod("big", {"cpu": 5000})]], _template("t", 1000, 1000))
    assert est.node_count == 0 and est.scheduled_pods == ()


def test_the_node_left_empty_by_a_pod_that_did_not_fit_is_reused_by_the_next_group() -> None:
    groups = [[ca.CAPod("huge", {"cpu": 900, "memory": 99999})], [ca.CAPod(f"s{i}", {"cpu": 600}) for i in range(3)]]
    est = ca.binpacking_estimate(groups, _template("t", 1000, 5000))
    assert est.nodes == (("e-0", ("s0",)), ("e-1", ("s1",)), ("e-2", ("s2",)))


def test_an_empty_last_node_stops_the_group_from_adding_more() -> None:
    def only_on_e0(pod: ca.CAPod, node: ca.NewNode) -> bool:
        return ca.resource_fit(pod, node) and (pod.name != "odd" or node.name == "e-9")

    groups = [[ca.CAPod("odd", {"cpu": 900})], [ca.CAPod("odd", {"cpu": 900})]]
    est = ca.binpacking_estimate(groups, _template("t", 1000, 5000), only_on_e0)
    assert est.node_count == 0  # e-0 stayed empty: the second group adds no node


def test_fastpath_is_refused_as_not_modelled() -> None:
    with pytest.raises(InputError):
        ca.binpacking_estimate([], _template("t", 1, 1), fastpath=True)


def test_most_pods_keeps_every_option_with_the_most_pods() -> None:  # TestMostPods
    eo0 = ca.Option("g0", 1, ())
    eo1 = ca.Option("g1", 1, (ca.CAPod("p", {}),))
    eo1b = ca.Option("g1b", 1, (ca.CAPod("p", {}),))
    assert ca.MostPods().best_options([eo0], {}) == [eo0]
    assert ca.MostPods().best_options([eo0, eo1], {}) == [eo1]
    assert ca.MostPods().best_options([eo0, eo1, eo1b], {}) == [eo1, eo1b]


@pytest.mark.parametrize("case", FACTS["least_nodes"], ids=[c["test"] for c in FACTS["least_nodes"]])
def test_least_nodes_matches_upstream(case: dict[str, Any]) -> None:
    options = [ca.Option(f"EO{i}", n, ()) for i, n in enumerate(case["options"])]
    assert ca.LeastNodes().best_options(options, {}) == [options[i] for i in case["expect"]]


def test_least_waste_matches_upstream() -> None:  # TestLeastWaste
    cpu, mem = 500, 1000 * MIB
    pod = ca.CAPod("p", {"cpu": cpu, "memory": mem})
    templates = {"balanced": _template("balanced", 16 * cpu, 16 * mem, 100)}
    balanced = ca.Option("balanced", 1, ())
    assert ca.LeastWaste().best_options([balanced], templates) == [balanced]
    balanced = ca.Option("balanced", 1, (pod,))
    templates["highmem"] = _template("highmem", 16 * cpu, 32 * mem, 100)
    highmem = ca.Option("highmem", 1, (pod,))
    assert ca.LeastWaste().best_options([balanced, highmem], templates) == [balanced]
    templates["lowcpu"] = _template("lowcpu", 8 * cpu, 16 * mem, 100)
    lowcpu = ca.Option("lowcpu", 1, (pod,))
    assert ca.LeastWaste().best_options([balanced, highmem, lowcpu], templates) == [lowcpu]


@pytest.mark.parametrize("case", FACTS["priority"]["cases"], ids=[c["test"] for c in FACTS["priority"]["cases"]])
def test_priority_expander_matches_upstream(case: dict[str, Any]) -> None:
    prios = ca.parse_priorities(FACTS["priority"]["configs"][case["config"]])
    options = [ca.Option(g, 1, ()) for g in case["options"]]
    assert [o.node_group for o in ca.Priority(prios).best_options(options, {})] == case["expect"]


def test_priority_expander_keeps_all_options_when_none_matches() -> None:
    prios = ca.parse_priorities("10:\n  - nothing-like-this\n")
    options = [ca.Option("a", 1, ()), ca.Option("b", 1, ())]
    assert ca.Priority(prios).best_options(options, {}) == options


def test_empty_priority_configuration_is_refused() -> None:
    with pytest.raises(InputError, match="is empty"):
        ca.parse_priorities("")


def test_priority_configmap_without_the_key_is_refused() -> None:
    with pytest.raises(InputError, match="priorities"):
        ca.parse_priority_configmap({"data": {"priority": "10: [a]"}})


def test_expander_chain_stops_at_a_single_option() -> None:
    best = ca.build_expander(["least-nodes", "most-pods"])
    a, b = ca.Option("a", 2, ()), ca.Option("b", 1, ())
    assert best([a, b], {}) == b


def test_expander_chain_falls_back_to_a_seeded_random_choice() -> None:
    opts = [ca.Option("a", 1, ()), ca.Option("b", 1, ())]
    assert ca.build_expander(["least-nodes"], seed=7)(opts, {}) == ca.build_expander(["least-nodes"], seed=7)(opts, {})


def test_misspelt_expander_is_refused_with_a_suggestion() -> None:
    with pytest.raises(InputError, match="least-waste"):
        ca.build_expander(["least-wast"])


def test_expander_after_random_is_refused() -> None:
    with pytest.raises(InputError, match="will never be used"):
        ca.build_expander(["random", "most-pods"])


def test_repeated_expander_is_refused() -> None:
    with pytest.raises(InputError, match="multiple times"):
        ca.build_expander(["most-pods", "most-pods"])
