"""Shared inputs of the plan tests: a Deployment of Guaranteed 5-CPU pods and a NUMA kubelet."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

KUBELET_NUMA = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                "cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node", "reservedSystemCPUs": "0"}


def deployment(name: str = "web", replicas: int = 8, cpu: str = "5", memory: str = "8Gi",
               extra: dict | None = None) -> dict:
    spec = {"containers": [{"name": name, "image": "x",
                            "resources": {"requests": {"cpu": cpu, "memory": memory},
                                          "limits": {"cpu": cpu, "memory": memory}}}]}
    spec.update(extra or {})
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "kubelet-numa.yaml").write_text(yaml.safe_dump(KUBELET_NUMA))
    (tmp_path / "web.yaml").write_text(yaml.safe_dump(deployment()))
    return tmp_path


def write(folder: Path, name: str, *docs: dict) -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump_all(list(docs)))
    return path
