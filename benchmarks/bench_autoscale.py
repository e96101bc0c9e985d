"""One simulated day of a 1,000-node cluster with HPA, VPA and the Cluster Autoscaler acting in
5-minute steps (HPA sync, VPA recommender and updater, CA scan and samples every 5 min). Target:
under 60 s on the project machine. Prints one line per figure.

    .venv/bin/python benchmarks/bench_autoscale.py [--nodes 1000 --deployments 200 --vpas 50 --statefulsets 0]

The scenario is written as files and read through ``load_scenario`` (strict decoding included):
a fixed node group and an autoscaled one (1,000 nodes at the start), Deployments whose daily
load curves peak at different hours, an HPA on every Deployment, a VPA (Recreate) on some;
``--statefulsets N`` makes the last N of them OrderedReady StatefulSets instead.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import yaml

from kubetwin.sim import load_scenario
from kubetwin.sim.loop import simulate


def write_scenario(folder: Path, nodes: int, deployments: int, vpas: int, statefulsets: int = 0) -> Path:
    fixed = nodes // 5
    spec = {
        "seed": 1, "horizon": "24h", "sampleInterval": "5m",
        "autoscaling": {
            "horizontalPodAutoscaler": {"syncPeriod": "5m"},
            "verticalPodAutoscaler": {"recommenderInterval": "5m", "updaterInterval": "5m"},
            "clusterAutoscaler": {"scanInterval": "5m", "expander": "least-waste"}},
        "nodeGroups": [
            {"name": "fixed", "count": fixed, "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}},
            {"name": "pool", "count": nodes - fixed, "minSize": 50, "maxSize": nodes * 2,
             "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}}],
        "objects": ["objects.yaml"]}
    docs = []
    for k in range(deployments):
        peak = 8 + (k % 12)           # the peak hour moves from one Deployment to the next
        base, top = 4 + k % 5, 80 + (k % 7) * 20   # cores, all replicas together
        curve = [["0h", base], [f"{peak - 4}h", base], [f"{peak}h", top], [f"{peak + 4}h", base], ["24h", base]]
        name = f"app-{k}"
        kind = "StatefulSet" if k >= deployments - statefulsets else "Deployment"
        workload = {"apiVersion": "apps/v1", "kind": kind,
                    "metadata": {"name": name, "annotations": {
                        "kubetwin.io/load": yaml.safe_dump({"cpu": curve, "repeat": "24h"},
                                                           default_flow_style=True).strip()}},
                    "spec": {"replicas": 10, "selector": {"matchLabels": {"app": name}},
                             "template": {"metadata": {"labels": {"app": name}},
                                          "spec": {"containers": [{"name": "c", "resources": {
                                              "requests": {"cpu": "1", "memory": "2Gi"}}}]}}}}
        if kind == "StatefulSet":
            workload["spec"]["serviceName"] = name
        docs.append(workload)
        docs.append({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
                     "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": name},
                              "minReplicas": 2, "maxReplicas": 200,
                              "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                                  "type": "Utilization", "averageUtilization": 60}}}]}})
        if k < vpas:   # memory only: the HPA owns cpu
            docs.append({"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
                         "metadata": {"name": name},
                         "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": kind, "name": name},
                                  "updatePolicy": {"updateMode": "Recreate"},
                                  "resourcePolicy": {"containerPolicies": [
                                      {"containerName": "*", "controlledResources": ["memory"]}]}}})
    (folder / "objects.yaml").write_text(yaml.safe_dump_all(docs))
    path = folder / "scenario.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation",
                                    "metadata": {"name": "autoscale-day"}, "spec": spec}))
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--deployments", type=int, default=200)
    ap.add_argument("--vpas", type=int, default=50)
    ap.add_argument("--statefulsets", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_scenario(Path(tmp), args.nodes, args.deployments, args.vpas, args.statefulsets)
        t0 = time.perf_counter()
        sc = load_scenario(path)
        t1 = time.perf_counter()
        c1 = time.process_time()
        r = simulate(sc)
        t2 = time.perf_counter()
        c2 = time.process_time()
    s = r.summary()["autoscaling"]
    print(f"load scenario ({args.nodes} nodes, {args.deployments} Deployments+HPAs ({args.statefulsets} of them "
          f"StatefulSets), {args.vpas} VPAs): {t1 - t0:.2f} s")
    print(f"one simulated day, 5-minute steps: {t2 - t1:.2f} s wall, {c2 - c1:.2f} s CPU (target < 60 s)")
    print(f"pods created: {len(r.pods)}, scheduling attempts: {r.counters.attempts}")
    print(f"nodes min/max/end: {s['nodes']['min']}/{s['nodes']['max']}/{s['nodes']['end']}, "
          f"scale-ups {s['scaleUps']}, scale-downs {s['scaleDowns']}, HPA rescales {s['hpaRescales']}, "
          f"VPA evictions {s.get('vpaEvictions', 0)}")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
