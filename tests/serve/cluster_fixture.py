"""A small served cluster for the serve tests: two single-numa-node kubelets on 2 × 4-CPU NUMA
nodes (one running a 4-CPU Guaranteed pod: its NUMA node 1 is full, NUMA node 0 has 3 CPUs besides
the reserved one), one node without a modelled kubelet, one pending pod."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SCENARIO = """\
apiVersion: kubetwin.io/v1alpha1
kind: Simulation
metadata: {name: served}
spec:
  nodeGroups:
  - name: numa
    count: 2
    machine: 1s2n4c1t
    kubeletConfig: {cpuManagerPolicy: static, topologyManagerPolicy: single-numa-node, reservedSystemCPUs: "0"}
  - name: plain
    count: 1
    capacity: {cpu: "16", memory: 64Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: default, uid: running-uid}
spec:
  nodeName: numa-0
  containers:
  - {name: c, image: x, resources: {requests: {cpu: "4", memory: 1Gi}, limits: {cpu: "4", memory: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: waiting, namespace: default, uid: waiting-uid}
spec:
  containers:
  - {name: c, image: x, resources: {requests: {cpu: "2", memory: 1Gi}, limits: {cpu: "2", memory: 1Gi}}}
"""

NODES = ["numa-0", "numa-1", "plain-0"]


def write_scenario(folder: Path) -> Path:
    path = folder / "scenario.yaml"
    path.write_text(SCENARIO)
    return path


def pod(name: str, cpu: str, uid: str | None = None) -> dict[str, Any]:
    """A Guaranteed pod as kube-scheduler sends it (no apiVersion/kind: its informer's objects)."""
    res = {"requests": {"cpu": cpu, "memory": "1Gi"}, "limits": {"cpu": cpu, "memory": "1Gi"}}
    return {"metadata": {"name": name, "namespace": "default", "uid": uid or f"{name}-uid"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": res}]}}
