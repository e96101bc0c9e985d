"""The topology-aware policy's pools: a tree of the machine's virtual root, sockets, dies,
NUMA nodes and L3 cache groups.

Each pool holds its capacity (``noderes``: isolated, reserved and sharable CPUs) and what is
still free (``freeres``), and the memory nodes it may allocate from by type (DRAM, PMEM, HBM).
Pools are numbered depth-first, children before parents, so the root has the highest id and
"lower id wins" prefers the first NUMA node of the first socket. Hint scores rate how well a
pool matches a device's topology hint.

Upstream: containers/nri-plugins v0.14.0 ``cmd/plugins/topology-aware/policy/{node,hint}.go``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ....model.cpuset import CPUSet

if TYPE_CHECKING:
    from .resources import Supply

NIL, SOCKET, DIE, NUMA, L3CACHE, VIRTUAL = "", "socket", "die", "numa node", "L3 cache", "virtual node"
KIND_LEVEL = {VIRTUAL: "system", SOCKET: "package", DIE: "die", NUMA: "numa", L3CACHE: "l3cache"}
OVERFIT_PENALTY = 0.9

MEM_DRAM, MEM_PMEM, MEM_HBM = 1, 2, 4


class Node:
    """A pool; ``kind`` tells which entity of the hardware it stands for."""

    def __init__(self, policy, name: str, kind: str, parent: "Node | None", hw_id: int = -1,
                 cpus: CPUSet = CPUSet()):
        self.policy = policy
        self.name = name
        self.kind = kind
        self.hw_id = hw_id  # socket, die, NUMA node or L3 cache id
        self.cpus = cpus  # the L3 cache group's CPUs
        self.id = -1
        self.parent = parent
        self.children: list[Node] = []
        self.depth: int = 0 if parent is None else parent.depth + 1
        if parent is not None:
            parent.children.append(self)
        self.noderes: Supply | None = None
        self.freeres: Supply | None = None
        self.mem: set[int] = set()
        self.pmem: set[int] = set()
        self.hbm: set[int] = set()

    def __repr__(self) -> str:
        return f"<pool {self.name}>"

    # --- tree ----------------------------------------------------------------------------------
    def is_root(self) -> bool:
        return self.parent is None

    def is_leaf(self) -> bool:
        return not self.children

    def depth_first(self, fn: Callable[["Node"], bool]) -> bool:
        """Children first, then the node; stop when ``fn`` returns True."""
        for c in self.children:
            if c.depth_first(fn):
                return True
        return fn(self)

    def breadth_first(self, fn: Callable[["Node"], bool]) -> bool:
        """The node, then each child's subtree (upstream's pre-order walk)."""
        if fn(self):
            return True
        for c in self.children:
            if c.breadth_first(fn):
                return True
        return False

    def _parent(self) -> "Node":
        if self.parent is None:
            raise ValueError(f"pool {self.name} has no parent")
        return self.parent

    def ancestors(self) -> Iterator["Node"]:
        n = self.parent
        while n is not None:
            yield n
            n = n.parent

    def topology_level(self) -> str:
        return KIND_LEVEL.get(self.kind, "")

    # --- supplies ------------------------------------------------------------------------------
    def get_supply(self) -> "Supply":
        assert self.noderes is not None
        return self.noderes.clone()

    def free_supply(self) -> "Supply":
        assert self.freeres is not None
        return self.freeres

    def granted_reserved_cpu(self) -> int:
        total = self.free_supply().granted_reserved
        for c in self.children:
            total += c.granted_reserved_cpu()
        return total

    def granted_shared_cpu(self) -> int:
        total = self.free_supply().granted_shared
        for c in self.children:
            total += c.granted_shared_cpu()
        return total

    # --- memory --------------------------------------------------------------------------------
    def memset(self, mtype: int) -> set[int]:
        out: set[int] = set()
        if mtype & MEM_DRAM:
            out |= self.mem
        if mtype & MEM_HBM:
            out |= self.hbm
        if mtype & MEM_PMEM:
            out |= self.pmem
        return out

    def memory_type(self) -> int:
        t = 0
        if self.pmem:
            t |= MEM_PMEM
        if self.mem:
            t |= MEM_DRAM
        if self.hbm:
            t |= MEM_HBM
        return t

    def has_memory_type(self, req: int) -> bool:
        return self.memory_type() & req == req

    def physical_node_ids(self) -> list[int]:
        if self.kind == NUMA:
            return [self.hw_id]
        if self.kind == L3CACHE:
            ids = [i for c in self.children for i in c.physical_node_ids()]
            if not ids and self.parent is not None:
                return self.parent.physical_node_ids()
            return ids
        ids = [] if self.kind == VIRTUAL else [self.hw_id]
        for c in self.children:
            ids.extend(c.physical_node_ids())
        return ids

    # --- hints ---------------------------------------------------------------------------------
    def hint_score(self, hint: dict[str, str]) -> float:
        sys = self.policy.sys
        cpus, numas, sockets = hint.get("cpus", ""), hint.get("numas", ""), hint.get("sockets", "")
        if self.kind == VIRTUAL:
            if cpus:
                return _cpu_hint_score(cpus, sys.cpu_set)
            if numas:
                return OVERFIT_PENALTY * OVERFIT_PENALTY
            if sockets:
                return OVERFIT_PENALTY
            return 0.0
        if self.kind == SOCKET:
            pkg = sys.package(self.hw_id)
            if cpus:
                return _cpu_hint_score(cpus, pkg.cpus)
            if numas:
                return OVERFIT_PENALTY * _numa_hint_score(numas, pkg.node_ids())
            if sockets:
                return _socket_hint_score(sockets, self.hw_id)
            return 0.0
        if self.kind == DIE:
            pkg = sys.package(self._parent().hw_id)
            if cpus:
                return _cpu_hint_score(cpus, pkg.cpus)
            if numas:
                return OVERFIT_PENALTY * _numa_hint_score(numas, pkg.die_node_ids(self.hw_id))
            if sockets:
                score = _socket_hint_score(sockets, pkg.id)
                return score / len(pkg.die_node_ids(self.hw_id)) if score > 0 else score
            return 0.0
        if self.kind == NUMA:
            node = sys.node(self.hw_id)
            if cpus:
                return _cpu_hint_score(cpus, node.cpus)
            if numas:
                return _numa_hint_score(numas, [self.hw_id])
            if sockets:
                score = _socket_hint_score(sockets, node.package)
                return score / len(sys.package(node.package).node_ids()) if score > 0 else score
            return 0.0
        if self.kind == L3CACHE:
            if cpus:
                return _cpu_hint_score(cpus, self.cpus)
            if numas:
                ids = self.physical_node_ids()
                return OVERFIT_PENALTY * _numa_hint_score(numas, ids) if ids else 0.0
            if sockets:
                return OVERFIT_PENALTY * self.parent.hint_score(hint) if self.parent is not None else 0.0
        return 0.0


def _cpu_hint_score(hint_cpus: str, cpus: CPUSet) -> float:
    try:
        h = CPUSet.parse(hint_cpus)
    except Exception:  # noqa: BLE001 - upstream scores an unparseable hint 0
        return 0.0
    return (h & cpus).size() / h.size() if h.size() else 0.0


def _ids(text: str) -> list[int] | None:
    out = []
    for part in text.split(","):
        try:
            out.append(int(part, 0))
        except ValueError:
            return None
    return out


def _numa_hint_score(numas: str, ids: list[int]) -> float:
    parsed = _ids(numas)
    if parsed is None:
        return 0.0
    return 1.0 if any(h in ids for h in parsed) else 0.0


def _socket_hint_score(sockets: str, sock: int) -> float:
    parsed = _ids(sockets)
    if parsed is None:
        return 0.0
    return 1.0 if sock in parsed else 0.0
