"""The topology-aware policy's own cost per container creation and deletion, below NRI.

    .venv/bin/python benchmarks/bench_topology_aware.py [--nodes 200] [--per-node 10] [--repeat 3]
        [--plain] [--profile]

``bench_runtime_sim.py``'s pods (1, 2 or 4 CPUs and 1Gi, every other one Guaranteed) created
on ``--nodes`` runtime nodes of machine ``2s2n16c2t`` (kubelet none, the default
``TopologyAwarePolicy``, untraced and forked from one started node as in ``simulate``), each
pod on a node drawn at random, ``--per-node`` on average; then a third of them, drawn at
random, deleted and as many new ones created. (Nodes given the same pods in the same order pass
through the same states: in ``simulate`` the table of node histories answers those, and the
creations left to the policy meet states of their own — nearly every one a new state.) The policy's ``allocate_resources`` and
``release_resources`` are timed apart from the rest of the runtime (NRI, the resource manager):
printed are µs of process CPU time per creation and per deletion inside the policy, and per
whole ``create_pod``/``delete_pod``. ``--plain`` turns the placement fast paths off (A/B),
``--profile`` prints the policy's top functions.

Runs with the garbage collector set as ``simulate`` sets it. Ninth session, ``main`` 38eaea5 and
this code alternated (three pairs, load average ~15), CPU µs inside the policy: creation 375 to
383 -> 258 to 271, deletion 114 to 129 -> 75 to 82; at load ~9: 270 -> ~182, 94 -> ~51
(docs/scale.md, "Ninth session"). Eleventh session (the ranking's figures reused for the
exclusive pick, grants applied with fewer lookups), main e40c9c8 and this code alternated, load
6-12: 170, 160, 186 -> 146, 155, 156 µs per creation (in ``simulate`` at 5,000 x 50,000: 188
-> 145 µs; docs/scale.md, "Eleventh session").

Not a figure of issue 12 itself (that is ``bench_runtime_sim.py``): a micro-benchmark of the
policy's share of a plain creation, the part the table of node histories does not save.
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

from kubetwin.kubelet.admission import NodeAdmission  # noqa: E402
from kubetwin.machine import load_machine  # noqa: E402
from kubetwin.model.kubelet_config import KubeletConfiguration  # noqa: E402
from kubetwin.runtime.node import RuntimeNode  # noqa: E402
from kubetwin.sim.runtime_policies import fork_runtime_node, resolve_policy  # noqa: E402

NONE = {"kubeReserved": {"cpu": "2", "memory": "2Gi"}}


class _Timed:
    """Process CPU time spent in the wrapped policy methods."""

    def __init__(self) -> None:
        self.alloc = 0.0
        self.release = 0.0
        self.allocs = 0
        self.releases = 0

    def wrap(self, policy: Any) -> None:
        allocate, release = policy.allocate_resources, policy.release_resources

        def allocate_resources(c: Any, pool_hint: str = "") -> None:
            t = time.process_time()
            try:
                allocate(c, pool_hint)
            finally:
                self.alloc += time.process_time() - t
                self.allocs += 1

        def release_resources(c: Any) -> None:
            t = time.process_time()
            try:
                release(c)
            finally:
                self.release += time.process_time() - t
                self.releases += 1

        policy.allocate_resources = allocate_resources
        policy.release_resources = release_resources


def _run(nodes: int, per_node: int, timed: _Timed) -> tuple[float, float, int, int]:
    """One run, with the cyclic garbage collector set as ``simulate`` sets it (what exists
    before frozen, a young generation of 100,000 objects): with Python's default the
    collections' pauses land in whichever call crosses the threshold, often the policy's."""
    gc.collect()
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, 50, 100)
    try:
        return _run_nodes(nodes, per_node, timed)
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _run_nodes(nodes: int, per_node: int, timed: _Timed) -> tuple[float, float, int, int]:
    machine = load_machine("2s2n16c2t")
    config = KubeletConfiguration.from_dict(NONE)
    rp = resolve_policy("topology-aware", None, "--policy", Path.cwd())
    assert rp is not None
    # forked from one started node, as ``simulate`` does: the nodes share the machine's sysfs view
    # (and so the CPU allocator's table of answers)
    rns = [fork_runtime_node(machine, rp, config, NodeAdmission(machine, config)) for _ in range(nodes)]
    for rn in rns:
        assert rn.resmgr is not None
        timed.wrap(rn.resmgr.policy)
    pods = [a.pod for a in _pods(nodes * per_node * 2)]
    first, second = pods[:nodes * per_node], pods[nodes * per_node:]
    rng = random.Random(7)
    create = delete = 0.0
    created = deleted = 0
    placed: list[tuple[RuntimeNode, str]] = []
    t = time.process_time()
    for pod in first:
        rn = rns[rng.randrange(nodes)]
        if rn.create_pod(pod) is None:
            placed.append((rn, pod.key))
        created += 1
    create += time.process_time() - t
    gone = rng.sample(placed, len(placed) // 3)
    t = time.process_time()
    for rn, key in gone:
        rn.delete_pod(key)
        deleted += 1
    delete += time.process_time() - t
    t = time.process_time()
    for pod in second[:len(gone)]:
        rns[rng.randrange(nodes)].create_pod(pod)
        created += 1
    create += time.process_time() - t
    return create, delete, created, deleted


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--per-node", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--plain", action="store_true", help="the placement fast paths off (A/B runs)")
    ap.add_argument("--profile", action="store_true", help="print the policy's top functions (one run)")
    a = ap.parse_args()
    if a.plain:
        from kubetwin.runtime import cpuallocator_keys, cpuallocator_memo, libmem_offers
        from kubetwin.runtime.policies.topologyaware import fastpick, fastpin, fastscore, fastslice

        for module in (cpuallocator_keys, cpuallocator_memo, fastpick, fastpin, fastscore, fastslice, libmem_offers):
            module.ENABLED = False   # type: ignore[attr-defined]
    if a.profile:
        prof = cProfile.Profile()
        prof.enable()
        _run(a.nodes, a.per_node, _Timed())
        prof.disable()
        st = pstats.Stats(prof)
        st.sort_stats("tottime").print_stats(35)
        st.sort_stats("cumulative").print_callees(
            "allocate_resources|release_resources|allocate_pool|sort_pools_by_score|allocate_cpu|apply_grant|"
            "update_shared_allocations|score|pick_exclusive_cpus|new_request")
        return
    rows = []
    for _ in range(a.repeat):
        timed = _Timed()
        create, delete, created, deleted = _run(a.nodes, a.per_node, timed)
        rows.append((1e6 * timed.alloc / timed.allocs, 1e6 * timed.release / max(timed.releases, 1),
                     1e6 * create / created, 1e6 * delete / max(deleted, 1)))
        print(f"  run: policy {rows[-1][0]:.0f} µs/creation, {rows[-1][1]:.0f} µs/deletion; whole create_pod "
              f"{rows[-1][2]:.0f} µs, delete_pod {rows[-1][3]:.0f} µs ({created} creations, {deleted} deletions)")
    med = [statistics.median(r[i] for r in rows) for i in range(4)]
    print(f"topology-aware policy ({'plain' if a.plain else 'fast paths'}), {a.nodes} nodes x {a.per_node} pods, "
          f"CPU µs (median of {a.repeat}): allocate_resources {med[0]:.0f} per creation, release_resources "
          f"{med[1]:.0f} per deletion; create_pod {med[2]:.0f}, delete_pod {med[3]:.0f}")


if __name__ == "__main__":
    main()
