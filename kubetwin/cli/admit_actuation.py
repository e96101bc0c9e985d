"""``admit --state-dir`` / ``--write-state``: the runtime manager's ``actuated_pods_state``.

Beside what it allocated (:mod:`.admit_allocation`), the kubelet checkpoints what it last *sent
the runtime* for each container: the entry is set when ``startContainer`` creates the container
and after each successful ``UpdateContainerResources`` of a resize (``SetActuatedResources``).
A resize is in progress while a running resizable container's actuated cpu or memory (requests,
limits) differ from its allocation (``isPodResizeInProgress``).

After a kubelet restart (the next ``admit`` on the state folder) the file is read back
(``NewStateCheckpoint``; a corrupt or mismatched file stops the kubelet, the file named). An
admitted pod the file knows is a pod whose containers are already running: they run with the
actuated resources, not the allocation. When those differ, the pod's first ``SyncPod`` sets the
``PodResizeInProgress`` condition (``CheckPodResizeInProgress``: no reason or message,
``observedGeneration`` the pod's generation) and the runtime manager actuates the allocation
(``computePodResizeAction`` against the actuated resources, ``doPodResizeAction``: one
``UpdateContainerResources`` per resource and container, each recorded as actuated); the
condition is then cleared (event ``ResizeCompleted``). A pod the file does not know is started:
every container it creates, init containers included, gets its entry, and the pod-level
resources with ``InPlacePodLevelResourcesVerticalScaling``. ``--resize`` updates the same store.
``--write-state`` writes the entries (the restored entries of pods not admitted included: they
leave only in the runtime manager's ``GarbageCollect``, after this moment), atomically.

Approximations (stated, not hidden): the restored pods' actuation runs before pending resizes
restored from ``allocated_pods_state`` are retried (upstream runs the pod workers and the retry
concurrently; the files written are the same either way); pod-level actuated resources are set
from the allocation when the pod starts.

With ``InPlacePodVerticalScaling`` off (or a release without the file) the kubelet keeps no such
state: the file is neither read nor written (a file in ``--state-dir`` is reported).

Not an upstream module: the seam between ``kubetwin admit`` and
:mod:`kubetwin.kubelet.checkpoint.actuated_pods_state`; upstream:
``pkg/kubelet/kuberuntime/kuberuntime_manager.go`` (``computePodResizeAction``,
``doPodResizeAction``, ``UpdateActuatedPodLevelResources``), ``kuberuntime_container.go``
(``startContainer``), ``pkg/kubelet/allocation/allocation_manager.go``
(``CheckPodResizeInProgress``, ``isPodResizeInProgress``), ``pkg/kubelet/status/status_manager.go``
(``SetPodResizeInProgressCondition``), v1.36.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import warn
from ..kubelet.checkpoint.actuated_pods_state import (
    FILE_NAME,
    is_pod_resize_in_progress,
    kept_by,
    read_actuated_pods_state,
    set_actuated_resources,
    write_actuated_pods_state,
)
from ..kubelet.checkpoint.allocated_pods_state import (
    PodResourceInfo,
    PodResourceInfoMap,
    fields_for,
    update_pod_from_allocation,
)
from ..kubelet.checkpoint.allocation_state import StateCheckpoint
from ..model.pod import Pod, is_sidecar

#: the condition ``CheckPodResizeInProgress`` sets, and the event when it clears
IN_PROGRESS, RESIZE_COMPLETED = "PodResizeInProgress", "ResizeCompleted"


@dataclass
class ActuationState:
    """The runtime manager's actuated store for one ``admit`` run."""

    #: the kubelet keeps the store (InPlacePodVerticalScaling on, a release with the file)
    kept: bool = False
    #: the entries read from --state-dir (None: no file, or not read)
    restored: PodResourceInfoMap | None = None
    #: the store now (restored entries, then every set)
    state: StateCheckpoint = field(default_factory=StateCheckpoint)

    def restored_entry(self, uid: str) -> PodResourceInfo | None:
        return self.restored.get(uid) if self.restored is not None else None

    def running_view(self, allocated: Pod, gates: Any) -> Pod:
        """The pod as its containers run: the allocated pod with the restored actuated resources
        of the containers the file knows (a pod the file does not know: the allocated pod)."""
        view, _ = update_pod_from_allocation(allocated, self.restored_entry(allocated.uid), gates)
        return view

    def started(self, pod: Pod, gates: Any) -> None:
        """A new pod started: ``startContainer`` records each container it creates (init
        containers included), ``UpdateActuatedPodLevelResources`` the pod-level resources."""
        if not self.kept:
            return
        for c, _ in pod.all_containers():
            set_actuated_resources(self.state, pod, gates, c)
        if gates.enabled("InPlacePodLevelResourcesVerticalScaling") and pod.spec.resources is not None:
            info = self.state.entries[pod.uid]
            self.state.set_pod_resource_info(pod.uid, PodResourceInfo(info.container_resources, pod.spec.resources))

    def resizing(self, pods: list[Pod]) -> set[str]:
        """The UIDs of the (allocated) pods the file knows whose actuated resources differ."""
        if not self.kept or not self.restored:
            return set()
        return {p.uid for p in pods if p.uid in self.restored and self.in_progress(p)}

    def in_progress(self, allocated: Pod) -> bool:
        """``isPodResizeInProgress`` for a pod running since before the restart: its app containers
        and sidecars run (regular init containers ran to completion)."""
        return is_pod_resize_in_progress(allocated, self.state,
                                         running=lambda name: _runs(allocated, name))


def _runs(pod: Pod, name: str) -> bool:
    for c, init in pod.all_containers():
        if c.name == name:
            return not init or is_sidecar(c)
    return False


def load_actuation_state(state_dir: str | None, gates: Any) -> ActuationState:
    """The runtime manager's store: the file in ``state_dir`` when the kubelet keeps one."""
    kept = gates.enabled("InPlacePodVerticalScaling") and kept_by(gates.version)
    st = ActuationState(kept=kept)
    if state_dir is None:
        return st
    p = Path(state_dir) / FILE_NAME
    if not p.exists():
        return st  # ErrCheckpointNotFound: an empty state
    if not kept:
        why = ("with InPlacePodVerticalScaling off the kubelet keeps no actuated state (NewNoopStateCheckpoint)"
               if not gates.enabled("InPlacePodVerticalScaling") else
               f"Kubernetes v{gates.version} keeps no actuated_pods_state")
        warn(f"{p}: not read: {why}")
        return st
    st.restored = read_actuated_pods_state(p, gates.version)
    st.state = StateCheckpoint(st.restored)
    return st


def sync_restored(node: Any, actuation: ActuationState, sequence: Any) -> list[dict[str, Any]]:
    """Each admitted pod's first ``SyncPod`` after the restart: a pod the file knows whose
    actuated resources differ from its allocation gets ``PodResizeInProgress``, the resize is
    actuated (``sequence``: its CRI calls) and the condition cleared. One record per such pod."""
    from .admit_resize import container_views

    records: list[dict[str, Any]] = []
    if not actuation.kept or not actuation.restored:
        return records
    for pod in node.admitted:
        entry = actuation.restored_entry(pod.uid)
        if entry is None or not actuation.in_progress(pod):
            continue
        condition = {"type": IN_PROGRESS, "status": "True"}
        if pod.metadata.generation:
            condition["observedGeneration"] = pod.metadata.generation
        record: dict[str, Any] = {
            "pod": pod.name, "namespace": pod.namespace, "status": "Completed",
            "actuatedBefore": {name: _requirements(r) for name, r in sorted(entry.container_resources.items())},
            "conditions": [condition]}
        if sequence is not None:
            record["actions"] = sequence.resize_pod(pod)
        for c, _ in pod.all_containers():   # UpdateContainerResources succeeded: SetActuatedResources
            if _runs(pod, c.name):
                set_actuated_resources(actuation.state, pod, node.gates, c)
        record["event"] = RESIZE_COMPLETED  # CheckPodResizeInProgress: allocated == actuated, the condition goes
        record["conditionsAfter"] = []
        record["containers"] = container_views(node, pod)
        records.append(record)
    return records


def _requirements(r: Any) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    if r.requests:
        out["requests"] = {k: str(v) for k, v in sorted(r.requests.items())}
    if r.limits:
        out["limits"] = {k: str(v) for k, v in sorted(r.limits.items())}
    return out


def write_actuation_state(actuation: ActuationState, gates: Any, out: Path) -> None:
    """The store after admission and resizes, as the checkpoint manager writes it (nothing when
    nothing was ever set or read, nor when the kubelet keeps no store)."""
    if not actuation.kept or (actuation.restored is None and not actuation.state.writes):
        return
    fields = fields_for(gates.version)
    if fields is None:
        warn(f"{out / FILE_NAME}: the {FILE_NAME} format of Kubernetes v{gates.version} is not modelled by "
             "kubetwin; not written")
        return
    out.mkdir(parents=True, exist_ok=True)
    write_actuated_pods_state(out / FILE_NAME, actuation.state.entries, fields)


__all__ = ["IN_PROGRESS", "RESIZE_COMPLETED", "ActuationState", "load_actuation_state", "sync_restored",
           "write_actuation_state"]
