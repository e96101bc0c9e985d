"""The generic NRI path of one container creation and deletion: everything but the policy's own work.

    .venv/bin/python benchmarks/bench_nri_generic.py [--policy topology-aware|balloons|both]
        [--nodes 100] [--per-node 6] [--repeat 3] [--plain] [--profile]

What ``simulate``'s plain creations (the misses and replays the table of node histories leaves,
:mod:`kubetwin.sim.runtime_memo`) pay below the kubelet: the pod's sandbox and container
messages, ``RunPodSandbox``, ``CreateContainer`` through the NRI adaptation (message copies for
the plugin, the adjustment and the other containers' updates merged with NRI's field owners,
the runtime applying them), the resource manager's cache and its replies,
``Start``/``Stop``/``Remove``. ``--nodes`` runtime nodes of machine ``2s2n16c2t`` (kubelet
``none``, untraced, forked from one started node as in ``simulate``) each take ``--per-node``
of ``bench_runtime_sim.py``'s pods (1, 2 or 4 CPUs, 1Gi, every other one Guaranteed) through
``start_pod`` with the kubelet's CRI resources given (as a miss gets them; the kubelet's
admission is done beforehand and not timed), then delete them in a random order. The policy's
``allocate_resources`` / ``release_resources`` are timed apart; printed are CPU µs per
creation and per deletion of the whole path and of the generic part (whole − policy), the
median of ``--repeat`` runs, with the garbage collector set as ``simulate`` sets it.

``--plain``: the generic path's fast paths off (:mod:`kubetwin.runtime.nri.message_copy`,
:mod:`kubetwin.runtime.nri.fastmerge`, :mod:`kubetwin.runtime.fastcreate` and
:mod:`kubetwin.runtime.fastpod`), for A/B runs in one checkout.

Tenth session (docs/scale.md, "the generic NRI path, second pass"), ``main`` eedfc31 and this
code alternated, five pairs, load average 10 to 15 (inflated figures), CPU µs of the generic
part per pod: creation topology-aware 108-151 -> 85-111 (median ratio 0.74), balloons 95-139 ->
74-97 (0.80); deletion topology-aware 44-55 -> 37-44, balloons 42-57 -> 36-45.

Eleventh session (docs/scale.md, "the generic NRI path, third pass": forms per pod shape,
:mod:`kubetwin.runtime.fastcreate`; the cache's quick ``Set*`` calls), ``main`` e40c9c8 and this
code alternated, ``--nodes 400``, three pairs, load average 12 to 14: generic part per creation
topology-aware 78-89 -> 69-76 µs (whole creation 209-234 -> 196-212), balloons 67-75 -> 64-73.

Not an upstream module: a kubetwin micro-benchmark of containerd/nri v0.12.2 ``pkg/adaptation``
and nri-plugins v0.14.0 ``pkg/resmgr`` as :mod:`kubetwin.runtime.node` drives them.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sim import _pods  # type: ignore[import-not-found]  # noqa: E402

from kubetwin.kubelet.admission import NodeAdmission, container_resources_for  # noqa: E402
from kubetwin.machine import load_machine  # noqa: E402
from kubetwin.model.kubelet_config import KubeletConfiguration  # noqa: E402
from kubetwin.sim.runtime_policies import fork_runtime_node, resolve_policy  # noqa: E402

NONE = {"kubeReserved": {"cpu": "2", "memory": "2Gi"}}


class _Timed:
    """Process CPU time spent in the wrapped policy methods."""

    def __init__(self) -> None:
        self.alloc = self.release = 0.0

    def wrap(self, policy: Any) -> None:
        allocate, release = policy.allocate_resources, policy.release_resources

        def allocate_resources(c: Any, *args: Any) -> None:
            t = time.process_time()
            try:
                allocate(c, *args)
            finally:
                self.alloc += time.process_time() - t

        def release_resources(c: Any) -> None:
            t = time.process_time()
            try:
                release(c)
            finally:
                self.release += time.process_time() - t

        policy.allocate_resources = allocate_resources
        policy.release_resources = release_resources


def _run(policy: str, nodes: int, per_node: int, seed: int = 7) -> tuple[float, float, float, float, int, int, str]:
    gc.collect()
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, 50, 100)
    try:
        return _run_nodes(policy, nodes, per_node, seed)
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _run_nodes(policy: str, nodes: int, per_node: int, seed: int) -> tuple[float, float, float, float, int, int, str]:
    import hashlib

    machine = load_machine("2s2n16c2t")
    config = KubeletConfiguration.from_dict(NONE)
    rp = resolve_policy(policy, None, "--policy", Path.cwd())
    assert rp is not None
    timed = _Timed()
    rns = [fork_runtime_node(machine, rp, config, NodeAdmission(machine, config)) for _ in range(nodes)]
    for rn in rns:
        assert rn.resmgr is not None
        timed.wrap(rn.resmgr.policy)
    pods = [a.pod for a in _pods(nodes * per_node)]
    rng = random.Random(seed)
    cri: dict[Any, Any] = {}
    create = delete = 0.0
    created = deleted = 0
    digest = []
    for n, rn in enumerate(rns):
        live = []
        for pod in pods[n * per_node:(n + 1) * per_node]:
            if not rn.kubelet.admit(pod).admitted:
                continue
            shape = (pod.spec.containers[0].resources.requests.get("cpu"),
                     pod.spec.containers[0].resources.limits.get("cpu"))
            got = cri.get(shape)
            if got is None:
                got = cri[shape] = tuple(container_resources_for(rn.kubelet, pod, c) for c, _ in pod.all_containers())
            t = time.process_time()
            refused = rn.start_pod(pod, got)
            create += time.process_time() - t
            created += 1
            if refused is None:
                live.append(pod.key)
        digest.append(";".join(f"{r.ctr.resources().cpu.cpus}/{r.ctr.resources().cpu.mems}"  # type: ignore[union-attr]
                               for _, r in rn.running()))
        rng.shuffle(live)
        for key in live:
            t = time.process_time()
            rn.delete_pod(key)
            delete += time.process_time() - t
            deleted += 1
    return (create, timed.alloc, delete, timed.release, created, deleted,
            hashlib.sha256("\n".join(digest).encode()).hexdigest()[:16])


def _plain() -> None:
    from kubetwin.runtime.nri import fastmerge, message_copy

    message_copy.ENABLED = False
    message_copy.SHARED_CONTAINER = False
    from kubetwin.runtime.resmgr import cache

    cache.ESTIMATES_KEPT = False
    cache.QUICK_REQUESTS = False
    fastmerge.ENABLED = False
    from kubetwin.runtime import fastcreate, fastpod

    fastcreate.ENABLED = False
    fastpod.ENABLED = False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--policy", default="both", choices=("topology-aware", "balloons", "both"))
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--per-node", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--plain", action="store_true", help="the generic path's fast paths off (A/B runs)")
    ap.add_argument("--profile", action="store_true", help="cProfile one run, top functions by own time")
    a = ap.parse_args()
    if a.plain:
        _plain()
    policies = ("topology-aware", "balloons") if a.policy == "both" else (a.policy,)
    for policy in policies:
        if a.profile:
            prof = cProfile.Profile()
            prof.enable()
            _run(policy, a.nodes, a.per_node)
            prof.disable()
            st = pstats.Stats(prof)
            st.sort_stats("tottime").print_stats(40)
            continue
        rows = []
        walls = []
        for _ in range(a.repeat):
            w = time.perf_counter()
            rows.append(_run(policy, a.nodes, a.per_node))
            walls.append(time.perf_counter() - w)
        assert len({r[6] for r in rows}) == 1
        c, ca, d, dr, nc, nd = (statistics.median(r[i] for r in rows) for i in range(6))
        print(f"{policy} ({'plain' if a.plain else 'fast paths'}), {a.nodes} nodes x {a.per_node} pods, CPU µs "
              f"(median of {a.repeat}, wall {statistics.median(walls):.2f} s a run): creation {1e6 * c / nc:.0f} "
              f"(policy {1e6 * ca / nc:.0f}, generic {1e6 * (c - ca) / nc:.0f}), deletion {1e6 * d / nd:.0f} "
              f"(policy {1e6 * dr / nd:.0f}, generic {1e6 * (d - dr) / nd:.0f}); placements {rows[0][6]}")


if __name__ == "__main__":
    main()
