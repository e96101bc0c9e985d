"""Random workloads over the shared conformance machines, run through ``simulate`` on the plain
NRI path (no table of node histories), for the equivalence tests of the runtime policies' fast
paths: every container's cpusets, memory nodes, pool and alignment, rejections and node figures
of a run, as JSON."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import yaml

from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.node import node_from_dict
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.config import decode_policy, load_policy
from kubetwin.sim import runtime_memo
from kubetwin.sim.loop import Simulator
from kubetwin.sim.runtime_policies import RuntimePolicy
from kubetwin.sim.scenario import Scenario, SimNode, node_resources, parse_scheduler_config
from kubetwin.sim.workload import Arrival

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"
MACHINES = ("dual-socket-multi-numa-per-socket-ht.json", "single-socket-ht.json", "quad-socket-four-way-ht.json")
BALLOONS_CASE = SHARED / "nri" / "balloons" / "test01-basic-placement-pod0-pod3.yaml"
NONE = {"kubeReserved": {"cpu": "1", "memory": "1Gi"}}

#: pod annotations the random pods draw from (topology-aware's and balloons' preferences)
TOPOLOGY_AWARE_ANNOTATIONS: list[dict[str, str]] = [
    {}, {}, {"prefer-shared-cpus.resource-policy.nri.io/pod": "true"},
    {"prefer-isolated-cpus.resource-policy.nri.io/pod": "true"},
    {"prefer-reserved-cpus.resource-policy.nri.io/pod": "true"},
    {"hide-hyperthreads.resource-policy.nri.io/pod": "true"},
]
BALLOONS_ANNOTATIONS: list[dict[str, str]] = [
    {}, {"balloon.balloons.resource-policy.nri.io": "two-cpu"},
    {"balloon.balloons.resource-policy.nri.io": "four-cpu"},
]


def topology_aware() -> RuntimePolicy:
    return RuntimePolicy("topology-aware", load_policy("topology-aware"))


def balloons() -> RuntimePolicy:
    doc = yaml.safe_load(BALLOONS_CASE.read_text())
    return RuntimePolicy("balloons", decode_policy(doc["policy"], str(BALLOONS_CASE)))


def nodes(machine_file: str, count: int, rp: RuntimePolicy, cfg: dict[str, Any] = NONE) -> list[SimNode]:
    machine = load_machine(str(SHARED / "machines" / machine_file))
    config = KubeletConfiguration.from_dict(cfg)
    cap, alloc = node_resources(machine, config, {}, 0)
    return [SimNode(node_from_dict({"apiVersion": "v1", "kind": "Node",
                                    "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
                                    "status": {"capacity": cap, "allocatable": alloc}}),
                    "g", machine, config, runtime=rp) for i in range(count)]


def pod_doc(rng: random.Random, annotations: list[dict[str, str]]) -> dict[str, Any]:
    """A random pod manifest (no name): QoS class, CPU and memory sizes, a second container,
    namespace and annotations drawn at random."""
    cpu = rng.choice(("100m", "250m", "500m", "1", "1", "1500m", "2", "2", "3", "4", "6"))
    mem = rng.choice(("64Mi", "256Mi", "1Gi", "3Gi"))
    qos = rng.choice(("guaranteed", "guaranteed", "burstable", "burstable-nocpu", "besteffort"))
    res: dict[str, Any] = {}
    if qos == "burstable-nocpu":
        res["requests"] = {"memory": mem}
    elif qos != "besteffort":
        res["requests"] = {"cpu": cpu, "memory": mem}
        if qos == "guaranteed":
            res["limits"] = dict(res["requests"])
        elif rng.random() < 0.5:
            res["limits"] = {"cpu": str(2 * int(cpu)) if cpu.isdigit() else "2"}
    containers = [{"name": "c", "resources": res}]
    if rng.random() < 0.25:
        containers.append({"name": "side", "resources": res})
    meta: dict[str, Any] = {"namespace": rng.choice(("default", "default", "team", "kube-system"))}
    ann = rng.choice(annotations)
    if ann:
        meta["annotations"] = ann
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": containers}}


def arrivals(seed: int, count: int, annotations: list[dict[str, str]]) -> list[Arrival]:
    """``count`` random pods arriving every half second, many of them leaving again."""
    rng = random.Random(seed)
    out = []
    for k in range(count):
        doc = pod_doc(rng, annotations)
        doc["metadata"].update(name=f"p{k}", uid=f"uid-{k}")
        out.append(Arrival(k * 0.5, pod_from_dict(doc), duration=rng.choice((None, 2.0, 5.0, 11.0, 30.0))))
    return out


def run(node_list: list[SimNode], arrival_list: list[Arrival]) -> str:
    """The run's results as JSON (timings left out), every node on the plain NRI path."""
    runtime_memo.ENABLED = False
    try:
        result = Simulator(Scenario("fast", node_list, arrival_list, profile=parse_scheduler_config(None))).run()
    finally:
        runtime_memo.ENABLED = True
    out = result.to_json()
    out["summary"] = {k: v for k, v in out["summary"].items()
                      if k not in ("wallSeconds", "schedulingAttemptsPerSecond")}
    return json.dumps(out, sort_keys=True, default=str)


def placed(result: str) -> int:
    """How many containers the run placed (so a test knows its workload did something)."""
    return len(json.loads(result)["placement"]["containers"])
