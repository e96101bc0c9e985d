"""``kubetwin snapshot`` of a large cluster: 5,000 nodes and 150,000 pods, as kubectl dumps them
(JSON Lists: nodes, pods in files of 10,000, Deployments, ReplicaSets, a DaemonSet, Secrets).

Target (issue 16): the dump loads into a snapshot (strict decoding, merge, DaemonSet placement,
the scenario folder written) in under 10 s. The dump is generated here, never committed.

    python benchmarks/bench_snapshot.py [--nodes N] [--pods N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pods import typical_pod  # noqa: E402

from kubetwin.sim.snapshot import Phases, load, write  # noqa: E402

TARGET_S = 10.0


def node(i: int) -> dict:
    name = f"node-{i:05d}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"n-{i}", "labels": {"kubernetes.io/hostname": name,
                                                                   "kubernetes.io/os": "linux",
                                                                   "topology.kubernetes.io/zone": f"z{i % 3}"},
                         "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1"}]},
            "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}] if i % 10 == 0 else []},
            "status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                       "allocatable": {"cpu": "63", "memory": "250Gi", "pods": "110"}}}


def workloads() -> list[dict]:
    out = []
    for a in range(97):
        app = f"app-{a}"
        tmpl = {"metadata": {"labels": {"app": app}},
                "spec": {"containers": [{"name": "main", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
        out.append({"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": app, "namespace": f"team-{a % 7}", "uid": f"d-{a}"},
                    "spec": {"replicas": 1500, "selector": {"matchLabels": {"app": app}}, "template": tmpl}})
    out.append({"apiVersion": "apps/v1", "kind": "DaemonSet",
                "metadata": {"name": "node-exporter", "namespace": "monitoring"},
                "spec": {"selector": {"matchLabels": {"app": "node-exporter"}},
                         "template": {"metadata": {"labels": {"app": "node-exporter"}},
                                      "spec": {"nodeSelector": {"kubernetes.io/os": "linux"},
                                               "containers": [{"name": "e", "image": "x",
                                                               "resources": {"requests": {"cpu": "100m"}}}]}}}})
    out += [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"s{i}", "namespace": "default"},
             "data": {"k": "dmFsdWU="}} for i in range(500)]
    return out


def write_dump(d: Path, nodes: int, pods: int) -> int:
    def lst(items: list[dict]) -> str:
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})

    (d / "nodes.json").write_text(lst([node(i) for i in range(nodes)]))
    (d / "workloads.json").write_text(lst(workloads()))
    rng = random.Random(1)
    for start in range(0, pods, 10_000):
        chunk = []
        for i in range(start, min(pods, start + 10_000)):
            p = typical_pod(i, rng)
            p["metadata"]["uid"] = f"p-{i}"
            p["spec"]["nodeName"] = f"node-{i % nodes:05d}"
            p["status"] = {"phase": "Running"}
            chunk.append(p)
        (d / f"pods-{start // 10_000:03d}.json").write_text(lst(chunk))
    return sum(f.stat().st_size for f in d.iterdir())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5_000)
    ap.add_argument("--pods", type=int, default=150_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dump, out = Path(tmp) / "dump", Path(tmp) / "out"
        dump.mkdir()
        size = write_dump(dump, args.nodes, args.pods)
        print(f"dump: {args.nodes} nodes, {args.pods} pods, {size / 1e6:.0f} MB of JSON")
        times = []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            phases = Phases()
            snap = load([dump], phases=phases)
            write(snap, out, phases=phases)
            t2, c2 = time.perf_counter(), time.process_time()
            times.append(t2 - t0)
            print(f"  {'; '.join(phases.lines())}")
            print(f"  total {t2 - t0:.2f} s wall, {c2 - c0:.2f} s CPU: {snap.summary()}")
        med = statistics.median(times)
        print(f"snapshot {args.nodes} nodes / {args.pods} pods: median {med:.2f} s "
              f"(target < {TARGET_S:.0f} s: {'met' if med < TARGET_S else 'NOT met'})")


if __name__ == "__main__":
    main()
