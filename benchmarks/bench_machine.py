"""Load times of the machine readers: the biggest hwloc XML, a sysfs tarball, MachineInfo, a spec,
and the kubelet CPUTopology view built from them.

    .venv/bin/python benchmarks/bench_machine.py
"""

from __future__ import annotations

import statistics
import time
from functools import partial
from pathlib import Path

from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet

HWLOC = Path("/work/shared/data/topologies/hwloc")
MACHINES = Path("/work/shared/conformance/machines")


def _time(fn, repeat: int = 5) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    xmls = sorted(HWLOC.glob("*/*.xml"), key=lambda p: p.stat().st_size)
    tarballs = sorted(HWLOC.glob("sysfs/*.tar.bz2"), key=lambda p: p.stat().st_size)
    infos = sorted(MACHINES.glob("*.json"), key=lambda p: p.stat().st_size)
    cases = [
        ("hwloc XML (biggest)", str(xmls[-1])),
        ("sysfs tarball (biggest)", str(tarballs[-1])),
        ("MachineInfo (biggest)", str(infos[-1])),
        ("spec 8s4n32c2t", "8s4n32c2t:l3=per-8c"),
        ("live sysfs", "/"),
    ]
    print(f"{'source':28} {'file':44} {'load ms':>8} {'CPUs':>5} {'topology ms':>11}")
    for label, src in cases:
        if src != "/" and not src.startswith("8s") and not Path(src).exists():
            continue
        load = _time(partial(load_machine, src))
        m = load_machine(src)
        topo = _time(m.cpu_topology)
        name = Path(src).name if "/" in src else src
        print(f"{label:28} {name[:44]:44} {load * 1000:8.1f} {m.num_cores:5} {topo * 1000:11.2f}")
    # the queries the CPU manager runs in its inner loops
    t = load_machine("2s2n48c2t:l3=per-8c").cpu_topology()
    d = t.details
    free = CPUSet.parse("0-50,100-300")
    n = 10000
    start = time.perf_counter()
    for _ in range(n):
        d.keep_only(free).cpus_in_numa_nodes(1)
        d.cores_in_numa_nodes(0, 1)
    per = (time.perf_counter() - start) / n * 1e6
    print(f"CPUDetails keep_only + cpus_in_numa_nodes + cores_in_numa_nodes on 384 CPUs: {per:.1f} µs")


if __name__ == "__main__":
    main()
