"""``kubetwin admit``'s table: the NUMA map after admission and the merged topology hints."""

from __future__ import annotations

import subprocess
import sys

KUBETWIN = [sys.executable, "-m", "kubetwin"]


def test_the_table_shows_the_numa_map_and_the_merged_hints(tmp_path):
    (tmp_path / "kubelet.yaml").write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: static\n"
        "reservedSystemCPUs: '0'\ntopologyManagerPolicy: single-numa-node\n")
    (tmp_path / "pods.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a, uid: a}\nspec:\n  containers:\n  - name: c\n"
        "    resources:\n      requests: {cpu: '2', memory: 1Gi}\n      limits: {cpu: '2', memory: 1Gi}\n")
    out = subprocess.run(KUBETWIN + ["admit", "--machine", "2s1n4c2t", "--config", str(tmp_path / "kubelet.yaml"),
                                     str(tmp_path / "pods.yaml"), "--explain"],
                         capture_output=True, text=True, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert "NUMA map after admission" in out.stdout and "topology hints" in out.stdout
    assert "default/a/c" in out.stdout
