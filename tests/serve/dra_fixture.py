"""A served cluster with DRA: one node (gpu-0, 2 × 4-CPU NUMA nodes) publishing three GPUs
(gpu-0, gpu-1: a100; gpu-2: t4), a running pod holding gpu-1 through an allocated claim, and a
pending pod asking for an a100 through a ResourceClaimTemplate."""

from __future__ import annotations

from pathlib import Path

SCENARIO = """\
apiVersion: kubetwin.io/v1alpha1
kind: Simulation
metadata: {name: served-dra}
spec:
  nodeGroups:
  - name: gpu
    count: 1
    machine: 1s2n4c1t
    kubeletConfig: {cpuManagerPolicy: static, topologyManagerPolicy: single-numa-node, reservedSystemCPUs: "0"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-0-slice}
spec:
  driver: gpu.example.com
  nodeName: gpu-0
  pool: {name: gpu-0, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: a100}}}
  - {name: gpu-1, attributes: {model: {string: a100}}}
  - {name: gpu-2, attributes: {model: {string: t4}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: trainer-gpu, namespace: default, uid: trainer-gpu-uid}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: gpu-0, device: gpu-1}
  reservedFor:
  - {resource: pods, name: trainer, uid: trainer-uid}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: a100, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu
          selectors:
          - cel: {expression: 'device.attributes["gpu.example.com"].model == "a100"'}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: default, uid: trainer-uid}
spec:
  nodeName: gpu-0
  resourceClaims:
  - {name: gpu, resourceClaimName: trainer-gpu}
  containers:
  - name: c
    image: x
    resources:
      requests: {cpu: "1", memory: 1Gi}
      claims: [{name: gpu}]
---
apiVersion: v1
kind: Pod
metadata: {name: waiting, namespace: default, uid: waiting-uid}
spec:
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: a100}
  containers:
  - name: c
    image: x
    resources:
      requests: {cpu: "1", memory: 1Gi}
      claims: [{name: gpu}]
"""


def write_dra_scenario(folder: Path) -> Path:
    path = folder / "scenario.yaml"
    path.write_text(SCENARIO)
    return path
