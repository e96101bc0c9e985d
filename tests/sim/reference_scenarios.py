"""The eight reference scenarios and their canonical per-pod outcomes (the equivalence harness).

A refactoring of the scheduler, the kubelet managers or the simulation loop must leave every
pod's outcome as it was, down to the byte. Each scenario here is run through
:func:`kubetwin.sim.loop.simulate`; its result is turned into a canonical dump — one JSON line
per pod (placement, times, attempts, reason and message, exclusive CPUs, NUMA nodes, GPUs,
claims), the counters, the pending reasons, one line per node report, the samples and the
events — sorted and serialised deterministically, and hashed with SHA-256. The digests recorded
in ``reference_outcomes.json`` were taken from the code at the commit named there.

``tests/sim/test_reference_outcomes.py`` checks the digests; ``scripts/reference-outcomes``
(``--check``, ``--update``, ``--dump``) does the same from the command line and, for a scenario
that differs, runs it again at the recorded commit to show the first differing pods.

Only kubetwin's simulation API is used (``kubetwin.sim``), so this module also runs against an
older checkout of the package.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Callable

TRACE = Path("/work/shared/data/traces/alibaba-gpu-v2023")
DIGESTS = Path(__file__).resolve().with_name("reference_outcomes.json")


# --- the scenarios ---------------------------------------------------------------------------------


def _alibaba(pods: str, deletions: bool, variant: str | None = None) -> Callable[[], Any]:
    def build() -> Any:
        from kubetwin.sim.sweep import RunSpec, load_run, parse_variant

        v = parse_variant(variant) if variant else None
        return load_run(RunSpec(("alibaba", str(TRACE), pods, deletions), v))

    return build


def bench_nodes(n: int, gpus: int = 0) -> list[Any]:
    """The benchmark nodes (``benchmarks/bench_sim.py`` imports them from here): 2 sockets × 2 NUMA nodes × 16 cores × 2 threads,
    static CPU / Static memory / single-numa-node kubelets, zones z0..z2."""
    from kubetwin.machine import load_machine
    from kubetwin.model.kubelet_config import KubeletConfiguration
    from kubetwin.model.node import node_from_dict
    from kubetwin.sim import scenario as sc
    from kubetwin.sim.scenario import SimNode

    machine = load_machine("2s2n16c2t")
    cfg = KubeletConfiguration.from_dict({
        "cpuManagerPolicy": "static", "memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
        "kubeReserved": {"cpu": "2", "memory": "2Gi"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "2148Mi"}}]})
    if hasattr(sc, "node_resources"):
        cap, alloc = sc.node_resources(machine, cfg, {}, gpus)
    else:  # the code the digests were recorded from (scripts/reference-outcomes runs it too)
        cap, alloc = sc._machine_resources(machine, cfg, {"alibabacloud.com/gpu-count": str(gpus)} if gpus else None)
    out = []
    for i in range(n):
        node = node_from_dict({"apiVersion": "v1", "kind": "Node",
                               "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                                                      "topology.kubernetes.io/zone": f"z{i % 3}"}},
                               "status": {"capacity": cap, "allocatable": alloc}})
        out.append(SimNode(node, "bench", machine, cfg, gpus, "G" if gpus else ""))
    return out


def bench_pods(n: int, gpu: bool = False, cpu_usage: bool = False) -> list[Any]:
    """The benchmark pods (``benchmarks/bench_sim.py`` imports them from here): 1, 2 or 4 CPUs and 1Gi, every
    other one Guaranteed. With ``cpu_usage`` the Burstable ones get a CPU limit (a quota) and every pod a CPU
    curve ramping from half its request to 1.5 times it over five minutes, so the top is throttled."""
    from kubetwin.model.pod import pod_from_dict
    from kubetwin.sim.workload import Arrival

    out = []
    for k in range(n):
        cpu = ("1", "2", "4")[k % 3]
        res: dict[str, Any] = {"requests": {"cpu": cpu, "memory": "1Gi"}}
        if k % 2 == 0:
            res["limits"] = dict(res["requests"])
        elif cpu_usage:
            res["limits"] = {"cpu": str(int(cpu) * 5 // 4) if cpu != "1" else "1250m"}
        meta: dict[str, Any] = {"name": f"p{k}", "namespace": "default", "uid": f"default/p{k}"}
        if gpu:
            meta["annotations"] = {"alibabacloud.com/gpu-count": "1", "alibabacloud.com/gpu-milli": "1000"}
        pod = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                             "spec": {"containers": [{"name": "c", "resources": res}]}})
        if cpu_usage:
            from kubetwin.sim.usage import parse_usage

            milli = int(cpu) * 1000
            usage = parse_usage({"cpu": [["0s", f"{milli // 2}m"], ["5m", f"{milli * 3 // 2}m"]]}, "usage")
            out.append(Arrival(k * 0.01, pod, usage=usage))
        else:
            out.append(Arrival(k * 0.01, pod))
    return out


def bench_scenario(name: str, nodes: list[Any], arrivals: list[Any]) -> Any:
    """A scenario of these nodes and arrivals under the default scheduler profile."""
    from kubetwin.sim.scenario import Scenario, parse_scheduler_config

    return Scenario(name, nodes, arrivals, profile=parse_scheduler_config(None))


def _bench(name: str, nodes: int, pods: int, gpus: int = 0) -> Callable[[], Any]:
    def build() -> Any:
        return bench_scenario(name, bench_nodes(nodes, gpus), bench_pods(pods, gpu=gpus > 0))

    return build


def dra_scenario(nodes: int, gpus: int, pods: int) -> Any:
    """The DRA benchmark scenario (``benchmarks/bench_sim.py`` imports it from here): each pod claims one GPU a DRA driver publishes."""
    import yaml

    from kubetwin.sim import load_scenario

    sim = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "dra"},
           "spec": {"kubeletAdmission": False,
                    "nodeGroups": [{"name": "gpu", "count": nodes, "machine": f"2s2n16c2t:gpus={gpus}",
                                    "draDrivers": [{"driver": "gpu.example.com", "kinds": ["gpu"]}]}],
                    "workloads": [{"name": "p", "count": pods, "arrival": {"interval": 0.01},
                                   "template": {"spec": {
                                       "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                                       "containers": [{"name": "c", "resources": {
                                           "requests": {"cpu": "1", "memory": "1Gi"},
                                           "claims": [{"name": "gpu"}]}}]}}}]}}
    dc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
          "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
    tmpl = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "dra.yaml"
        p.write_text(yaml.safe_dump_all([sim, dc, tmpl]))
        return load_scenario(p)


def _dra(nodes: int, gpus: int, pods: int) -> Callable[[], Any]:
    def build() -> Any:
        return dra_scenario(nodes, gpus, pods)

    return build


def _default() -> Any:
    """The scenario ``kubetwin simulate`` runs when given none."""
    import kubetwin
    from kubetwin.sim import load_scenario

    return load_scenario(Path(kubetwin.__file__).resolve().parent / "sim" / "default" / "scenario.yaml")


#: name -> builder. Scaled where the benchmark's size would cost CI minutes; the end-to-end and GPU
#: scenarios hold more pods than the nodes take, so unschedulable pods, their messages and their
#: retries are part of the outcome.
SCENARIOS: dict[str, Callable[[], Any]] = {
    "alibaba-default": _alibaba("openb_pod_list_default.csv", False),
    "alibaba-default-deletions": _alibaba("openb_pod_list_default.csv", True),
    "alibaba-gpuspec33-deletions-mostallocated": _alibaba(
        "openb_pod_list_gpuspec33.csv", True, "most:scheduler.scoringStrategy=MostAllocated"),
    "alibaba-multigpu50": _alibaba("openb_pod_list_multigpu50.csv", False),
    "end-to-end": _bench("e2e", 80, 4500),
    "gpu-share": _bench("gpu", 120, 1500, gpus=10),
    "dra": _dra(100, 10, 1200),
    "default": _default,
}


def needs_trace(name: str) -> bool:
    return name.startswith("alibaba")


# --- the canonical dump ---------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


def _line(kind: str, value: Any) -> str:
    return json.dumps([kind, _plain(value)], sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      default=str)


def canonical_lines(result: Any) -> list[str]:
    """Every outcome of a run as sorted JSON lines (the wall-clock time left out): ``pod`` lines
    first (they sort before the others' kinds only by name, so each kind keeps its own order)."""
    pods = sorted(_line("pod", p) for p in result.pods)
    nodes = sorted(_line("node", n) for n in result.node_reports)
    head = [
        _line("scenario", {"name": result.scenario, "nodes": result.nodes, "simTime": result.sim_time,
                           "resources": list(result.resources)}),
        _line("counters", result.counters),
        _line("pendingReasons", result.pending_reasons),
    ]
    samples = [_line("sample", s) for s in result.samples]
    events = [_line("event", e) for e in result.events]
    return head + pods + nodes + samples + events


def run(name: str) -> list[str]:
    from kubetwin.sim.loop import simulate

    return canonical_lines(simulate(SCENARIOS[name]()))


def digest(lines: list[str]) -> str:
    h = hashlib.sha256()
    for ln in lines:
        h.update(ln.encode())
        h.update(b"\n")
    return h.hexdigest()


def recorded() -> dict[str, Any]:
    return json.loads(DIGESTS.read_text())
