"""The cluster ``kubetwin serve`` answers about: loaded once, at start, into immutable values plus
the few things that change (pods bound through the extender's ``bind`` verb).

What is read: a scenario folder written by ``kubetwin snapshot`` (its ``scenario.yaml``), or the
files ``simulate`` reads (a ``Simulation`` and/or Kubernetes objects) — one cluster, as
:func:`kubetwin.sim.scenario.load_scenario` reads it. Pods with ``spec.nodeName`` are running on
their node; the others are pending. Each node with a machine (a scenario's node group, or a
``NodeKubelets`` entry, :mod:`.node_kubelets`) gets a modelled kubelet, into which its running
pods are admitted in order at load (:mod:`.kubelet_models`); a running pod its modelled kubelet
would reject is reported (``kubeletDisagreements``), not dropped.

Not an upstream module: kubetwin's own serving state (what an informer cache holds for
kube-scheduler, ``pkg/scheduler/backend/cache``, plus each node's kubelet).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .kubelet_models import KubeletModels

if TYPE_CHECKING:
    from ..model.features import FeatureGates
    from ..model.pod import Pod
    from ..scheduler.inputs import ClusterInputs
    from ..sim.scenario import Scenario, SimNode

#: pods the extender saw in filter/prioritize calls, kept by UID for a later bind (oldest dropped)
SEEN_PODS_LIMIT = 10_000


def scenario_files(paths: list[str]) -> list[str]:
    """The files of ``--cluster``: a folder stands for its ``scenario.yaml`` (a snapshot)."""
    if not paths:
        raise InputError("no cluster given", path="--cluster", fix="kubetwin serve --cluster SNAPSHOT_DIR")
    out = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            sc = path / "scenario.yaml"
            if not sc.is_file():
                raise InputError("a folder without scenario.yaml (not a kubetwin snapshot)", file=p,
                                 fix="kubetwin snapshot -f DUMP -o DIR, then --cluster DIR; or name the files")
            out.append(str(sc))
        else:
            out.append(p)
    return out


@dataclass
class ServedCluster:
    sources: list[str]
    scenario: Scenario
    gates: FeatureGates
    nodes: dict[str, SimNode]
    #: pods running on each node, in admission order
    bound: dict[str, list[Pod]]
    pending: dict[str, Pod]                     # by namespace/name
    kubelets: KubeletModels
    #: running pods a node's modelled kubelet would reject: node -> [(pod key, reason, message)]
    disagreements: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    seen: OrderedDict[str, Pod] = field(default_factory=OrderedDict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    #: bumped on every change (the what-if scheduler's inputs are rebuilt after one)
    generation: int = 0
    _inputs: tuple[int, Any] | None = None

    # --- reading -------------------------------------------------------------------------
    def pod_by_uid(self, uid: str) -> Pod | None:
        for p in self.pending.values():
            if p.uid == uid:
                return p
        return self.seen.get(uid)

    def running_pods(self) -> list[Pod]:
        return [p for pods in self.bound.values() for p in pods]

    def remember(self, pod: Pod) -> None:
        """Keep a pod the extender was asked about, for a later ``bind`` of it."""
        with self.lock:
            self.seen[pod.uid] = pod
            self.seen.move_to_end(pod.uid)
            while len(self.seen) > SEEN_PODS_LIMIT:
                self.seen.popitem(last=False)

    def inputs(self) -> ClusterInputs:
        """The scheduler's view (nodes, running pods, other objects), rebuilt after a change."""
        from ..scheduler.inputs import ClusterInputs

        with self.lock:
            if self._inputs is None or self._inputs[0] != self.generation:
                objects = {k: list(v) for k, v in self.scenario.objects.items()}
                origins = {k: list(v) for k, v in self.scenario.origins.items()}
                self._inputs = (self.generation, ClusterInputs([n.node for n in self.nodes.values()],
                                                               self.running_pods(), objects, origins))
            return self._inputs[1]

    # --- changes -------------------------------------------------------------------------
    def bind(self, pod: Pod, node: str) -> Any:
        """Bind ``pod`` to ``node``: its kubelet admits it (or not: the verdict says why)."""
        import msgspec

        with self.lock:
            if node not in self.nodes:
                raise InputError(f"node {node!r} is not in the served cluster", path="Node")
            for pods in self.bound.values():
                if any(p.uid == pod.uid for p in pods):
                    raise InputError(f"pod {pod.key} (uid {pod.uid}) is already bound", path="PodUID")
            verdict = self.kubelets.admit(node, pod) if self.kubelets.modelled(node) else None
            if verdict is None or verdict.admitted:
                spec = msgspec.structs.replace(pod.spec, node_name=node)
                self.bound.setdefault(node, []).append(msgspec.structs.replace(pod, spec=spec))
                self.pending.pop(pod.key, None)
                self.seen.pop(pod.uid, None)
                self.generation += 1
            return verdict


def load_cluster(paths: list[str], *, kubelets_file: str | None = None, version: str | None = None) -> ServedCluster:
    """Read ``--cluster`` (and ``--kubelets``) into the served cluster; every file checked first."""
    from ..model.features import gates_for
    from ..sim.scenario import load_scenario

    files = scenario_files(paths)
    sc = load_scenario(list(files), kubernetes_version=version)
    entries = []
    if kubelets_file is not None:
        from .node_kubelets import load_node_kubelets

        entries = load_node_kubelets(kubelets_file, sc.settings.kubernetes_version)
    gates = gates_for(sc.settings.kubernetes_version, sc.settings.feature_gates)
    nodes = {n.node.metadata.name: n for n in sc.nodes}
    models = KubeletModels()
    devices: dict[str, Any] = {}
    config_sources: dict[str, tuple[str, str]] = {}
    if entries:
        from .node_kubelets import select

        for name, n in nodes.items():
            if n.machine is None:
                e = select(entries, n.node.metadata.labels)
                if e is not None:
                    n.machine, n.kubelet = e.machine, e.config
                    devices[name] = e.devices
                    config_sources[name] = e.config_source
                    _check_capacity(n, e.where)
    if sc.settings.kubelet_admission:
        for name, n in nodes.items():
            if n.machine is not None and n.kubelet is not None:
                try:
                    models.add_node(name, n.machine, n.kubelet, devices.get(name))
                except InputError as exc:
                    if exc.file is None and name in config_sources:   # the NodeKubelets entry's configuration
                        file, prefix = config_sources[name]
                        raise exc.within(prefix).in_file(file) from None
                    raise
    bound: dict[str, list[Any]] = {}
    pending: dict[str, Any] = {}
    disagreements: dict[str, list[tuple[str, str, str]]] = {}
    for a in sc.arrivals:
        pod = a.pod
        node = pod.spec.node_name
        if not node:
            pending[pod.key] = pod
            continue
        if node not in nodes:
            raise InputError(f"pod {pod.key} runs on node {node!r}, which the cluster does not have",
                             path="spec.nodeName", file=a.source or None)
        if models.modelled(node):
            v = models.admit(node, pod)
            if not v.admitted:
                disagreements.setdefault(node, []).append((pod.key, v.reason, v.message))
        bound.setdefault(node, []).append(pod)
    return ServedCluster(files, sc, gates, nodes, bound, pending, models, disagreements)


def _check_capacity(n: SimNode, where: str) -> None:
    """A warning when the machine a ``NodeKubelets`` entry gives a node does not have the CPUs and
    memory the Node reports: its kubelet is modelled on the machine (allocatable from the machine
    and the configuration), the scheduler reads the Node object."""
    from ..diagnostics import warn

    if n.machine is None:
        return
    cap = n.node.status.capacity
    cpu, mem = cap.get("cpu"), cap.get("memory")
    problems = []
    if cpu is not None and cpu.milli_value() != n.machine.num_cores * 1000:
        problems.append(f"cpu {cpu} on the Node, {n.machine.num_cores} on the machine")
    if mem is not None and mem.value() != n.machine.memory_capacity:
        problems.append(f"memory {mem.value()} on the Node, {n.machine.memory_capacity} on the machine")
    if problems:
        warn(InputError(f"node {n.node.metadata.name}: capacity differs from its machine ({'; '.join(problems)}); "
                        "its kubelet is modelled on the machine", file=where.split(": ")[0],
                        path=where.split(": ")[-1] + ".machine",
                        fix="give the machine the node has (a spec with :mem=, or its sysfs/hwloc dump)"))
