"""``kubetwin admit --resize POD=PATCH``: in-place resizes of admitted pods, after admission.

Each ``--resize`` names an admitted pod (``name`` or ``namespace/name``) and a patch in the shape
of the ``resize`` subresource (``{spec: {containers: [{name, resources, resizePolicy}]}}``, as
``kubectl patch --subresource resize`` sends it). In the order given, each resize goes through
the API server (:func:`kubetwin.model.pod_resize.validate_pod_resize`: ``Refused`` with its
message), then the node's kubelet (:class:`kubetwin.kubelet.resize.ResizeManager`: ``Infeasible``,
``Deferred`` or allocated, other pending resizes retried in upstream's order), and an allocated
resize is actuated at once (``-o cri``: the CRI calls and pod cgroup writes of
``doPodResizeAction``). The report shows, per resize, the outcome and each container's resources
as allocated afterwards (cpuset, CFS quota, memory limit).

Not an upstream module: kubetwin's CLI around ``kubectl patch --subresource resize`` and the
kubelet's ``HandlePodUpdates``.
"""

from __future__ import annotations

from typing import Any

import click

from ..errors import InputError

#: ``--resize`` outcomes besides the kubelet's ``Deferred`` / ``Infeasible``
COMPLETED, REFUSED = "Completed", "Refused"


def parse_resize_options(values: tuple[str, ...]) -> list[tuple[str, str]]:
    """``POD=FILE`` pairs; a malformed one is a usage error."""
    out = []
    for v in values:
        ref, sep, path = v.partition("=")
        if not sep or not ref or not path:
            raise click.UsageError(f"--resize {v!r}: expected POD=FILE (POD as name or namespace/name, FILE the "
                                   f"resize patch)")
        out.append((ref, path))
    return out


def _find(node: Any, ref: str, patch_file: str) -> Any:
    matches = [p for p in node.admitted if ref in (p.key, p.name)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        names = ", ".join(p.key for p in node.admitted) or "none"
        raise InputError(f'--resize {ref}: no admitted pod "{ref}" (only running pods can be resized)',
                         file=patch_file, fix=f"admitted pods: {names}")
    raise InputError(f"--resize {ref}: {len(matches)} admitted pods are named {ref}", file=patch_file,
                     fix="name the pod as namespace/name")


def run_resizes(node: Any, sequence: Any, resizes: list[tuple[str, str]],
                version: str | None, manager: Any = None) -> tuple[list[dict[str, Any]], Any]:
    """Apply the resizes in order; one record per ``--resize``. ``sequence`` (a
    :class:`~kubetwin.runtime.kubelet_sequence.KubeletSequence` that started the admitted pods)
    actuates each allocated resize; ``conditions`` are the pod's resize conditions afterwards
    (none once a resize is actuated; ``PodResizePending`` while deferred or infeasible). Also
    returns the node's :class:`~kubetwin.kubelet.resize.ResizeManager` (its counters are metrics)."""
    from ..kubelet.resize import ResizeManager
    from ..model.features import gates_for
    from ..model.pod_resize import apply_resize_patch, load_resize_patch, refusal_message, validate_pod_resize

    patches = [(ref, *load_resize_patch(path)) for ref, path in resizes]  # every file checked before any effect
    # the API server is taken to run with the kubelet configuration's feature gates (one cluster)
    api_gates = gates_for(version, node.config.feature_gates)
    manager = manager if manager is not None else ResizeManager(node)
    records = []
    for ref, patch, name in patches:
        current = _find(node, ref, name)
        desired_now = manager.desired.get(current.uid, current)  # a pending resize is the pod's spec
        desired = apply_resize_patch(desired_now, patch, name)
        record: dict[str, Any] = {"pod": current.name, "namespace": current.namespace, "patch": name}
        errors = validate_pod_resize(desired_now, desired, api_gates)
        if errors:
            record.update(status=REFUSED, message=refusal_message(desired_now, errors))
            records.append(record)
            continue
        evaluated = _evaluated(node, manager, sequence, manager.request(desired))
        mine = [e for e in evaluated if e["pod"] == current.name and e["namespace"] == current.namespace]
        record.update(mine[-1] if mine else {"status": "Deferred"})
        others = [e for e in evaluated if e not in mine]
        if others:
            record["retried"] = others
        records.append(record)
    return records, manager


def _evaluated(node: Any, manager: Any, sequence: Any, results: list) -> list[dict[str, Any]]:
    """One record per evaluation; an allocated resize is actuated at once."""
    from ..kubelet.resize import ALLOCATED

    evaluated = []
    for r in results:
        entry: dict[str, Any] = {"pod": r.pod.name, "namespace": r.pod.namespace, "trigger": r.trigger,
                                 "status": COMPLETED if r.status == ALLOCATED else r.status}
        if r.message:
            entry["reason"], entry["message"] = r.reason, r.message
        if r.notes:
            entry["notes"] = list(r.notes)
        if r.status == ALLOCATED:  # the pod worker's SyncPod actuates it; PodResizeInProgress goes
            entry["actions"] = sequence.resize_pod(r.pod)
            manager.actuated(r.pod.uid)
        entry["conditions"] = [c.to_dict() for c in manager.conditions_of(r.pod.uid)]
        entry["containers"] = container_views(node, manager.allocated(r.pod.uid) or r.pod)
        evaluated.append(entry)
    return evaluated


def retry_restored(node: Any, sequence: Any, pending: list[Any], manager: Any) -> list[dict[str, Any]]:
    """``HandlePodAdditions`` after a restart: the admitted pods whose spec differs from their
    checkpointed allocation are pushed as pending resizes and retried (``pods_added``)."""
    from ..kubelet.resize import TRIGGER_PODS_ADDED

    admitted = {p.uid for p in node.admitted}
    queued = False
    for desired in pending:
        if desired.uid in admitted:
            manager.push(desired)
            queued = True
    return _evaluated(node, manager, sequence, manager.retry(TRIGGER_PODS_ADDED)) if queued else []


def container_views(node: Any, pod: Any) -> list[dict[str, Any]]:
    """Each container's resources as allocated: requests/limits and what the runtime gets."""
    from ..kubelet.admission import container_resources_for
    from ..model.pod import is_sidecar

    out = []
    for c, init in pod.all_containers():
        res, _ = container_resources_for(node, pod, c)
        out.append({"name": c.name, "type": ("sidecar" if is_sidecar(c) else "init") if init else "app",
                    "requests": {k: str(v) for k, v in c.resources.requests.items()},
                    "limits": {k: str(v) for k, v in c.resources.limits.items()},
                    "resources": res})
    return out


def render_resizes(records: list[dict[str, Any]]) -> None:
    """One row per container of each resized pod (outcome, cpu and memory, cpuset, CFS quota), then
    each outcome's message and notes."""
    from rich.table import Table

    from .common import console

    con = console()
    t = Table(title="in-place resizes", show_lines=False)
    for col in ("pod", "outcome", "container", "cpu req/lim", "memory req/lim", "cpuset", "cfs quota"):
        t.add_column(col, overflow="fold")
    lines = []
    for rec in records:
        rows = [rec] + list(rec.get("retried") or [])
        for i, r in enumerate(rows):
            who = f"{r['namespace']}/{r['pod']}"
            outcome = r["status"] if not i else f"{r['status']} (retried: {r['trigger']})"
            if r.get("message"):
                lines.append(f"{who}: {r['status']}: {r['message']}")
            lines += [f"{who}: ⚠ {note}" for note in r.get("notes") or []]
            first = True
            for c in r.get("containers") or [{}]:
                res = c.get("resources") or {}
                req, lim = c.get("requests") or {}, c.get("limits") or {}
                t.add_row(who if first else "", outcome if first else "", c.get("name", ""),
                          f"{req.get('cpu', '-')}/{lim.get('cpu', '-')}",
                          f"{req.get('memory', '-')}/{lim.get('memory', '-')}", str(res.get("cpusetCpus", "")),
                          str(res.get("cpuQuota", "")))
                first = False
    con.print(t)
    for line in lines:
        con.print(line, soft_wrap=True, markup=False)


__all__ = ["COMPLETED", "REFUSED", "container_views", "parse_resize_options", "render_resizes", "retry_restored",
           "run_resizes"]
