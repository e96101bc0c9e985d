"""Live NodeResourceTopology in `simulate`: the cost of the topology agents and of the
NodeResourceTopologyMatch cache, and the "scheduled but rejected" window they show. The same
end-to-end workload as bench_sim.py (kubelet static CPU / Static memory / single-numa-node) with
NodeResourceTopologyMatch enabled, four ways: no objects; agents watching the kubelet state;
agents updating every 60 s (stale objects, Passthrough cache); the same with an OverReserve cache
(resync every 5 s). Prints one line per run.

    .venv/bin/python benchmarks/bench_nrt.py [--nodes 200 --pods 4000]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from bench_sim import _nodes, _pods  # type: ignore[import-not-found]

from kubetwin.sim.loop import simulate
from kubetwin.sim.nrt_exporter import ExporterSettings
from kubetwin.sim.scenario import Scenario, parse_scheduler_config


def _profile(args: dict | None):
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler",
                         "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}},
                         "pluginConfig": [{"name": "NodeResourceTopologyMatch", "args": args or {}}]}]}
    return parse_scheduler_config(cfg)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--pods", type=int, default=4000)
    a = ap.parse_args()
    runs = [("no objects", None, None),
            ("agents watching the kubelet state", ExporterSettings(), None),
            ("agents every 60 s, Passthrough", ExporterSettings(watch_kubelet_state=False), None),
            ("agents every 60 s, OverReserve 5 s", ExporterSettings(watch_kubelet_state=False),
             {"cacheResyncPeriodSeconds": 5})]
    for label, exporter, args in runs:
        sc = Scenario("nrt", _nodes(a.nodes), _pods(a.pods), profile=_profile(args))
        sc.settings = dataclasses.replace(sc.settings, node_resource_topology=exporter)
        t, c = time.perf_counter(), time.process_time()
        r = simulate(sc)
        dt, cpu = time.perf_counter() - t, time.process_time() - c
        s = r.summary()
        resyncs = sum(1 for e in r.events if e["type"] == "NodeResourceTopologyResync")
        print(f"{label}: {a.nodes} nodes, {a.pods} pods: {dt:.2f} s ({cpu:.2f} s CPU), {a.pods / dt:,.0f} pods/s "
              f"({a.pods / cpu:,.0f} per CPU second); bound {s['bound']}, "
              f"pending {s['pending']}, kubelet rejections {dict(s['rejectedByKubelet'])}, resyncs {resyncs}")


if __name__ == "__main__":
    main()
