"""The extender's filter call over 5,000 nodes, through HTTP on loopback (a real uvicorn server).

Cluster: 5,000 nodes in four groups of machines and kubelet configurations (static CPU manager,
single-numa-node / restricted / best-effort topology policies, one with the Static memory
manager), each node running 0-3 Guaranteed pods of mixed sizes (so nodes are in many kubelet
states). Calls rotate over four pod shapes (a Deployment's pods share one): the first call of a
shape on a state computes the kubelet's verdict, the rest look it up.

Prints, for ``nodeCacheCapable: true`` (NodeNames in and out) and ``false`` (full Node objects in
and out): p50 / p99 / max wall time per call, CPU time per call (the whole process: client and
server), and the load time. Target: p99 under 20 ms with NodeNames.

    .venv/bin/python benchmarks/bench_extender.py [--nodes 5000] [--calls 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

GROUPS = [
    ("sn", "2s2n8c2t", {"cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node",
                        "reservedSystemCPUs": "0"}),
    ("re", "2s1n16c2t", {"cpuManagerPolicy": "static", "topologyManagerPolicy": "restricted",
                         "reservedSystemCPUs": "0,1"}),
    ("be", "1s2n16c2t", {"cpuManagerPolicy": "static", "topologyManagerPolicy": "best-effort",
                         "reservedSystemCPUs": "0"}),
    ("mm", "2s2n8c2t", {"cpuManagerPolicy": "static", "memoryManagerPolicy": "Static",
                        "topologyManagerPolicy": "single-numa-node", "reservedSystemCPUs": "0",
                        "kubeReserved": {"memory": "924Mi"}, "evictionHard": {"memory.available": "100Mi"},
                        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}]}),
]


def _pod(name: str, cpu: int, mem: str, node: str | None = None) -> dict:
    res = {"requests": {"cpu": str(cpu), "memory": mem}, "limits": {"cpu": str(cpu), "memory": mem}}
    spec: dict = {"containers": [{"name": "app", "image": "registry.example/app:1", "resources": res}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": spec}


def scenario(folder: Path, nodes: int) -> Path:
    per = nodes // len(GROUPS)
    groups = [{"name": g, "count": per, "machine": m, "kubeletConfig": c} for g, m, c in GROUPS]
    docs = [{"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "bench"},
             "spec": {"nodeGroups": groups}}]
    sizes = [(2, "2Gi"), (4, "4Gi"), (6, "8Gi"), (1, "1Gi")]
    k = 0
    for g, _, _ in GROUPS:
        for i in range(per):
            for j in range(i % 4):
                cpu, mem = sizes[(i + j) % len(sizes)]
                docs.append(_pod(f"run-{k}", cpu, mem, f"{g}-{i}"))
                k += 1
    path = folder / "scenario.yaml"
    path.write_text("\n---\n".join(json.dumps(d) for d in docs))
    return path


def _node_objects(cluster) -> list[dict]:
    out = []
    for name, n in cluster.nodes.items():
        node = n.node
        out.append({"metadata": {"name": name, "labels": dict(node.metadata.labels)},
                    "spec": {},
                    "status": {"capacity": {k: str(v) for k, v in node.status.capacity.items()},
                               "allocatable": {k: str(v) for k, v in node.status.allocatable.items()}}})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    import http.client

    import uvicorn

    from kubetwin.serve.app import create_app
    from kubetwin.serve.cluster import load_cluster
    from kubetwin.serve.server import listen

    with tempfile.TemporaryDirectory() as tmp:
        path = scenario(Path(tmp), args.nodes)
        t0, c0 = time.perf_counter(), time.process_time()
        cluster = load_cluster([str(path)])
        load_wall, load_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"loaded {len(cluster.nodes)} nodes, {sum(len(v) for v in cluster.bound.values())} running pods, "
          f"{cluster.kubelets.class_count()} kubelet states: {load_wall:.2f} s wall, {load_cpu:.2f} s CPU")
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(cluster), log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    shapes = [_pod(f"new-{s}", cpu, mem) for s, (cpu, mem) in enumerate([(2, "2Gi"), (8, "8Gi"), (3, "3Gi"),
                                                                            (24, "4Gi")])]
    names = list(cluster.nodes)
    items = _node_objects(cluster)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)  # keep-alive, as kube-scheduler's client

    def post(body: bytes) -> dict:
        conn.request("POST", "/extender/filter", body=body, headers={"content-type": "application/json"})
        r = conn.getresponse()
        data = r.read()
        if r.status != 200:
            raise SystemExit(f"HTTP {r.status}: {data[:300]!r}")
        return json.loads(data)

    for mode in ("NodeNames", "Nodes"):
        bodies = [json.dumps({"Pod": p, "NodeNames": names} if mode == "NodeNames"
                             else {"Pod": p, "Nodes": {"items": items}}).encode() for p in shapes]
        for b in bodies:  # first call per shape: the kubelets' verdicts are computed
            t = time.perf_counter()
            r = post(b)
            print(f"  {mode}: first call of a pod shape {1000 * (time.perf_counter() - t):.1f} ms "
                  f"({len(r['FailedNodes']) + len(r['FailedAndUnresolvableNodes'])} nodes failed)")
        walls = []
        c0 = time.process_time()
        for i in range(args.calls):
            t = time.perf_counter()
            post(bodies[i % len(bodies)])
            walls.append(time.perf_counter() - t)
        cpu = (time.process_time() - c0) / args.calls
        walls.sort()
        p50 = statistics.median(walls)
        p99 = walls[min(len(walls) - 1, int(0.99 * len(walls)))]
        mb = len(bodies[0]) / 1e6
        print(f"filter, {mode} ({'nodeCacheCapable: true' if mode == 'NodeNames' else 'nodeCacheCapable: false'}, "
              f"{mb:.2f} MB request): p50 {1000 * p50:.2f} ms, p99 {1000 * p99:.2f} ms, max "
              f"{1000 * walls[-1]:.2f} ms, CPU {1000 * cpu:.2f} ms per call ({args.calls} calls)")
    conn.close()
    server.should_exit = True
    thread.join(timeout=5)


if __name__ == "__main__":
    main()
