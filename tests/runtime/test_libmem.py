"""nri-plugins' memory allocator: zones, offers, overcommit resolution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubetwin.machine.machineinfo import machine_from_machineinfo
from kubetwin.runtime.libmem import (
    TYPE_MASK_DRAM,
    TYPE_MASK_HBM,
    TYPE_MASK_PMEM,
    Allocator,
    MemoryError_,
    container_request,
    human_readable_size,
    mask_of,
    memset_string,
)
from kubetwin.runtime.sysfs import System

MACHINES = Path(__file__).parent / "cases" / "machines"
G = 1 << 30


def allocator(name: str) -> Allocator:
    return Allocator(System(machine_from_machineinfo(json.loads((MACHINES / f"{name}.json").read_text()))))


def test_a_request_that_fits_stays_in_its_affinity() -> None:
    a = allocator("n4c16")
    zone, updates = a.get_offer(container_request("c1", "c1", "Guaranteed", 100 << 20, mask_of([1]), TYPE_MASK_DRAM)).commit()
    assert memset_string(zone) == "1" and updates == {}


def test_a_request_larger_than_its_node_spreads_to_the_closest_node() -> None:
    a = allocator("n4c16")
    zone, _ = a.get_offer(container_request("c1", "c1", "Guaranteed", 3 * G, mask_of([0]), TYPE_MASK_DRAM)).commit()
    assert memset_string(zone) == "0-1"


def test_a_missing_type_is_added_from_the_closest_node_of_that_type() -> None:
    a = allocator("n6-hbm-cxl")
    zone, _ = a.get_offer(container_request("c1", "c1", "Guaranteed", 1 << 20, mask_of([0]),
                                            TYPE_MASK_DRAM | TYPE_MASK_HBM)).commit()
    assert memset_string(zone) == "0,2"


def test_overcommit_moves_the_smaller_request_of_equal_priority_out() -> None:
    a = allocator("n6-hbm-cxl")
    a.get_offer(container_request("big", "big", "Guaranteed", 2816 * 10**6, mask_of([4]), TYPE_MASK_PMEM)).commit()
    a.get_offer(container_request("big2", "big2", "Guaranteed", 2816 * 10**6, mask_of([5]), TYPE_MASK_PMEM)).commit()
    zone, updates = a.get_offer(container_request("small", "small", "Guaranteed", 2 * 10**9, mask_of([4]),
                                                  TYPE_MASK_PMEM)).commit()
    assert memset_string(zone) == "4-5" and updates == {}


@pytest.mark.parametrize("order", (("a", "b"), ("b", "a")))
def test_overcommit_moves_the_younger_of_two_equal_requests_and_is_counted(order: tuple[str, str]) -> None:
    # creation order is the last tie-break (``Request.created``): the one read of it, which
    # kubetwin.sim.runtime_canon guards by the allocator's overcommit count
    a = allocator("n4c16")
    for rid in order:
        a.get_offer(container_request(rid, rid, "Burstable", 3 * G // 4, mask_of([0]), TYPE_MASK_DRAM)).commit()
    assert a.overcommits == 0
    _, updates = a.get_offer(container_request("c", "c", "Guaranteed", 3 * G // 4, mask_of([0]),
                                               TYPE_MASK_DRAM)).commit()
    assert {k: memset_string(v) for k, v in updates.items()} == {order[1]: "0-1"}
    assert a.overcommits == 1


def test_offers_expire_when_the_allocator_changes() -> None:
    a = allocator("n4c16")
    o1 = a.get_offer(container_request("c1", "c1", "Burstable", 1 << 20, mask_of([0]), TYPE_MASK_DRAM))
    o2 = a.get_offer(container_request("c2", "c2", "Burstable", 1 << 20, mask_of([1]), TYPE_MASK_DRAM))
    o1.commit()
    with pytest.raises(MemoryError_, match="expired"):
        o2.commit()


def test_release_returns_the_memory() -> None:
    a = allocator("n4c16")
    a.get_offer(container_request("c1", "c1", "Guaranteed", G, mask_of([0]), TYPE_MASK_DRAM)).commit()
    assert a.zone_free(mask_of([0])) == G
    a.release("c1")
    assert a.zone_free(mask_of([0])) == 2 * G


def test_a_request_without_nodes_of_its_type_is_refused() -> None:
    with pytest.raises(MemoryError_, match="without affinity"):
        allocator("n4c16").get_offer(container_request("c", "c", "Guaranteed", 1, 0, TYPE_MASK_DRAM))


@pytest.mark.parametrize("size, text", [(512, "512"), (1024, "1k"), (1536, "1.5k"), (100 * 10**6, "95.367M"),
                                        (3 * G, "3G")])
def test_sizes_print_as_the_plugin_prints_them(size: int, text: str) -> None:
    assert human_readable_size(size) == text
