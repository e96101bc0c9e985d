from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

KUBETWIN = [sys.executable, "-m", "kubetwin"]

CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}


def slice_(name="slice-1", devices=None, **spec):
    body = {"driver": "gpu.example.com", "pool": {"name": "pool-1", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "node-1", "devices": devices if devices is not None else [{"name": "gpu-0"}, {"name": "gpu-1"}]}
    body.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def claim(name="claim-0", count=1, selectors=(), **exactly):
    req = {"deviceClassName": "gpu", "count": count, **exactly}
    if selectors:
        req["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "req-0", "exactly": req}]}}}


NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"zone": "a"}}}


@pytest.fixture
def run_allocate(tmp_path: Path):
    def run(objects, claims, *extra, node=NODE):
        (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all(objects))
        (tmp_path / "claims.yaml").write_text(yaml.safe_dump_all(claims))
        (tmp_path / "node.yaml").write_text(yaml.safe_dump(node))
        return subprocess.run(KUBETWIN + ["dra", "allocate", "-f", "objects.yaml", "--node", "node.yaml",
                                          *extra, "claims.yaml"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60)
    return run
