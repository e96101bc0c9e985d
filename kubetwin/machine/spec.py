"""A compact machine spec for what-ifs: ``2s2n16c2t:mem=512Gi:l3=per-numa:gpus=4``.

Grammar (docs/machine-spec.md has the long form)::

    spec   = shape *( ":" option )
    shape  = INT "s" [ INT "n" ] INT "c" [ INT "t" ]      sockets, NUMA nodes per socket,
                                                          cores per NUMA node, threads per core
    option = "mem=" QUANTITY          total memory, split evenly over NUMA nodes (default 4Gi per core)
           | "swap=" QUANTITY         swap capacity (default 0)
           | "hugepages-" SIZE "=" INT   pre-allocated pages of SIZE (2Mi, 1Gi, ...) per NUMA node
           | "l3=" ( "per-socket" | "per-numa" | "per-" INT "c" | "none" )   default per-socket
           | "gpus=" INT | "nics=" INT | "nvme=" INT      PCI devices, round-robin over NUMA nodes
           | "distance=" INT          distance between sockets (default 21; same socket 11, local 10)

CPU numbering is Linux's on x86: cores are numbered socket by socket, NUMA node by node,
and thread ``j`` of core ``k`` is CPU ``k + j * cores``; so ``2s1n4c2t`` gives socket 0 the
CPUs 0-3 and 8-11, and core 0 the threads 0 and 8. cAdvisor's ``core_id`` restarts at 0 in
every socket, as sysfs reports it. Caches follow cAdvisor's split: an L3 that covers a whole
NUMA node is a node cache; one shared by part of a node (``per-8c``) or by several nodes
(``per-socket`` with ``n`` > 1, i.e. sub-NUMA clustering) is every core's uncore cache.

Not an upstream module: kubetwin's own machine shorthand.
"""

from __future__ import annotations

import re

from .. import limits
from ..errors import InputError
from ..model.quantity import parse_quantity
from .model import Cache, Core, HugePages, Machine, NUMANode, PCIDevice, canonical_extra

_SHAPE = re.compile(r"^(\d+)s(?:(\d+)n)?(\d+)c(?:(\d+)t)?$")
_OPTIONS = "mem, swap, hugepages-<size>, l3, gpus, nics, nvme, distance"
_L1, _L2, _L3 = 32 * 1024, 1024 * 1024, 32 * 1024 * 1024
_DEVICES = {  # kind -> (class code, vendor, device, model)
    "gpus": (0x0302, 0x10DE, 0x20B0, "NVIDIA A100-SXM4-40GB"),
    "nics": (0x0200, 0x15B3, 0x101B, "Mellanox ConnectX-6"),
    "nvme": (0x0108, 0x144D, 0xA80A, "Samsung PM9A3 NVMe SSD"),
}
MAX_CPUS = limits.MAX_MACHINE_CPUS.default


def _pci_devices(spec: str, devices: dict[str, int], n_nodes: int) -> list[PCIDevice]:
    """GPUs, NICs, NVMe drives round-robin over NUMA nodes, each NUMA node with one PCIe root
    complex: the root bus first, then one bus per device behind its own root port — the
    layout that puts a node's GPUs and NICs under one ``resource.kubernetes.io/pcieRoot``."""
    total = sum(devices.values())
    if total > 0x100 - 0x10:
        raise _err(spec, f"too many PCI devices: {total} (at most {0x100 - 0x10} PCI buses)")
    placed = [(kind, i % n_nodes) for kind, count in devices.items() for i in range(count)]
    buses: dict[int, int] = {}
    bus = 0x10
    for node in sorted({n for _, n in placed}):
        buses[node] = bus  # the root bus
        bus += 1 + sum(1 for _, n in placed if n == node)
    if bus - 1 > 0xFF:
        raise _err(spec, f"too many PCI devices: {len(placed)} devices and {len(buses)} root complexes "
                         f"need {bus - 0x10} of the {0x100 - 0x10} PCI buses")
    out: list[PCIDevice] = []
    used = dict.fromkeys(buses, 0)
    for kind, node in placed:
        cls, vendor, device, model = _DEVICES[kind]
        used[node] += 1
        out.append(PCIDevice(address=f"0000:{buses[node] + used[node]:02x}:00.0", class_code=cls,
                             vendor_id=vendor, device_id=device, numa_nodes=(node,), model=model,
                             pcie_root=f"pci0000:{buses[node]:02x}"))
    return out


def looks_like_spec(text: str) -> bool:
    return bool(_SHAPE.match(text.split(":", 1)[0]))


def _err(spec: str, msg: str, fix: str | None = None) -> InputError:
    return InputError(msg, path=f'machine spec "{spec}"', fix=fix)


def _count(spec: str, key: str, value: str) -> int:
    if not (value.isascii() and value.isdigit()):
        raise _err(spec, f'"{key}={value}": {key} must be a whole number')
    if len(value) > 18:
        raise _err(spec, f'"{key}={value[:24]}": {key} is too large')
    return int(value)


def _bytes(spec: str, key: str, value: str) -> int:
    try:
        q = parse_quantity(value, key)
    except InputError as e:
        raise _err(spec, f'"{key}={value}": {e.message}') from None
    v = q.value()
    if v < 0:
        raise _err(spec, f'"{key}={value}": must not be negative')
    if v > 2**63 - 1:
        raise _err(spec, f'"{key}={value}": more than the 2^63-1 bytes a Kubernetes quantity holds')
    return v


def parse_spec(spec: str) -> Machine:
    """A :class:`Machine` from a compact spec; errors name the part that is wrong."""
    text = spec.strip()
    shape, *options = text.split(":")
    m = _SHAPE.match(shape)
    if not m:
        raise _err(text, f'"{shape}" is not a machine shape',
                   fix='write sockets, NUMA nodes per socket, cores per NUMA node, threads per core, e.g. "2s1n8c2t"')
    sockets, nps, cpn, tpc = (int(g) if g else 1 for g in m.groups())
    for val, what in ((sockets, "sockets"), (nps, "NUMA nodes per socket"), (cpn, "cores per NUMA node"),
                      (tpc, "threads per core")):
        if val < 1:
            raise _err(text, f'"{shape}": {what} must be at least 1')
    total_cores = sockets * nps * cpn
    max_cpus = limits.MAX_MACHINE_CPUS.value()
    if total_cores * tpc > max_cpus:
        raise _err(text, f'"{shape}": {total_cores * tpc} CPUs is more than {max_cpus}',
                   fix=f"raise the limit with {limits.MAX_MACHINE_CPUS.env}=N if this is meant")

    mem = 4 * 1024 ** 3 * total_cores
    swap = 0
    hugepages: dict[int, int] = {2048: 0, 1048576: 0}
    l3 = "per-socket"
    devices = {"gpus": 0, "nics": 0, "nvme": 0}
    remote = 21
    given: set[str] = set()
    for opt in options:
        key, eq, value = opt.partition("=")
        key = key.strip()
        value = value.strip()
        if not eq or not value:
            raise _err(text, f'"{opt}" is not key=value', fix=f"options: {_OPTIONS}")
        if key in given:
            raise _err(text, f'option "{key}" is given twice', fix="give each option once")
        given.add(key)
        if key == "mem":
            mem = _bytes(text, key, value)
        elif key == "swap":
            swap = _bytes(text, key, value)
        elif key.startswith("hugepages-"):
            size = _bytes(text, key, key[len("hugepages-"):])
            if size < 4096 or size % 1024:
                raise _err(text, f'"{key}": page size must be a multiple of 1Ki and at least 4Ki')
            hugepages[size // 1024] = _count(text, key, value)
            if hugepages[size // 1024] > limits.MAX_HUGEPAGES.value():
                raise _err(text, f'"{key}={value}": more than {limits.MAX_HUGEPAGES.value()} pages',
                           fix=f"raise the limit with {limits.MAX_HUGEPAGES.env}=N if this is meant")
        elif key == "l3":
            if value in ("per-socket", "per-numa", "none"):
                l3 = value
            else:
                mm = re.fullmatch(r"per-(\d+)c", value)
                if not mm or int(mm.group(1)) < 1:
                    raise _err(text, f'"l3={value}": unknown L3 layout',
                               fix="use per-socket, per-numa, per-<N>c (e.g. per-8c) or none")
                if cpn % int(mm.group(1)):
                    raise _err(text, f'"l3={value}": {mm.group(1)} does not divide the {cpn} cores of a NUMA node')
                l3 = value
        elif key in devices:
            devices[key] = _count(text, key, value)
        elif key == "distance":
            remote = _count(text, key, value)
            if remote < 10:
                raise _err(text, f'"distance={value}": must be at least 10 (the local distance)')
        else:
            from ..model.strict import suggest

            near = suggest(key, ("mem", "swap", "hugepages-2Mi", "hugepages-1Gi", "l3", "gpus", "nics", "nvme",
                                 "distance"))
            raise _err(text, f'unknown option "{key}"',
                       fix=f'did you mean "{near}"?' if near else f"options: {_OPTIONS}")

    n_nodes = sockets * nps
    node_mem = mem // n_nodes
    node_hp = tuple(HugePages(size, count) for size, count in sorted(hugepages.items()))
    hp_bytes = sum(h.bytes for h in node_hp)
    if hp_bytes > node_mem:
        raise _err(text, f"hugepages need {hp_bytes} bytes per NUMA node but a node has {node_mem}",
                   fix="raise mem= or lower the hugepages counts")
    group = int(l3[4:-1]) if l3.startswith("per-") and l3.endswith("c") else 0

    nodes = []
    for nid in range(n_nodes):
        sock = nid // nps
        cores = []
        for i in range(cpn):
            k = nid * cpn + i  # global core index
            threads = tuple(k + j * total_cores for j in range(tpc))
            private = (Cache(k, _L1, "Data", 1), Cache(k, _L1, "Instruction", 1), Cache(k, _L2, "Unified", 2))
            uncore: tuple[Cache, ...] = ()
            if group:
                uncore = (Cache(k // group, _L3, "Unified", 3),)
            elif l3 == "per-socket" and nps > 1:
                uncore = (Cache(sock, _L3, "Unified", 3),)
            cores.append(Core(core_id=k - sock * nps * cpn, socket_id=sock, threads=threads,
                              caches=private, uncore_caches=uncore))
        node_caches: tuple[Cache, ...] = ()
        if l3 == "per-numa" or (l3 == "per-socket" and nps == 1):
            node_caches = (Cache(nid if l3 == "per-numa" else sock, _L3, "Unified", 3),)
        dist = tuple(10 if o == nid else (11 if o // nps == sock else remote) for o in range(n_nodes))
        nodes.append(NUMANode(id=nid, memory=node_mem, hugepages=node_hp, cores=tuple(cores),
                              caches=node_caches, distances=dist))

    pci = _pci_devices(text, devices, n_nodes)
    machine_hp = tuple(HugePages(h.page_size, h.num_pages * n_nodes) for h in node_hp)
    return Machine(num_cores=total_cores * tpc, num_physical_cores=total_cores, num_sockets=sockets,
                   memory_capacity=node_mem * n_nodes, swap_capacity=swap, nodes=tuple(nodes),
                   hugepages=machine_hp, pci_devices=tuple(pci), name=text, machine_id=f"kubetwin-spec-{shape}",
                   extra_json=canonical_extra({}))
