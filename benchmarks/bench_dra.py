"""DRA benchmark: single-device claim allocations per second on a node with 1,000 devices in
8 pools under CEL selectors, and raw selector evaluations per second (wall time; the
allocation figures also per CPU second, the steadier one on a shared machine).

The 8 pools publish the same 125 devices, which decode to one object each
(:func:`kubetwin.dra.api.parse_resource_slice`): selector evaluations below run over 1,000
(device, pool) pairs but 125 distinct devices.

    .venv/bin/python benchmarks/bench_dra.py

Allocations are committed one after another (each allocated device becomes "in use"), as a
scheduler placing one single-GPU pod after another would; the allocator is built once, as
the DynamicResources plugin builds one per scheduling cycle state.
"""

from __future__ import annotations

import time

from kubetwin.dra.allocator import AllocatedDevice, AllocatedState, Allocator
from kubetwin.dra.api import Node, parse_device_class, parse_resource_claim, parse_resource_slice
from kubetwin.dra.cel import CELOptions, compile_selector
from kubetwin.dra.features import AllocatorFeatures

DRIVER = "gpu.example.com"
POOLS, PER_POOL = 8, 125


def build():
    slices = []
    for p in range(POOLS):
        devices = []
        for i in range(PER_POOL):
            devices.append({"name": f"gpu-{i}", "attributes": {
                "model": {"string": "A100" if i % 5 else "H100"}, "index": {"int": i},
                "driverVersion": {"version": f"1.{i % 7}.0"}, "numa": {"int": p % 2}},
                "capacity": {"memory": {"value": "40Gi" if i % 3 else "80Gi"}}})
        slices.append(parse_resource_slice({"metadata": {"name": f"slice-{p}"}, "spec": {
            "driver": DRIVER, "pool": {"name": f"pool-{p}", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "node-1", "devices": devices}}))
    cls = parse_device_class({"metadata": {"name": "gpu"}, "spec": {"selectors": [
        {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    claim = parse_resource_claim({"metadata": {"name": "c"}, "spec": {"devices": {"requests": [{
        "name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression":
            f'device.attributes["{DRIVER}"].model == "A100" && '
            f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0 && '
            f'device.attributes["{DRIVER}"].driverVersion.isGreaterThan(semver("1.0.0"))'}}]}}]}}})
    return slices, {"gpu": cls}, claim


def bench_allocations() -> float:
    slices, classes, claim = build()
    node = Node("node-1", {})
    state = AllocatedState()
    allocator = Allocator(AllocatorFeatures(), classes, slices, allocated_state=state)
    n = 0
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        outcome = allocator.allocate(node, [claim])
        if not outcome.allocated:
            break
        r = outcome.results[0].results[0]
        state.add(AllocatedDevice(r.request, r.driver, r.pool, r.device), allocator.features)
        n += 1
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"allocations: {n} single-device claims on 1000 devices / {POOLS} pools in {elapsed:.3f}s "
          f"= {n / elapsed:,.0f}/s, {n / cpu:,.0f}/CPU-s (until the node is full)")
    return n / elapsed


def bench_cold_allocations() -> float:
    """A fresh allocator per claim: no selector verdicts cached across calls (pools gathered
    for the same slice objects are shared between allocators, as per scheduling cycle)."""
    slices, classes, claim = build()
    node = Node("node-1", {})
    n, start, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < 2:
        Allocator(AllocatorFeatures(), classes, slices).allocate(node, [claim])
        n += 1
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"cold allocations (new allocator each time): {n / elapsed:,.0f}/s, {n / cpu:,.0f}/CPU-s")
    return n / elapsed


def bench_selectors() -> float:
    slices, _, claim = build()
    devices = [d for s in slices for d in s.devices]
    exprs = [compile_selector(e, CELOptions()) for e in (
        f'device.driver == "{DRIVER}"',
        f'device.attributes["{DRIVER}"].model == "A100" && device.attributes["{DRIVER}"].index < 100',
    )]
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < 2:
        for e in exprs:
            for d in devices:
                e.matches(d, DRIVER)
        n += len(exprs) * len(devices)
    elapsed = time.perf_counter() - start
    print(f"selector evaluations (no verdict cache): {n / elapsed:,.0f}/s")
    q = compile_selector(claim.requests[0].exactly.selectors[0], CELOptions())
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < 1:
        for d in devices:
            q.matches(d, DRIVER)
        n += len(devices)
    rate = n / (time.perf_counter() - start)
    print(f"selector evaluations with quantity+semver functions: {rate:,.0f}/s "
          "(literal quantity()/semver() folded; device-vs-constant compareTo/isGreaterThan pre-compared per device)")
    return rate


if __name__ == "__main__":
    bench_allocations()
    bench_cold_allocations()
    bench_selectors()
