"""``actuated_pods_state``: the resources the container runtime was last told for each container
(in-place resize), beside ``allocated_pods_state``.

With ``InPlacePodVerticalScaling`` on, the allocation manager keeps a second store of the same
format (``newStateImpl(checkpointDirectory, actuatedPodsStateFile)``: the file, its checksum, its
errors and refusals are :mod:`.allocated_pods_state`'s). The kubelet sets a container's entry
when it starts the container or its ``UpdateContainerResources`` succeeds
(``SetActuatedResources``), and compares it with the allocation to tell whether a resize is still
in progress (``isPodResizeInProgress``): only running app containers and sidecars count, and
only their cpu and memory requests and limits. ``PodResizeInProgress`` is cleared when none
differs. Pods leave it as they leave the allocated store (``RemovePod``, ``RemoveOrphanedPods``:
:class:`.allocation_state.StateCheckpoint`).

Since kubernetes#132873 (v1.35) the store belongs to the runtime manager (``kuberuntime``: the
entry of a container is set when ``startContainer`` creates it and after each successful
``UpdateContainerResources`` in ``doPodResizeAction``; pod-level resources by
``UpdateActuatedPodLevelResources``; terminated pods leave it in ``GarbageCollect``); the file,
its format and the in-progress comparison are unchanged. The file exists from v1.33
(kubernetes#130599; ``actuatedPodsStateFile`` in :mod:`kubetwin.model.features`).

Upstream: ``pkg/kubelet/allocation/allocation_manager.go`` (``actuatedPodsStateFile``,
``SetActuatedResources``, ``GetActuatedResources``, ``CheckPodResizeInProgress``,
``isPodResizeInProgress``, ``IsResizableContainer``, ``RemovePod``, ``RemoveOrphanedPods``), v1.36.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...model.pod import Container, Pod, is_sidecar
from ...model.quantity import Quantity
from .allocated_pods_state import (
    PodResourceInfo,
    PodResourceInfoMap,
    allocation_from_pod,
    fields_for,
    read_allocated_pods_state,
    write_allocated_pods_state,
)
from .allocation_state import StateCheckpoint

#: ``actuatedPodsStateFile``
FILE_NAME = "actuated_pods_state"

_ZERO = Quantity.from_int(0)


def kept_by(version: str | None) -> bool:
    """Does this release's kubelet keep the file (``actuatedPodsStateFile``, kubernetes#130599, v1.33)?"""
    from ...model.features import default_for

    return bool(default_for("actuatedPodsStateFile", version))


def read_actuated_pods_state(path: str | Path, version: str | None) -> PodResourceInfoMap:
    """The file's entries (the allocated store's format and refusals)."""
    if fields_for(version) is None:
        raise InputError(f"the {FILE_NAME} format of Kubernetes v{version} is not modelled by kubetwin",
                         file=str(path), fix="use --kubernetes-version 1.35 or later, or leave the file out")
    return read_allocated_pods_state(path, version)


def write_actuated_pods_state(path: str | Path, entries: Mapping[str, PodResourceInfo],
                              fields: tuple[str, ...]) -> None:
    write_allocated_pods_state(path, entries, fields)


def set_actuated_resources(state: StateCheckpoint, allocated: Pod, gates: Any,
                           container: Container | None = None) -> None:
    """``SetActuatedResources``: one container's resources, or (``container`` None) the whole
    pod's allocation."""
    if container is None:
        state.set_pod_resource_info(allocated.uid, allocation_from_pod(allocated, gates))
    else:
        state.set_container_resources(allocated.uid, container.name, container.resources)


def _resizable(pod: Pod) -> list[Container]:
    """``IsResizableContainer``: app containers and sidecars (restartable init containers)."""
    return [c for c in pod.spec.init_containers if is_sidecar(c)] + list(pod.spec.containers)


def _equal(a: Mapping[str, Quantity], b: Mapping[str, Quantity], name: str) -> bool:
    """``Quantity.Equal`` of two map lookups (a missing entry reads as zero)."""
    return a.get(name, _ZERO).cmp(b.get(name, _ZERO)) == 0


def is_pod_resize_in_progress(allocated: Pod, state: StateCheckpoint,
                              running: Callable[[str], bool] = lambda name: True,
                              resizable: Iterable[Container] | None = None) -> bool:
    """``isPodResizeInProgress``: does some running resizable container's actuated cpu or memory
    (requests, limits) differ from its allocation? A container without an entry reads as empty.
    ``resizable``: the containers ``IsResizableContainer`` admits (default: app containers and
    sidecars; a release with ``InPlacePodVerticalScalingInitContainers`` passes its own)."""
    for c in (_resizable(allocated) if resizable is None else resizable):
        if not running(c.name):
            continue
        got = state.get_container_resources(allocated.uid, c.name)
        req = got.requests if got is not None else {}
        lim = got.limits if got is not None else {}
        for name in ("cpu", "memory"):
            if not (_equal(c.resources.requests, req, name) and _equal(c.resources.limits, lim, name)):
                return True
    return False


__all__ = ["FILE_NAME", "is_pod_resize_in_progress", "kept_by", "read_actuated_pods_state", "set_actuated_resources",
           "write_actuated_pods_state"]
