"""``kubetwin topology`` on the largest machine a compact spec describes (``256s1n256c1t``:
65,536 CPUs, 256 NUMA nodes), in every output format, as a user runs it (a new process each
time, output to a file). Target: a few seconds per format (over 20 s each before; YAML 150 s).

    .venv/bin/python benchmarks/bench_topology.py [SPEC] [REPEAT]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORMATS = ("table", "machineinfo", "nrt", "yaml", "json")


def main() -> None:
    spec = sys.argv[1] if len(sys.argv) > 1 else "256s1n256c1t"
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    exe = Path(sys.executable).with_name("kubetwin")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "kubetwin"]
    print(f"kubetwin topology {spec}: median of {repeat} runs")
    print(f"{'format':12} {'seconds':>8} {'output MB':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in FORMATS:
            out = Path(tmp) / f"out.{fmt}"
            samples = []
            for _ in range(repeat):
                start = time.perf_counter()
                with out.open("wb") as f:
                    subprocess.run(cmd + ["topology", spec, "-o", fmt], stdout=f, check=True,
                                   env={**os.environ, "COLUMNS": "120"})
                samples.append(time.perf_counter() - start)
            print(f"{fmt:12} {statistics.median(samples):8.2f} {out.stat().st_size / 1e6:10.1f}")


if __name__ == "__main__":
    main()
