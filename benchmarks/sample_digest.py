"""Per-pod outcome digest of a large end-to-end sample (issue 18's check at 100k nodes): the
reference scenarios' benchmark nodes and pods (``tests/sim/reference_scenarios.py``) at any
size, run through ``simulate`` and hashed in the equivalence harness's canonical form.

    .venv/bin/python benchmarks/sample_digest.py --nodes 100000 --pods 2000

Run it on two checkouts (``PYTHONPATH=OTHER_CHECKOUT`` for the other one; the reference
scenarios are read from the checkout the script is in) and compare the digests: equal digests
mean every pod's placement, times, reasons, CPUs, NUMA nodes and every counter are the same.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--pods", type=int, default=2000)
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location(
        "reference_scenarios", Path(__file__).resolve().parent.parent / "tests" / "sim" / "reference_scenarios.py")
    assert spec is not None and spec.loader is not None
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    from kubetwin.sim.loop import simulate

    sc = ref.bench_scenario("sample", ref.bench_nodes(a.nodes), ref.bench_pods(a.pods))
    c0 = time.process_time()
    result = simulate(sc)
    cpu = time.process_time() - c0
    lines = ref.canonical_lines(result)
    print(f"{a.nodes} nodes, {a.pods} pods: {result.counters.bound} bound; digest {ref.digest(lines)} "
          f"({len(lines)} lines; simulate {cpu:.1f} s CPU)")


if __name__ == "__main__":
    main()
