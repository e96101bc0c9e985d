"""Reading a machine from Linux sysfs the way cAdvisor does (``utils/sysinfo``), from the live
``/sys``, from an unpacked tree, or straight from a ``.tar.bz2`` dump (hwloc's test dumps).

What cAdvisor reads, and so what the kubelet sees:

* NUMA nodes: the ``/sys/devices/system/node/nodeN`` directories (sparse ids stay sparse); a
  node's CPUs are its ``cpuM`` entries that are online (``cpu/online`` list; per-CPU
  ``online`` file on older kernels; no file at all = online). A node without CPUs is kept
  (GPU/HBM/CXL memory): it has memory and distances but no cores.
  Old kernels without the ``nodeN/cpuM`` links: the node's ``cpulist``/``cpumap`` (cAdvisor
  would find no CPU at all there).
* cores: CPUs of a node grouped by (``topology/core_id``, ``topology/physical_package_id``);
  a CPU without those files is skipped, as cAdvisor does; a package id of -1 ("unknown",
  POWER) becomes socket 0.
* caches (``cpuM/cache/indexK``): level ≥ 3 shared by every thread of the node → node cache,
  else → the core's uncore cache; level ≤ 2 shared by exactly the core's threads → core
  cache; everything else is ignored. ``id`` missing → the cache's lowest CPU (unique, where
  cAdvisor would report 0 and merge groups).
* memory: ``nodeN/meminfo`` ``MemTotal`` (kB → bytes), hugepages from ``nodeN/hugepages``,
  distances from ``nodeN/distance``; machine memory / swap from ``/proc/meminfo``.
* no node directories at all (non-NUMA kernels): one node per physical package, as cAdvisor.

Online CPUs whose NUMA node has no directory (a node hot-removed, e.g. hwloc's
``offline-cpu0-node0`` dump) are invisible to cAdvisor and stay invisible here: the
kubelet on that machine works with the CPUs of the nodes it can see.

Block devices (``/sys/block/*``: ``dev``, ``size``, ``queue/scheduler``) become cAdvisor's
``disk_map``; a ``sys/fs/resctrl`` in the dump (the RDT resctrl mount) becomes the machine's
``resctrl`` description (:mod:`kubetwin.runtime.resctrl`).

PCI devices come from ``/sys/bus/pci/devices/*`` (``class``, ``vendor``, ``device``,
``numa_node``, else ``local_cpulist``); cAdvisor does not read them, device plugins do. Their
PCIe root complex is read as ``k8s.io/dynamic-resource-allocation/deviceattribute`` reads it:
the ``/sys/bus/pci/devices/<address>`` symlink must point into ``/sys/devices/pci…/…/<address>``
and the first directory under ``/sys/devices`` is the root (``pci0000:00``); anything else
(a real directory, a link elsewhere) leaves it unknown, where a driver would get an error.
"""

from __future__ import annotations

import os
import posixpath
import re
from lzma import LZMAError
from pathlib import Path
from typing import Protocol

from ..errors import InputError
from ..model.cpuset import CPUSet
from .model import Cache, Core, HugePages, Machine, NUMANode, PCIDevice, canonical_extra, machine_counts

_NODE_RE = re.compile(r"^node(\d+)$")
_CPU_RE = re.compile(r"^cpu(\d+)$")
_HP_RE = re.compile(r"^hugepages-(\d+)kB$")
_MEMTOTAL_RE = re.compile(r"MemTotal:\s*(\d+) kB")
_SWAPTOTAL_RE = re.compile(r"SwapTotal:\s*(\d+) kB")
MAX_TAR_MEMBERS = 2_000_000
MAX_TAR_BYTES = 256 * 1024 * 1024


class FileSystem(Protocol):
    """The one I/O seam of the reader: paths are relative to the dump's root (``sys/...``)."""

    def read(self, path: str) -> str | None: ...

    def listdir(self, path: str) -> list[str] | None: ...

    def readlink(self, path: str) -> str | None:
        """The target of the symlink at ``path`` as written (``None``: not a symlink)."""
        ...


class DirFS:
    """A directory tree: ``/`` for the live machine, or an unpacked dump."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def read(self, path: str) -> str | None:
        try:
            with open(self.root / path, "rb") as f:
                return f.read(1 << 20).decode("utf-8", "replace")
        except OSError:
            return None

    def listdir(self, path: str) -> list[str] | None:
        try:
            return os.listdir(self.root / path)
        except OSError:
            return None

    def readlink(self, path: str) -> str | None:
        try:
            return os.readlink(self.root / path)
        except OSError:
            return None


def _decompressed(file: str) -> bytes:
    """The raw tar bytes of a plain, bzip2, gzip or xz tarball, bounded in size."""
    with open(file, "rb") as f:
        raw = f.read(MAX_TAR_BYTES + 1)
    if raw[:3] == b"BZh":
        import bz2

        data = bz2.BZ2Decompressor().decompress(raw, MAX_TAR_BYTES + 1)
    elif raw[:2] == b"\x1f\x8b":
        import zlib

        data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, MAX_TAR_BYTES + 1)
    elif raw[:6] == b"\xfd7zXZ\x00":
        import lzma

        data = lzma.LZMADecompressor().decompress(raw, MAX_TAR_BYTES + 1)
    else:
        data = raw
    if len(data) > MAX_TAR_BYTES:
        raise InputError("tarball content is too large", file=file)
    return data


def _octal(field: bytes) -> int:
    text = field.rstrip(b"\0 ").lstrip(b" ")
    return int(text, 8) if text else 0


def _tar_members(data: bytes, file: str):
    """(name, kind, payload) for each member of an uncompressed tar (ustar, GNU long names,
    pax ``path``/``linkpath``). A hand-rolled reader: ``tarfile`` spends ~1 s on the 11,000
    headers of a sysfs dump, this takes a tenth of that."""
    pos, n = 0, 0
    long_name = long_link = None
    end = len(data)
    while pos + 512 <= end:
        hdr = data[pos:pos + 512]
        if hdr.count(0) == 512:
            break
        n += 1
        if n > MAX_TAR_MEMBERS:
            raise InputError("tarball has too many members", file=file)
        size = _octal(hdr[124:136])
        flag = hdr[156:157]
        body = data[pos + 512:pos + 512 + size]
        if len(body) < size:
            raise InputError("tarball is truncated", file=file)
        pos += 512 + (size + 511) // 512 * 512
        if flag == b"L":
            long_name = body.rstrip(b"\0").decode("utf-8", "replace")
            continue
        if flag == b"K":
            long_link = body.rstrip(b"\0").decode("utf-8", "replace")
            continue
        if flag in (b"x", b"g"):
            for rec in _pax_records(body):
                if rec[0] == "path" and flag == b"x":
                    long_name = rec[1]
                elif rec[0] == "linkpath" and flag == b"x":
                    long_link = rec[1]
            continue
        name = hdr[0:100].split(b"\0", 1)[0].decode("utf-8", "replace")
        if hdr[257:262] == b"ustar":
            prefix = hdr[345:500].split(b"\0", 1)[0].decode("utf-8", "replace")
            if prefix:
                name = f"{prefix}/{name}"
        link = hdr[157:257].split(b"\0", 1)[0].decode("utf-8", "replace")
        name, long_name = (long_name or name), None
        link, long_link = (long_link or link), None
        if flag == b"2":
            yield name, "sym", link.encode()
        elif flag == b"1":
            yield name, "hard", link.encode()
        elif flag == b"5":
            yield name, "dir", b""
        elif flag in (b"0", b"\0", b"7"):
            yield name, "file", body


def _pax_records(body: bytes):
    pos = 0
    while pos < len(body):
        sp = body.find(b" ", pos)
        if sp < 0:
            return
        length = int(body[pos:sp])
        rec = body[sp + 1:pos + length - 1].decode("utf-8", "replace")
        key, _, value = rec.partition("=")
        yield key, value
        pos += length


class TarFS:
    """A ``.tar``/``.tar.bz2``/``.tar.gz`` dump read in memory, symlinks resolved inside it."""

    def __init__(self, file: str):
        self.file = file
        self._files: dict[str, bytes] = {}
        self._links: dict[str, str] = {}
        self._dirs: dict[str, set[str]] = {}
        self._hard: set[str] = set()  # hard links live in _links too, but are not symlinks
        try:
            for name, kind, payload in _tar_members(_decompressed(file), file):
                name = posixpath.normpath(name.lstrip("/"))
                if name in (".", "") or name.startswith(".."):
                    continue
                self._add_dir(name)
                if kind == "sym":
                    self._links[name] = payload.decode("utf-8", "replace")
                elif kind == "hard":
                    self._hard.add(name)
                    self._links[name] = "/" + posixpath.normpath(payload.decode("utf-8", "replace").lstrip("/"))
                elif kind == "file":
                    self._files[name] = payload
                else:
                    self._dirs.setdefault(name, set())
        except (OSError, EOFError, ValueError, LZMAError) as e:
            raise InputError(f"cannot read tarball: {e}", file=file) from None
        self.prefix = self._find_prefix()

    def _add_dir(self, name: str) -> None:
        """Register ``name`` in its parent directory, creating ancestors not seen yet."""
        parent, _, base = name.rpartition("/")
        while True:
            kids = self._dirs.get(parent)
            if kids is not None:
                kids.add(base)
                return
            self._dirs[parent] = {base}
            if not parent:
                return
            parent, _, base = parent.rpartition("/")

    def _find_prefix(self) -> str:
        """The directory inside the tarball that holds ``sys/`` (dumps wrap it in a folder)."""
        for d in sorted(self._dirs, key=len):
            if d.endswith("sys/devices/system/cpu") or d == "sys/devices/system/cpu":
                return d[: -len("sys/devices/system/cpu")]
        for f in self._files:
            i = f.find("sys/devices/system/cpu/")
            if i >= 0:
                return f[:i]
        raise InputError("no sys/devices/system/cpu directory in the tarball", file=self.file,
                         fix="pass a dump of /sys (and /proc), e.g. one of hwloc's tests/hwloc/linux/*.tar.bz2")

    def _resolve(self, path: str) -> str:
        """Follow symlinks component by component (relative to the dump's root)."""
        parts = posixpath.normpath(self.prefix + path).split("/")
        cur = ""
        hops = 0
        i = 0
        while i < len(parts):
            nxt = parts[i] if not cur else f"{cur}/{parts[i]}"
            target = self._links.get(nxt)
            if target is not None:
                hops += 1
                if hops > 40:
                    return nxt
                if target.startswith("/"):
                    base = posixpath.normpath(self.prefix + target.lstrip("/"))
                else:
                    base = posixpath.normpath(posixpath.join(cur, target))
                rest = parts[i + 1:]
                parts = base.split("/") + rest
                cur, i = "", 0
                continue
            cur = nxt
            i += 1
        return cur

    def read(self, path: str) -> str | None:
        data = self._files.get(self._resolve(path))
        return None if data is None else data.decode("utf-8", "replace")

    def listdir(self, path: str) -> list[str] | None:
        d = self._dirs.get(self._resolve(path))
        return None if d is None else sorted(d)

    def readlink(self, path: str) -> str | None:
        parent, _, base = path.rstrip("/").rpartition("/")
        name = f"{self._resolve(parent)}/{base}" if parent else posixpath.normpath(self.prefix + base)
        return None if name in self._hard else self._links.get(name)


# --- helpers -------------------------------------------------------------------------------
def _ids(names: list[str] | None, rx: re.Pattern) -> list[int]:
    """The ids in directory names (``cpu12``, ``node1``), bounded: CPU ids by
    :data:`~kubetwin.model.cpuset.MAX_CPU_ID`, NUMA node ids by ``MAX_NUMA_NODE_ID``."""
    from ..model.cpuset import MAX_CPU_ID
    from .model import MAX_NUMA_NODE_ID

    limit, what = (MAX_NUMA_NODE_ID, "NUMA node id") if rx is _NODE_RE else (MAX_CPU_ID, "CPU id")
    out = []
    for n in names or ():
        m = rx.match(n)
        if m:
            digits = m.group(1)
            if len(digits) > 12 or int(digits) > limit:
                raise InputError(f"{what} {digits[:20]} is beyond the largest {what} kubetwin reads ({limit})",
                                 path=n)
            out.append(int(digits))
    return sorted(out)


def _int_file(fs: FileSystem, path: str) -> int | None:
    text = fs.read(path)
    if text is None:
        return None
    try:
        return int(text.strip().split()[0], 0)
    except (ValueError, IndexError):
        return None


def _cpulist(fs: FileSystem, path: str) -> CPUSet | None:
    text = fs.read(path)
    if text is None:
        return None
    try:
        return CPUSet.parse(text.strip())
    except InputError:
        return None


def _size(text: str) -> int:
    t = text.strip()
    mult = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(t[-1:].upper(), 1)
    digits = t[:-1] if mult != 1 else t
    try:
        return int(digits) * mult
    except ValueError:
        return 0


def _cpu_caches(fs: FileSystem, cpu: int) -> list[tuple[int, Cache, int]]:
    """(level, cache, number of CPUs sharing it) for each ``indexK`` of a CPU."""
    base = f"sys/devices/system/cpu/cpu{cpu}/cache"
    out = []
    for idx in sorted(n for n in fs.listdir(base) or () if n.startswith("index")):
        p = f"{base}/{idx}"
        level = _int_file(fs, f"{p}/level")
        if level is None:
            continue
        shared = _cpulist(fs, f"{p}/shared_cpu_list")
        if shared is None:  # older kernels only have the hex map
            text = fs.read(f"{p}/shared_cpu_map")
            shared = (_hexmask(text) if text else None) or CPUSet([cpu])
        cid = _int_file(fs, f"{p}/id")
        if cid is None:
            cid = shared.first()
        size = _size(fs.read(f"{p}/size") or "0")
        ctype = (fs.read(f"{p}/type") or "").strip()
        out.append((level, Cache(id=cid, size=size, type=ctype, level=level), shared.size()))
    return out


def _hexmask(text: str) -> CPUSet | None:
    """A sysfs cpumap (``0000000f,ffffffff``: 32-bit words, most significant first)."""
    mask = 0
    try:
        for word in text.strip().split(","):
            mask = (mask << 32) | int(word, 16)
    except ValueError:
        return None
    return CPUSet.from_mask(mask)


def _node_cpus(fs: FileSystem, node_dir: str) -> list[int]:
    """A node's CPUs: its ``cpuN`` links (what cAdvisor globs); old kernels without the links
    only have ``cpulist``/``cpumap`` — cAdvisor would see no CPUs there, we read those."""
    cpus = _ids(fs.listdir(node_dir), _CPU_RE)
    if cpus:
        return cpus
    listed = _cpulist(fs, f"{node_dir}/cpulist")
    if listed is None:
        text = fs.read(f"{node_dir}/cpumap")
        listed = _hexmask(text) if text else None
    return listed.sorted() if listed is not None else []


def _online(fs: FileSystem) -> CPUSet | None:
    return _cpulist(fs, "sys/devices/system/cpu/online")


def _is_online(fs: FileSystem, cpu: int, online: CPUSet | None) -> bool:
    if online is not None:
        return cpu in online
    flag = _int_file(fs, f"sys/devices/system/cpu/cpu{cpu}/online")
    return flag != 0


def _cores(fs: FileSystem, cpus: list[int], online: CPUSet | None) -> list[dict]:
    cores: list[dict] = []
    by_key: dict[tuple[int, int], dict] = {}
    for cpu in cpus:
        if not _is_online(fs, cpu, online):
            continue
        topo = f"sys/devices/system/cpu/cpu{cpu}/topology"
        core_id = _int_file(fs, f"{topo}/core_id")
        pkg = _int_file(fs, f"{topo}/physical_package_id")
        if core_id is None or pkg is None:
            continue
        if pkg < 0:  # some architectures report -1 for "unknown": one package
            pkg = 0
        key = (core_id, pkg)
        rec = by_key.get(key)
        if rec is None:
            rec = {"core_id": core_id, "socket_id": pkg, "threads": [], "caches": [], "uncore": []}
            by_key[key] = rec
            cores.append(rec)
        rec["threads"].append(cpu)
    return cores


def _add_caches(fs: FileSystem, cores: list[dict]) -> list[Cache]:
    node_caches: list[Cache] = []
    for rec in cores:
        per_core = len(rec["threads"])
        per_node = len(cores) * per_core
        for level, cache, sharing in _cpu_caches(fs, rec["threads"][0]):
            if level > 2:
                if sharing == per_node:
                    if cache not in node_caches:
                        node_caches.append(cache)
                elif cache not in rec["uncore"]:
                    rec["uncore"].append(cache)
            elif sharing == per_core:
                rec["caches"].append(cache)
    return node_caches


def _hugepage_size_key(name: str) -> int:
    """``hugepages-<size>kB`` directories sort by size; other names first."""
    m = _HP_RE.match(name)
    return int(m.group(1)) if m else 0


def _hugepages(fs: FileSystem, path: str) -> tuple[HugePages, ...]:
    out = []
    for name in sorted(fs.listdir(path) or (), key=_hugepage_size_key):
        m = _HP_RE.match(name)
        if not m:
            continue
        nr = _int_file(fs, f"{path}/{name}/nr_hugepages")
        out.append(HugePages(page_size=int(m.group(1)), num_pages=nr or 0))
    return tuple(out)


def _freeze_cores(cores: list[dict]) -> tuple[Core, ...]:
    return tuple(Core(core_id=r["core_id"], socket_id=r["socket_id"], threads=tuple(r["threads"]),
                      caches=tuple(r["caches"]), uncore_caches=tuple(r["uncore"])) for r in cores)


def _pci_devices(fs: FileSystem, nodes: list[NUMANode]) -> tuple[PCIDevice, ...]:
    """PCI functions; ``numa_node`` -1 (old kernels, single-node BIOS tables) falls back to
    the nodes whose CPUs lie inside the device's ``local_cpulist``, unless that is every CPU."""
    base = "sys/bus/pci/devices"
    all_cpus = CPUSet().union(*(n.cpus for n in nodes))
    out = []
    for addr in sorted(fs.listdir(base) or ()):
        p = f"{base}/{addr}"
        cls = _int_file(fs, f"{p}/class")
        if cls is None:
            continue
        numa = _int_file(fs, f"{p}/numa_node")
        local: tuple[int, ...] = (numa,) if numa is not None and numa >= 0 else ()
        if not local:
            near = _cpulist(fs, f"{p}/local_cpulist")
            if near and near != all_cpus:
                local = tuple(n.id for n in nodes if n.cores and n.cpus.is_subset_of(near))
        out.append(PCIDevice(address=addr, class_code=(cls >> 8) & 0xFFFF,
                             vendor_id=_int_file(fs, f"{p}/vendor") or 0,
                             device_id=_int_file(fs, f"{p}/device") or 0, numa_nodes=local,
                             pcie_root=pcie_root(fs, addr)))
    return tuple(out)


_BDF_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$")


def pcie_root(fs: FileSystem, address: str) -> str:
    """The root complex (``pci0000:00``) of the PCI function ``address``, or ``""``.

    Only a lowercase extended BDF is looked up and only a symlink that lands in
    ``sys/devices/pci*`` and ends in the address counts, as the DRA helper library requires.
    """
    if not _BDF_RE.match(address):
        return ""
    link = f"sys/bus/pci/devices/{address}"
    target = fs.readlink(link)
    if not target:
        return ""
    if target.startswith("/"):
        full = posixpath.normpath(target.lstrip("/"))
    else:
        full = posixpath.normpath(posixpath.join(posixpath.dirname(link), target))
    if not full.startswith("sys/devices/pci") or posixpath.basename(full) != address:
        return ""
    return full.split("/")[2]


_SCHED_RE = re.compile(r".*\[(.*)\].*")
#: resctrl ``info`` directories and files goresctrl reads (``pkg/rdt/info.go``).
_RESCTRL_INFO = {"L2": ("cbm_mask", "min_cbm_bits", "num_closids", "shareable_bits"),
                 "L3": ("cbm_mask", "min_cbm_bits", "num_closids", "shareable_bits"),
                 "MB": ("bandwidth_gran", "delay_linear", "min_bandwidth", "num_closids")}


def _disk_map(fs: FileSystem) -> dict[str, dict]:
    """cAdvisor's ``GetBlockDeviceInfo``: ``/sys/block/*`` but loop, ram and sr devices, keyed by
    ``MAJ:MIN``; size from 512-byte sectors; the scheduler in brackets, else ``none``."""
    out: dict[str, dict] = {}
    for name in sorted(fs.listdir("sys/block") or ()):
        if name.startswith(("loop", "ram", "sr")):
            continue
        dev = (fs.read(f"sys/block/{name}/dev") or "").strip()
        m = re.fullmatch(r"(\d+):(\d+)", dev)
        if not m:
            continue
        size = (fs.read(f"sys/block/{name}/size") or "0").strip()
        sched = "none"
        text = fs.read(f"sys/block/{name}/queue/scheduler")
        if text:
            sm = _SCHED_RE.match(text.strip())
            if sm:
                sched = sm.group(1)
        out[dev] = {"name": name, "major": int(m.group(1)), "minor": int(m.group(2)),
                    "size": int(size) * 512 if size.isdigit() else 0, "scheduler": sched}
    return out


def _resctrl(fs: FileSystem) -> dict | None:
    """The resctrl filesystem when the dump has it (``sys/fs/resctrl``): the files goresctrl reads."""
    names = fs.listdir("sys/fs/resctrl/info")
    if not names:
        return None
    info: dict[str, dict[str, str]] = {}
    for entry in sorted(names):
        files = _RESCTRL_INFO.get(entry.removesuffix("CODE").removesuffix("DATA"))
        if files is None:
            continue
        got = {f: text.strip() for f in files if (text := fs.read(f"sys/fs/resctrl/info/{entry}/{f}")) is not None}
        info[entry] = got
    out: dict = {"info": info}
    schemata = fs.read("sys/fs/resctrl/schemata")
    if schemata is not None:
        out["schemata"] = "\n".join(ln.strip() for ln in schemata.splitlines() if ln.strip())
    return out


def read_sysfs(fs: FileSystem, *, name: str = "", file: str | None = None) -> Machine:
    """A :class:`Machine` as cAdvisor would describe the system in ``fs``."""
    cpu_dir = fs.listdir("sys/devices/system/cpu")
    if cpu_dir is None:
        raise InputError("no sys/devices/system/cpu directory", file=file,
                         fix="point at the root of a sysfs dump (the folder holding sys/ and proc/)")
    online = _online(fs)
    node_ids = _ids(fs.listdir("sys/devices/system/node"), _NODE_RE)
    nodes: list[NUMANode] = []
    if node_ids:
        for nid in node_ids:
            nd = f"sys/devices/system/node/node{nid}"
            cores = _cores(fs, _node_cpus(fs, nd), online)
            node_caches = _add_caches(fs, cores) if cores else []
            mem = 0
            meminfo = fs.read(f"{nd}/meminfo")
            if meminfo:
                m = _MEMTOTAL_RE.search(meminfo)
                if m:
                    mem = int(m.group(1)) * 1024
            dist_text = fs.read(f"{nd}/distance")
            dist: tuple[int, ...] = ()
            if dist_text:
                try:
                    dist = tuple(int(x) for x in dist_text.split())
                except ValueError:
                    raise InputError(f"cannot parse distances {dist_text.strip()!r}", file=file,
                                     path=f"{nd}/distance") from None
            nodes.append(NUMANode(id=nid, memory=mem, hugepages=_hugepages(fs, f"{nd}/hugepages"),
                                  cores=_freeze_cores(cores), caches=tuple(node_caches), distances=dist))
    else:
        all_cpus = _ids(cpu_dir, _CPU_RE)
        by_pkg: dict[int, list[int]] = {}
        for cpu in all_cpus:
            pkg = _int_file(fs, f"sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id")
            if pkg is not None:
                by_pkg.setdefault(max(pkg, 0), []).append(cpu)
        for pkg, cpus in sorted(by_pkg.items()):
            cores = _cores(fs, cpus, online)
            node_caches = _add_caches(fs, cores) if cores else []
            nodes.append(NUMANode(id=pkg, memory=0, cores=_freeze_cores(cores), caches=tuple(node_caches)))
    if not any(n.cores for n in nodes):
        raise InputError("no online CPU with topology information found under sys/devices/system/cpu",
                         file=file, fix="the dump needs cpuN/topology/{core_id,physical_package_id}")
    meminfo = fs.read("proc/meminfo") or ""
    m = _MEMTOTAL_RE.search(meminfo)
    memory = int(m.group(1)) * 1024 if m else sum(n.memory for n in nodes)
    s = _SWAPTOTAL_RE.search(meminfo)
    swap = int(s.group(1)) * 1024 if s else 0
    if not node_ids and nodes and m:
        # non-NUMA kernel: cAdvisor reports no per-node memory; keep the total on node 0
        nodes[0] = NUMANode(id=nodes[0].id, memory=memory, cores=nodes[0].cores, caches=nodes[0].caches)
    ncpus, ncores, nsockets = machine_counts(nodes)
    product = (fs.read("sys/class/dmi/id/product_name") or "").strip()
    machine_id = (fs.read("etc/machine-id") or "").strip()
    boot_id = (fs.read("proc/sys/kernel/random/boot_id") or "").strip()
    return Machine(
        num_cores=ncpus, num_physical_cores=ncores, num_sockets=nsockets,
        memory_capacity=memory, swap_capacity=swap, nodes=tuple(nodes),
        hugepages=_hugepages(fs, "sys/kernel/mm/hugepages"), pci_devices=_pci_devices(fs, nodes),
        machine_id=machine_id, boot_id=boot_id, name=name or product, extra_json=canonical_extra(_extra(fs)),
    )


def _extra(fs: FileSystem) -> dict:
    """MachineInfo keys beyond the topology: ``disk_map`` (cAdvisor) and ``resctrl`` (kubetwin's, for RDT)."""
    extra: dict = {}
    disks = _disk_map(fs)
    if disks:
        extra["disk_map"] = disks
    resctrl = _resctrl(fs)
    if resctrl is not None:
        extra["resctrl"] = resctrl
    return extra


def load_sysfs(source: str) -> Machine:
    """Live ``/`` (``source`` = ``/`` or ``/sys``), an unpacked tree, or a tarball."""
    p = Path(source)
    if p.is_file():
        fs: FileSystem = TarFS(source)
        return read_sysfs(fs, name=p.name.split(".tar")[0], file=source)
    root = p
    if p.name == "sys" and (p / "devices").is_dir():
        root = p.parent
    return read_sysfs(DirFS(root), name="" if str(root) == "/" else p.name, file=source)
