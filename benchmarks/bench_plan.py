"""``kubetwin plan`` on a mixed workload (1,340 replicas of four Deployments and a DaemonSet) over
three priced node types, one with the single-numa-node Topology Manager: simulations run, CPU
time (process) and wall time, and the answer. Run: ``.venv/bin/python benchmarks/bench_plan.py``."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import yaml

SHAPES = (("web", 600, "500m", "1Gi", False), ("api", 300, "2", "4Gi", True), ("db", 40, "8", "32Gi", True),
          ("batch", 400, "1", "2Gi", False))
KUBELET = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
           "cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node", "reservedSystemCPUs": "0"}


def workload() -> list[dict]:
    docs = []
    for name, n, cpu, mem, guaranteed in SHAPES:
        res: dict = {"requests": {"cpu": cpu, "memory": mem}}
        if guaranteed:
            res["limits"] = dict(res["requests"])
        docs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                     "spec": {"replicas": n, "selector": {"matchLabels": {"app": name}},
                              "template": {"metadata": {"labels": {"app": name}},
                                           "spec": {"containers": [{"name": name, "image": "x", "resources": res}]}}}})
    docs.append({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
                 "spec": {"selector": {"matchLabels": {"app": "agent"}},
                          "template": {"metadata": {"labels": {"app": "agent"}},
                                       "spec": {"containers": [{"name": "a", "image": "x", "resources": {
                                           "requests": {"cpu": "200m", "memory": "256Mi"}}}]}}}})
    return docs


def main() -> None:
    from kubetwin.plan.answer import plan_document
    from kubetwin.plan.nodetype import parse_node_type
    from kubetwin.plan.search import plan
    from kubetwin.plan.trial import run_trial
    from kubetwin.plan.workload import read_workload

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "w.yaml").write_text(yaml.safe_dump_all(workload()))
        (root / "k.yaml").write_text(yaml.safe_dump(KUBELET))
        cpu, wall = time.process_time(), time.perf_counter()
        wl = read_workload([root / "w.yaml"])
        types = [parse_node_type(t, i, root=root) for i, t in enumerate((
            "numa=2s2n16c2t:mem=256Gi,kubelet=k.yaml,price=4", "std=1s1n16c2t:mem=128Gi,price=2.2",
            "large=2s1n32c2t:mem=512Gi,price=8"))]
        p = plan(wl, types)
        doc = plan_document(p, workload=wl, trial=lambda c: run_trial(wl, types, c))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"plan: {doc['status']} {doc.get('mix')} price {doc.get('price')} (lower bound "
          f"{doc['lowerBound'].get('price'):.2f}); {len(p.trials)} simulations")
    print(f"cpu {cpu:.2f} s, wall {wall:.2f} s, {cpu / max(len(p.trials), 1):.3f} s CPU per simulation")


if __name__ == "__main__":
    main()
