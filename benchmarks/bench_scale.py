"""Scale targets of issue 18, one figure per target, each case in its own process (so the max
RSS printed is that case's own).

    .venv/bin/python benchmarks/bench_scale.py [--only CASE] [--runs 3] [--max-nodes 100000]
                                               [--pods-per-node 10]

Cases (``--only``, repeatable or comma-separated):

``scheduler``            scheduler alone, 5,000 nodes, simple pods (target >= 20,000 pods/s)
``spread``               same cluster, hard zone spreading (target 2x the figure before issue 18)
``anti-affinity``        same cluster, required inter-pod anti-affinity (target 2x)
``preferred-affinity``   same cluster, preferred inter-pod affinity/anti-affinity (target 2x)
``dra``                  simulation, 500 nodes x 10 GPUs, one ResourceClaim per pod (target >= 5,000 pods/s)
``alibaba``              Alibaba GPU trace (1,523 nodes, 8,152 pods), load + replay (target < 1 s, < 100 MB)
``curve``                end to end (admission, default profile with the adaptive
                         percentageOfNodesToScore, kubelet admission on every bound pod) at 5k, 15k,
                         50k and 100k nodes (up to ``--max-nodes``), ``--pods-per-node`` pods per node,
                         with pods/s, µs per pod, and the memory held per node and per pod

Every figure is the median of ``--runs`` runs, wall time beside process CPU time (the machine is
shared, the CPU figure is the steadier one). The inputs are the other benchmarks' own builders:
``bench_scheduler.cluster``/``pod`` for the scheduler alone, the reference scenarios'
``bench_nodes``/``bench_pods``/``dra_scenario`` (``tests/sim/reference_scenarios.py``) for the
simulations, ``sweep.load_run`` for the trace.

The scheduler alone at 5,000 nodes: with the fused cycle's compiled kernel (docs/scale.md, "The
Alibaba trace: sixth pass") about 22,000 pods per CPU-second against 16,500 on the vectorised path
(``KUBETWIN_PURE_PYTHON=1``), load 5.

DRA on a quiet machine: 3,091 pods/s (324 µs/pod) on ``main`` 6b891fd; the scheduler side's
fourth pass (docs/scale.md) took 5.5 % of the simulation's instructions off (1.61 M → 1.52 M
per pod) and about 8 % of its CPU time in a loaded A/B.

What the DRA figure times: ``simulate()`` alone — the first use in the process of the scheduler's
and the DRA modules (imported lazily, about 50 ms), the simulator's set-up, its full garbage
collection before the run, decoding the slices and classes, the run, and the result with its node
reports: about 0.15–0.18 s of fixed cost per run (a 1-pod run), 30–35 µs of each pod's share at
5,000 pods. Building the scenario (the YAML, 5,000 pods, 500 nodes' slices) is not timed; the
line prints its wall and CPU time beside. Ninth session (docs/scale.md, "DRA, everything outside
the plugin"): 1.24 M → 1.11 M instructions per pod in ``simulate`` (−10.7 %), about −17 to −25 %
CPU in a loaded same-minute A/B against ``main``.

Ninth session, quiet start 3,688–3,962 pods/s on ``main`` 38eaea5; the scheduler side's fifth pass (allocation without backtracking, PreBind's claims
built when read, faster frozen values) 1.21 M → 1.12 M instructions per pod, +17 to +19 %
pods/CPU-s in a loaded A/B (2,630 / 2,717 → 3,231 / 3,190).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TRACE = "/work/shared/data/traces/alibaba-gpu-v2023"
CURVE_NODES = (5_000, 15_000, 50_000, 100_000)
SCHEDULER_KINDS = ("scheduler", "spread", "anti-affinity", "preferred-affinity")
CASES = SCHEDULER_KINDS + ("dra", "alibaba", "curve")
#: pods/s (or seconds / MB for the trace) before issue 18 on this machine: filled in from the
#: first run on main, printed beside each figure
TARGETS = {"scheduler": "≥ 20,000 pods/s", "spread": "2× before", "anti-affinity": "2× before",
           "preferred-affinity": "2× before", "dra": "≥ 5,000 pods/s", "alibaba": "< 1 s and < 100 MB",
           "curve": "100k nodes × 1M pods < 15 min, < 16 GB"}


def _module(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rss_mb() -> float:
    """Resident set size now (``/proc/self/statm``), MB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- one run of one case (in a child process) -----------------------------------------------------


def run_scheduler(kind: str, nodes: int, pods: int) -> dict[str, Any]:
    from kubetwin.model.features import gates_for
    from kubetwin.scheduler.scheduler import Scheduler

    bs = _module("bench_scheduler", HERE / "bench_scheduler.py")
    c = bs.cluster(nodes)
    sched = Scheduler(None, c.nodes, gates_for(), pods=c.pods)
    incoming = [bs.pod("simple" if kind == "scheduler" else kind, i) for i in range(pods)]
    bound = 0
    gc.collect()
    c0, t0 = time.process_time(), time.perf_counter()
    for p in incoming:
        r = sched.schedule(p)
        if r.node is not None:
            sched.bind(p, r.node)
            bound += 1
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"pods": pods, "nodes": nodes, "wall": wall, "cpu": cpu, "bound": bound, "max_rss": _max_rss_mb()}


def run_dra(nodes: int, gpus: int, pods: int) -> dict[str, Any]:
    from kubetwin.sim.loop import simulate

    ref = _module("reference_scenarios", HERE.parent / "tests" / "sim" / "reference_scenarios.py")
    c0, t0 = time.process_time(), time.perf_counter()
    sc = ref.dra_scenario(nodes, gpus, pods)
    load, load_cpu = time.perf_counter() - t0, time.process_time() - c0
    gc.collect()
    # timed: simulate() alone — the scheduler's and the DRA modules' imports (first use in the
    # process), the simulator's set-up, its own full collection, the run and the result
    c0, t0 = time.process_time(), time.perf_counter()
    r = simulate(sc)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"pods": pods, "nodes": nodes, "wall": wall, "cpu": cpu, "load": load, "load_cpu": load_cpu,
            "bound": r.counters.bound, "max_rss": _max_rss_mb()}


def run_alibaba() -> dict[str, Any]:
    base = _rss_mb()
    c0, t0 = time.process_time(), time.perf_counter()
    from kubetwin.sim.loop import simulate
    from kubetwin.sim.sweep import RunSpec, load_run

    sc = load_run(RunSpec(("alibaba", TRACE, "openb_pod_list_default.csv", False)))
    load = time.perf_counter() - t0
    r = simulate(sc)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"pods": len(sc.arrivals), "nodes": len(sc.nodes), "wall": wall, "cpu": cpu, "load": load,
            "bound": r.counters.bound, "max_rss": _max_rss_mb(), "base_rss": base}


def run_curve(nodes: int, pods: int) -> dict[str, Any]:
    from kubetwin.sim.loop import simulate

    ref = _module("reference_scenarios", HERE.parent / "tests" / "sim" / "reference_scenarios.py")
    gc.collect()
    base = _rss_mb()
    t0 = time.perf_counter()
    node_list = ref.bench_nodes(nodes)
    gc.collect()
    after_nodes = _rss_mb()
    arrivals = ref.bench_pods(pods)
    gc.collect()
    after_pods = _rss_mb()
    sc = ref.bench_scenario("curve", node_list, arrivals)
    del node_list, arrivals
    build = time.perf_counter() - t0
    c0, t0 = time.process_time(), time.perf_counter()
    r = simulate(sc)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    gc.collect()
    end = _rss_mb()
    return {"pods": pods, "nodes": nodes, "wall": wall, "cpu": cpu, "load": build, "bound": r.counters.bound,
            "max_rss": _max_rss_mb(), "base_rss": base, "node_input_mb": after_nodes - base,
            "pod_input_mb": after_pods - after_nodes, "end_rss": end}


def child(args: argparse.Namespace) -> None:
    case = args.child
    if case in SCHEDULER_KINDS:
        out = run_scheduler(case, args.nodes or 5000, args.pods or {"scheduler": 20_000, "spread": 2000}.get(case, 200))
    elif case == "dra":
        out = run_dra(args.nodes or 500, 10, args.pods or 5000)
    elif case == "alibaba":
        out = run_alibaba()
    else:
        out = run_curve(args.nodes, args.pods)
    print(json.dumps(out))


# --- the parent: runs, medians, one line per figure -----------------------------------------------


def _runs(case: str, runs: int, nodes: int = 0, pods: int = 0) -> list[dict[str, Any]]:
    out = []
    for _ in range(runs):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", case]
        if nodes:
            cmd += ["--nodes", str(nodes)]
        if pods:
            cmd += ["--pods", str(pods)]
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if p.returncode != 0:
            sys.exit(f"{case}: the run failed:\n{p.stderr}")
        out.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return out


def _med(rs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rs)


def _rate_line(label: str, rs: list[dict[str, Any]]) -> str:
    pods = rs[0]["pods"]
    wall, cpu = _med(rs, "wall"), _med(rs, "cpu")
    return (f"{label:<50} {pods / wall:>9,.0f} pods/s wall  {pods / cpu:>9,.0f} pods/CPU-s  "
            f"({wall / pods * 1e6:,.0f} µs/pod; median of {len(rs)}; {rs[0]['bound']}/{pods} bound; "
            f"max RSS {_med(rs, 'max_rss'):,.0f} MB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", default=None,
                    help=f"case(s) to run, comma-separated or repeated: {', '.join(CASES)}")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-nodes", type=int, default=100_000, help="largest cluster of the curve")
    ap.add_argument("--pods-per-node", type=int, default=10, help="pods per node on the curve")
    ap.add_argument("--curve-nodes", default=",".join(map(str, CURVE_NODES)),
                    help="node counts of the curve, comma-separated (capped by --max-nodes)")
    ap.add_argument("--curve-runs", type=int, default=1, help="runs per point of the curve (large: slow)")
    ap.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    ap.add_argument("--nodes", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--pods", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a)
        return
    only = [c for part in (a.only or [",".join(CASES)]) for c in part.split(",") if c]
    for c in only:
        if c not in CASES:
            ap.error(f"--only {c}: not a case (cases: {', '.join(CASES)})")
    for case in only:
        if case in SCHEDULER_KINDS:
            label = f"scheduler alone, 5,000 nodes, {'simple pods' if case == 'scheduler' else case}"
            print(f"{_rate_line(label, _runs(case, a.runs))}  target {TARGETS[case]}", flush=True)
        elif case == "dra":
            rs = _runs(case, a.runs)
            print(f"{_rate_line('DRA simulation, 500 nodes x 10 GPUs, 1 claim/pod', rs)}  "
                  f"{_med(rs, 'cpu') / rs[0]['pods'] * 1e6:,.0f} µs CPU/pod; scenario load (not timed) "
                  f"{_med(rs, 'load'):.2f} s, {_med(rs, 'load_cpu'):.2f} s CPU  target {TARGETS[case]}", flush=True)
        elif case == "alibaba":
            rs = _runs(case, a.runs)
            print(f"{'Alibaba GPU trace, load + replay':<50} {_med(rs, 'wall'):.2f} s wall  {_med(rs, 'cpu'):.2f} s CPU  "
                  f"(load {_med(rs, 'load'):.2f} s; {rs[0]['nodes']} nodes, {rs[0]['pods']} pods, "
                  f"{rs[0]['bound']} bound; max RSS {_med(rs, 'max_rss'):.0f} MB, of which the interpreter "
                  f"{_med(rs, 'base_rss'):.0f} MB; median of {len(rs)})  target {TARGETS[case]}", flush=True)
        else:
            for n in (int(x) for x in a.curve_nodes.split(",") if int(x) <= a.max_nodes):
                pods = n * a.pods_per_node
                rs = _runs(case, a.curve_runs, n, pods)
                held = _med(rs, "end_rss") - _med(rs, "base_rss")
                print(f"{_rate_line(f'end to end, {n:,} nodes x {a.pods_per_node} pods', rs)}  "
                      f"build {_med(rs, 'load'):.1f} s; node inputs {_med(rs, 'node_input_mb') / n * 1024:.1f} KB/node, "
                      f"pod inputs {_med(rs, 'pod_input_mb') / pods * 1024:.2f} KB/pod; held after the run "
                      f"{held:,.0f} MB = {held / (n + pods) * 1024:.2f} KB per node+pod", flush=True)


if __name__ == "__main__":
    main()
