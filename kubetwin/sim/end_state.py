"""The cluster at the end of a simulation, back as Kubernetes manifests (``simulate
--write-end-state DIR``): kubetwin's own, the reverse of ``kubetwin snapshot``.

What the API server would hold at that moment, as ``kubectl get -o json`` shows it:

* Nodes — the nodes then in the cluster (the Cluster Autoscaler's added ones included, removed
  ones left out);
* Pods — running ones with ``spec.nodeName`` and ``status.phase: Running``, pending ones without
  a node; as the simulation changed them (VPA requests, in-place resizes); pods that finished,
  were rejected, evicted or deleted hold nothing and are left out, as a snapshot leaves them out;
* controllers — each Deployment, ReplicaSet and Job as it was written, with its replicas at the
  end (an HPA may have changed them); a Deployment's pods are owned by the ReplicaSet the
  simulation names for it (``loop._rs_name``), which is written too, owned by its Deployment,
  as the Deployment controller (``pkg/controller/deployment``) owns its ReplicaSets — so
  reading the folder back ties every pod to its controller and creates none twice;
* the scenario's other objects (PriorityClasses, quotas, DRA, ...) as they were.

The folder is the one ``kubetwin snapshot`` writes (``sim.snapshot.fill``), written atomically.
"""

from __future__ import annotations

import copy
from typing import Any

from .snapshot import Snapshot

_RUNNING = "Running"
_PENDING = "Pending"


def _node(sim_node: Any) -> dict[str, Any]:
    from ..model.meta import to_builtins

    return {"apiVersion": "v1", "kind": "Node", **to_builtins(sim_node.node)}


def _pod(sp: Any, node: str | None) -> dict[str, Any]:
    from ..model.meta import to_builtins

    obj = {"apiVersion": "v1", "kind": "Pod", **to_builtins(sp.pod)}
    meta = dict(obj.get("metadata") or {})
    meta["namespace"] = sp.pod.namespace
    obj["metadata"] = meta
    spec = dict(obj.get("spec") or {})
    status = {"phase": _RUNNING if node else _PENDING}
    if node:
        spec["nodeName"] = node
    else:
        spec.pop("nodeName", None)
    obj["spec"] = spec
    obj["status"] = status
    return obj


def _replica_set(c: Any, name: str, replicas: int, deployment: dict[str, Any]) -> dict[str, Any]:
    """A ReplicaSet of Deployment ``c`` named ``name`` holding ``replicas`` of its pods, owned by it
    (``pkg/controller/deployment``)."""
    spec = deployment.get("spec") or {}
    template = spec.get("template") or {}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": c.meta["namespace"],
                         "labels": dict((template.get("metadata") or {}).get("labels") or {}),
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": c.meta["name"],
                                              "uid": str((deployment.get("metadata") or {}).get("uid")
                                                         or f"Deployment/{c.meta['name']}"),
                                              "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"replicas": replicas, "selector": copy.deepcopy(spec.get("selector") or {}),
                     "template": copy.deepcopy(template)}}


def _owner_sets(sim: Any) -> dict[str, dict[str, int]]:
    """Per controller key, the ReplicaSets its live pods name as their controller (the simulation's
    own ``loop._rs_name``, or a snapshot's ReplicaSet the Deployment adopted), first seen first,
    with how many pods each holds."""
    out: dict[str, dict[str, int]] = {}
    for sp in sim.pods:
        if sp.owner and sp.phase in (_RUNNING, _PENDING):
            for ref in sp.pod.metadata.owner_references:
                if ref.controller and ref.kind == "ReplicaSet":
                    sets = out.setdefault(sp.owner, {})
                    sets[ref.name] = sets.get(ref.name, 0) + 1
    return out


def _controllers(sim: Any) -> list[dict[str, Any]]:
    from .loop import _rs_name

    out: list[dict[str, Any]] = []
    owner_sets = _owner_sets(sim)
    for c in sim.sc.controllers:
        original = c.meta.get("object")
        if not isinstance(original, dict):
            continue
        obj = copy.deepcopy(original)
        spec = obj.setdefault("spec", {})
        if c.is_job:
            obj["status"] = {"active": c.active, "succeeded": c.succeeded, "failed": c.failed}
        else:
            spec["replicas"] = c.replicas
        out.append(obj)
        if c.kind == "Deployment":
            for name, n in (owner_sets.get(c.key) or {_rs_name(c): 0}).items():
                out.append(_replica_set(c, name, n, original))
    return out


def end_state(sim: Any) -> Snapshot:
    """The simulator's cluster now, as a snapshot of plain manifests."""
    snap = Snapshot()
    snap.nodes = [_node(n) for n in sim.sim_nodes]
    for sp in sim.pods:
        if sp.phase == _RUNNING and sp.node >= 0:
            snap.pods.append(_pod(sp, sim.node_name(sp.node)))
        elif sp.phase == _PENDING:
            snap.pending.append(_pod(sp, None))
        else:
            snap.terminal[str(sp.phase)] += 1
    snap.workloads = _controllers(sim)
    from ..model.meta import to_builtins

    snap.objects.extend(to_builtins(pc) for pc in sim.sc.priority_classes.values())
    for kind, objs in sim.sc.objects.items():
        if kind in ("ReplicaSet", "Deployment", "Job", "StatefulSet"):
            continue
        snap.objects.extend(o for o in objs if isinstance(o, dict))
    return snap


#: the file that marks a folder of several runs' end states (one subfolder each)
INDEX = "END-STATES.txt"


def write_end_states(results: list[Any], out: str) -> list[str]:
    """Each run's end state as a snapshot folder, all at once: ``out`` itself for one run; for
    several, ``out/RUN`` each (RUN: the scenario's name, ``.VARIANT`` for a variant) and
    ``out/END-STATES.txt`` listing them. Lines to print on stderr."""
    from pathlib import Path

    from .snapshot import fill, write_folder

    runs = [r for r in results if r.end_state is not None]
    labels = [f"{r.scenario}.{r.variant}" if r.variant else str(r.scenario) for r in runs]
    if len(runs) == 1:
        snap = runs[0].end_state
        dest = write_folder(out, lambda tmp: fill(tmp, snap, Path(out).name or "end-state"))
        return [f"end state: {dest}: {snap.summary()}"]

    def fill_all(tmp: Path) -> None:
        for label, r in zip(labels, runs):
            (tmp / label).mkdir()
            fill(tmp / label, r.end_state, label)
        (tmp / INDEX).write_text("".join(f"{label}/scenario.yaml\n" for label in labels))

    dest = write_folder(out, fill_all, INDEX)
    return [f"end state: {dest / label}: {r.end_state.summary()}" for label, r in zip(labels, runs)]
