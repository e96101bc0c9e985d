"""Guaranteed-pod admissions per second: static CPU + Static memory + single-numa-node.

Machine: 2 sockets × 2 NUMA nodes × 32 cores × 2 threads = 256 threads (spec ``2s2n32c2t``). Pods are admitted until
the node is full; then the two pod-level reference examples are admitted repeatedly.
"""

from __future__ import annotations

import time
from pathlib import Path

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.objects import load_pods
from kubetwin.model.pod import pod_from_dict

EXAMPLES = Path("/work/shared/examples/pod-level")


def _pod(i: int, cpu: int):
    res = {"requests": {"cpu": str(cpu), "memory": "1Gi"}, "limits": {"cpu": str(cpu), "memory": "1Gi"}}
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"p{i}"},
                          "spec": {"containers": [{"name": "c", "resources": res}]}})


def bench_full_node(fills: int = 20) -> tuple[int, float]:
    """Fill a fresh node ``fills`` times; only the admissions are timed (node set-up is not)."""
    machine = load_machine("2s2n32c2t")
    cfg = KubeletConfiguration.from_dict({
        "cpuManagerPolicy": "static", "memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
        "reservedSystemCPUs": "0-1", "kubeReserved": {"memory": "924Mi"}, "evictionHard": {"memory.available": "100Mi"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}], "maxPods": 1000})
    pods = [_pod(i, 1 + i % 4) for i in range(400)]
    NodeAdmission(machine, cfg).admit(pods[0])  # warm-up: lazy imports, cached topology masks
    total, elapsed, admitted = 0, 0.0, 0
    for _ in range(fills):
        node = NodeAdmission(machine, cfg)
        admitted = 0
        t0 = time.perf_counter()
        for p in pods:
            if not node.admit(p).admitted:
                break
            admitted += 1
        elapsed += time.perf_counter() - t0
        total += admitted
    return admitted, total / elapsed


def bench_pod_level(rounds: int = 500) -> float:
    """Admit and remove each pod-level reference example ``rounds`` times (loading not timed)."""
    from kubetwin.model.kubelet_config import load_kubelet_config

    machine = load_machine(str(EXAMPLES / "machine.json"))
    total, elapsed = 0, 0.0
    for scope, name in (("pod", "tightly-coupled-database"), ("container", "ml-workload")):
        cfg = load_kubelet_config(str(EXAMPLES / f"kubelet-{scope}-scope.yaml"))
        pod = load_pods(str(EXAMPLES / f"{name}.yaml"), warn=lambda e: None)[0]
        node = NodeAdmission(machine, cfg)
        assert node.admit(pod).admitted  # warm-up
        node.remove(pod)
        t0 = time.perf_counter()
        for _ in range(rounds):
            assert node.admit(pod).admitted
            node.remove(pod)
            total += 1
        elapsed += time.perf_counter() - t0
    return total / elapsed


if __name__ == "__main__":
    admitted, rate = bench_full_node()
    print(f"2s/4n/256t static+Static+single-numa-node: {admitted} pods admitted until full, {rate:,.0f} admissions/s")
    print(f"pod-level examples (admit+remove): {bench_pod_level():,.0f} admissions/s")
