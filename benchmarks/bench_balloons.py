"""The balloons policy's own cost per container creation and deletion, on one runtime node.

    .venv/bin/python benchmarks/bench_balloons.py [--rounds 300] [--repeat 3] [--plain] [--profile]

One :class:`kubetwin.runtime.node.RuntimeNode` (machine ``2s2n16c2t``, kubelet ``none``, the
balloons Helm chart's policy, as ``bench_runtime_sim.py --policy balloons`` runs it) takes the
benchmark's pods (1, 2 or 4 CPUs, 1Gi, half of them Guaranteed, in a random order as the
scheduler spreads them over nodes) in rounds: about ten pods created, one in five deleted
right away, then the rest deleted in a shuffled order (a fixed seed; the tables of tree
answers start empty in every run). Printed: µs per creation and per
deletion of the whole NRI path (process CPU time beside wall time, the median of ``--repeat``),
and the part spent in the policy's ``allocate_resources`` / ``release_resources``.
``--plain``: the plain policy (``fast.ENABLED`` and the tree/CPU allocator tables off), for A/B.
``--profile``: a cProfile of one run, the top functions by own time.

Not an upstream module: a kubetwin benchmark of nri-plugins v0.14.0 ``cmd/plugins/balloons``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.config import load_policy
from kubetwin.runtime.node import RuntimeNode

NONE = {"kubeReserved": {"cpu": "2", "memory": "2Gi"}}


def _pod(k: int, kind: int) -> Any:
    cpu = ("1", "2", "4")[kind % 3]
    res: dict[str, Any] = {"requests": {"cpu": cpu, "memory": "1Gi"}}
    if kind % 2 == 0:
        res["limits"] = dict(res["requests"])
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"p{k}", "namespace": "default", "uid": f"default/p{k}"},
                          "spec": {"containers": [{"name": "c", "resources": res}]}})


class _Timed:
    """Wraps the policy's allocate/release and sums their CPU time."""

    def __init__(self, policy: Any):
        self.alloc = self.release = 0.0
        inner_alloc, inner_release = policy.allocate_resources, policy.release_resources

        def allocate(c: Any) -> None:
            t = time.process_time()
            try:
                inner_alloc(c)
            finally:
                self.alloc += time.process_time() - t

        def release(c: Any) -> None:
            t = time.process_time()
            try:
                inner_release(c)
            finally:
                self.release += time.process_time() - t

        policy.allocate_resources, policy.release_resources = allocate, release


def run(rounds: int, seed: int = 1) -> tuple[float, float, int, int, float, float, str]:
    from kubetwin.runtime.policies.balloons import cputree_memo, fast

    fast._FLAT.clear()   # every run starts with empty tables of tree answers
    cputree_memo._TABLES.clear()
    machine = load_machine("2s2n16c2t")
    rn = RuntimeNode(machine, load_policy("balloons"), KubeletConfiguration.from_dict(NONE), traced=False)
    assert rn.resmgr is not None
    timed = _Timed(rn.resmgr.policy)
    rng = random.Random(seed)
    pods = [_pod(k, rng.randrange(6)) for k in range(rounds * 12)]
    created = deleted = 0
    t_create = t_delete = 0.0
    digest: list[str] = []
    k = 0
    for _ in range(rounds):
        live: list[str] = []
        for _ in range(rng.randint(8, 12)):
            pod = pods[k]
            k += 1
            t = time.process_time()
            r = rn.create_pod(pod)
            t_create += time.process_time() - t
            created += 1
            if r is None:
                live.append(pod.key)
            # interleave a few deletions with the creations
            if live and rng.random() < 0.2:
                key = live.pop(rng.randrange(len(live)))
                t = time.process_time()
                rn.delete_pod(key)
                t_delete += time.process_time() - t
                deleted += 1
        digest.append(";".join(f"{p.key}:{r.ctr.linux.resources.cpu.cpus}/{r.ctr.linux.resources.cpu.mems}"
                                for p, r in rn.running()
                                if r.ctr.linux and r.ctr.linux.resources and r.ctr.linux.resources.cpu))
        rng.shuffle(live)
        for key in live:
            t = time.process_time()
            rn.delete_pod(key)
            t_delete += time.process_time() - t
            deleted += 1
    import hashlib

    return (t_create, t_delete, created, deleted, timed.alloc, timed.release,
            hashlib.sha256("\n".join(digest).encode()).hexdigest()[:16])


def _plain() -> None:
    from kubetwin.runtime import cpuallocator_memo
    from kubetwin.runtime.policies.balloons import cputree_memo, fast

    fast.ENABLED = False
    cputree_memo.ENABLED = False
    cpuallocator_memo.ENABLED = False   # type: ignore[attr-defined]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--plain", action="store_true", help="the plain policy (A/B)")
    ap.add_argument("--profile", action="store_true", help="cProfile one run")
    a = ap.parse_args()
    if a.plain:
        _plain()
    if a.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        run(a.rounds)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(35)
        return
    results = []
    walls = []
    for _ in range(a.repeat):
        w = time.perf_counter()
        results.append(run(a.rounds))
        walls.append(time.perf_counter() - w)
    tc, td, nc, nd, ta, tr, digest = (statistics.median(x) if i < 6 else x[0]
                                      for i, x in enumerate(zip(*results)))
    assert len({r[6] for r in results}) == 1
    print(f"balloons, one node, {int(nc)} creations, {int(nd)} deletions (median of {a.repeat}, wall "
          f"{statistics.median(walls):.2f} s): creation {1e6 * tc / nc:.0f} µs CPU (policy {1e6 * ta / nc:.0f} µs), "
          f"deletion {1e6 * td / nd:.0f} µs CPU (policy {1e6 * tr / nd:.0f} µs); placements {digest}")


if __name__ == "__main__":
    main()
