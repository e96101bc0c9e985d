"""What must run: the workload ``kubetwin plan`` reads, and the scenario of one candidate mix.

Files and folders of Kubernetes objects (as ``kubetwin snapshot`` reads dumps), or a folder
written by ``kubetwin snapshot`` (its ``scenario.yaml`` names its files). The cluster's own nodes
are left out — the plan chooses the nodes — and every pod is scheduled afresh:

* Deployments, ReplicaSets and Jobs are played by ``simulate``'s controllers
  (``kubetwin/sim/scenario.py``); bare pods are created as they are, without ``spec.nodeName``;
* a StatefulSet creates ``NAME-0`` .. ``NAME-(replicas-1)`` as its controller names them
  (``pkg/controller/statefulset/stateful_set_utils.go``'s ``newStatefulSetPod``), a pod of that
  name already in the input standing for its ordinal;
* a DaemonSet runs one pod on every node of the mix its controller finds eligible
  (``pkg/controller/daemon``, :mod:`kubetwin.sim.daemonset`). A snapshot keeps the DaemonSet
  objects (``workloads.json``) beside their pods; where the object is missing (a snapshot from
  before it kept them, or dumps without it) the DaemonSet is rebuilt from one of its pods, whose node affinity
  the controller replaced by a node-name term — that term is dropped, so the rebuilt DaemonSet
  runs wherever its nodeSelector and tolerations allow (said in a note);
* a HorizontalPodAutoscaler's target is planned at ``spec.maxReplicas``, the most replicas the
  HPA may ask for (``pkg/controller/podautoscaler``), said in a note; a VerticalPodAutoscaler is
  not played (its recommendations would change requests over time): a warning.

Not an upstream module: kubetwin's own planner input.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import InputError
from ..model.controller_selector import SELECTED_KINDS, check_controller_selector
from ..model.loader import Document, load_documents

_SNAPSHOT_FILES = ("nodes.json", "pods.json", "pending.json", "workloads.json", "objects.json")
_TERMINAL = frozenset({"Succeeded", "Failed"})


@dataclass
class Workload:
    """The checked objects of the workload, ready to be put on any mix of nodes."""

    docs: list[Document] = field(default_factory=list)
    daemon_sets: list[Any] = field(default_factory=list)       # kubetwin.sim.daemonset.DaemonSet
    #: controller key ("Deployment/ns/name") -> replicas to plan for (an HPA's maxReplicas)
    replicas: dict[str, int] = field(default_factory=dict)
    #: controller key -> the HorizontalPodAutoscaler that names it (for errors)
    scalers: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    source: str = ""


def _files(paths: Iterable[str | Path]) -> list[Path]:
    from ..sim.snapshot import dump_files

    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir() and (path / "scenario.yaml").is_file() and all((path / f).is_file() for f in _SNAPSHOT_FILES):
            out.extend(path / f for f in _SNAPSHOT_FILES)   # a kubetwin snapshot folder
        else:
            out.extend(dump_files([p]))
    return out


def _is_snapshot_scenario(doc: Document) -> bool:
    spec = doc.obj.get("spec")
    return isinstance(spec, Mapping) and list(spec) == ["objects"] and spec["objects"] == list(_SNAPSHOT_FILES)


def _controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def _unbound(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A pod as created, before the scheduler bound it: no ``nodeName``, no status."""
    out = {k: v for k, v in obj.items() if k != "status"}
    spec = dict(out.get("spec") or {})
    spec.pop("nodeName", None)
    out["spec"] = spec
    return out


def _daemon_set_from_pod(obj: Mapping[str, Any], ref: Mapping[str, Any]) -> dict[str, Any]:
    """A DaemonSet standing for the one that made ``obj``: the pod's own spec, without the node
    name and the controller's node-name affinity term."""
    meta = obj.get("metadata") or {}
    spec = copy.deepcopy(dict(obj.get("spec") or {}))
    spec.pop("nodeName", None)
    aff = dict(spec.get("affinity") or {})
    node_aff = dict(aff.get("nodeAffinity") or {})
    node_aff.pop("requiredDuringSchedulingIgnoredDuringExecution", None)
    if node_aff:
        aff["nodeAffinity"] = node_aff
    else:
        aff.pop("nodeAffinity", None)
    if aff:
        spec["affinity"] = aff
    else:
        spec.pop("affinity", None)
    labels = dict(meta.get("labels") or {})
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": str(ref.get("name")), "namespace": meta.get("namespace") or "default",
                         "uid": str(ref.get("uid") or "")},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": spec}}}


def _stateful_pods(obj: Mapping[str, Any], replicas: int, present: set[tuple[str, str]]) -> list[dict[str, Any]]:
    meta = obj.get("metadata") or {}
    name, ns = str(meta.get("name")), str(meta.get("namespace") or "default")
    tmpl = (obj.get("spec") or {}).get("template") or {}
    out = []
    for k in range(replicas):
        pod_name = f"{name}-{k}"
        if (ns, pod_name) in present:
            continue
        pmeta = copy.deepcopy(dict(tmpl.get("metadata") or {}))
        pmeta.update(name=pod_name, namespace=ns,
                     ownerReferences=[{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name,
                                       "uid": str(meta.get("uid") or f"StatefulSet/{ns}/{name}"), "controller": True}])
        labels = dict(pmeta.get("labels") or {})
        labels["statefulset.kubernetes.io/pod-name"] = pod_name
        pmeta["labels"] = labels
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": pmeta,
                    "spec": copy.deepcopy(dict(tmpl.get("spec") or {}))})
    return out


def read_workload(paths: Iterable[str | Path]) -> Workload:
    """The workload of ``paths`` (files, folders, snapshot folders), strictly checked."""
    from ..autoscale.hpa import parse_hpa
    from ..diagnostics import warn
    from ..model.kinds import check_object
    from ..sim.daemonset import daemon_set

    files = _files(paths)
    if not files:
        raise InputError("no workload given", path="WORKLOAD", fix="kubetwin plan workload.yaml --node-type ...")
    wl = Workload(source=str(files[0]))
    docs: list[Document] = []
    read: set[Path] = set()
    pending = list(files)
    while pending:
        f = pending.pop(0)
        if f.resolve() in read and str(f) != "-":
            continue
        read.add(f.resolve())
        found = load_documents(f)
        for d in found:
            if isinstance(d.obj, Mapping) and d.obj.get("kind") == "Simulation":
                if not _is_snapshot_scenario(d):
                    raise InputError("plan reads Kubernetes objects, not a Simulation", path="kind", file=d.where,
                                     fix="give the manifest files it lists (a kubetwin snapshot folder is read whole)")
                pending.extend(f.parent / name for name in _SNAPSHOT_FILES)
                continue
            docs.append(d)
    nodes = 0
    terminal = 0
    pods: list[Document] = []
    stateful: list[Document] = []
    rebuilt: dict[tuple[str, str], dict[str, Any]] = {}
    hpas: list[tuple[Any, str]] = []
    for d in docs:
        check_object(d.obj, d.where)
        kind = d.obj.get("kind")
        if kind in SELECTED_KINDS:
            check_controller_selector(d.obj, d.where)
        if kind == "Node":
            nodes += 1
        elif kind == "Pod":
            if str((d.obj.get("status") or {}).get("phase")) in _TERMINAL:
                terminal += 1
                continue
            ref = _controller_ref(d.obj)
            if ref is not None and ref.get("kind") == "DaemonSet":
                ns = str((d.obj.get("metadata") or {}).get("namespace") or "default")
                rebuilt.setdefault((ns, str(ref.get("name"))), _daemon_set_from_pod(d.obj, ref))
                continue
            pods.append(Document(_unbound(d.obj), d.file, d.index))
        elif kind == "DaemonSet":
            wl.daemon_sets.append(daemon_set(d.obj))
        elif kind == "StatefulSet":
            stateful.append(d)
        elif kind == "HorizontalPodAutoscaler":
            hpas.append((parse_hpa(d.obj, d.where), d.where))
        elif kind == "VerticalPodAutoscaler":
            warn(InputError("a VerticalPodAutoscaler is not played by plan: the requests are planned as written",
                            path="kind", file=d.where))
        else:
            wl.docs.append(d)
    given = {(ds.namespace, ds.name) for ds in wl.daemon_sets}
    for (ns, name), obj in rebuilt.items():
        if (ns, name) not in given:
            wl.daemon_sets.append(daemon_set(obj))
            wl.notes.append(f"DaemonSet {ns}/{name}: rebuilt from one of its pods; its required node affinity "
                            "(replaced by the controller's node-name term) is unknown, so it is planned on every "
                            "node its nodeSelector and tolerations allow")
    present = {(str((p.obj.get("metadata") or {}).get("namespace") or "default"),
                str((p.obj.get("metadata") or {}).get("name"))) for p in pods}
    for spec, where in hpas:
        wl.replicas[f"{spec.target_kind}/{spec.namespace}/{spec.target_name}"] = spec.max_replicas
        wl.scalers[f"{spec.target_kind}/{spec.namespace}/{spec.target_name}"] = where
        wl.notes.append(f"{spec.target_kind} {spec.namespace}/{spec.target_name} planned at "
                        f"{spec.max_replicas} replicas, the maxReplicas of its HorizontalPodAutoscaler ({where})")
    sets = {f"StatefulSet/{(d.obj.get('metadata') or {}).get('namespace') or 'default'}/"
            f"{(d.obj.get('metadata') or {}).get('name')}" for d in stateful}
    for key, where in wl.scalers.items():
        if key.startswith("StatefulSet/") and key not in sets:
            raise InputError(f"the scale target {key} is not in the workload", path="spec.scaleTargetRef",
                             file=where, fix="give the StatefulSet it scales")
    for d in stateful:
        meta = d.obj.get("metadata") or {}
        key = f"StatefulSet/{meta.get('namespace') or 'default'}/{meta.get('name')}"
        replicas = wl.replicas.get(key, (d.obj.get("spec") or {}).get("replicas", 1))
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise InputError(f"Invalid value: {replicas!r}: must be an integer >= 0", path="spec.replicas",
                             file=d.where)
        from .. import limits

        limits.MAX_SIM_PODS.check(replicas, path="spec.replicas", file=d.where, what="the number of replicas")
        wl.docs.extend(Document(p, d.file, d.index) for p in _stateful_pods(d.obj, replicas, present))
    wl.docs.extend(pods)
    if nodes:
        wl.notes.append(f"{nodes} Node object(s) left out: the plan chooses the nodes")
    if terminal:
        wl.notes.append(f"{terminal} finished pod(s) left out: they hold no resources")
    return wl


def scenario_for(wl: Workload, nodes: list[Any], *, kubernetes_version: str | None = None,
                 kubelet_admission: bool = True, seed: int = 0) -> Any:
    """The scenario of one mix: the workload on ``nodes`` (:class:`kubetwin.sim.scenario.SimNode`),
    daemon pods made for the nodes their DaemonSets find eligible, HPA targets at maxReplicas."""
    from ..model.features import gates_for
    from ..sim.daemonset import daemon_pods
    from ..sim.scenario import Scenario, Settings, scenario_from_documents

    st = Settings(seed=seed, kubernetes_version=kubernetes_version, kubelet_admission=kubelet_admission,
                  version_given=kubernetes_version is not None)
    sc = Scenario(name="plan", source=wl.source, settings=st, nodes=list(nodes))
    docs = list(wl.docs)
    if wl.daemon_sets:
        ops = gates_for(kubernetes_version).enabled("TaintTolerationComparisonOperators")
        node_objs = [n.node for n in nodes]
        for ds in wl.daemon_sets:
            docs.extend(Document(p, wl.source, 0) for p in daemon_pods(ds, node_objs, set(), comparison_operators=ops))
    slices = [s for n in nodes for s in n.slices]
    if slices:
        sc.objects["ResourceSlice"] = list(slices)
        sc.origins["ResourceSlice"] = ["--node-type dra"] * len(slices)
    scenario_from_documents(sc, docs)
    known = {c.key for c in sc.controllers}
    for key, where in wl.scalers.items():
        if key not in known and not key.startswith("StatefulSet/"):
            raise InputError(f"the scale target {key} is not in the workload", path="spec.scaleTargetRef",
                             file=where, fix="give the Deployment, ReplicaSet or StatefulSet it scales")
    if wl.replicas:
        sc.controllers = [replace(c, replicas=max(c.replicas, wl.replicas[c.key])) if c.key in wl.replicas else c
                          for c in sc.controllers]
    return sc
