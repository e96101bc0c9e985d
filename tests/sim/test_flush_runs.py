"""Runs of leftover flushes worked out per group of pods parked together leave the queue, the
pods and the scheduler exactly as the tick-by-tick loop leaves them (``flush_runs.ENABLED`` on
and off): every record (attempts, sequence number, ``Timestamp``, backoff, plugins), the order
of the pods parked at each instant, the sampling rotation, the counters and every pod's outcome.
"""

from __future__ import annotations

import random

import pytest

from kubetwin.scheduler.backend.queue import SchedulingQueue
from kubetwin.sim import flush_runs
from kubetwin.sim.leftover import LeftoverFlushes
from kubetwin.sim.loop import Simulator

PCS = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{v}"}, "value": v}
       for v in (10, 100, 1000)]


def _random_spec(rng: random.Random, max_parked: str) -> dict:
    groups = [{"name": f"g{g}", "count": rng.randint(1, 4),
               "capacity": {"cpu": str(rng.choice((2, 4))), "memory": "8Gi", "pods": "110"}}
              for g in range(rng.randint(1, 2))]
    workloads = []
    for w in range(rng.randint(3, 6)):
        wl = {"name": f"w{w}", "count": rng.randint(2, 12),
              "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {
                  "cpu": rng.choice(("500m", "1", "3", "5")), "memory": "1Gi"}}}]}},
              "arrival": {"interval": f"{rng.choice((0, 7, 13, 45, 400))}s", "start": f"{rng.randint(0, 900)}s"}}
        if rng.random() < 0.5:
            wl["duration"] = f"{rng.choice((100, 1000, 5000))}s"
        if rng.random() < 0.6:
            wl["priorityClassName"] = rng.choice(("p10", "p100", "p1000"))
        workloads.append(wl)
    return {"seed": rng.randint(0, 1000), "podMaxInUnschedulablePodsDuration": max_parked,
            "kubeletAdmission": False, "nodeGroups": groups, "workloads": workloads}


def _state(sim: Simulator, result) -> tuple:
    q = sim.queue
    records = sorted((uid, qp.attempts, qp.seq, qp.timestamp, qp.unschedulable_since, qp.backoff_until,
                      sorted(qp.unschedulable_plugins)) for uid, qp in q._pods.items())
    parked = sorted((ts, list(at)) for ts, at in q._parked_at.items() if at)
    kinds = sorted((kind, sorted(uids)) for kind, uids in q._by_kind.items())
    pods = [(p.name, p.phase, p.node, p.start, p.end, p.attempts, p.reason, p.message) for p in result.pods]
    return (records, parked, kinds, q.next_seq(), q.oldest_unschedulable(), sim.sched.next_start,
            sim.sched.reused_cycles, sim.sched.patched_cycles, sim.flush_at, sim.bulk_retries,
            sim.counters.attempts, sim.counters.unschedulable_attempts, pods)


def _run(sc, monkeypatch, enabled: bool) -> tuple:
    monkeypatch.setattr(flush_runs, "ENABLED", enabled)
    sim = Simulator(sc)
    return _state(sim, sim.run())


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("max_parked", ["60s", "5m", "5s"])
def test_runs_of_flushes_leave_everything_as_the_tick_by_tick_loop(tmp_path, kit, monkeypatch, seed, max_parked):
    sc = kit.scenario(tmp_path, _random_spec(random.Random(seed), max_parked), *PCS)
    assert _run(sc, monkeypatch, True) == _run(sc, monkeypatch, False)


def test_pods_parked_at_different_instants_merge_in_pop_order(tmp_path, kit, monkeypatch):
    # pods that never fit, parked every 7 s at three priorities: their first flush takes several
    # instants at once (one merged group), later ones move whole groups over a long quiet stretch
    spec = {"podMaxInUnschedulablePodsDuration": "60s", "kubeletAdmission": False,
            "nodeGroups": [kit.group(count=1, cpu="2")],
            "workloads": [kit.workload(f"big{p}", count=6, cpu="3", priorityClassName=f"p{p}",
                                       arrival={"interval": "7s", "start": f"{k}s"})
                          for k, p in enumerate((10, 100, 1000))]
            + [kit.workload("late", count=1, cpu="1", arrival={"start": "5000s"})]}
    sc = kit.scenario(tmp_path, spec, *PCS)
    merged: list[int] = []
    answer = LeftoverFlushes._answer_first

    def counting(self, due, retried, plugins):
        merged.append(len({qp.timestamp for qp in due}))
        return answer(self, due, retried, plugins)

    monkeypatch.setattr(LeftoverFlushes, "_answer_first", counting)
    fast = _run(sc, monkeypatch, True)
    assert any(n > 1 for n in merged)   # pods parked at different instants, first retried together
    assert fast == _run(sc, monkeypatch, False)
    assert fast[9] > 100   # retries answered in bulk


def test_a_queue_sort_other_than_priority_sort_goes_tick_by_tick():
    q = SchedulingQueue()
    q.sort_key = lambda qp: (0, qp.timestamp, qp.seq)
    assert flush_runs.run_flushes(q, 330.0, lambda: 1000.0, 300.0, lambda ts: ts + 330.0,
                                  lambda due: True, {}) is None


def _valid_trace(rng: random.Random, folder) -> None:
    """A small Alibaba-layout trace with more pods than its nodes hold: pods park, wait through
    long quiet stretches of leftover flushes and, with deletions, come back as others leave."""
    lines = ["sn,cpu_milli,memory_mib,gpu,model"]
    for k in range(rng.randint(2, 6)):
        lines.append(f"n{k},{rng.choice([8000, 16000, 32000])},{rng.choice([32768, 65536])},"
                     f"{rng.choice([0, 2, 4])},{rng.choice(['', 'T4', 'V100'])}")
    (folder / "openb_node_list_all_node.csv").write_text("\n".join(lines) + "\n")
    lines = ["name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
             "scheduled_time"]
    t = 0
    for k in range(rng.randint(30, 120)):
        t += rng.choice([0, 0, 5, 30, 200, 1000, 4000])
        ngpu = rng.choice([0, 1, 1, 2])
        milli = rng.choice([250, 500, 1000]) if ngpu == 1 else (1000 if ngpu else 0)
        lines.append(f"p{k},{rng.choice([1000, 4000, 8000])},{rng.choice([1024, 8192, 30000])},{ngpu},{milli},"
                     f"{rng.choice(['', 'T4'])},{rng.choice(['LS', 'BE'])},Running,{t},"
                     f"{t + rng.choice([100, 2000, 20000, 200000])},{t}")
    (folder / "openb_pod_list_default.csv").write_text("\n".join(lines) + "\n")


def _trace_run(folder, deletions: bool, limit: int | None, monkeypatch, fast: bool) -> tuple:
    from kubetwin.sim import loop
    from kubetwin.sim.scenario import Scenario, parse_scheduler_config
    from kubetwin.sim.traces import read_alibaba_gpu

    monkeypatch.setattr(flush_runs, "ENABLED", fast)
    monkeypatch.setattr(loop, "SAMPLE_MEMO", fast)
    tr = read_alibaba_gpu(folder, deletions=deletions, limit=limit)
    sc = Scenario(name="trace", nodes=tr.nodes, arrivals=tr.arrivals, profile=parse_scheduler_config(None))
    sc.settings.sample_interval = 3600.0
    sc.settings.kubelet_admission = False
    sim = Simulator(sc)
    result = sim.run()
    return (_state(sim, result), result.pods, result.samples, result.node_reports, result.counters,
            result.pending_reasons, [sp.pod for sp in sim.pods])


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("deletions,limit", [(False, None), (True, None), (True, 25)])
def test_random_traces_replay_alike_with_the_flush_and_sample_shortcuts_on_and_off(tmp_path, monkeypatch, seed,
                                                                                     deletions, limit):
    # every pod's record and bound object, the samples, node reports, counters and the queue's
    # end state: the runs of flushes (with later retries counted from their first answer) and
    # the samples' kept figures against the tick-by-tick loop and figures summed every time
    _valid_trace(random.Random(seed), tmp_path)
    fast = _trace_run(tmp_path, deletions, limit, monkeypatch, True)
    assert fast == _trace_run(tmp_path, deletions, limit, monkeypatch, False)
    assert fast[0][9] > 0   # retries answered in bulk
