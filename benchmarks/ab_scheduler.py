"""A/B of the scheduler benchmarks against another checkout, interleaved, for a loaded machine.

    .venv/bin/python benchmarks/ab_scheduler.py BASE [--runs 7] [--nodes 500,5000] [--pods 3000]
        [--kinds simple,...] [--sim gpu,dra] [--instructions KIND:NODES,...]

``BASE`` is another checkout of kubetwin (``git worktree add --detach /tmp/base <commit>``); it is
run from this checkout's interpreter with ``PYTHONPATH=BASE``, so both sides share one virtualenv.
Each run alternates base and this checkout (A, B, A, B, ...) in fresh processes and medians are
printed per figure, with B/A:

- ``bench_scheduler.py`` (this checkout's copy, both sides): pods per CPU-second per kind;
- ``bench_sim.py --only X`` (each side's own copy): CPU seconds inside ``simulate``;
- ``--instructions``: instructions per scheduled pod under ``valgrind --tool=callgrind`` (needs
  valgrind), the difference between two runs that schedule 100 and 500 of the same 500 pods with
  the collector off — a figure other load on the machine does not move, where CPU time on two
  busy cores moves by ±10 %.

Not a test: minutes of measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: run inside a side's process: its own bench_sim.py with simulate() timed in CPU seconds
SIM_PROBE = """
import importlib.util, sys, time
path = sys.argv[1]
sys.argv = [path] + sys.argv[2:]
spec = importlib.util.spec_from_file_location("bench_sim", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
run = mod.simulate
def timed(sc, *a, **k):
    c = time.process_time()
    r = run(sc, *a, **k)
    print(f"SIMCPU {sc.name} {time.process_time() - c:.4f}", flush=True)
    return r
mod.simulate = timed
mod.main()
"""

#: run under callgrind: schedule ``count`` of ``total`` pods of one kind, the collector off
INSTR_PROBE = """
import gc, sys
sys.path.insert(0, sys.argv[1])
from bench_scheduler import SERVICES, cluster, pod
from kubetwin.model.features import gates_for
from kubetwin.scheduler.scheduler import Scheduler
kind, n, count, total = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
c = cluster(n)
s = Scheduler(None, c.nodes, gates_for(), pods=c.pods, objects={"Service": SERVICES} if kind == "service-spread" else None)
pods = [pod(kind, i) for i in range(total)]
gc.collect()
gc.disable()
for p in pods[:count]:
    r = s.schedule(p)
    if r.node:
        s.bind(p, r.node)
"""


def run(cmd: list[str], root: Path, env: dict[str, str] | None = None) -> str:
    e = dict(os.environ, PYTHONPATH=str(root), PYTHONHASHSEED="0", **(env or {}))
    out = subprocess.run(cmd, env=e, capture_output=True, text=True, cwd=root)
    if out.returncode:
        sys.exit(f"{' '.join(cmd)} failed under {root}:\n{out.stderr[-3000:]}")
    return out.stdout + out.stderr


def figures(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = re.match(r"\s*(\d+) nodes\s+(\S+).*?(\d+) pods/CPU-s", line)
        if m:
            out[f"{m[1]} nodes {m[2]} (pods/CPU-s)"] = float(m[3])
        m = re.match(r"SIMCPU (\S+) ([\d.]+)", line)
        if m:
            out[f"sim {m[1]} (CPU s in simulate)"] = float(m[2])
    return out


def instructions(root: Path, kind: str, nodes: int, probe: Path) -> float:
    def collected(count: int) -> int:
        text = run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, str(probe),
                    str(HERE), kind, str(nodes), str(count), "500"], root)
        m = re.search(r"Collected : (\d+)", text)
        if m is None:
            sys.exit(f"no instruction count from valgrind:\n{text[-2000:]}")
        return int(m[1])

    return (collected(500) - collected(100)) / 400


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("base", type=Path, help="the other checkout (A); this one is B")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--nodes", default="500,5000")
    ap.add_argument("--pods", type=int, default=3000)
    ap.add_argument("--kinds", default="simple,spread,anti-affinity,soft-spread,preferred-affinity,service-spread")
    ap.add_argument("--sim", default="gpu", help="bench_sim.py --only figures ('' for none)")
    ap.add_argument("--instructions", default="", help="KIND:NODES,... counted under callgrind")
    ap.add_argument("--json", type=Path, help="write every run's figures here")
    a = ap.parse_args()
    sides = {"A": a.base.resolve(), "B": ROOT}
    runs: dict[str, dict[str, list[float]]] = {s: {} for s in sides}
    with tempfile.TemporaryDirectory() as tmp:
        sim_probe, instr_probe = Path(tmp) / "sim_probe.py", Path(tmp) / "instr_probe.py"
        sim_probe.write_text(SIM_PROBE)
        instr_probe.write_text(INSTR_PROBE)
        for i in range(a.runs):
            for side, root in sides.items():
                text = run([sys.executable, str(HERE / "bench_scheduler.py"), "--nodes", a.nodes, "--pods",
                            str(a.pods), "--kinds", a.kinds], root) if a.kinds else ""
                for only in filter(None, a.sim.split(",")):
                    text += run([sys.executable, str(sim_probe), str(root / "benchmarks" / "bench_sim.py"),
                                 "--only", only], root)
                for name, value in figures(text).items():
                    runs[side].setdefault(name, []).append(value)
                print(f"run {i + 1}/{a.runs} {side} done", file=sys.stderr, flush=True)
        for spec in filter(None, a.instructions.split(",")):
            kind, _, nodes = spec.partition(":")
            for side, root in sides.items():
                runs[side][f"{nodes} nodes {kind} (instructions/pod)"] = [instructions(root, kind, int(nodes),
                                                                                       instr_probe)]
    print(f"A = {sides['A']}, B = {sides['B']}; {a.runs} interleaved runs, medians; "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    for name, values in runs["A"].items():
        va, vb = statistics.median(values), statistics.median(runs["B"].get(name, [float("nan")]))
        print(f"{name:<44} A {va:12.2f}   B {vb:12.2f}   B/A {vb / va:6.3f}")
    if a.json:
        a.json.write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
