"""Scheduling throughput with the default profile (simple pods, spread, anti-affinity, soft
spread, preferred affinity, and ``service-spread``: pods without constraints that a Service
selects, spread by the System default constraints).

    python benchmarks/bench_scheduler.py [--nodes 500,5000,15000] [--pods 2000] [--exact 3]

``kubetwin.scheduler.Scheduler`` keeps the cluster between cycles: each measured pod is a
new object that is scheduled and then bound, as in a simulation (N nodes start with 2 pods
each). Wall-clock and CPU-time rates are both printed: on a shared machine the CPU figure is
the one that does not depend on other load. ``--exact`` also times the explained one-shot cycle (``schedule_one``: snapshot built
per call, every plugin node by node) for comparison — what the scheduler did before.
"""

from __future__ import annotations

import argparse
import time

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.inputs import ClusterInputs

#: Services whose selectors give pods without constraints the System default spreading
SERVICES = [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"svc-a{j}", "namespace": "default"},
             "spec": {"selector": {"app": f"a{j}"}}} for j in range(2)]


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


def pod(kind: str, i: int = 0) -> Pod:
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}
    if kind == "spread":
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": "a0"}}}]
    if kind == "soft-spread":
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway",
                                              "labelSelector": {"matchLabels": {"app": "a0"}}}
                                             for key in ("topology.kubernetes.io/zone", "kubernetes.io/hostname")]
    if kind == "preferred-affinity":
        spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": {"topologyKey": "topology.kubernetes.io/zone",
                                               "labelSelector": {"matchLabels": {"app": "a1"}}}}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                  "labelSelector": {"matchLabels": {"app": "a0"}}}}]}}
    if kind == "anti-affinity":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "a9"}}}]}}
    labels = {"app": "a9" if kind == "anti-affinity" else "a0"}
    return convert({"metadata": {"name": f"incoming-{i}", "labels": labels}, "spec": spec}, Pod)


def main() -> None:
    from kubetwin.scheduler.scheduler import Scheduler

    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", default="500,5000,15000")
    ap.add_argument("--pods", type=int, default=2000, help="pods per measurement (simple; others use 1/10)")
    ap.add_argument("--kinds", default="simple,spread,anti-affinity,soft-spread,preferred-affinity,service-spread")
    ap.add_argument("--exact", type=int, default=0, help="also time N one-shot explained cycles")
    a = ap.parse_args()
    gates = gates_for()
    for n in (int(x) for x in a.nodes.split(",")):
        c = cluster(n)
        for kind in a.kinds.split(","):
            t0 = time.perf_counter()
            objects = {"Service": SERVICES} if kind == "service-spread" else None
            sched = Scheduler(None, c.nodes, gates, pods=c.pods, objects=objects)
            build = time.perf_counter() - t0
            count = a.pods if kind == "simple" else max(a.pods // 10, 20)
            pods = [pod(kind, i) for i in range(count)]
            bound = 0
            c0 = time.process_time()
            t0 = time.perf_counter()
            for p in pods:
                r = sched.schedule(p)
                if r.node is not None:
                    sched.bind(p, r.node)
                    bound += 1
            dt = time.perf_counter() - t0
            cpu = time.process_time() - c0
            line = (f"{n:>6} nodes  {kind:<14} {count / dt:8.0f} pods/s  ({dt / count * 1e6:6.0f} µs/pod wall, "
                    f"{count / cpu:6.0f} pods/CPU-s, {bound}/{count} bound, snapshot {build * 1000:.0f} ms)")
            if a.exact:
                from kubetwin.scheduler.cycle import schedule_one

                p = pod(kind)
                t0 = time.perf_counter()
                for _ in range(a.exact):
                    schedule_one(c, p, gates)
                ex = (time.perf_counter() - t0) / a.exact
                line += f"  | one-shot explained cycle {1 / ex:6.1f}/s"
            print(line, flush=True)


if __name__ == "__main__":
    main()
