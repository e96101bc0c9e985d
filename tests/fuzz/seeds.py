"""Valid command lines to start fuzzing from: every command and subcommand, with its input files.

Seeds come from three places: the examples the README runs (``examples/``), the conformance
cases in ``../shared/conformance`` (each case kind turned into its command line as
``FORMAT.md`` describes it), and hand-written seeds for the commands neither covers
(``simulate``, ``topology``/``discover``, ``dra prepare``/``slices``, ``gates``, ``admit
--devices`` and ``--write-state``). A seed is a command line and the files it reads; mutations
(``mutations.py``) change a file or an option value and the oracle judges the result.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import yaml

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("KUBETWIN_SHARED", ROOT.parent / "shared"))
EXAMPLES = ROOT / "examples"
DEFAULT_SIM = ROOT / "kubetwin" / "sim" / "default"


@dataclass(frozen=True)
class Seed:
    """One valid invocation: ``kubetwin ARGV`` run in a folder holding ``files``."""

    name: str
    argv: tuple[str, ...]
    files: dict[str, bytes] = field(default_factory=dict)
    #: files or folders the command writes (must be whole or absent afterwards)
    outputs: tuple[str, ...] = ()
    #: folders that must exist before the run (state folders, CDI folders)
    dirs: tuple[str, ...] = ()
    #: files read because another input names them (a scenario's objects)
    referenced: tuple[str, ...] = ()

    @property
    def output_format(self) -> str:
        argv = list(self.argv)
        for i, a in enumerate(argv[:-1]):
            if a in ("-o", "--output"):
                return argv[i + 1]
        return "table"

    @property
    def inputs(self) -> list[str]:
        """The files the command reads: named on the command line (or inside a named folder),
        or read through another input (``referenced``)."""
        named = set(self.argv)
        return sorted(n for n in self.files if n in named or n.split("/")[0] in named or n in self.referenced)

    @property
    def command(self) -> str:
        argv = list(self.argv)
        while argv and argv[0].startswith("-"):  # global options and their values
            argv = argv[2:] if argv[0] == "--kubernetes-version" else argv[1:]
        words = [a for a in argv if not a.startswith("-")]
        if not words:
            return "?"
        return f"dra {words[1]}" if words[0] == "dra" and len(words) > 1 else words[0]


def _yaml(*docs: Any) -> bytes:
    return yaml.safe_dump_all(list(docs), sort_keys=False).encode()


def _json(doc: Any) -> bytes:
    return json.dumps(doc, indent=1).encode()


def _kubelet_config(cfg: dict[str, Any] | None) -> dict[str, Any]:
    out = dict(cfg or {})
    out.setdefault("apiVersion", "kubelet.config.k8s.io/v1beta1")
    out.setdefault("kind", "KubeletConfiguration")
    return out


def _gates(gates: dict[str, bool] | None) -> list[str]:
    if not gates:
        return []
    return ["--feature-gates", ",".join(f"{g}={'true' if on else 'false'}" for g, on in gates.items())]


def _machine(case: dict[str, Any], path: Path) -> Any:
    if "machine" in case:
        return case["machine"]
    if "machineRef" in case:
        return json.loads((path.parent / case["machineRef"]).read_text())
    return None


# ------------------------------------------------------------------ conformance cases, by kind


def _admission(case: dict[str, Any], path: Path) -> Seed:
    files = {"machine.json": _json(_machine(case, path)), "kubelet.yaml": _yaml(_kubelet_config(case.get("kubeletConfig"))),
             "pods.yaml": _yaml(*case["pods"])}
    argv = ["admit", "--machine", "machine.json", "--config", "kubelet.yaml"]
    dirs: tuple[str, ...] = ()
    if case.get("state"):
        for fname, content in case["state"].items():
            files[f"state/{fname}"] = json.dumps(content).encode()
        argv += ["--state-dir", "state"]
        dirs = ("state",)
    argv += ["--write-state", "out-state", "--metrics", "metrics.prom", "pods.yaml", "-o", "json"]
    return Seed(case["name"], tuple(argv), files, outputs=("out-state", "metrics.prom"), dirs=dirs)


def _pod_resource_config(case: dict[str, Any], path: Path) -> Seed:
    node = case.get("node") or {}
    node_obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node.get("name", "node-1")},
                "status": {"capacity": node.get("capacity", {}),
                           "allocatable": node.get("allocatable", node.get("capacity", {}))}}
    files = {"pod.yaml": _yaml(case["pod"]), "node.yaml": _yaml(node_obj)}
    argv = ["explain", "pod.yaml", "--node", "node.yaml", "--cgroup", str(case.get("cgroupVersion", "v2"))]
    if case.get("kubeletConfig"):
        files["kubelet.yaml"] = _yaml(_kubelet_config(case["kubeletConfig"]))
        argv += ["--config", "kubelet.yaml"]
    machine = _machine(case, path)
    if machine is not None:
        files["machine.json"] = _json(machine)
        argv += ["--machine", "machine.json"]
    return Seed(case["name"], tuple(argv + ["-o", "json"]), files)


def _dra_allocation(case: dict[str, Any], path: Path) -> Seed:
    files = {"objects.yaml": _yaml(*(case.get("objects") or [])), "node.yaml": _yaml(case["node"]),
             "claims.yaml": _yaml(*case["claims"])}
    argv = ["dra", "allocate", "-f", "objects.yaml", "--node", "node.yaml", *_gates(case.get("featureGates")),
            "-o", "json", "claims.yaml"]
    return Seed(case["name"], tuple(argv), files)


def _scheduler_plugin(case: dict[str, Any], path: Path) -> Seed:
    files = {"nodes.yaml": _yaml(*case["nodes"]), "pod.yaml": _yaml(case["pod"])}
    argv = ["schedule", "--nodes", "nodes.yaml", "--plugin", case["plugin"]]
    if case.get("pods"):
        files["running.yaml"] = _yaml(*case["pods"])
        argv += ["--pods", "running.yaml"]
    if case.get("objects"):
        files["objects.yaml"] = _yaml(*case["objects"])
        argv += ["-f", "objects.yaml"]
    if case.get("pluginArgs"):
        files["args.yaml"] = _yaml(case["pluginArgs"])
        argv += ["--plugin-args", "args.yaml"]
    argv += _gates(case.get("featureGates"))
    return Seed(case["name"], tuple(argv + ["-o", "json", "pod.yaml"]), files)


def _eviction_ranking(case: dict[str, Any], path: Path) -> Seed:
    files = {"pods.yaml": _yaml(*case["pods"]), "summary.json": _json(case.get("summary") or {})}
    argv = ["evict", "--signal", case["signal"], "--summary", "summary.json", "-o", "json", "pods.yaml"]
    return Seed(case["name"], tuple(argv), files)


def _eviction_decision(case: dict[str, Any], path: Path) -> Seed:
    timeline = [{k: v for k, v in step.items() if k != "expect"} for step in case.get("steps") or []]
    files = {"kubelet.yaml": _yaml(_kubelet_config(case.get("kubeletConfig"))),
             "pods.yaml": _yaml(*(case.get("pods") or [])), "timeline.yaml": yaml.safe_dump(timeline).encode()}
    argv = ["evict", "--config", "kubelet.yaml", "--timeline", "timeline.yaml"]
    layout = case.get("filesystems") or {}
    if layout.get("dedicatedImageFs"):
        argv.append("--dedicated-imagefs")
    if layout.get("splitContainerFs"):
        argv.append("--split-containerfs")
    return Seed(case["name"], tuple(argv + ["-o", "json", "pods.yaml"]), files)


_BUILDERS = {
    "KubeletAdmission": _admission,
    "PodResourceConfig": _pod_resource_config,
    "DRAAllocation": _dra_allocation,
    "SchedulerPlugin": _scheduler_plugin,
    "EvictionRanking": _eviction_ranking,
    "EvictionDecision": _eviction_decision,
}


def conformance_seeds(root: Path = SHARED / "conformance") -> Iterator[Seed]:
    """One seed per conformance case whose expectation is a valid input (configuration errors excluded)."""
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*.yaml")):
        if {"machines", "bad-input"} & set(path.parts):
            continue
        case = yaml.safe_load(path.read_text())
        build = _BUILDERS.get((case or {}).get("kind"))
        expect = (case or {}).get("expect")
        if build is None or (isinstance(expect, dict) and (expect.get("configError") or expect.get("outcome") == "error")):
            continue
        yield build(case, path)


# ------------------------------------------------------------------ examples and hand-written seeds


def _read(path: Path) -> bytes:
    return path.read_bytes()


def example_seeds() -> Iterator[Seed]:
    """The README's commands on the shipped examples, and the commands they do not show."""
    ex = EXAMPLES
    explain = {f"{n}.yaml": _read(ex / "explain" / f"{n}.yaml") for n in ("web", "node", "kubelet")}
    yield Seed("example/explain", ("explain", "web.yaml", "--node", "node.yaml", "--config", "kubelet.yaml",
                                   "--pods", "web.yaml", "-o", "json"), explain)
    yield Seed("example/explain-table", ("explain", "web.yaml", "--node", "node.yaml", "--pid-max", "4194304"), explain)

    pl = ex / "pod-level"
    podlevel = {n: _read(pl / n) for n in ("machine.json", "kubelet-pod-scope.yaml", "kubelet-container-scope.yaml",
                                            "ml-workload.yaml", "tightly-coupled-database.yaml")}
    for scope in ("pod-scope", "container-scope"):
        for workload in ("ml-workload.yaml", "tightly-coupled-database.yaml"):
            yield Seed(f"example/admit-{scope}-{workload}",
                       ("admit", "--machine", "machine.json", "--config", f"kubelet-{scope}.yaml", "--write-state", "out",
                        workload, "-o", "json"), podlevel, outputs=("out",))
    yield Seed("example/admit-explain", ("admit", "--machine", "machine.json", "--config", "kubelet-pod-scope.yaml",
                                         "--explain", "ml-workload.yaml"), podlevel)
    yield Seed("hand/admit-podresources", ("admit", "--machine", "machine.json", "--config",
                                           "kubelet-container-scope.yaml", "-o", "podresources", "--podresources",
                                           "allocatable", "tightly-coupled-database.yaml"), podlevel)
    yield Seed("hand/topology-nrt-live", ("topology", "machine.json", "--config", "kubelet-container-scope.yaml",
                                          "--state-dir", "state", "-o", "nrt"), podlevel, dirs=("state",))

    inventory = {"kind": "DeviceInventory", "resources": {
        "nvidia.com/gpu": [{"id": "GPU-0", "numaNodes": [0]}, {"id": "GPU-1", "numaNodes": [1], "health": "Unhealthy"}],
        "example.com/sriov-vf": [{"id": "vf-0", "numaNode": 0}]}}
    gpu_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu", "namespace": "default", "uid": "u-gpu"},
               "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                   "requests": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": "1"},
                   "limits": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": "1"}}}]}}
    kubelet = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
               "cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node",
               "memoryManagerPolicy": "Static", "kubeReserved": {"cpu": "1", "memory": "1Gi"},
               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}]}
    yield Seed("hand/admit-devices", ("admit", "--machine", "2s1n4c2t:gpus=2", "--config", "kubelet.yaml", "--devices",
                                      "devices.yaml", "--write-state", "out", "pod.yaml", "-o", "json"),
               {"devices.yaml": _yaml(inventory), "kubelet.yaml": _yaml(kubelet), "pod.yaml": _yaml(gpu_pod)},
               outputs=("out",))
    yield Seed("hand/admit-devices-from-machine", ("admit", "--machine", "1s2n4c2t:gpus=2", "--config", "kubelet.yaml",
                                                   "--devices-from-machine", "pod.yaml", "-o", "yaml"),
               {"kubelet.yaml": _yaml(kubelet), "pod.yaml": _yaml(gpu_pod)})

    resize = {n: _read(ex / "resize" / n) for n in ("kubelet.yaml", "pods.yaml", "grow-web.yaml", "grow-db.yaml")}
    yield Seed("example/admit-resize", ("admit", "--machine", "1s1n4c1t:mem=8Gi", "--config", "kubelet.yaml",
                                        "-f", "pods.yaml", "--resize", "web=grow-web.yaml", "--resize",
                                        "db=grow-db.yaml", "-o", "json"), resize)

    restart = {**resize, "state/allocated_pods_state": _allocated_pods_state(),
               "state/actuated_pods_state": _allocated_pods_state("200m")}
    yield Seed("hand/admit-resize-restart", ("admit", "--machine", "1s1n4c1t:mem=8Gi", "--config", "kubelet.yaml",
                                             "--state-dir", "state", "--write-state", "out", "-f", "pods.yaml",
                                             "--resize", "db=grow-db.yaml", "-o", "json"), restart,
               outputs=("out",), dirs=("state",))

    sched = {n: _read(ex / "schedule" / n) for n in ("pod.yaml", "nodes.yaml", "running.yaml")}
    yield Seed("example/schedule", ("schedule", "--nodes", "nodes.yaml", "--pods", "running.yaml", "pod.yaml", "-o", "json"),
               sched)
    yield Seed("example/schedule-admit", ("schedule", "--nodes", "nodes.yaml", "--pods", "running.yaml", "--admit",
                                          "pod.yaml"), sched)

    dra = {n: _read(ex / "dra" / n) for n in ("objects.yaml", "node.yaml", "claims.yaml")}
    yield Seed("example/dra-allocate", ("dra", "allocate", "-f", "objects.yaml", "--node", "node.yaml", "claims.yaml",
                                        "-o", "json"), dra)
    yield Seed("example/dra-allocate-table", ("dra", "allocate", "-f", "objects.yaml", "--node", "node.yaml",
                                              "claims.yaml"), dra)
    yield Seed("example/dra-explain", ("dra", "explain", "-f", "objects.yaml", "--node", "node.yaml", "claims.yaml",
                                       "-o", "json"), dra)
    yield Seed("example/dra-explain-table", ("dra", "explain", "-f", "objects.yaml", "--node", "node.yaml",
                                             "claims.yaml"), dra)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "ml", "uid": "pod-uid-1"},
           "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimName": "training"}],
                    "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpus"}]}}]}}
    yield Seed("hand/dra-allocate-pod", ("dra", "allocate", "-f", "objects.yaml", "-f", "claims.yaml", "--node",
                                         "node.yaml", "--pod", "pod.yaml", "-o", "json"), {**dra, "pod.yaml": _yaml(pod)})
    yield Seed("hand/dra-prepare", ("dra", "prepare", "-f", "allocated.yaml", "--node", "node.yaml", "--state-dir",
                                    "state", "--cdi-dir", "cdi", "pod.yaml", "-o", "json"),
               {"allocated.yaml": _allocated_claim(), "node.yaml": dra["node.yaml"], "pod.yaml": _yaml(pod)},
               outputs=("state", "cdi"), dirs=("state", "cdi"))
    yield Seed("hand/dra-unprepare", ("dra", "unprepare", "--state-dir", "state", "--cdi-dir", "cdi", "-f",
                                      "allocated.yaml", "pod.yaml", "-o", "json"),
               {"allocated.yaml": _allocated_claim(), "pod.yaml": _yaml(pod),
                "state/dra_manager_state": _prepared_checkpoint(_allocated_claim(), _yaml(pod))},
               outputs=("state", "cdi"), dirs=("state", "cdi"))
    yield Seed("hand/dra-slices", ("dra", "slices", "--machine", "machine.json", "--driver", "gpu.example.com",
                                   "--partitions", "2", "-o", "json"),
               {"machine.json": _read(pl / "machine.json")})
    yield Seed("hand/dra-slices-spec", ("dra", "slices", "--machine", "2s1n4c2t:gpus=4", "--driver", "gpu.example.com",
                                        "--kind", "gpu", "--vendor-id", "10de", "--cdi-dir", "cdi"),
               outputs=("cdi",), dirs=("cdi",))

    ev = {n: _read(ex / "evict" / n) for n in ("summary.json", "pods.yaml")}
    yield Seed("example/evict", ("evict", "--signal", "memory.available", "--summary", "summary.json", "--oom",
                                 "pods.yaml", "-o", "json"), ev)
    yield Seed("example/evict-table", ("evict", "--signal", "memory.available", "--summary", "summary.json",
                                       "pods.yaml"), ev)
    timeline = {n: _read(ex / "evict" / n) for n in ("kubelet.yaml", "timeline.yaml", "pods.yaml")}
    yield Seed("example/evict-timeline", ("evict", "--config", "kubelet.yaml", "--timeline", "timeline.yaml",
                                          "pods.yaml"), timeline)

    xml = {n: _read(DEFAULT_SIM / "machines" / n) for n in ("24em64t-2n6c2t-pci.xml",)}
    yield Seed("hand/topology-xml", ("topology", "24em64t-2n6c2t-pci.xml", "-o", "json"), xml)
    yield Seed("hand/topology-machineinfo", ("topology", "machine.json", "-o", "nrt"), {"machine.json": podlevel["machine.json"]})
    yield Seed("hand/topology-spec", ("topology", "2s2n4c2t:mem=64Gi:gpus=2:l3=per-2c", "-o", "machineinfo"))
    yield Seed("hand/topology-table", ("topology", "1s1n4c2t:hugepages-1Gi=2"))
    yield Seed("hand/discover", ("discover", "-o", "json"))
    yield Seed("hand/gates", ("gates", "--feature-gates", "PodLevelResources=true", "-o", "json"))
    yield Seed("hand/gates-changed", ("--kubernetes-version", "1.34", "gates", "--changed", "PodLevelResources"))

    yield Seed("hand/simulate", ("simulate", "scenario.yaml", "--no-progress", "--report", "report.html", "--json",
                                 "results.json", "--metrics", "metrics.prom", "-j", "1", "-o", "json"),
               {"scenario.yaml": _yaml(*_scenario()), "objects.yaml": _read(DEFAULT_SIM / "objects.yaml")},
               outputs=("report.html", "results.json", "metrics.prom"), referenced=("objects.yaml",))
    yield Seed("hand/simulate-variant", ("simulate", "scenario.yaml", "--no-progress", "--report", "-", "-j", "1",
                                         "--variant", "none:kubelet.topologyManagerPolicy=none", "-o", "yaml"),
               {"scenario.yaml": _yaml(*_scenario()), "objects.yaml": _read(DEFAULT_SIM / "objects.yaml")},
               referenced=("objects.yaml",))

    bio = {n: _read(EXAMPLES / "simulate" / "blockio" / n) for n in ("scenario.yaml", "blockio.yaml")}
    yield Seed("example/simulate-blockio", ("simulate", "scenario.yaml", "--no-progress", "--pods", "--json",
                                            "results.json", "-j", "1"), bio, outputs=("results.json",),
               referenced=("blockio.yaml",))
    plan = {"web.yaml": _read(EXAMPLES / "plan" / "web.yaml"), "kubelet.yaml": _read(EXAMPLES / "plan" / "kubelet-numa.yaml")}
    yield Seed("example/plan", ("plan", "web.yaml", "--node-type", "numa=1s2n4c2t:mem=64Gi,kubelet=kubelet.yaml",
                                "--no-progress", "-o", "json"), plan, referenced=("kubelet.yaml",))
    yield Seed("hand/plan-priced", ("plan", "web.yaml", "--node-type", "numa=1s2n4c2t:mem=64Gi,kubelet=kubelet.yaml,price=1",
                                    "--node-type", "big=2s2n8c2t:mem=128Gi,price=4.5,labels=pool=big", "--max-trials", "20",
                                    "--no-progress"), plan, referenced=("kubelet.yaml",))

    yield Seed("hand/simulate-autoscaling", ("simulate", "scenario.yaml", "--no-progress", "-j", "1", "--variant",
                                             "aware:autoscaler.estimator=kubelet-aware", "-o", "json"),
               {"scenario.yaml": _yaml(*_autoscaling_scenario())})
    yield Seed("hand/simulate-autoscaling-spread", ("simulate", "scenario.yaml", "--no-progress", "-j", "1", "-o", "json"),
               {"scenario.yaml": _yaml(*_autoscaling_scenario(spread=True))})
    yield Seed("hand/simulate-autoscaling-dra", ("simulate", "scenario.yaml", "--no-progress", "-j", "1", "-o", "json"),
               {"scenario.yaml": _yaml(*_autoscaling_dra_scenario())})
    yield Seed("example/simulate-autoscale-dra", ("simulate", "-f", "gpu-jobs.yaml", "--no-progress", "-o", "json"),
               {n: _read(ex / "autoscale" / n) for n in ("gpu-jobs.yaml", "gpu-claims.yaml")},
               referenced=("gpu-claims.yaml",))
    yield Seed("example/simulate-statefulset", ("simulate", "-f", "db.yaml", "--pods"),
               {n: _read(ex / "statefulset" / n) for n in ("db.yaml", "set.yaml")}, referenced=("set.yaml",))
    yield Seed("hand/simulate-statefulset", ("simulate", "scenario.yaml", "--no-progress", "-j", "1", "-o", "json"),
               {"scenario.yaml": _yaml(*_statefulset_scenario())})
    yield Seed("hand/snapshot-statefulset", ("snapshot", "dumps", "-o", "out"),
               {"dumps/all.yaml": _yaml(*_statefulset_dump())}, outputs=("out",))

    # serve --check: the cluster and the NodeKubelets file read as serve reads them, nothing served
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"pool": pool}},
              "status": {"capacity": cap, "allocatable": cap}}
             for name, pool, cap in (("node-a", "general", {"cpu": "8", "memory": "32Gi", "pods": "110"}),
                                     ("gpu-0", "gpu", {"cpu": "32", "memory": "128Gi", "pods": "110"}))]
    running = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db", "namespace": "default"},
               "spec": {"nodeName": "node-a", "containers": [{"name": "db", "image": "db", "resources": {
                   "requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}}]}}
    yield Seed("hand/serve-check", ("serve", "--cluster", "cluster.yaml", "--kubelets", "kubelets.yaml", "--check"),
               {"cluster.yaml": _yaml(*nodes, running), "kubelets.yaml": _read(EXAMPLES / "serve" / "kubelets.yaml")})
    yield Seed("hand/serve-check-scenario", ("serve", "--cluster", "scenario.yaml", "--check"),
               {"scenario.yaml": _yaml(*_scenario()), "objects.yaml": _read(DEFAULT_SIM / "objects.yaml")},
               referenced=("objects.yaml",))
    # admit on a snapshot's node folder: its pods.json, kubelet.json and machine.json
    from kubetwin.machine import load_machine
    from kubetwin.machine.machineinfo import to_machineinfo

    yield Seed("hand/admit-node-folder", ("admit", "node", "-o", "json"),
               {"node/pods.json": _json({"apiVersion": "v1", "kind": "List", "items": [running]}),
                "node/kubelet.json": _json({"apiVersion": "kubelet.config.k8s.io/v1beta1",
                                            "kind": "KubeletConfiguration", "cpuManagerPolicy": "static",
                                            "reservedSystemCPUs": "0"}),
                "node/machine.json": _json(to_machineinfo(load_machine("1s2n4c1t")))})
    # serve --check with DRA objects (POST /api/v1/dra and the pod drill-down read them)
    from ..serve.dra_fixture import SCENARIO as DRA_SCENARIO

    yield Seed("hand/serve-check-dra", ("serve", "--cluster", "scenario.yaml", "--check", "-o", "json"),
               {"scenario.yaml": DRA_SCENARIO.encode()})
    yield from runtime_seeds()
    yield from checkpoint_seeds()


def _written_by(argv: list[str], files: dict[str, bytes], folder: str) -> dict[str, bytes]:
    """The files a valid kubetwin command writes into ``folder`` (a state folder a later seed
    starts from), made by running it once: a checkpoint kept in the tree would go stale."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kubetwin-fuzz-seed-") as tmp:
        for name, data in files.items():
            (Path(tmp) / name).write_bytes(data)
        subprocess.run([sys.executable, "-c", "import sys; from kubetwin.cli.main import main; sys.exit(main())",
                        *argv, "--write-state", folder], cwd=tmp, check=True, capture_output=True)
        root = Path(tmp) / folder
        return {f"{folder}/{p.relative_to(root)}": p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


_WRITTEN: dict[str, dict[str, bytes]] = {}


def runtime_seeds() -> Iterator[Seed]:
    """``kubetwin runtime``: the README's policies, a policy resource and Helm values, RDT and
    Block I/O classes, and a node started from its state folder (``--state-dir``, JSON the
    mutations reach) with a pod deleted first."""
    ex = EXAMPLES / "runtime"
    two = {"two-pods.yaml": _read(ex / "two-pods.yaml")}
    yield Seed("hand/runtime-topology-aware", ("runtime", "--machine", "2s1n8c2t", "--policy", "topology-aware",
                                               "two-pods.yaml", "-o", "json"), two)
    yield Seed("hand/runtime-balloons-nrt", ("runtime", "--machine", "2s1n8c2t", "--policy", "balloons",
                                             "two-pods.yaml", "-o", "nrt"), two)
    classes = {n: _read(ex / n) for n in ("machine-rdt.json", "kubelet.yaml", "rdt.yaml", "blockio.yaml", "pods.yaml")}
    yield Seed("hand/runtime-rdt-blockio", ("runtime", "--machine", "machine-rdt.json", "--policy", "balloons",
                                            "--config", "kubelet.yaml", "--rdt", "rdt.yaml", "--blockio", "blockio.yaml",
                                            "pods.yaml", "-o", "json"), classes)
    balloons = {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy",
                "metadata": {"name": "default", "namespace": "kube-system"},
                "spec": {"reservedResources": {"cpu": "1"}, "pinCPU": True, "pinMemory": True,
                         "balloonTypes": [{"name": "singleton", "minCPUs": 2, "maxCPUs": 2, "minBalloons": 1,
                                           "maxBalloons": 1},
                                          {"name": "dynamic", "maxCPUs": 4, "maxBalloons": 2,
                                           "preferNewBalloons": True}]}}
    yield Seed("hand/runtime-policy-resource", ("runtime", "--machine", "1s2n4c2t", "--policy", "policy.yaml",
                                                "--explain", "two-pods.yaml", "-o", "yaml"),
               {**two, "policy.yaml": _yaml(balloons)})
    values = {"config": {"reservedResources": {"cpu": "750m"}, "pinCPU": True, "pinMemory": False,
                         "colocatePods": True}}
    yield Seed("hand/runtime-helm-values", ("runtime", "--machine", "2s2n4c2t", "--policy", "topology-aware",
                                            "--helm-values", "values.yaml", "--isolated-cpus", "3", "two-pods.yaml",
                                            "-o", "json"), {**two, "values.yaml": _yaml(values)})
    if "runtime" not in _WRITTEN:
        _WRITTEN["runtime"] = _written_by(["runtime", "--machine", "2s1n8c2t", "--policy", "topology-aware",
                                           "two-pods.yaml"], two, "state")
    state = _WRITTEN["runtime"]
    yield Seed("hand/runtime-state-dir", ("runtime", "--machine", "2s1n8c2t", "--policy", "topology-aware",
                                          "--state-dir", "state", "--delete", "default/web", "--write-state", "out",
                                          "pods.yaml", "-o", "json"),
               {**state, "pods.yaml": classes["pods.yaml"]}, outputs=("out",), dirs=("state",))


def checkpoint_seeds() -> Iterator[Seed]:
    """``admit --state-dir`` on the kubelet's own checkpoints (``cpu_manager_state``,
    ``memory_manager_state``, ``kubelet_internal_checkpoint``, ``allocated_pods_state``) as a
    previous ``admit --write-state`` left them, the mutations reaching each."""
    pl = EXAMPLES / "pod-level"
    files = {n: _read(pl / n) for n in ("machine.json", "kubelet-container-scope.yaml", "tightly-coupled-database.yaml",
                                        "ml-workload.yaml")}
    argv = ["admit", "--machine", "machine.json", "--config", "kubelet-container-scope.yaml"]
    if "admit" not in _WRITTEN:
        _WRITTEN["admit"] = _written_by([*argv, "tightly-coupled-database.yaml"], files, "state")
    yield Seed("hand/admit-state-dir", (*argv, "--state-dir", "state", "--write-state", "out", "ml-workload.yaml",
                                        "-o", "json"),
               {**files, **_WRITTEN["admit"]}, outputs=("out",), dirs=("state",))


def snapshot_seeds() -> Iterator[Seed]:
    """``kubetwin snapshot``: dumps (a folder), and a live cluster's kubeconfig (the server does
    not answer: a mutated kubeconfig must still end in one error naming it)."""
    dumps = {f"dumps/{f.name}": _read(f) for f in sorted((EXAMPLES / "snapshot").iterdir()) if f.is_file()}
    yield Seed("example/snapshot", ("snapshot", "-f", "dumps", "-o", "out"), dumps, outputs=("out",))
    kubeconfig = {"apiVersion": "v1", "kind": "Config",
                  "clusters": [{"name": "dev", "cluster": {"server": "http://127.0.0.1:9",
                                                           "insecure-skip-tls-verify": True}}],
                  "users": [{"name": "reader", "user": {"token": "t0ken"}}],
                  "contexts": [{"name": "dev", "context": {"cluster": "dev", "user": "reader", "namespace": "a"}}],
                  "current-context": "dev"}
    yield Seed("hand/snapshot-live", ("snapshot", "--kubeconfig", "kubeconfig", "--context", "dev", "-o", "out"),
               {"kubeconfig": _yaml(kubeconfig)}, outputs=("out",))
    yield Seed("hand/snapshot-per-node", ("snapshot", "dumps", "--per-node", "-o", "out"), dumps, outputs=("out",))
    yield Seed("hand/simulate-end-state", ("simulate", "scenario.yaml", "--no-progress", "-j", "1",
                                           "--write-end-state", "end", "-o", "json"),
               {"scenario.yaml": _yaml(*_scenario()), "objects.yaml": _read(DEFAULT_SIM / "objects.yaml")},
               outputs=("end",), referenced=("objects.yaml",))


def _autoscaling_scenario(spread: bool = False) -> list[dict[str, Any]]:
    """An hour of an HPA, a VPA and the Cluster Autoscaler on a small node group; with ``spread``
    the pods are spread by hostname and keep off each other (the CA's Filter-plugin checks)."""
    sim = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "autoscaling"},
           "spec": {"horizon": "1h", "sampleInterval": "5m",
                    "autoscaling": {"horizontalPodAutoscaler": {"syncPeriod": "1m"},
                                    "clusterAutoscaler": {"expander": "least-waste", "scanInterval": "1m"}},
                    "nodeGroups": [{"name": "pool", "count": 1, "minSize": 1, "maxSize": 4,
                                    "machine": "1s2n4c2t", "kubeletConfig": {"cpuManagerPolicy": "static",
                                                                                  "reservedSystemCPUs": "0"}}]}}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "annotations": {"kubetwin.io/load": "{cpu: [[0s, 2], [30m, 12]]}"}},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                        {"name": "c", "resources": {"requests": {"cpu": "2", "memory": "1Gi"},
                                                    "limits": {"cpu": "2", "memory": "1Gi"}}}]}}}}
    if spread:
        pod_spec = dep["spec"]["template"]["spec"]
        pod_spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                                  "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": {"app": "web"}}}]
        pod_spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": 2, "maxReplicas": 8}}
    vpa = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "web"},
           "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "updatePolicy": {"updateMode": "Off"}}}
    return [sim, dep, hpa, vpa]


def _autoscaling_dra_scenario() -> list[dict[str, Any]]:
    """Half an hour of the Cluster Autoscaler with a GPU node group (DRA drivers, scale from
    zero), GPU pods from a claim template and a DaemonSet on every node."""
    sim = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "autoscaling-dra"},
           "spec": {"horizon": "30m", "sampleInterval": "5m",
                    "autoscaling": {"clusterAutoscaler": {"expander": "least-waste", "scanInterval": "1m",
                                                          "scaleDownUnneededTime": "5m", "forceDaemonSets": True,
                                                          "ignoreDaemonSetsUtilization": True}},
                    "nodeGroups": [{"name": "cpu", "count": 1, "minSize": 1, "maxSize": 3,
                                    "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
                                   {"name": "gpu", "count": 0, "minSize": 0, "maxSize": 3, "machine": "1s1n4c1t:gpus=2",
                                    "draDrivers": [{"driver": "gpu.example.com", "kinds": ["gpu"]}]}],
                    "workloads": [{"name": "train", "count": 3, "duration": "10m", "template": {"spec": {
                        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                        "containers": [{"name": "t", "resources": {"requests": {"cpu": "100m"},
                                                                   "claims": [{"name": "gpu"}]}}]}}}]}}
    dc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
          "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
    rct = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "one-gpu", "namespace": "default"},
           "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
          "spec": {"selector": {"matchLabels": {"app": "agent"}},
                   "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [
                       {"name": "a", "resources": {"requests": {"cpu": "200m", "memory": "128Mi"}}}]}}}}
    return [sim, dc, rct, ds]


def _statefulset_scenario() -> list[dict[str, Any]]:
    """Half an hour of an OrderedReady StatefulSet (start ordinal, minReadySeconds) under an HPA
    and a VPA in Recreate mode, two of its pods already running."""
    sim = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "statefulset"},
           "spec": {"horizon": "30m", "sampleInterval": "5m",
                    "nodeGroups": [{"name": "pool", "count": 2,
                                    "capacity": {"cpu": "16", "memory": "32Gi", "pods": "110"}}]}}
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "db", "annotations": {"kubetwin.io/load": "{cpu: [[0s, 1], [10m, 6]]}"}},
           "spec": {"replicas": 3, "serviceName": "db", "podManagementPolicy": "OrderedReady",
                    "minReadySeconds": 10, "ordinals": {"start": 1},
                    "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [
                        {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}}}
    pods = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"db-{i}", "labels": {"app": "db"},
                          "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                               "uid": "u", "controller": True}]},
             "spec": {"nodeName": "pool-0", "containers": [
                 {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}} for i in (1, 2)]
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "db"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"},
                    "minReplicas": 2, "maxReplicas": 8}}
    vpa = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "db"},
           "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"},
                    "updatePolicy": {"updateMode": "Recreate"}}}
    return [sim, sts, *pods, hpa, vpa]


def _statefulset_dump() -> list[dict[str, Any]]:
    """A ``kubectl get -o yaml`` of a node, a StatefulSet and one of its pods."""
    cap = {"cpu": "8", "memory": "16Gi", "pods": "110"}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}, "status": {"capacity": cap,
                                                                                       "allocatable": cap}}
    _, sts, pod, *_ = _statefulset_scenario()
    sts = {**sts, "status": {"replicas": 1, "currentRevision": "db-5d8f", "updateRevision": "db-5d8f"}}
    pod = {**pod, "spec": {**pod["spec"], "nodeName": "a"}, "status": {"phase": "Running"}}
    return [node, sts, pod]


def _allocated_pods_state(cpu: str = "250m") -> bytes:
    """``allocated_pods_state`` of a kubelet that admitted examples/resize's web pod at 250m cpu
    (its spec now asks for 500m: a pending resize after the restart); with another ``cpu``, the
    ``actuated_pods_state`` of a runtime that still runs it at that (a resize in progress)."""
    from kubetwin.kubelet.checkpoint.allocated_pods_state import PodResourceInfo, checkpoint_bytes, fields_for
    from kubetwin.model.pod import ResourceRequirements
    from kubetwin.model.quantity import parse_quantity

    web = ResourceRequirements(requests={"cpu": parse_quantity(cpu), "memory": parse_quantity("256Mi")},
                               limits={"cpu": parse_quantity("1"), "memory": parse_quantity("512Mi")})
    fields = fields_for("1.36")
    assert fields is not None
    return checkpoint_bytes({"shop/web": PodResourceInfo({"app": web})}, fields)


def _prepared_checkpoint(claim: bytes, pod: bytes) -> bytes:
    """``dra_manager_state`` after ``dra prepare`` of ``pod`` with ``claim``."""
    import yaml

    from kubetwin.dra.api import parse_resource_claim
    from kubetwin.dra.checkpoint import encode_checkpoint
    from kubetwin.dra.prepare import prepare_pod
    from kubetwin.model.pod import pod_from_dict

    prepared = prepare_pod(pod_from_dict(yaml.safe_load(pod)), [parse_resource_claim(yaml.safe_load(claim))])
    return encode_checkpoint(prepared.state)


def _allocated_claim() -> bytes:
    """The example claim as ``dra allocate --pod`` leaves it: allocated and reserved for the pod."""
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "training", "namespace": "ml", "uid": "claim-uid-1"},
             "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu.example.com",
                                                                             "count": 2}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpus", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
                 {"request": "gpus", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-1"}]},
                 "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                     {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}},
                 "reservedFor": [{"resource": "pods", "name": "trainer", "uid": "pod-uid-1"}]}}
    return _yaml(claim)


def _scenario() -> list[dict[str, Any]]:
    """A small scenario that still goes through every part: machines, kubelet admission, DRA, usage."""
    sim = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "fuzz"}, "spec": {
        "seed": 3, "horizon": "20m", "sampleInterval": "1m",
        "nodeGroups": [
            {"name": "cpu", "count": 2, "machine": "1s2n4c2t:mem=32Gi", "zones": ["a", "b"],
             "kubeletConfig": {"cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node",
                               "kubeReserved": {"cpu": "1", "memory": "1Gi"}}},
            {"name": "gpu", "count": 1, "machine": "1s2n4c2t:gpus=2",
             "draDrivers": [{"driver": "gpu.nvidia.com", "kinds": ["gpu"], "vendorIDs": ["10de"]}]},
            {"name": "plain", "count": 2, "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
             "disk": {"nodefs": "100Gi", "ioBandwidth": "200Mi"}}],
        "workloads": [
            {"name": "web", "count": 6, "arrival": {"rate": 0.05}, "duration": {"exponential": "5m"},
             "usage": {"memory": [["0s", "1Gi"], ["5m", "2Gi"]]},
             "template": {"spec": {"containers": [{"name": "c", "resources": {
                 "requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}}]}}},
            {"name": "batch", "count": 4, "arrival": {"start": "1m", "interval": "30s"}, "duration": "3m",
             "usage": {"io": [["0s", "50Mi"], ["2m", "150Mi"]]},
             "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]}}},
            {"name": "training", "count": 2, "arrival": {"at": "2m"}, "duration": {"uniform": ["2m", "4m"]},
             "template": {"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                                   "containers": [{"name": "t", "resources": {"claims": [{"name": "gpu"}]}}]}}}],
        "objects": ["objects.yaml"]}}
    return [sim]


def all_seeds() -> list[Seed]:
    return list(example_seeds()) + list(snapshot_seeds()) + list(conformance_seeds())
