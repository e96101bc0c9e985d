"""Traced simulation cost: ``simulate --trace file:...`` on the end-to-end bench scenario
(default profile + kubelet static CPU / Static memory / single-numa-node), beside the same run
untraced. Prints wall and process CPU time, the trace file's size and its span count.

    .venv/bin/python benchmarks/bench_trace.py [--nodes 80 --pods 4500] (the reference end-to-end scenario's size)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
import time
from pathlib import Path

from kubetwin import tracing
from kubetwin.sim.loop import simulate

_spec = importlib.util.spec_from_file_location(
    "reference_scenarios", Path(__file__).resolve().parent.parent / "tests" / "sim" / "reference_scenarios.py")
assert _spec is not None and _spec.loader is not None
_ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ref)


def _spans(path: Path) -> int:
    n = 0
    with path.open() as f:
        for line in f:
            for rs in json.loads(line)["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    n += len(ss["spans"])
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=80)
    ap.add_argument("--pods", type=int, default=4500)
    ap.add_argument("--untraced", action="store_true", help="also time the run without --trace")
    a = ap.parse_args()
    if a.untraced:
        sc = _ref.bench_scenario("e2e", _ref.bench_nodes(a.nodes), _ref.bench_pods(a.pods))
        t, c = time.perf_counter(), time.process_time()
        simulate(sc)
        print(f"untraced: {a.nodes} nodes, {a.pods} pods: {time.perf_counter() - t:.2f} s wall, "
              f"{time.process_time() - c:.2f} s CPU")
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "trace.json"
        sc = _ref.bench_scenario("e2e", _ref.bench_nodes(a.nodes), _ref.bench_pods(a.pods))
        t, c = time.perf_counter(), time.process_time()
        tracing.start(f"file:{out}", "simulate")
        simulate(sc)
        tracing.stop(ok=True)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        print(f"traced: {a.nodes} nodes, {a.pods} pods: {wall:.2f} s wall, {cpu:.2f} s CPU; "
              f"trace {out.stat().st_size / 1e6:.1f} MB, {_spans(out):,} spans")


if __name__ == "__main__":
    main()
