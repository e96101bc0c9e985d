"""``admit --state-dir`` / ``--write-state``: the allocation manager's ``allocated_pods_state``.

A kubelet that restarts reads the resources it allocated to each pod from ``allocated_pods_state``
(``NewStateCheckpoint``), and ``AddPod`` admits a pod with those, not its spec
(``UpdatePodFromAllocation``). A pod whose spec differs (a resize ``Deferred`` or ``Infeasible``
before the restart) is then a pending resize: ``HandlePodAdditions`` pushes it and retries the
pending resizes (``RetryPendingResizes(pods_added)``). Admissions and allocated resizes update the
state, which ``--write-state`` writes as the kubelet's checkpoint manager does.

With ``InPlacePodVerticalScaling`` off the kubelet keeps no such state (``NewNoopStateCheckpoint``):
the file is neither read nor written (a file in ``--state-dir`` is reported, not silently used).

Not an upstream module: the seam between ``kubetwin admit`` and
:mod:`kubetwin.kubelet.checkpoint.allocated_pods_state`; upstream:
``pkg/kubelet/allocation/allocation_manager.go`` (``NewManager``, ``AddPod``),
``pkg/kubelet/kubelet.go`` (``HandlePodAdditions``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import warn
from ..kubelet.checkpoint.allocated_pods_state import (
    FILE_NAME,
    PodResourceInfoMap,
    allocation_from_pod,
    fields_for,
    not_modelled_error,
    read_allocated_pods_state,
    update_pod_from_allocation,
    write_allocated_pods_state,
)
from ..model.pod import Pod


@dataclass
class AllocationState:
    """The allocation manager's checkpointed state for one ``admit`` run."""

    #: the entries read from --state-dir (None: no file, or not read)
    restored: PodResourceInfoMap | None = None
    #: desired pods (their specs) whose allocation differs: pending resizes after admission
    pending: dict[str, Pod] = field(default_factory=dict)

    def admit_view(self, pod: Pod, gates: Any) -> Pod:
        """``AddPod``: the pod as allocated; remembers a spec that differs as a pending resize."""
        if self.restored is None:
            return pod
        allocated, updated = update_pod_from_allocation(pod, self.restored.get(pod.uid), gates)
        if updated:
            self.pending[pod.uid] = pod
        return allocated


def load_allocation_state(state_dir: str | None, gates: Any) -> AllocationState:
    """``NewManager``'s ``newStateImpl``: the file in ``state_dir`` if the gate is on."""
    state = AllocationState()
    if state_dir is None:
        return state
    p = Path(state_dir) / FILE_NAME
    if not p.exists():
        return state  # ErrCheckpointNotFound: an empty state
    if not gates.enabled("InPlacePodVerticalScaling"):
        warn(f"{p}: not read: with InPlacePodVerticalScaling off the kubelet keeps no allocation state "
             "(NewNoopStateCheckpoint)")
        return state
    state.restored = read_allocated_pods_state(p, gates.version)
    return state


def write_allocation_state(state: AllocationState, node: Any, out: Path) -> None:
    """The state after admission and resizes: each admitted pod's allocation (``allocationFromPod``),
    and the entries read that no admission replaced (the kubelet drops those only in its
    housekeeping's ``RemoveOrphanedPods``, after this moment). Nothing is written when nothing was
    ever set (``storeState`` runs on a set), nor with the gate off."""
    gates = node.gates
    if not gates.enabled("InPlacePodVerticalScaling"):
        return
    if state.restored is None and not node.admitted:
        return
    fields = fields_for(gates.version)
    if fields is None:
        warn(not_modelled_error(gates.version, str(out / FILE_NAME)).message + "; not written")
        return
    entries = dict(state.restored or {})
    for pod in node.admitted:
        entries[pod.uid] = allocation_from_pod(pod, gates)
    out.mkdir(parents=True, exist_ok=True)
    write_allocated_pods_state(out / FILE_NAME, entries, fields)


__all__ = ["AllocationState", "load_allocation_state", "write_allocation_state"]
