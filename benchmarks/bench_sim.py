"""Simulation throughput: end to end (scheduler default profile + kubelet admission with static CPU,
Static memory and a topology manager policy on every bound pod), the same with CPU usage curves
(CFS throttling, weight split, CPU pressure on every node: ``e2e-cpu``), the Alibaba GPU trace, and
a GPU-sharing workload. Prints one line per figure: wall time and process CPU time (the machine
is shared: compare CPU times, before and after in the same minutes).

    .venv/bin/python benchmarks/bench_sim.py [--nodes 5000 --pods 50000] [--only e2e,e2e-cpu,alibaba,gpu,dra]

Issue 15's target is ``e2e-cpu`` at 3,000 pods/s or more (5,000 nodes, 50,000 pods); its figures
before and after, and what its time goes to, are in docs/scale.md ("CPU usage curves end to end").
Issue 18's Alibaba target is load + replay under 1 s and 100 MB: figures (wall and process CPU,
imports of ``kubetwin.sim`` outside the timing) and what the time goes to are in docs/scale.md
("The Alibaba trace: fourth pass", then "fifth pass": the trace read as lists of cells, the
collector around the run, the scheduling cycle, before/after figures; two "sixth pass" sections:
the fused cycle and its compiled kernel, whose count of cycles the alibaba case prints; and the
parts outside the cycle measured one by one — flushes, binds, samples, records, imports — and
what each would still give).
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import time
from pathlib import Path

from kubetwin.sim.loop import simulate
from kubetwin.sim.scenario import Scenario

# The nodes, pods and DRA scenario are the reference scenarios' builders (one definition: the
# equivalence harness runs the same workloads, scaled down).
_spec = importlib.util.spec_from_file_location(
    "reference_scenarios", Path(__file__).resolve().parent.parent / "tests" / "sim" / "reference_scenarios.py")
assert _spec is not None and _spec.loader is not None
_ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ref)
_nodes, _pods, _scenario, _dra_scenario = _ref.bench_nodes, _ref.bench_pods, _ref.bench_scenario, _ref.dra_scenario


def _run(label: str, sc: Scenario) -> None:
    t = time.perf_counter()
    c = time.process_time()
    r = simulate(sc)
    dt = time.perf_counter() - t
    cpu = time.process_time() - c
    s = r.summary()
    print(f"{label}: {len(sc.nodes)} nodes, {len(sc.arrivals)} pods: {dt:.2f} s wall, "
          f"{len(sc.arrivals) / dt:,.0f} pods/s; {cpu:.2f} s CPU, {len(sc.arrivals) / cpu:,.0f} pods per "
          f"CPU-second; bound {s['bound']}, pending {s['pending']}, "
          f"kubelet rejections {sum(s['rejectedByKubelet'].values())}; "
          f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=50000)
    ap.add_argument("--only", default=None, help="comma-separated cases: e2e, e2e-cpu, alibaba, gpu, dra")
    a = ap.parse_args()
    cases = ("e2e", "e2e-cpu", "alibaba", "gpu", "dra")
    only = set(a.only.split(",")) if a.only else set(cases)
    unknown = sorted(only - set(cases))
    if unknown:
        ap.error(f"--only: unknown case {unknown[0]!r} (valid: {', '.join(cases)})")
    if "alibaba" in only:
        from kubetwin.sim.sweep import RunSpec, load_run

        t = time.perf_counter()
        c = time.process_time()
        sc = load_run(RunSpec(("alibaba", "/work/shared/data/traces/alibaba-gpu-v2023",
                               "openb_pod_list_default.csv", False)))
        r = simulate(sc)
        print(f"alibaba-gpu-v2023 (load + replay): {len(sc.nodes)} nodes, {len(sc.arrivals)} pods: "
              f"{time.perf_counter() - t:.2f} s wall, {time.process_time() - c:.2f} s CPU; bound {r.counters.bound}; max RSS "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        from kubetwin import _kernel
        from kubetwin.scheduler.fastpath.fused import FusedCycle

        print(f"  fused cycles {FusedCycle.answered} ({'compiled kernel' if _kernel.COMPILED else 'pure Python'})")
    if "gpu" in only:
        _run("gpu (500 nodes x 10 GPUs, one GPU per pod)", _scenario("gpu", _nodes(500, 10), _pods(5000, gpu=True)))
    if "dra" in only:
        _run("dra (500 nodes x 10 GPUs, one ResourceClaim per pod)", _dra_scenario(500, 10, 5000))
    if "e2e" in only:
        _run("end to end (default profile + kubelet static CPU/Static memory/single-numa-node)",
             _scenario("e2e", _nodes(a.nodes), _pods(a.pods)))
    if "e2e-cpu" in only:
        _run("end to end with CPU usage curves (throttling, weight split, CPU pressure on every node)",
             _scenario("e2e-cpu", _nodes(a.nodes), _pods(a.pods, cpu_usage=True)))


if __name__ == "__main__":
    main()
