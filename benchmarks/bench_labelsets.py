"""What the scheduler cache's label-set index (``kubetwin/scheduler/backend/labelsets.py``)
holds when the bound pods have many distinct label sets: the curve's end-to-end run
(``bench_scale.py --only curve``: the reference scenarios' benchmark nodes and pods, default
profile, kubelet admission) with one label per workload of ``--pods-per-workload`` pods.

    .venv/bin/python benchmarks/bench_labelsets.py [--nodes 20000] [--pods-per-node 10]
                                                   [--pods-per-workload 10] [--index-only]

``--index-only`` skips the run: the index alone is built from the same pods placed as the run
places them (a workload's pods on distinct nodes, the least allocated first: pod ``k`` on node
``k mod nodes``), so its size can be measured at 100,000 nodes and 1,000,000 pods in seconds.

After the run the index is measured two ways: its objects walked (``sys.getsizeof`` of the
group dict, each group's key, tuple and per-node dict and the node-number ints those dicts
hold; the pods and namespace strings are the cluster's own, not counted), and the same index
rebuilt from the nodes' pods under ``tracemalloc`` (every byte its construction keeps). Also
printed: the run's pods/s (wall and CPU), max RSS and the memory held after it.

Not an upstream module: a measurement of kubetwin's own index (upstream walks every pod).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _module(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def labelled_pods(n: int, per_workload: int) -> list[Any]:
    """The curve's pods (``reference_scenarios.bench_pods``: 1, 2 or 4 CPUs and 1Gi, every other
    one Guaranteed), each with the label ``app: w<k // per_workload>``."""
    from kubetwin.model.pod import pod_from_dict
    from kubetwin.sim.workload import Arrival

    out = []
    for k in range(n):
        cpu = ("1", "2", "4")[k % 3]
        res: dict[str, Any] = {"requests": {"cpu": cpu, "memory": "1Gi"}}
        if k % 2 == 0:
            res["limits"] = dict(res["requests"])
        meta = {"name": f"p{k}", "namespace": "default", "uid": f"default/p{k}",
                "labels": {"app": f"w{k // per_workload}"}}
        pod = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                             "spec": {"containers": [{"name": "c", "resources": res}]}})
        out.append(Arrival(k * 0.01, pod))
    return out


def walked_bytes(sets: Any) -> int:
    """The index's own objects: the groups dict, each key, group tuple, per-node dict and the
    ints those dicts hold that are not small (cached) ints, each int object once (a node's
    number is one object shared by the groups on it)."""
    total = sys.getsizeof(sets.groups)
    seen: set[int] = set()
    for key, (_pod, _ns, _live, on) in sets.groups.items():
        total += sys.getsizeof(key) + sys.getsizeof((None, None, None, None)) + sys.getsizeof(on)
        for i, c in on.items():
            for v in (i, c):
                if not -5 <= v <= 256 and id(v) not in seen:
                    seen.add(id(v))
                    total += sys.getsizeof(v)
    return total


def index_only(nodes: int, pods: int, per_workload: int) -> None:
    """The index of ``pods`` labelled pods, pod ``k`` on node ``k mod nodes``, built under
    ``tracemalloc`` (one decoded pod per workload stands for its replicas: the index holds one)."""
    from kubetwin.scheduler.backend.labelsets import LabelSets, label_set_key

    workloads = [a.pod for a in labelled_pods((pods + per_workload - 1) // per_workload * per_workload,
                                              per_workload)[::per_workload]]
    numbers = list(range(nodes))   # the cluster's node numbers, one int object per node
    gc.collect()
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    sets = LabelSets()
    for k in range(pods):
        w = k // per_workload
        sets.add(label_set_key(workloads[w]), workloads[w], numbers[k % nodes])   # as the cache's bind does
    traced = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap0, "filename"))
    tracemalloc.stop()
    walked = walked_bytes(sets)
    groups = len(sets.groups)
    print(f"index only: {nodes:,} nodes, {pods:,} pods, {groups:,} label sets ({per_workload} pods each); "
          f"given up: {sets.too_many()}; traced {traced / 2**20:,.1f} MB, walked {walked / 2**20:,.1f} MB; "
          f"{traced / groups:,.0f} B per label set, {traced / pods:,.0f} B per pod")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=20_000)
    ap.add_argument("--pods-per-node", type=int, default=10)
    ap.add_argument("--pods-per-workload", type=int, default=10)
    ap.add_argument("--index-only", action="store_true", help="build the index alone, without the run")
    args = ap.parse_args()
    if args.index_only:
        index_only(args.nodes, args.nodes * args.pods_per_node, args.pods_per_workload)
        return

    from kubetwin.scheduler.backend.labelsets import LabelSets
    from kubetwin.sim.loop import Simulator

    ref = _module("reference_scenarios", HERE.parent / "tests" / "sim" / "reference_scenarios.py")
    pods = args.nodes * args.pods_per_node
    gc.collect()
    base = _rss_mb()
    t0 = time.perf_counter()
    sc = ref.bench_scenario("labelsets", ref.bench_nodes(args.nodes), labelled_pods(pods, args.pods_per_workload))
    build = time.perf_counter() - t0
    sim = Simulator(sc)
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    c0, t0 = time.process_time(), time.perf_counter()
    r = sim.run()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    gc.unfreeze()
    gc.collect()
    held = _rss_mb() - base
    cluster = sim.sched.cluster
    sets = cluster._label_sets
    print(f"{args.nodes:,} nodes, {pods:,} pods ({args.pods_per_workload} per workload label), "
          f"{r.counters.bound:,} bound; build {build:.1f} s; run {wall:.1f} s wall, {cpu:.1f} s CPU "
          f"({pods / wall:,.0f} pods/s wall, {pods / cpu:,.0f} pods/CPU-s); "
          f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB, held {held:,.0f} MB")
    if sets is None:
        print("label-set index: given up (too many distinct label sets): holds nothing")
        return
    groups = len(sets.groups)
    entries = sum(len(g[3]) for g in sets.groups.values())
    walked = walked_bytes(sets)
    infos = cluster.infos
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    rebuilt = LabelSets.of(infos)
    traced = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap0, "filename"))
    tracemalloc.stop()
    assert rebuilt is not None and len(rebuilt.groups) == groups
    print(f"label-set index: {groups:,} label sets, {entries:,} (label set, node) entries over {sets.pods:,} pods; "
          f"walked {walked / 2**20:,.1f} MB, rebuilt under tracemalloc {traced / 2**20:,.1f} MB; "
          f"{walked / groups:,.0f} B per label set, {walked / max(sets.pods, 1):,.0f} B per pod")


if __name__ == "__main__":
    main()
