"""The Cluster Autoscaler's Filter-plugin path (``kubetwin/sim/ca_filter.py``): an hour of a
node group whose Deployment spreads over zones with ``DoNotSchedule`` (every pending pod goes
through the scheduler's PreFilter/Filter plugins on a fork of the cluster in FilterOutSchedulable,
the estimator and the drain simulation). Prints wall and process CPU time and the outcome.

    .venv/bin/python benchmarks/bench_ca_filter.py [--nodes 100 --replicas 300 --key topology.kubernetes.io/zone]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import yaml

from kubetwin.sim import load_scenario
from kubetwin.sim.loop import simulate


def write_scenario(folder: Path, nodes: int, replicas: int, key: str) -> Path:
    sim = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "ca-filter"},
           "spec": {"horizon": "1h", "autoscaling": {"clusterAutoscaler": {"expander": "least-waste"}},
                    "nodeGroups": [{"name": "pool", "count": nodes, "minSize": 1, "maxSize": nodes * 3,
                                    "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                                    "zones": ["a", "b", "c"]}]}}
    spread = {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchLabels": {"app": "web"}}}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}],
                                          "topologySpreadConstraints": [spread]}}}}
    path = folder / "scenario.yaml"
    path.write_text(yaml.safe_dump_all([sim, dep]))
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--replicas", type=int, default=300)
    ap.add_argument("--key", default="topology.kubernetes.io/zone")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sc = load_scenario(write_scenario(Path(tmp), args.nodes, args.replicas, args.key))
        t0, c0 = time.perf_counter(), time.process_time()
        r = simulate(sc)
        t1, c1 = time.perf_counter(), time.process_time()
    ca = r.autoscaling["clusterAutoscaler"]
    print(f"one simulated hour, {args.nodes} nodes, {args.replicas} replicas spread by {args.key}: "
          f"{t1 - t0:.2f} s wall, {c1 - c0:.2f} s CPU")
    print(f"scale-ups (nodes) {[u['nodes'] for u in ca['scaleUps']]}, scale-downs {len(ca['scaleDowns'])}, "
          f"running {sum(1 for p in r.pods if p.phase == 'Running')}, nodes at the end {r.nodes}")


if __name__ == "__main__":
    main()
