"""Scheduling cycles per second with the default profile (simple pods, spread, anti-affinity).

    python benchmarks/bench_scheduler.py [--nodes 500,5000,15000] [--pods 20]

Each cycle schedules one pod against a fresh snapshot of N nodes holding 2 pods each; the
chosen node is not updated (a cycle measurement, not a simulation).
"""

from __future__ import annotations

import argparse
import time

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.cycle import schedule_one
from kubetwin.scheduler.inputs import ClusterInputs


def cluster(n: int) -> ClusterInputs:
    nodes, pods = [], []
    for i in range(n):
        name = f"node-{i}"
        nodes.append(convert({"metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}, Node))
        for j in range(2):
            pods.append(convert({"metadata": {"name": f"p-{i}-{j}", "labels": {"app": f"a{j}"}},
                                 "spec": {"nodeName": name, "containers": [
                                     {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}},
                                Pod))
    return ClusterInputs(nodes, pods)


def pod(kind: str) -> Pod:
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]}
    if kind == "spread":
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": "a0"}}}]
    if kind == "anti-affinity":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "a9"}}}]}}
    return convert({"metadata": {"name": "incoming", "labels": {"app": "a0"}}, "spec": spec}, Pod)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", default="500,5000,15000")
    ap.add_argument("--pods", type=int, default=10)
    ap.add_argument("--kinds", default="simple,spread,anti-affinity")
    a = ap.parse_args()
    gates = gates_for()
    for n in (int(x) for x in a.nodes.split(",")):
        c = cluster(n)
        for kind in a.kinds.split(","):
            p = pod(kind)
            schedule_one(c, p, gates)  # warm caches
            t0 = time.perf_counter()
            for _ in range(a.pods):
                schedule_one(c, p, gates)
            dt = (time.perf_counter() - t0) / a.pods
            print(f"{n:>6} nodes  {kind:<14} {1 / dt:8.1f} cycles/s  ({dt * 1000:.1f} ms/cycle)")


if __name__ == "__main__":
    main()
