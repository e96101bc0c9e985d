"""``allocated_pods_state``: the resources the kubelet allocated to each pod (in-place resize).

With ``InPlacePodVerticalScaling`` on, the kubelet's allocation manager checkpoints, per pod UID,
the resources a pod was admitted with, and rewrites the entry when a resize is allocated. The
spec may ask for more or less (a resize ``Deferred``, ``Infeasible`` or not yet actuated); after a
restart this file, not the spec, is what the pod holds: ``AddPod`` overlays it on the pod before
the admit handlers see it (``UpdatePodFromAllocation``), and a spec that differs is a pending
resize.

The file (v1.35 and v1.36) is ``{"data": "<JSON>", "checksum": N}``: ``data`` is Go's
``json.Marshal`` of ``{"entries": {UID: {"ContainerResources": {NAME: ResourceRequirements},
"PodLevelResources": ResourceRequirements | null}}}`` (no JSON tags on ``PodResourceInfo``: Go's
field names, nil written as ``null``; v1.37 adds ``"EmptyDirVolumeLimits"``), ``checksum`` is
``checksum.New(data)``: FNV-32a of go-spew's ``(string)`` + data (:func:`gohash.string_checksum`).
An entry holds the app containers and the sidecars (restartable init containers), and the
pod-level resources when ``InPlacePodLevelResourcesVerticalScaling`` is on.

A file that is not JSON, whose checksum does not match, or whose data does not decode stops the
kubelet: ``NewStateCheckpoint`` fails and the allocation manager panics with "could not restore
state from checkpoint: ..., please drain this node and delete pod resource information
checkpoint file ... before restarting Kubelet". It does not start empty; kubetwin refuses the
file with that message. A missing file is an empty state. Go's decoder skips unknown fields;
kubetwin refuses them (nearest name suggested), as for the other checkpoints.

Upstream: ``pkg/kubelet/allocation/state/state_checkpoint.go`` (``NewStateCheckpoint``,
``restoreState``, ``storeState``), ``checkpoint.go`` (``Checkpoint``, ``NewCheckpoint``,
``VerifyChecksum``), ``state.go`` (``PodResourceInfo``), ``pkg/kubelet/allocation/allocation_manager.go``
(``allocatedPodsStateFile``, ``allocationFromPod``, ``UpdatePodFromAllocation``, ``AddPod``),
``pkg/kubelet/checkpointmanager/checkpoint_manager.go`` (``GetCheckpoint``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from ...errors import InputError
from ...model.pod import Container, Pod, ResourceClaimRef, ResourceRequirements, is_sidecar
from ...model.quantity import parse_quantity
from ...model.strict import INTEGER, STRING, STRING_OR_NUMBER, check, find_problems, fold_case, list_of, map_of, obj
from .files import atomic_write, read_json
from .gohash import string_checksum

#: ``allocatedPodsStateFile``
FILE_NAME = "allocated_pods_state"

_REQUIREMENTS = obj(limits=map_of(STRING_OR_NUMBER), requests=map_of(STRING_OR_NUMBER),
                    claims=list_of(obj(name=STRING, request=STRING)))
#: ``PodResourceInfo`` fields each release writes (Go field names, no JSON tags); None: not modelled
_FIELDS_BY_RELEASE = "allocatedPodsStateFields"
FILE_SPEC = obj(data=STRING, checksum=INTEGER)
_UNKNOWN_FIX = "the kubelet's checkpoint reader ignores unknown fields; kubetwin refuses them"


@dataclass(frozen=True)
class PodResourceInfo:
    """One pod's entry: ``ContainerResources`` by container name, ``PodLevelResources``."""

    container_resources: Mapping[str, ResourceRequirements]
    pod_level_resources: ResourceRequirements | None = None


#: ``PodResourceInfoMap``: pod UID -> its allocation
PodResourceInfoMap = dict[str, PodResourceInfo]


def fields_for(version: str | None) -> tuple[str, ...] | None:
    """The ``PodResourceInfo`` fields this release's kubelet writes (None: format not modelled)."""
    from ...model.features import default_for

    value = default_for(_FIELDS_BY_RELEASE, version)
    return tuple(value) if value is not None else None


def not_modelled_error(version: str | None, file: str) -> InputError:
    return InputError(f"the {FILE_NAME} format of Kubernetes v{version} is not modelled by kubetwin",
                      file=file, fix="use --kubernetes-version 1.35 or later, or leave the file out")


# --- allocation_manager.go ------------------------------------------------------------------------


def allocation_from_pod(pod: Pod, gates: Any) -> PodResourceInfo:
    """``allocationFromPod``: app containers and sidecars; pod-level resources with
    ``InPlacePodLevelResourcesVerticalScaling``."""
    containers: dict[str, ResourceRequirements] = {c.name: c.resources for c in pod.spec.containers}
    for c in pod.spec.init_containers:
        if is_sidecar(c):
            containers[c.name] = c.resources
    level = None
    if gates.enabled("InPlacePodLevelResourcesVerticalScaling") and pod.spec.resources is not None:
        level = pod.spec.resources
    return PodResourceInfo(containers, level)


def _semantic_equal(a: ResourceRequirements | None, b: ResourceRequirements | None) -> bool:
    """``apiequality.Semantic.DeepEqual``: quantities by value, a nil pointer unlike an empty struct."""
    if a is None or b is None:
        return a is b
    return a == b


def update_pod_from_allocation(pod: Pod, info: PodResourceInfo | None, gates: Any) -> tuple[Pod, bool]:
    """``UpdatePodFromAllocation``: the pod with its checkpointed resources, and whether they
    differ from its spec (a pending resize). Every container found in the entry takes its
    allocation, init containers included; pod-level resources (nil included) with
    ``InPlacePodLevelResourcesVerticalScaling``."""
    if info is None:
        return pod, False
    spec = pod.spec
    updated = False
    if gates.enabled("InPlacePodLevelResourcesVerticalScaling") and \
            not _semantic_equal(spec.resources, info.pod_level_resources):
        spec = msgspec.structs.replace(spec, resources=info.pod_level_resources)
        updated = True

    def overlay(cs: list[Container]) -> list[Container]:
        nonlocal updated
        out = []
        for c in cs:
            alloc = info.container_resources.get(c.name)
            if alloc is not None and alloc != c.resources:
                c = msgspec.structs.replace(c, resources=alloc)
                updated = True
            out.append(c)
        return out

    containers, inits = overlay(spec.containers), overlay(spec.init_containers)
    if not updated:
        return pod, False
    spec = msgspec.structs.replace(spec, containers=containers, init_containers=inits)
    return msgspec.structs.replace(pod, spec=spec), True


# --- encoding (Go's encoding/json) -----------------------------------------------------------------


def _go_json(value: Any) -> str:
    """``json.Marshal`` text of ``value`` built in Go's order (struct fields as declared, map keys
    sorted by the caller): no spaces; ``<``, ``>``, ``&``, U+2028/9 escaped as Go escapes them."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def _resource_list(rl: Mapping[str, Any]) -> dict[str, str]:
    return {k: rl[k].canonical() for k in sorted(rl)}


def _requirements_json(r: ResourceRequirements) -> dict[str, Any]:
    """``v1.ResourceRequirements``: ``limits``, ``requests``, ``claims`` (that order, all
    omitempty); quantities in canonical form (``Quantity.MarshalJSON``)."""
    out: dict[str, Any] = {}
    if r.limits:
        out["limits"] = _resource_list(r.limits)
    if r.requests:
        out["requests"] = _resource_list(r.requests)
    if r.claims:
        out["claims"] = [{"name": c.name, **({"request": c.request} if c.request else {})} for c in r.claims]
    return out


def encode_data(entries: Mapping[str, PodResourceInfo], fields: tuple[str, ...]) -> str:
    """``json.Marshal(PodResourceCheckpointInfo{Entries: ...})`` (``entries`` omitted when empty)."""
    doc: dict[str, Any] = {}
    if entries:
        out: dict[str, Any] = {}
        for uid in sorted(entries):
            info = entries[uid]
            e: dict[str, Any] = {"ContainerResources": {n: _requirements_json(info.container_resources[n])
                                                        for n in sorted(info.container_resources)}}
            if "PodLevelResources" in fields:
                e["PodLevelResources"] = (None if info.pod_level_resources is None
                                          else _requirements_json(info.pod_level_resources))
            if "EmptyDirVolumeLimits" in fields:
                e["EmptyDirVolumeLimits"] = None
            out[uid] = e
        doc["entries"] = out
    return _go_json(doc)


def checkpoint_bytes(entries: Mapping[str, PodResourceInfo], fields: tuple[str, ...]) -> bytes:
    """``Checkpoint.MarshalCheckpoint``: ``{"data": ..., "checksum": checksum.New(data)}``."""
    data = encode_data(entries, fields)
    return ('{"data":' + _go_json(data) + ',"checksum":' + str(string_checksum(data)) + "}").encode()


def write_allocated_pods_state(path: str | Path, entries: Mapping[str, PodResourceInfo],
                               fields: tuple[str, ...]) -> None:
    """The checkpoint manager's ``CreateCheckpoint`` (one atomic rename)."""
    atomic_write(path, checkpoint_bytes(entries, fields))


# --- decoding -------------------------------------------------------------------------------------


def restore_error(file: str, reason: str) -> InputError:
    """``NewStateCheckpoint``'s error, with which the allocation manager panics at start-up."""
    return InputError(f"could not restore state from checkpoint: {reason}, please drain this node and delete pod "
                      f'resource information checkpoint file "{file}" before restarting Kubelet', file=file,
                      fix="the kubelet does not start with this file (it panics); drain the node and delete it")


def _strict(doc: Any, spec: Any, file: str, prefix: str = "") -> Any:
    """Go's ``json.Unmarshal``: names matched case-insensitively; a value of the wrong type stops
    the kubelet (``json: cannot unmarshal ...``); an unknown field it skips, kubetwin refuses."""
    folded = fold_case(doc, spec)
    mistyped = [p for p in find_problems(folded, spec) if p.kind == "type"]
    if mistyped:
        where = ".".join(x for x in (prefix, mistyped[0].path) if x)
        what = "failed to get pod resource information: " if prefix else ""
        raise restore_error(file, f"{what}json: cannot unmarshal {where}: {mistyped[0].detail}")
    try:
        check(folded, spec, file=file, prefix=prefix)
    except InputError as exc:
        exc.fix = f"{exc.fix}; {_UNKNOWN_FIX}" if exc.fix else _UNKNOWN_FIX
        raise
    return folded


def _requirements(doc: Any, path: str, file: str) -> ResourceRequirements:
    doc = doc or {}

    def rl(m: Any, key: str) -> dict:
        try:
            return {k: parse_quantity(v, f"{path}.{key}.{k}") for k, v in (m or {}).items()}
        except InputError as exc:
            raise restore_error(file, f"failed to get pod resource information: {exc.message}") from None

    claims = [ResourceClaimRef(name=c.get("name") or "", request=c.get("request") or "")
              for c in doc.get("claims") or [] if c is not None]
    return ResourceRequirements(requests=rl(doc.get("requests"), "requests"), limits=rl(doc.get("limits"), "limits"),
                                claims=claims)


def decode_checkpoint(blob: bytes | None, file: str, version: str | None, doc: Any = None) -> PodResourceInfoMap:
    """``restoreState``: the entries of a checkpoint file (``doc``: its JSON, already parsed)."""
    fields = fields_for(version)
    if fields is None:
        raise not_modelled_error(version, file)
    if doc is None:
        assert blob is not None
        try:
            doc = json.loads(blob.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise restore_error(file, f"not valid JSON ({exc})") from None
    if type(doc) is not dict:
        raise restore_error(file, f"json: cannot unmarshal {type(doc).__name__} into Go value of type state.Checkpoint")
    doc = _strict(doc, FILE_SPEC, file)
    data = doc.get("data") or ""
    ck = doc.get("checksum")
    if not isinstance(ck, int) or isinstance(ck, bool) or ck != string_checksum(data):
        raise restore_error(file, "checkpoint is corrupted")  # VerifyChecksum: ErrCorruptCheckpoint
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise restore_error(file, f"failed to get pod resource information: {exc}") from None
    entry_spec = obj({f: (map_of(_REQUIREMENTS) if f == "ContainerResources" else
                          map_of(STRING_OR_NUMBER) if f == "EmptyDirVolumeLimits" else _REQUIREMENTS)
                      for f in fields})
    payload = _strict(payload, obj(entries=map_of(entry_spec)), file, prefix="data")
    out: PodResourceInfoMap = {}
    for uid, e in (payload or {}).get("entries", {}).items() if payload else ():
        e = e or {}
        path = f"data.entries.{uid}"
        if e.get("EmptyDirVolumeLimits"):
            from ...diagnostics import not_modelled

            not_modelled(f"{path}.EmptyDirVolumeLimits", file=file,
                         why="memory-backed emptyDir size limits are not resized by kubetwin")
        conts = {name: _requirements(r, f"{path}.ContainerResources.{name}", file)
                 for name, r in (e.get("ContainerResources") or {}).items()}
        level = e.get("PodLevelResources")
        out[uid] = PodResourceInfo(conts, None if level is None else
                                   _requirements(level, f"{path}.PodLevelResources", file))
    return out


def read_allocated_pods_state(path: str | Path, version: str | None) -> PodResourceInfoMap:
    """The file's entries; a file that does not decode is refused as the kubelet refuses it."""
    p = Path(path)
    try:
        doc = read_json(p, manager="pod resource information")
    except InputError as exc:
        if exc.message.startswith("could not restore state"):
            reason = exc.message.split("could not restore state from checkpoint: ", 1)[1].split(", please", 1)[0]
            raise restore_error(str(p), reason) from None
        raise
    return decode_checkpoint(None, str(p), version, doc=doc)


__all__ = ["FILE_NAME", "PodResourceInfo", "PodResourceInfoMap", "allocation_from_pod", "checkpoint_bytes",
           "decode_checkpoint", "encode_data", "fields_for", "read_allocated_pods_state", "restore_error",
           "update_pod_from_allocation", "write_allocated_pods_state"]
