"""Loading and validating 10,000 typical pod manifests from JSON, NDJSON and YAML.

Targets (issue 2): JSON/NDJSON in under 0.5 s including validation; YAML at the speed of the
C-accelerated YAML loader with validation adding no more than 20 %.

    python benchmarks/bench_load.py [--pods N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pods import typical_pods  # noqa: E402

from kubetwin.model.objects import load_pods  # noqa: E402


def best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=10_000)
    args = ap.parse_args()
    pods = typical_pods(args.pods)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "pods.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
        (d / "pods.ndjson").write_text("\n".join(json.dumps(p) for p in pods) + "\n")
        (d / "pods.yaml").write_text(yaml.dump_all(pods, Dumper=yaml.CSafeDumper, sort_keys=False))
        size = (d / "pods.json").stat().st_size
        print(f"{args.pods} pods, {size / 1e6:.1f} MB as JSON")
        for name in ("pods.json", "pods.ndjson"):
            t = best_of(partial(load_pods, d / name))
            n = len(load_pods(d / name))
            assert n == args.pods
            print(f"  {name:12s} load+validate: {t:.3f} s  ({args.pods / t:,.0f} pods/s)  target < 0.5 s")
        text = (d / "pods.yaml").read_text()
        t_raw = best_of(lambda: list(yaml.load_all(text, Loader=yaml.CSafeLoader)), repeat=1)
        t_ours = best_of(lambda: load_pods(d / "pods.yaml"), repeat=1)
        print(f"  pods.yaml    CSafeLoader alone: {t_raw:.2f} s; kubetwin load+validate: {t_ours:.2f} s "
              f"(+{(t_ours / t_raw - 1) * 100:.0f} %, target <= +20 %)")


if __name__ == "__main__":
    main()
