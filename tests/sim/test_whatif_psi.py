"""The PSI-aware eviction what-if (kubetwin's own, not upstream; KEP-4205 names pressure-based
eviction as future work): off by default, asked for with --variant NAME:whatif.evictionPolicy=psi-aware,
compared side by side with the upstream eviction manager."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.sim import simulate
from kubetwin.sim.sweep import apply_variant, parse_variant


def contended(tmp_path, kit, batch_limits=False):
    api = kit.workload("api", count=2, cpu="1", memory="1Gi", usage={"cpu": "1200m"})
    batch = kit.workload("batch", cpu="100m" if not batch_limits else "1", memory="1Gi", limits=batch_limits,
                         usage={"cpu": [["0s", "500m"], ["2m", "4"]]}, arrival={"at": "1m"})
    return kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="4")], "sampleInterval": "10s", "horizon": "10m",
                                   "workloads": [api, batch]})


def psi_aware(sc, text="psi:whatif.evictionPolicy=psi-aware"):
    apply_variant(sc, parse_variant(text))
    return sc


def test_the_upstream_eviction_manager_never_evicts_for_cpu_pressure(tmp_path, kit):
    r = simulate(contended(tmp_path, kit))
    assert r.counters.evicted == 0 and r.summary()["cpu"]["peakNodeCpuSomeAvg10"] >= 40


def test_psi_aware_eviction_evicts_the_pod_most_over_its_cpu_request(tmp_path, kit):
    r = simulate(psi_aware(contended(tmp_path, kit)))
    assert r.counters.evicted_by_signal == {"psi-aware": 1}
    ev = next(e for e in r.events if e["type"] == "Evicted")
    assert ev["pod"] == "default/batch-0"
    assert ev["message"].startswith("kubetwin what-if (psi-aware eviction, not upstream): the node's cpu.pressure "
                                    "some avg10 was ")


def test_psi_aware_eviction_spares_guaranteed_pods(tmp_path, kit):
    r = simulate(psi_aware(contended(tmp_path, kit, batch_limits=True)))
    assert all(p.name != "batch-0" or p.phase == "Running" for p in r.pods)


def test_a_higher_threshold_evicts_later_or_not_at_all(tmp_path, kit):
    r = simulate(psi_aware(contended(tmp_path, kit), "psi:whatif.evictionPolicy=psi-aware,whatif.psiThreshold=90"))
    assert r.counters.evicted == 0


def test_the_variant_names_itself_as_a_what_if():
    assert parse_variant("p:whatif.evictionPolicy=psi-aware").changes() == ("whatif.evictionPolicy=psi-aware",)


def test_an_unknown_policy_is_refused():
    with pytest.raises(InputError, match='Unsupported value: "psi": supported values: upstream, psi-aware'):
        parse_variant("p:whatif.evictionPolicy=psi")


def test_a_misspelt_what_if_key_is_refused_with_the_nearest_key():
    with pytest.raises(InputError, match='did you mean "whatif.psiThreshold"'):
        parse_variant("p:whatif.psiTreshold=50")


def test_a_threshold_without_the_policy_is_refused(tmp_path, kit):
    with pytest.raises(InputError, match="read by the psi-aware eviction policy only"):
        psi_aware(contended(tmp_path, kit), "p:whatif.psiThreshold=50")


def test_the_policy_without_cpu_curves_is_refused(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "workloads": [kit.workload()]})
    with pytest.raises(InputError, match="no pod of the scenario has a CPU curve"):
        psi_aware(sc)
