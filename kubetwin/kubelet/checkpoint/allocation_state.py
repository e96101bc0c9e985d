"""The allocation manager's two pod-resource stores (``allocated_pods_state``,
``actuated_pods_state``) as the kubelet keeps them: an in-memory map of
:class:`~.allocated_pods_state.PodResourceInfo` by pod UID with a checkpoint file behind it.

Every *set* (a whole pod's entry, one container's resources) writes the file (``storeState``);
removals do not: ``RemovePod`` ("there is no side effect to keeping a deleted pod") and
``RemoveOrphanedPods`` (the housekeeping's clean-up of pods the kubelet no longer knows) change
the map only, and the file keeps those entries until the next set writes the map out. So a
kubelet restarted in between reads them back (and drops them again at its first housekeeping).
:attr:`StateCheckpoint.stored` is what the file holds.

Upstream: ``pkg/kubelet/allocation/state/state_checkpoint.go`` (``stateCheckpoint``:
``SetContainerResources``, ``SetPodResourceInfo``, ``RemovePod``, ``RemoveOrphanedPods``,
``storeState``), ``state_mem.go`` (``stateMemory``), v1.36.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...model.pod import ResourceRequirements
from .allocated_pods_state import PodResourceInfo, PodResourceInfoMap


class StateCheckpoint:
    """One store: its entries now, and the entries its file holds."""

    def __init__(self, entries: Mapping[str, PodResourceInfo] | None = None):
        self.entries: PodResourceInfoMap = dict(entries or {})
        #: the file's entries (as read at start-up, then as written by the last set)
        self.stored: PodResourceInfoMap = dict(self.entries)
        #: how many times the file was written
        self.writes = 0

    # --- reads ---------------------------------------------------------------------------------
    def get_pod_resource_info(self, uid: str) -> PodResourceInfo | None:
        return self.entries.get(uid)

    def get_container_resources(self, uid: str, container: str) -> ResourceRequirements | None:
        """``GetContainerResources``: None when the pod or the container has no entry."""
        info = self.entries.get(uid)
        if info is None:
            return None
        return info.container_resources.get(container)

    # --- sets (stored) -------------------------------------------------------------------------
    def set_pod_resource_info(self, uid: str, info: PodResourceInfo) -> None:
        self.entries[uid] = info
        self._store()

    def set_container_resources(self, uid: str, container: str, resources: ResourceRequirements) -> None:
        """One container's resources; a pod without an entry gets one (no pod-level resources)."""
        info = self.entries.get(uid)
        conts = dict(info.container_resources) if info is not None else {}
        conts[container] = resources
        self.entries[uid] = PodResourceInfo(conts, info.pod_level_resources if info is not None else None)
        self._store()

    # --- removals (not stored) -----------------------------------------------------------------
    def remove_pod(self, uid: str) -> None:
        self.entries.pop(uid, None)

    def remove_orphaned_pods(self, remaining: Iterable[str]) -> list[str]:
        """Drop every pod not in ``remaining``; returns the UIDs dropped."""
        keep = set(remaining)
        gone = [uid for uid in self.entries if uid not in keep]
        for uid in gone:
            del self.entries[uid]
        return gone

    def _store(self) -> None:
        self.stored = dict(self.entries)
        self.writes += 1


__all__ = ["StateCheckpoint"]
