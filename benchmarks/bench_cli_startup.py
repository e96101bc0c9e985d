"""Wall time of starting the CLI: `kubetwin --help` and a one-pod `kubetwin explain`.

Target (issue 2): each under 0.3 s on this machine — the conformance runner starts the CLI
once per case. Prints the best and the median of several runs.

    python benchmarks/bench_cli_startup.py
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], runs: int = 7) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False, cwd=ROOT)
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main() -> None:
    exe = shutil.which("kubetwin") or str(Path(sys.executable).parent / "kubetwin")
    cases = {
        "kubetwin --help": [exe, "--help"],
        "kubetwin explain (one pod, json)": [exe, "explain", "examples/explain/web.yaml", "--node",
                                             "examples/explain/node.yaml", "-o", "json"],
        "kubetwin explain (one pod, table)": [exe, "explain", "examples/explain/web.yaml", "--node",
                                              "examples/explain/node.yaml"],
    }
    for name, cmd in cases.items():
        best, median = timed(cmd)
        print(f"{name:36s} best {best * 1000:6.0f} ms  median {median * 1000:6.0f} ms  (target < 300 ms)")


if __name__ == "__main__":
    main()
