"""Retries answered from a kept failed cycle give exactly the outcomes of re-running every cycle.

Random clusters and workloads (several priorities, so preemption; spread constraints; taints;
pods that finish and free nodes), a short ``podMaxInUnschedulablePodsDuration`` so the leftover
flush retries parked pods many times: every pod's phase, node, times, attempts and message are
the same with the shortcut on and off.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from kubetwin.sim.loop import Simulator

PCS = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{v}"}, "value": v}
       for v in (10, 100, 1000)]


def _random_spec(rng: random.Random) -> dict:
    groups = []
    for g in range(rng.randint(1, 3)):
        grp = {"name": f"g{g}", "count": rng.randint(2, 8),
               "capacity": {"cpu": str(rng.choice((2, 4, 8))), "memory": f"{rng.choice((4, 8, 16))}Gi",
                            "pods": str(rng.choice((3, 10, 110)))},
               "zones": [f"z{k}" for k in range(rng.choice((1, 2, 3)))]}
        if rng.random() < 0.3:
            grp["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        groups.append(grp)
    workloads = []
    for w in range(rng.randint(2, 5)):
        spec: dict = {"containers": [{"name": "c", "resources": {"requests": {
            "cpu": rng.choice(("500m", "1", "2", "3")), "memory": rng.choice(("512Mi", "1Gi", "3Gi"))}}}]}
        if rng.random() < 0.3:
            spec["topologySpreadConstraints"] = [{
                "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": f"w{w}"}}}]
        if rng.random() < 0.3:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        wl = {"name": f"w{w}", "count": rng.randint(3, 15), "template": {"spec": spec},
              "arrival": {"interval": f"{rng.choice((1, 20, 90))}s", "start": f"{rng.randint(0, 600)}s"}}
        if rng.random() < 0.6:
            wl["duration"] = f"{rng.choice((30, 400, 2000))}s"
        if rng.random() < 0.6:
            wl["priorityClassName"] = rng.choice(("p10", "p100", "p1000"))
        workloads.append(wl)
    return {"seed": rng.randint(0, 1000), "podMaxInUnschedulablePodsDuration": rng.choice(("60s", "5m")),
            "kubeletAdmission": False, "nodeGroups": groups, "workloads": workloads}


def _outcomes(sc, reuse: bool):
    sim = Simulator(sc, reuse_verdicts=reuse)
    r = sim.run()
    return [(p.name, p.phase, p.node, p.start, p.end, p.attempts, p.reason, p.message) for p in r.pods], sim


@pytest.mark.parametrize("seed", range(12))
def test_kept_verdicts_change_no_outcome(tmp_path, kit, seed):
    sc = kit.scenario(tmp_path, _random_spec(random.Random(seed)), *PCS)
    fast, sim = _outcomes(sc, True)
    slow, _ = _outcomes(sc, False)
    assert fast == slow


def test_kept_verdicts_are_used(tmp_path, kit):
    spec = {"podMaxInUnschedulablePodsDuration": "60s", "kubeletAdmission": False,
            "nodeGroups": [kit.group(count=3, cpu="2")],
            "workloads": [kit.workload("big", count=4, cpu="3"),
                          kit.workload("small", count=6, cpu="1", arrival={"interval": "100s"})]}
    sc = kit.scenario(tmp_path, spec)
    fast, sim = _outcomes(sc, True)
    assert sim.sched.reused_cycles + sim.sched.patched_cycles > 0
    assert fast == _outcomes(sc, False)[0]


def test_parked_pods_retried_in_bulk_change_no_outcome(tmp_path, kit):
    # pods that can never fit, retried by every leftover flush while the cluster stays put
    spec = {"podMaxInUnschedulablePodsDuration": "60s", "kubeletAdmission": False,
            "nodeGroups": [kit.group(count=2, cpu="2")],
            "workloads": [kit.workload("big", count=5, cpu="3"),
                          kit.workload("small", count=4, cpu="1", duration="900s", arrival={"interval": "1000s"})]}
    sc = kit.scenario(tmp_path, spec)
    fast, sim = _outcomes(sc, True)
    assert sim.bulk_retries > 0
    assert fast == _outcomes(sc, False)[0]


TRACE = Path("/work/shared/data/traces/alibaba-gpu-v2023")


@pytest.mark.skipif(not TRACE.is_dir(), reason="Alibaba GPU trace not available")
def test_alibaba_trace_outcomes_are_the_same_with_kept_verdicts():
    from kubetwin.sim.sweep import RunSpec, load_run

    sc = load_run(RunSpec(("alibaba", str(TRACE), "openb_pod_list_default.csv", False)))
    sc = dataclasses.replace(sc, arrivals=sc.arrivals[:4000])
    fast, sim = _outcomes(sc, True)
    assert sim.bulk_retries > 0
    assert fast == _outcomes(sc, False)[0]


def _queue_state(sim: Simulator) -> tuple:
    q = sim.queue
    return (sorted((uid, qp.attempts, qp.seq, qp.timestamp, qp.backoff_until, sorted(qp.unschedulable_plugins))
                   for uid, qp in q._pods.items()),
            q.oldest_unschedulable(), sorted(q._cross_topology), sim.sched.next_start, sim.flush_at,
            sim.counters.attempts, sim.counters.unschedulable_attempts)


@pytest.mark.parametrize("seed", range(6))
def test_parked_pods_retried_in_bulk_leave_the_queue_as_real_cycles_do(tmp_path, kit, seed):
    # many flushes in a row between cluster changes, answered in bulk, against the same
    # flushes scheduled cycle by cycle: the same records, sequence, rotation and counters
    spec = _random_spec(random.Random(seed))
    spec["podMaxInUnschedulablePodsDuration"] = "60s"
    sc = kit.scenario(tmp_path, spec, *PCS)
    fast = Simulator(sc, reuse_verdicts=True)
    fast.run()
    slow = Simulator(sc, reuse_verdicts=False)
    slow.run()
    assert _queue_state(fast) == _queue_state(slow)


def test_a_run_of_flushes_counts_each_pods_retries(tmp_path, kit):
    # two pods that never fit, retried by every flush over a long quiet stretch
    spec = {"podMaxInUnschedulablePodsDuration": "60s", "kubeletAdmission": False,
            "nodeGroups": [kit.group(count=1, cpu="2")],
            "workloads": [kit.workload("big", count=2, cpu="3"),
                          kit.workload("late", count=1, cpu="1", arrival={"start": "3000s"})]}
    sc = kit.scenario(tmp_path, spec)
    fast, sim = _outcomes(sc, True)
    assert sim.bulk_retries > 20
    assert sim.sched.reused_cycles >= sim.bulk_retries
    assert fast == _outcomes(sc, False)[0]
