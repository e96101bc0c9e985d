"""hwloc XML (``lstopo --of xml``) in: v1 (objects nested under ``NUMANode``) and v2/v3 (NUMA
nodes as memory children), read with a streaming expat parser that refuses DTD internal
subsets and entity declarations — an entity bomb fails at once with a clear error.

How hwloc objects become the MachineInfo-shaped model:

* logical CPUs are the ``PU`` objects (``os_index``); their core is the nearest ``Core``
  ancestor (a PU without one is its own core), their socket the nearest ``Package``
  ancestor's ``os_index`` (0 without one), cAdvisor's ``core_id`` the core's ``os_index``;
* a CPU's NUMA node is the lowest-numbered ``NUMANode`` whose ``cpuset`` contains it — the
  same in v1 and v2, and it makes HBM/GPU/CXL nodes that share the CPUs of a DRAM node
  CPU-less, as Linux lists them; NUMA nodes with no CPUs are kept;
* L3 caches (``L3Cache``, or v1 ``Cache`` with ``depth=3``) shared by every CPU of the NUMA
  node become node caches, others the core's uncore cache, as cAdvisor splits them; L1/L2
  caches private to the core become core caches; cache ids are hwloc's order per cache type;
* memory from ``local_memory`` (v2) / ``memory`` (v1); hugepages from ``page_type`` except
  the first (the normal page size); distances from ``distances2`` (the ``NUMALatency`` matrix,
  else the first NUMA matrix) or v1 ``distances`` (``latency`` × ``latency_base``);
* PCI devices from ``PCIDev`` (``pci_busid``, ``pci_type`` = "class [vendor:device] ..."),
  local to the NUMA nodes of the nearest ancestor that has a ``nodeset``; their PCIe root
  complex is the host bridge above them (``Bridge`` with ``bridge_type`` "0-1"), named after
  its domain and secondary bus (``bridge_pci="0000:[3a-3f]"`` → ``pci0000:3a``) as Linux names
  the root's sysfs directory; without a host bridge, the bus of the topmost PCI object;
* ``x86/*`` CPUID dumps have no NUMA nodes: one node 0 with all CPUs and 0 memory.

Not an upstream module of Kubernetes: a reader of hwloc's XML export (hwloc's ``topology-xml.c``
format) into kubetwin's machine model.
"""

from __future__ import annotations

import re
import xml.parsers.expat
from collections.abc import Iterator
from dataclasses import dataclass, field

from .. import limits
from ..errors import InputError
from ..model.cpuset import MAX_CPU_ID, CPUSet
from .model import (
    MAX_NUMA_NODE_ID,
    Cache,
    Core,
    HugePages,
    Machine,
    NUMANode,
    PCIDevice,
    canonical_extra,
    machine_counts,
)

MAX_XML_BYTES = 128 * 1024 * 1024
MAX_ELEMENTS = 5_000_000
_PCI_TYPE = re.compile(r"^\s*([0-9a-fA-F]{4})\s*\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")
_HOST_BRIDGE_PCI = re.compile(r"^\s*([0-9a-fA-F]{4}):\[([0-9a-fA-F]{2})-[0-9a-fA-F]{2}\]")
_BUSID = re.compile(r"^([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):[0-9a-fA-F]{2}\.[0-9a-fA-F]$")
_CACHE_TYPES = {"0": "Unified", "1": "Data", "2": "Instruction"}


@dataclass
class _Obj:
    type: str
    attrs: dict[str, str]
    parent: "_Obj | None"
    children: list["_Obj"] = field(default_factory=list)
    infos: dict[str, str] = field(default_factory=dict)
    page_types: list[tuple[int, int]] = field(default_factory=list)

    def ancestor(self, *types: str) -> "_Obj | None":
        p = self.parent
        while p is not None and p.type not in types:
            p = p.parent
        return p


def parse_bitmap(text: str | None) -> int:
    """An hwloc bitmap (``0x000000ff,0xffffffff``: 32-bit words, most significant first;
    ``0xf...f`` marks an infinite set, ignored here)."""
    if not text:
        return 0
    mask = 0
    for word in text.split(","):
        w = word.strip()
        if w.lower().startswith("0xf...f"):
            continue
        try:
            mask = (mask << 32) | (int(w, 16) if w else 0)  # ",," is an all-zero word
        except ValueError:
            raise InputError(f"invalid hwloc bitmap {text[:60]!r}: {w[:20]!r} is not a hexadecimal word") from None
    if mask.bit_length() > limits.MAX_CPU_ID.value() + 1:
        raise limits.MAX_CPU_ID.exceeded(mask.bit_length() - 1, what=f"CPU id {mask.bit_length() - 1} in an hwloc bitmap")
    return mask


class _Builder:
    def __init__(self, file: str):
        self.file = file
        self.root: _Obj | None = None
        self.stack: list[_Obj] = []
        self.count = 0
        self.distances: list[dict] = []
        self._dist: dict | None = None
        self._text_target: str | None = None
        self._text: list[str] = []
        self.version = ""

    def start(self, name: str, attrs: dict[str, str]) -> None:
        self.count += 1
        if self.count > MAX_ELEMENTS:
            raise InputError("too many XML elements", file=self.file)
        if name == "topology":
            self.version = attrs.get("version", "1.0")
        elif name in ("object", "root"):
            parent = self.stack[-1] if self.stack else None
            obj = _Obj(type=_v1_type(attrs), attrs=attrs, parent=parent)
            if parent is not None:
                parent.children.append(obj)
            elif self.root is None:
                self.root = obj
            self.stack.append(obj)
        elif name == "info" and self.stack:
            self.stack[-1].infos.setdefault(attrs.get("name", ""), attrs.get("value", ""))
        elif name == "page_type" and self.stack:
            self.stack[-1].page_types.append((int(attrs.get("size", "0")), int(attrs.get("count", "0"))))
        elif name == "distances2":
            self._dist = {"v": 2, "attrs": attrs, "indexes": "", "values": ""}
        elif name == "distances":
            self._dist = {"v": 1, "attrs": attrs, "latency": []}
        elif name in ("indexes", "u64values") and self._dist is not None:
            self._text_target, self._text = name, []
        elif name == "latency" and self._dist is not None and self._dist["v"] == 1:
            self._dist["latency"].append(float(attrs.get("value", "0")))

    def end(self, name: str) -> None:
        if name in ("object", "root"):
            if self.stack:
                self.stack.pop()
        elif name in ("indexes", "u64values") and self._dist is not None:
            self._dist["indexes" if name == "indexes" else "values"] += "".join(self._text)
            self._text_target = None
        elif name in ("distances2", "distances") and self._dist is not None:
            if self._dist["v"] == 1 and self.stack:
                self._dist["owner"] = self.stack[-1]
            self.distances.append(self._dist)
            self._dist = None

    def chars(self, data: str) -> None:
        if self._text_target is not None:
            self._text.append(data)


def _v1_type(attrs: dict[str, str]) -> str:
    t = attrs.get("type", "")
    if t == "Cache":  # v1: one Cache type, level in "depth"
        return f"L{attrs.get('depth', '0')}Cache"
    if t == "Socket":
        return "Package"
    return t


@dataclass(frozen=True)
class _Topology:
    """A parsed hwloc XML document: its root object and its distance matrices."""
    root: _Obj
    distances: list[dict]


def _parse(data: bytes, file: str) -> _Topology:
    b = _Builder(file)
    p = xml.parsers.expat.ParserCreate()

    def no_entities(*_args) -> None:
        raise InputError("XML entity declarations are not allowed (possible entity-expansion bomb)",
                         file=file, fix="export the topology with lstopo --of xml")

    def doctype(_name, _sysid, _pubid, has_internal_subset) -> None:
        if has_internal_subset:
            raise InputError("XML DTD internal subsets are not allowed", file=file,
                             fix="export the topology with lstopo --of xml")

    p.StartElementHandler = b.start
    p.EndElementHandler = b.end
    p.CharacterDataHandler = b.chars
    p.EntityDeclHandler = no_entities
    p.UnparsedEntityDeclHandler = no_entities
    p.StartDoctypeDeclHandler = doctype
    p.ExternalEntityRefHandler = lambda *a: 0  # never fetch anything
    try:
        p.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
    except AttributeError:  # pragma: no cover
        pass
    try:
        p.Parse(data, True)
    except xml.parsers.expat.ExpatError as e:
        raise InputError(f"not valid XML: {xml.parsers.expat.errors.messages.get(e.code, str(e))} "
                         f"at line {e.lineno} column {e.offset}", file=file) from None
    except (ValueError, KeyError) as e:
        raise InputError(f"bad hwloc attribute value: {e}", file=file) from None
    if b.root is None:
        raise InputError("no hwloc <object> found: not an hwloc topology", path="topology", file=file,
                         fix="export the topology with lstopo --of xml")
    return _Topology(b.root, b.distances)


def _walk(root: _Obj) -> Iterator[_Obj]:
    stack = [root]
    while stack:
        o = stack.pop()
        yield o
        stack.extend(reversed(o.children))


def _distances(b: _Topology, node_ids: list[int]) -> dict[int, tuple[int, ...]]:
    """NUMA node id → its distance row (ordered by ``node_ids``)."""
    best: dict | None = None
    for d in b.distances:
        a = d["attrs"]
        if d["v"] == 2:
            if a.get("type") != "NUMANode":
                continue
            if best is None or (a.get("name") == "NUMALatency" and best["attrs"].get("name") != "NUMALatency"):
                best = d
        elif best is None and d["v"] == 1:
            best = d
    if best is None:
        return {}
    if best["v"] == 2:
        n = int(best["attrs"].get("nbobjs", "0"))
        idx = [int(x) for x in best["indexes"].split()]
        vals = [int(x) for x in best["values"].split()]
        if best["attrs"].get("indexing", "os") != "os":
            # gp-indexed: map global persistent indexes to NUMA os indexes
            gp = {int(o.attrs.get("gp_index", "-1")): int(o.attrs.get("os_index", "-1"))
                  for o in _walk(b.root) if o.type == "NUMANode"}
            idx = [gp.get(i, i) for i in idx]
    else:
        n = int(best["attrs"].get("nbobjs", "0"))
        base = float(best["attrs"].get("latency_base", "1") or 1)
        vals = [round(v * base) for v in best["latency"]]
        owner = best.get("owner")
        nodes = [o for o in _walk(owner or b.root) if o.type == "NUMANode"]
        idx = [int(o.attrs.get("os_index", "0")) for o in nodes]
    if n == 0 or len(idx) != n or len(vals) != n * n:
        return {}
    pos = {nid: i for i, nid in enumerate(idx)}
    if any(nid not in pos for nid in node_ids):
        return {}
    return {a: tuple(vals[pos[a] * n + pos[c]] for c in node_ids) for a in node_ids}


def _index(o: "_Obj", default: int, limit: int, what: str, file: str) -> int:
    """An object's ``os_index``: a whole number up to ``limit`` (Linux's own limits are lower)."""
    raw = o.attrs.get("os_index", str(default))
    if not (isinstance(raw, str) and raw.isascii() and raw.isdigit()) or len(raw) > 12:
        raise InputError(f'os_index "{str(raw)[:40]}" of a {o.type} object is not a {what}',
                         path=f"object[type={o.type}].os_index", file=file)
    value = int(raw)
    if value > limit:
        raise InputError(f"{what} {value} is beyond the largest {what} kubetwin reads ({limit})",
                         path=f"object[type={o.type}].os_index", file=file)
    return value


def read_hwloc_xml(data: bytes, file: str = "<hwloc>") -> Machine:
    """A :class:`Machine` from hwloc XML; a malformed number, bitmap or reference is an error naming the file."""
    try:
        return _read_hwloc_xml(data, file)
    except InputError as exc:
        raise exc.in_file(file) from None
    except (ValueError, KeyError, IndexError, OverflowError) as e:  # a number or reference hwloc never writes
        raise InputError(f"not a valid hwloc topology: {e}", file=file) from None


def _read_hwloc_xml(data: bytes, file: str) -> Machine:
    if len(data) > MAX_XML_BYTES:
        raise InputError("XML file is too large", file=file)
    b = _parse(data, file)
    objs = list(_walk(b.root))
    numa_objs = [o for o in objs if o.type == "NUMANode"]
    pus = [o for o in objs if o.type == "PU"]
    if not pus:
        raise InputError("no PU (logical CPU) objects in the topology", path="topology", file=file)

    # NUMA nodes: id → (cpuset mask, memory, hugepages)
    numa: dict[int, dict] = {}
    for o in numa_objs:
        nid = _index(o, len(numa), MAX_NUMA_NODE_ID, "NUMA node id", file)
        if nid in numa:
            continue
        mem = int(o.attrs.get("local_memory", o.attrs.get("memory", "0")) or 0)
        hps = tuple(HugePages(page_size=size // 1024, num_pages=count) for size, count in o.page_types[1:])
        numa[nid] = {"mask": parse_bitmap(o.attrs.get("cpuset")), "memory": mem, "hugepages": hps}
    if not numa:
        numa[0] = {"mask": 0, "memory": 0, "hugepages": ()}
    sorted_numa = sorted(numa)

    def numa_of(cpu: int) -> int:
        for nid in sorted_numa:
            if (numa[nid]["mask"] >> cpu) & 1:
                return nid
        return sorted_numa[0]

    # caches: hwloc order per cache type gives the ids
    cache_ids: dict[int, int] = {}
    per_type: dict[str, int] = {}
    for o in objs:
        if o.type.endswith("Cache") and o.type.startswith("L"):
            cache_ids[id(o)] = per_type.get(o.type, 0)
            per_type[o.type] = per_type.get(o.type, 0) + 1

    # cores, in PU order, grouped per NUMA node
    cores: dict[int, dict] = {}  # key: id(core obj) or -cpu
    order: list[int] = []
    for pu in pus:
        cpu = _index(pu, 0, MAX_CPU_ID, "CPU id", file)
        core_obj = pu.ancestor("Core")
        key = id(core_obj) if core_obj is not None else -1 - cpu
        rec = cores.get(key)
        if rec is None:
            pkg = pu.ancestor("Package")
            rec = {"core_id": int(core_obj.attrs.get("os_index", "0")) if core_obj is not None else cpu,
                   "socket_id": int(pkg.attrs.get("os_index", "0")) if pkg is not None else 0,
                   "threads": [], "obj": core_obj or pu}
            cores[key] = rec
            order.append(key)
        rec["threads"].append(cpu)
    node_cores: dict[int, list[dict]] = {nid: [] for nid in numa}
    for key in order:
        rec = cores[key]
        node_cores[numa_of(min(rec["threads"]))].append(rec)

    nodes: list[NUMANode] = []
    dist = _distances(b, sorted_numa)
    for nid in sorted_numa:
        recs = node_cores[nid]
        node_cpu_mask = 0
        for r in recs:
            for t in r["threads"]:
                node_cpu_mask |= 1 << t
        node_caches: list[Cache] = []
        frozen = []
        for r in recs:
            core_mask = 0
            for t in r["threads"]:
                core_mask |= 1 << t
            private: list[Cache] = []
            uncore: list[Cache] = []
            a = r["obj"].parent
            while a is not None:
                m = re.match(r"^L(\d)([diu])?Cache$", a.type)
                if m:
                    lvl = int(m.group(1))
                    ctype = {"d": "Data", "i": "Instruction", "u": "Unified"}.get(
                        m.group(2) or "", _CACHE_TYPES.get(a.attrs.get("cache_type", "0"), "Unified"))
                    c = Cache(id=cache_ids[id(a)], size=int(a.attrs.get("cache_size", "0")), type=ctype, level=lvl)
                    amask = parse_bitmap(a.attrs.get("cpuset"))
                    if lvl > 2:
                        if amask & node_cpu_mask == node_cpu_mask and amask & ~node_cpu_mask == 0:
                            if c not in node_caches:
                                node_caches.append(c)
                        elif c not in uncore:
                            uncore.append(c)
                    elif amask == core_mask:
                        private.append(c)
                a = a.parent
            private.sort(key=lambda c: (c.level, c.type != "Data"))
            frozen.append(Core(core_id=r["core_id"], socket_id=r["socket_id"], threads=tuple(r["threads"]),
                               caches=tuple(private), uncore_caches=tuple(uncore)))
        nodes.append(NUMANode(id=nid, memory=numa[nid]["memory"], hugepages=numa[nid]["hugepages"],
                              cores=tuple(frozen), caches=tuple(node_caches), distances=dist.get(nid, ())))

    pci = _pci(objs)
    ncpus, ncores, nsockets = machine_counts(nodes)
    root = b.root
    name = root.infos.get("DMIProductName", "") or root.infos.get("HostName", "")
    return Machine(num_cores=ncpus, num_physical_cores=ncores, num_sockets=nsockets,
                   memory_capacity=sum(n.memory for n in nodes), nodes=tuple(nodes),
                   pci_devices=pci, name=name, extra_json=canonical_extra({}))


def _pci(objs: list[_Obj]) -> tuple[PCIDevice, ...]:
    out = []
    for o in objs:
        if o.type != "PCIDev":
            continue
        m = _PCI_TYPE.match(o.attrs.get("pci_type", ""))
        if not m:
            continue
        anc = o.parent
        while anc is not None and "nodeset" not in anc.attrs:
            anc = anc.parent
        nodes = CPUSet.from_mask(parse_bitmap(anc.attrs.get("nodeset"))).sorted() if anc is not None else []
        out.append(PCIDevice(address=o.attrs.get("pci_busid", ""), class_code=int(m.group(1), 16),
                             vendor_id=int(m.group(2), 16), device_id=int(m.group(3), 16),
                             numa_nodes=tuple(nodes), model=o.infos.get("PCIDevice", ""),
                             vendor=o.infos.get("PCIVendor", ""), pcie_root=_pcie_root(o)))
    return tuple(out)


def _pcie_root(obj: _Obj) -> str:
    """``pci<domain>:<root bus>`` from the host bridge above ``obj``, else from the topmost
    PCI object of its chain (which sits on the root bus)."""
    topmost = obj.attrs.get("pci_busid", "")
    a = obj.parent
    while a is not None and a.type in ("Bridge", "PCIDev"):
        if a.attrs.get("bridge_type", "").startswith("0-"):
            m = _HOST_BRIDGE_PCI.match(a.attrs.get("bridge_pci", ""))
            if m:
                return f"pci{m.group(1)}:{m.group(2)}".lower()
            break
        topmost = a.attrs.get("pci_busid", topmost)
        a = a.parent
    m = _BUSID.match(topmost)
    return f"pci{m.group(1)}:{m.group(2)}".lower() if m else ""


def load_hwloc_xml(path: str) -> Machine:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_XML_BYTES + 1)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", file=path) from None
    return read_hwloc_xml(data, file=path)
