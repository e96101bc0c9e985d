"""The allocation manager's stores (``pkg/kubelet/allocation/state/state_checkpoint.go``,
``state_mem.go``, v1.36): sets write the file, removals (``RemovePod``, ``RemoveOrphanedPods``)
change only the map until the next set. After ``state_checkpoint_test.go`` and
``state_mem``'s ``SetContainerResources`` (a pod without an entry gets one)."""

from __future__ import annotations

from kubetwin.kubelet.checkpoint.allocated_pods_state import PodResourceInfo
from kubetwin.kubelet.checkpoint.allocation_state import StateCheckpoint
from kubetwin.model.pod import ResourceRequirements
from kubetwin.model.quantity import Quantity


def res(cpu: str) -> ResourceRequirements:
    return ResourceRequirements(requests={"cpu": Quantity.parse(cpu)})


def info(cpu: str) -> PodResourceInfo:
    return PodResourceInfo({"c": res(cpu)})


def test_a_set_writes_the_file():
    s = StateCheckpoint()
    s.set_pod_resource_info("a", info("1"))
    assert s.stored == {"a": info("1")} and s.writes == 1


def test_removing_a_pod_leaves_the_file_as_it_was():
    s = StateCheckpoint({"a": info("1")})
    s.remove_pod("a")
    assert s.entries == {} and s.stored == {"a": info("1")} and s.writes == 0


def test_the_next_set_stores_the_removal_too():
    s = StateCheckpoint({"a": info("1")})
    s.remove_pod("a")
    s.set_pod_resource_info("b", info("2"))
    assert s.stored == {"b": info("2")}


def test_remove_orphaned_pods_keeps_only_the_remaining_pods_and_does_not_write():
    s = StateCheckpoint({"a": info("1"), "b": info("2"), "c": info("3")})
    assert s.remove_orphaned_pods({"b"}) == ["a", "c"]
    assert list(s.entries) == ["b"] and len(s.stored) == 3 and s.writes == 0


def test_setting_one_container_of_a_pod_without_an_entry_creates_it():
    s = StateCheckpoint()
    s.set_container_resources("a", "c", res("500m"))
    assert s.get_container_resources("a", "c") == res("500m")
    assert s.get_pod_resource_info("a").pod_level_resources is None


def test_setting_one_container_keeps_the_others():
    s = StateCheckpoint({"a": PodResourceInfo({"c": res("1"), "d": res("2")})})
    s.set_container_resources("a", "c", res("3"))
    assert s.get_container_resources("a", "c") == res("3") and s.get_container_resources("a", "d") == res("2")


def test_a_missing_pod_or_container_has_no_resources():
    s = StateCheckpoint({"a": info("1")})
    assert s.get_container_resources("x", "c") is None and s.get_container_resources("a", "x") is None
