"""The balloons policy's own cost per creation as ``simulate`` pays it on a miss: many nodes.

    .venv/bin/python benchmarks/bench_balloons_nodes.py [--nodes 600] [--pods 10] [--repeat 3]
        [--plain] [--profile]

``bench_runtime_sim.py --policy balloons`` answers most creations from its table of node states;
what is left (a miss) is a creation on a real node in a state no other node reached. Here every
creation is one: ``--nodes`` runtime nodes forked from one started node (machine ``2s2n16c2t``,
kubelet ``none``, the balloons Helm chart's policy, as ``simulate`` forks them — so they share the
machine, its CPU tree and the tables of tree and CPU-allocator answers), each given ``--pods``
of the benchmark's pods (1, 2 or 4 CPUs, 1Gi, every other one Guaranteed, in a random order; a
fixed seed). Printed: µs of process CPU time per creation in the policy's
``allocate_resources`` and on the whole NRI path (the median of ``--repeat``, wall time beside),
and a digest of every container's cpuset and memory nodes and every balloon after each node's
creations (equal with ``--plain``).
``--plain``: :mod:`kubetwin.runtime.policies.balloons.fastalloc` off (the fast policy as before it).
``--profile``: a cProfile of one run, the top functions by own time.

Not an upstream module: a kubetwin benchmark of nri-plugins v0.14.0 ``cmd/plugins/balloons``.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import time
from pathlib import Path
from typing import Any

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.sim.runtime_policies import _TEMPLATES, fork_runtime_node, resolve_policy

NONE = {"kubeReserved": {"cpu": "2", "memory": "2Gi"}}


def _pod(k: int) -> Any:
    cpu = ("1", "2", "4")[k % 3]
    res: dict[str, Any] = {"requests": {"cpu": cpu, "memory": "1Gi"}}
    if k % 2 == 0:
        res["limits"] = dict(res["requests"])
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"p{k}", "namespace": "default", "uid": f"default/p{k}"},
                          "spec": {"containers": [{"name": "c", "resources": res}]}})


def run(nodes: int, per_node: int, seed: int = 1) -> tuple[float, float, int, str]:
    """CPU seconds in ``allocate_resources`` and on the whole path, creations, digest."""
    from kubetwin.runtime import cpuallocator_memo
    from kubetwin.runtime.policies.balloons import cputree_memo, fast

    fast._FLAT.clear()   # every run starts with empty tables of answers
    cputree_memo._TABLES.clear()
    cpuallocator_memo._TABLES.clear()
    _TEMPLATES.clear()
    machine = load_machine("2s2n16c2t")
    config = KubeletConfiguration.from_dict(NONE)
    rp = resolve_policy("balloons", None, "--policy", Path.cwd())
    rng = random.Random(seed)
    t_alloc = t_all = 0.0
    created = 0
    digest = hashlib.sha256()
    k = 0
    for _ in range(nodes):
        rn = fork_runtime_node(machine, rp, config, NodeAdmission(machine, config))
        assert rn.resmgr is not None
        policy = rn.resmgr.policy
        inner = policy.allocate_resources
        spent = [0.0]

        def allocate(c: Any, inner: Any = inner, spent: list[float] = spent) -> None:
            t = time.process_time()
            try:
                inner(c)
            finally:
                spent[0] += time.process_time() - t

        policy.allocate_resources = allocate
        for _ in range(per_node):
            pod = _pod(k + rng.randrange(6))
            k += 6
            t = time.process_time()
            r = rn.create_pod(pod)
            t_all += time.process_time() - t
            created += 1
            digest.update(f"{pod.key}:{r.reason if r is not None else ''}\n".encode())
        t_alloc += spent[0]
        for p, r in rn.running():
            cpu = r.ctr.linux.resources.cpu if r.ctr.linux and r.ctr.linux.resources else None
            digest.update(f"{p.key}:{cpu.cpus if cpu else ''}/{cpu.mems if cpu else ''}\n".encode())
        digest.update(repr(policy.describe()).encode())
    return t_alloc, t_all, created, digest.hexdigest()[:16]


def _plain() -> None:
    from kubetwin.runtime.policies.balloons import fastalloc

    fastalloc.ENABLED = False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=600)
    ap.add_argument("--pods", type=int, default=10, help="pods per node")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--plain", action="store_true", help="fastalloc off (A/B)")
    ap.add_argument("--profile", action="store_true", help="cProfile one run")
    a = ap.parse_args()
    if a.plain:
        _plain()
    if a.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        run(a.nodes, a.pods)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(40)
        return
    results, walls = [], []
    for _ in range(a.repeat):
        w = time.perf_counter()
        results.append(run(a.nodes, a.pods))
        walls.append(time.perf_counter() - w)
    assert len({r[3] for r in results}) == 1
    alloc = statistics.median(r[0] for r in results)
    whole = statistics.median(r[1] for r in results)
    n = results[0][2]
    print(f"balloons, {a.nodes} nodes x {a.pods} creations (median of {a.repeat}, wall {statistics.median(walls):.2f} s): "
          f"allocate_resources {1e6 * alloc / n:.1f} µs CPU a creation, whole path {1e6 * whole / n:.1f} µs; "
          f"placements {results[0][3]}")


if __name__ == "__main__":
    main()
