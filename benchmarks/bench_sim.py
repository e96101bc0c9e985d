"""Simulation throughput: end to end (scheduler default profile + kubelet admission with static CPU,
Static memory and a topology manager policy on every bound pod), the same with CPU usage curves
(CFS throttling, weight split, CPU pressure on every node: ``e2e-cpu``), the Alibaba GPU trace, and
a GPU-sharing workload. Prints one line per figure.

    .venv/bin/python benchmarks/bench_sim.py [--nodes 5000 --pods 50000] [--only e2e|e2e-cpu|alibaba|gpu|dra]
"""

from __future__ import annotations

import argparse
import resource
import time

from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.sim.loop import simulate
from kubetwin.sim.scenario import Scenario, SimNode, node_resources
from kubetwin.sim.workload import Arrival


def _nodes(n: int, gpus: int = 0):
    from kubetwin.machine import load_machine
    from kubetwin.model.node import node_from_dict

    machine = load_machine("2s2n16c2t")
    cfg = KubeletConfiguration.from_dict({
        "cpuManagerPolicy": "static", "memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
        "kubeReserved": {"cpu": "2", "memory": "2Gi"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "2148Mi"}}]})
    cap, alloc = node_resources(machine, cfg, {}, gpus)
    out = []
    for i in range(n):
        node = node_from_dict({"apiVersion": "v1", "kind": "Node",
                               "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                                                      "topology.kubernetes.io/zone": f"z{i % 3}"}},
                               "status": {"capacity": cap, "allocatable": alloc}})
        out.append(SimNode(node, "bench", machine, cfg, gpus, "G" if gpus else ""))
    return out


def _pods(n: int, gpu: bool = False, cpu_usage: bool = False):
    from kubetwin.sim.usage import parse_usage

    out = []
    for k in range(n):
        cpu = ("1", "2", "4")[k % 3]
        res = {"requests": {"cpu": cpu, "memory": "1Gi"}}
        if k % 2 == 0:
            res["limits"] = dict(res["requests"])   # Guaranteed: exclusive CPUs, NUMA-pinned memory
        elif cpu_usage:
            res["limits"] = {"cpu": str(int(cpu) * 5 // 4) if cpu != "1" else "1250m"}   # Burstable, with a quota
        meta = {"name": f"p{k}", "namespace": "default", "uid": f"default/p{k}"}
        if gpu:
            meta["annotations"] = {"alibabacloud.com/gpu-count": "1", "alibabacloud.com/gpu-milli": "1000"}
        pod = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                             "spec": {"containers": [{"name": "c", "resources": res}]}})
        usage = None
        if cpu_usage:   # a ramp from half the request to 1.5 times it over five minutes: throttled at the top
            milli = int(cpu) * 1000
            usage = parse_usage({"cpu": [["0s", f"{milli // 2}m"], ["5m", f"{milli * 3 // 2}m"]]}, "usage")
        out.append(Arrival(k * 0.01, pod, usage=usage))
    return out


def _scenario(name, nodes, arrivals):
    from kubetwin.sim.scenario import parse_scheduler_config

    return Scenario(name, nodes, arrivals, profile=parse_scheduler_config(None))


def _run(label: str, sc: Scenario) -> None:
    t = time.perf_counter()
    r = simulate(sc)
    dt = time.perf_counter() - t
    s = r.summary()
    print(f"{label}: {len(sc.nodes)} nodes, {len(sc.arrivals)} pods: {dt:.2f} s, "
          f"{len(sc.arrivals) / dt:,.0f} pods/s; bound {s['bound']}, pending {s['pending']}, "
          f"kubelet rejections {sum(s['rejectedByKubelet'].values())}; "
          f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def _dra_scenario(nodes: int, gpus: int, pods: int):
    """Nodes whose DRA driver publishes their GPUs; each pod claims one GPU from a template."""
    import tempfile
    from pathlib import Path

    import yaml

    from kubetwin.sim import load_scenario

    sim = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "dra"},
           "spec": {"kubeletAdmission": False,
                    "nodeGroups": [{"name": "gpu", "count": nodes, "machine": f"2s2n16c2t:gpus={gpus}",
                                    "draDrivers": [{"driver": "gpu.example.com", "kinds": ["gpu"]}]}],
                    "workloads": [{"name": "p", "count": pods, "arrival": {"interval": 0.01},
                                   "template": {"spec": {
                                       "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                                       "containers": [{"name": "c", "resources": {
                                           "requests": {"cpu": "1", "memory": "1Gi"}, "claims": [{"name": "gpu"}]}}]}}}]}}
    dc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
          "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
    tmpl = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "dra.yaml"
        p.write_text(yaml.safe_dump_all([sim, dc, tmpl]))
        return load_scenario(p)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=50000)
    ap.add_argument("--only", choices=("e2e", "e2e-cpu", "alibaba", "gpu", "dra"), default=None)
    a = ap.parse_args()
    if a.only in (None, "alibaba"):
        from kubetwin.sim.sweep import RunSpec, load_run

        t = time.perf_counter()
        sc = load_run(RunSpec(("alibaba", "/work/shared/data/traces/alibaba-gpu-v2023",
                               "openb_pod_list_default.csv", False)))
        r = simulate(sc)
        print(f"alibaba-gpu-v2023 (load + replay): {len(sc.nodes)} nodes, {len(sc.arrivals)} pods: "
              f"{time.perf_counter() - t:.2f} s; bound {r.counters.bound}; max RSS "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if a.only in (None, "gpu"):
        _run("gpu (500 nodes x 10 GPUs, one GPU per pod)", _scenario("gpu", _nodes(500, 10), _pods(5000, gpu=True)))
    if a.only in (None, "dra"):
        _run("dra (500 nodes x 10 GPUs, one ResourceClaim per pod)", _dra_scenario(500, 10, 5000))
    if a.only in (None, "e2e"):
        _run("end to end (default profile + kubelet static CPU/Static memory/single-numa-node)",
             _scenario("e2e", _nodes(a.nodes), _pods(a.pods)))
    if a.only in (None, "e2e-cpu"):
        _run("end to end with CPU usage curves (throttling, weight split, CPU pressure on every node)",
             _scenario("e2e-cpu", _nodes(a.nodes), _pods(a.pods, cpu_usage=True)))


if __name__ == "__main__":
    main()
