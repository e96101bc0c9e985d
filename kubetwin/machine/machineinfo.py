"""cAdvisor ``MachineInfo`` JSON (``info/v1/machine.go``) in and out.

The kubelet builds its CPU, memory and topology managers from this document, so the
reader keeps every field the kubelet reads exactly as written (``num_cores`` is not
recounted, NUMA node order is kept, ``uncore_caches`` and ``distances`` as given) and
carries the fields it does not interpret through unchanged. The writer emits every field
of cAdvisor's struct, in its declaration order, with Go's zero values (``null`` for empty
slices) where the model has nothing — and the reader drops exactly those zero values
again, so write → read is the identity on the model.

The reader is strict: the fields are cAdvisor's (``info/v1`` → ``lib/model/machine.go``,
v0.52-v0.60); an unknown one is refused with the nearest name. A document no cAdvisor could
write is refused with the field path: a CPU listed in two cores (the kubelet's ``CPUDetails``
would silently keep the last), two NUMA nodes with one id, ``num_cores`` other than the CPUs
listed (the kubelet takes it as the node's CPU capacity), ``num_sockets`` other than the
sockets listed, ids past Linux's limits (CPU ids past :data:`~kubetwin.model.cpuset.MAX_CPU_ID`,
NUMA node ids past 1023: ``MAX_NUMNODES``), a distance row of the wrong length.
``num_physical_cores`` is not checked: cAdvisor counts distinct ``core id`` values of
``/proc/cpuinfo``, which repeat across sockets, and the kubelet does not read it.
"""

from __future__ import annotations

import json
from typing import Any

from .. import limits
from ..errors import InputError, join_path
from ..model.strict import BOOLEAN, INTEGER, OPEN_OBJECT, STRING, check, list_of, map_of, obj
from .model import MAX_NUMA_NODE_ID, Cache, Core, HugePages, Machine, NUMANode, canonical_extra

_MAX_U64 = 2**64 - 1

_CACHE = obj(id=INTEGER, size=INTEGER, type=STRING, level=INTEGER)
_HUGEPAGES = obj(page_size=INTEGER, num_pages=INTEGER)
#: cAdvisor's ``MachineInfo`` and the types it holds (``lib/model/machine.go``).
MACHINEINFO_SPEC = obj({
    "timestamp": STRING, "vendor_id": STRING, "num_cores": INTEGER, "num_physical_cores": INTEGER,
    "num_sockets": INTEGER, "num_books": INTEGER, "num_drawers": INTEGER, "cpu_frequency_khz": INTEGER,
    "memory_capacity": INTEGER, "swap_capacity": INTEGER,
    "memory_by_type": map_of(obj(capacity=INTEGER, dimm_count=INTEGER)),
    "nvm": obj({"memory_mode_capacity": INTEGER, "app direct_mode_capacity": INTEGER, "avg_power_budget": INTEGER}),
    "hugepages": list_of(_HUGEPAGES), "machine_id": STRING, "system_uuid": STRING, "boot_id": STRING,
    "filesystems": list_of(obj(device=STRING, capacity=INTEGER, type=STRING, inodes=INTEGER, has_inodes=BOOLEAN)),
    "disk_map": map_of(obj(name=STRING, major=INTEGER, minor=INTEGER, size=INTEGER, scheduler=STRING)),
    "network_devices": list_of(obj(name=STRING, mac_address=STRING, speed=INTEGER, mtu=INTEGER)),
    "topology": list_of(obj(node_id=INTEGER, memory=INTEGER, hugepages=list_of(_HUGEPAGES),
                            cores=list_of(obj(core_id=INTEGER, thread_ids=list_of(INTEGER), caches=list_of(_CACHE),
                                              uncore_caches=list_of(_CACHE), socket_id=INTEGER,
                                              book_id=STRING, drawer_id=STRING)),
                            caches=list_of(_CACHE), distances=list_of(INTEGER))),
    "cloud_provider": STRING, "instance_type": STRING, "instance_id": STRING,
    # kubetwin's own key: the machine's resctrl filesystem (RDT), checked strictly by its reader
    # (kubetwin/runtime/resctrl.py), which cAdvisor does not report
    "resctrl": OPEN_OBJECT,
})

# MachineInfo fields other than the modelled ones, in cAdvisor's declaration order, with
# the value Go serialises for a zero struct.
_ZERO_EXTRAS: dict[str, Any] = {
    "timestamp": "0001-01-01T00:00:00Z",
    "vendor_id": "",
    "memory_by_type": None,
    "nvm": {"memory_mode_capacity": 0, "app direct_mode_capacity": 0, "avg_power_budget": 0},
    "filesystems": None,
    "disk_map": None,
    "network_devices": None,
    "cloud_provider": "",
    "instance_type": "",
    "instance_id": "",
}
_ORDER = ("timestamp", "vendor_id", "num_cores", "num_physical_cores", "num_sockets", "cpu_frequency_khz",
          "memory_capacity", "swap_capacity", "memory_by_type", "nvm", "hugepages", "machine_id",
          "system_uuid", "boot_id", "filesystems", "disk_map", "network_devices", "topology",
          "cloud_provider", "instance_type", "instance_id")
_MODELLED = {"num_cores", "num_physical_cores", "num_sockets", "cpu_frequency_khz", "memory_capacity",
             "swap_capacity", "hugepages", "machine_id", "system_uuid", "boot_id", "topology"}


# --- reading ---------------------------------------------------------------------------
def _int(obj: dict, key: str, path: str, default: int | None = None) -> int:
    if key not in obj or obj[key] is None:
        if default is None:
            raise InputError("required field is missing", path=join_path(path, key))
        return default
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        else:
            raise InputError(f"must be an integer, not {json.dumps(v)[:40]}", path=join_path(path, key))
    if v < 0:
        raise InputError(f"must not be negative, got {v}", path=join_path(path, key))
    if v > _MAX_U64:
        raise InputError(f"{v} is out of range (at most {_MAX_U64})", path=join_path(path, key))
    return v


def _str(obj: dict, key: str, path: str) -> str:
    v = obj.get(key)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise InputError("must be a string", path=join_path(path, key))
    return v


def _list(obj: dict, key: str, path: str, required: bool = False) -> list:
    v = obj.get(key)
    if v is None:
        if required:
            raise InputError("required field is missing", path=join_path(path, key),
                             fix="a MachineInfo lists its NUMA nodes under \"topology\"")
        return []
    if not isinstance(v, list):
        raise InputError(f"must be a list, not {type(v).__name__}", path=join_path(path, key))
    return v


def _obj(v: Any, path: str) -> dict:
    if not isinstance(v, dict):
        raise InputError(f"must be an object, not {type(v).__name__}", path=path)
    return v


def _id(obj: dict, key: str, path: str, max_id: int) -> int:
    """A node, socket, core or cache id: the kubelet keeps sets of them as CPU sets, so they are
    bounded like CPU ids (``KUBETWIN_MAX_CPU_ID``, read once per machine as ``max_id``: a machine
    has hundreds of thousands of ids, and reading the environment for each took seconds)."""
    value = _int(obj, key, path, 0)
    if value > max_id:
        limits.MAX_CPU_ID.check(value, path=join_path(path, key), what=f"{key} {value}")
    return value


def _caches(obj: dict, key: str, path: str, max_id: int) -> tuple[Cache, ...]:
    out = []
    for i, c in enumerate(_list(obj, key, path)):
        p = f"{join_path(path, key)}[{i}]"
        c = _obj(c, p)
        out.append(Cache(id=_id(c, "id", p, max_id), size=_int(c, "size", p, 0), type=_str(c, "type", p),
                         level=_int(c, "level", p, 0)))
    return tuple(out)


def _hugepages(obj: dict, path: str) -> tuple[HugePages, ...]:
    out = []
    for i, h in enumerate(_list(obj, "hugepages", path)):
        p = f"{join_path(path, 'hugepages')}[{i}]"
        h = _obj(h, p)
        out.append(HugePages(page_size=_int(h, "page_size", p), num_pages=_int(h, "num_pages", p, 0)))
    return tuple(out)


def _core(c: Any, path: str, max_id: int) -> Core:
    c = _obj(c, path)
    threads = _list(c, "thread_ids", path)
    for j, t in enumerate(threads):
        if isinstance(t, bool) or not isinstance(t, int) or t < 0:
            raise InputError(f"must be a CPU id (an integer >= 0), not {json.dumps(t)[:40]}",
                             path=f"{path}.thread_ids[{j}]")
        if t > max_id:
            limits.MAX_CPU_ID.check(t, path=f"{path}.thread_ids[{j}]")
    if not threads:
        raise InputError("a core needs at least one thread", path=f"{path}.thread_ids")
    if len(set(threads)) != len(threads):
        raise InputError("cpus provided are not unique", path=f"{path}.thread_ids")
    return Core(core_id=_id(c, "core_id", path, max_id), socket_id=_id(c, "socket_id", path, max_id),
                threads=tuple(threads), caches=_caches(c, "caches", path, max_id),
                uncore_caches=_caches(c, "uncore_caches", path, max_id))


def _node(n: Any, path: str, max_id: int) -> NUMANode:
    n = _obj(n, path)
    cores = tuple(_core(c, f"{path}.cores[{j}]", max_id) for j, c in enumerate(_list(n, "cores", path)))
    dist = []
    for j, d in enumerate(_list(n, "distances", path)):
        if isinstance(d, bool) or not isinstance(d, int) or d < 0:
            raise InputError("must be a non-negative integer", path=f"{path}.distances[{j}]")
        dist.append(d)
    node_id = _int(n, "node_id", path, 0)
    if node_id > MAX_NUMA_NODE_ID:
        raise InputError(f"NUMA node id {node_id} is beyond Linux's largest ({MAX_NUMA_NODE_ID})",
                         path=f"{path}.node_id")
    return NUMANode(id=node_id, memory=_int(n, "memory", path, 0),
                    hugepages=_hugepages(n, path), cores=cores, caches=_caches(n, "caches", path, max_id),
                    distances=tuple(dist))


def _check_size(topology: list[Any]) -> None:
    """Count the CPUs before reading them: a machine past ``KUBETWIN_MAX_MACHINE_CPUS`` is refused
    before any per-CPU work (caches, cores, sets) is done."""
    cpus = 0
    for node in topology:
        for core in (node.get("cores") if isinstance(node, dict) else None) or ():
            threads = core.get("thread_ids") if isinstance(core, dict) else None
            cpus += len(threads) if isinstance(threads, list) else 0
    limits.MAX_MACHINE_CPUS.check(cpus, path="topology", what="the number of CPUs of the machine")


def machine_from_machineinfo(doc: Any, *, file: str | None = None, name: str = "") -> Machine:
    """A :class:`Machine` from a decoded MachineInfo object; errors name ``file`` and the field."""
    try:
        doc = _obj(doc, "")
        check(doc, MACHINEINFO_SPEC, type_what="cannot decode MachineInfo")
        topology = _list(doc, "topology", "", required=True)
        _check_size(topology)
        max_id = limits.MAX_CPU_ID.value()
        nodes = tuple(_node(n, f"topology[{i}]", max_id) for i, n in enumerate(topology))
        _check_topology(nodes)
        extra = {k: v for k, v in doc.items() if k not in _MODELLED and not (k in _ZERO_EXTRAS and v == _ZERO_EXTRAS[k])}
        _check_counts(doc, nodes)
        return Machine(
            num_cores=_int(doc, "num_cores", ""),
            num_physical_cores=_int(doc, "num_physical_cores", "", 0),
            num_sockets=_int(doc, "num_sockets", "", 0),
            memory_capacity=_int(doc, "memory_capacity", "", sum(n.memory for n in nodes)),
            swap_capacity=_int(doc, "swap_capacity", "", 0),
            hugepages=_hugepages(doc, ""),
            nodes=nodes,
            cpu_frequency_khz=_int(doc, "cpu_frequency_khz", "", 0),
            machine_id=_str(doc, "machine_id", ""),
            system_uuid=_str(doc, "system_uuid", ""),
            boot_id=_str(doc, "boot_id", ""),
            name=name or _str(doc, "machine_id", ""),
            extra_json=canonical_extra(extra),
        )
    except InputError as e:
        raise e.in_file(file) from None


def _check_topology(nodes: tuple[NUMANode, ...]) -> None:
    """Each NUMA node id once; each CPU in one core; every distance row one entry per node."""
    seen: dict[int, int] = {}
    for i, n in enumerate(nodes):
        if n.id in seen:
            raise InputError(f"NUMA node {n.id} is listed twice (first at topology[{seen[n.id]}])",
                             path=f"topology[{i}].node_id", fix="every topology[] entry needs its own node_id")
        seen[n.id] = i
    owner: dict[int, str] = {}
    for i, n in enumerate(nodes):
        for j, c in enumerate(n.cores):
            here = f"topology[{i}].cores[{j}]"
            for k, t in enumerate(c.threads):
                first = owner.setdefault(t, here)
                if first != here:
                    raise InputError(f"CPU {t} is listed in two cores ({first} and {here})",
                                     path=f"{here}.thread_ids[{k}]",
                                     fix="a logical CPU belongs to one core of one socket and one NUMA node")
        if n.distances and len(n.distances) != len(nodes):
            raise InputError(f"{len(n.distances)} distances for {len(nodes)} NUMA nodes", path=f"topology[{i}].distances",
                             fix="a distance row has one entry per NUMA node, in node order (or none at all)")


def _check_counts(doc: dict, nodes: tuple[NUMANode, ...]) -> None:
    """``num_cores`` and ``num_sockets`` as cAdvisor counts them from the topology it lists."""
    cpus = sum(len(c.threads) for n in nodes for c in n.cores)
    num_cores = doc.get("num_cores")
    if isinstance(num_cores, int) and num_cores != cpus:
        raise InputError(f"num_cores is {num_cores} but the topology lists {cpus} CPUs", path="num_cores",
                         fix="num_cores is the number of logical CPUs (the kubelet's cpu capacity)")
    sockets = len({c.socket_id for n in nodes for c in n.cores})
    num_sockets = doc.get("num_sockets")
    if isinstance(num_sockets, int) and num_sockets and cpus and num_sockets != sockets:
        raise InputError(f"num_sockets is {num_sockets} but the topology's cores name {sockets} sockets",
                         path="num_sockets")


def read_machineinfo(text: str, file: str = "<machineinfo>") -> Machine:
    from ..model.loader import parse_documents

    if text.lstrip()[:1] != "{":
        raise InputError("not valid JSON: expected a MachineInfo object ({...})", file=file)
    # The loader's JSON rules: a key given twice, a trailing comma or nesting past the limit is refused.
    docs = parse_documents(text, file)
    if len(docs) != 1:
        raise InputError(f"expected one MachineInfo object, found {len(docs)} JSON documents", file=file)
    return machine_from_machineinfo(docs[0], file=file)


# --- writing ---------------------------------------------------------------------------
def _cache_list(caches: tuple[Cache, ...]) -> list | None:
    if not caches:
        return None
    return [{"id": c.id, "size": c.size, "type": c.type, "level": c.level} for c in caches]


def _hp_list(hps: tuple[HugePages, ...]) -> list | None:
    if not hps:
        return None
    return [{"page_size": h.page_size, "num_pages": h.num_pages} for h in hps]


def to_machineinfo(m: Machine) -> dict[str, Any]:
    """The MachineInfo object cAdvisor would serialise for this machine."""
    modelled: dict[str, Any] = {
        "num_cores": m.num_cores,
        "num_physical_cores": m.num_physical_cores,
        "num_sockets": m.num_sockets,
        "cpu_frequency_khz": m.cpu_frequency_khz,
        "memory_capacity": m.memory_capacity,
        "swap_capacity": m.swap_capacity,
        "hugepages": _hp_list(m.hugepages),
        "machine_id": m.machine_id,
        "system_uuid": m.system_uuid,
        "boot_id": m.boot_id,
        "topology": [
            {
                "node_id": n.id,
                "memory": n.memory,
                "hugepages": _hp_list(n.hugepages),
                "cores": [
                    {"core_id": c.core_id, "thread_ids": list(c.threads), "caches": _cache_list(c.caches),
                     "uncore_caches": _cache_list(c.uncore_caches), "socket_id": c.socket_id}
                    for c in n.cores
                ] or None,
                "caches": _cache_list(n.caches),
                "distances": list(n.distances) or None,
            }
            for n in m.nodes
        ],
    }
    extra = m.extra
    out: dict[str, Any] = {}
    for k in _ORDER:
        if k in modelled:
            out[k] = modelled[k]
        else:
            out[k] = extra.pop(k, _ZERO_EXTRAS[k])
    out.update(extra)  # unknown keys from a newer cAdvisor: keep them
    return out
