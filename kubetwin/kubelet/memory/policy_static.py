"""Memory Manager ``Static`` policy (``memorymanager/policy_static.go``).

Guaranteed containers get their memory and hugepages reserved on the NUMA nodes of their
affinity, greedily in ascending node order. Nodes used together form a group: a node used
alone may not later join a multi-node group and vice versa. Errors are plain errors (reason
``UnexpectedAdmissionError``); Topology Manager rejections come from the merge.
"""

from __future__ import annotations

from typing import Callable

from ...errors import InputError
from ...machine.model import Machine
from ...model.kubelet_config import KubeletConfiguration
from ...model.pod import Container, Pod, is_sidecar
from ...model.resources import pod_requests
from ..admission_errors import AdmissionError
from ..podlevel import skipped_for_pod_level
from ..podlevel import get_pod_qos
from ..qos import GUARANTEED
from ..topology.bitmask import bits_of, iterate_bitmasks, mask_of
from ..topology.hint import TopologyHint
from .state import Block, MemoryState, MemoryTable, NUMANodeState

POLICY_NAME = "Static"


def _page_resource(kib: int) -> str:
    size = kib * 1024
    for unit, mul in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if size % mul == 0:
            return f"hugepages-{size // mul}{unit}"
    return f"hugepages-{size}"


def _is_memory(name: str) -> bool:
    return name == "memory" or name.startswith("hugepages-")


def _err(msg: str) -> AdmissionError:
    return AdmissionError(f"[memorymanager] {msg}")


def machine_states_equal(a: dict[int, NUMANodeState], b: dict[int, NUMANodeState]) -> bool:
    """``areMachineStatesEqual``: same nodes, assignments, groups, sizes; free/reserved equal per group."""
    if a.keys() != b.keys():
        return False
    for nid, na in a.items():
        nb = b[nid]
        if na.number_of_assignments != nb.number_of_assignments or sorted(na.cells) != sorted(nb.cells):
            return False
        if na.memory_map.keys() != nb.memory_map.keys():
            return False
        for r, ta in na.memory_map.items():
            tb = nb.memory_map[r]
            if (ta.total, ta.system_reserved, ta.allocatable) != (tb.total, tb.system_reserved, tb.allocatable):
                return False
            try:
                fa = sum(a[c].memory_map[r].free for c in na.cells)
                ra = sum(a[c].memory_map[r].reserved for c in na.cells)
                fb = sum(b[c].memory_map[r].free for c in na.cells)
                rb = sum(b[c].memory_map[r].reserved for c in na.cells)
            except KeyError:
                return False
            if fa != fb or ra != rb:
                return False
    return True


class StaticMemoryPolicy:
    def __init__(self, cfg: KubeletConfiguration, machine: Machine, affinity: Callable[[str, str], TopologyHint],
                 state: MemoryState | None = None):
        self.gates = cfg.feature_gate_values
        self.affinity = affinity
        self.machine = machine
        self.nodes = sorted(n.id for n in machine.nodes)
        reserved = self._validate_reserved(cfg)
        self.state = MemoryState(POLICY_NAME)
        for n in machine.nodes:
            ns = NUMANodeState(cells=[n.id])
            hp_bytes = 0
            for hp in n.hugepages:
                name = _page_resource(hp.page_size)
                total = hp.bytes
                hp_bytes += total
                r = reserved.get(n.id, {}).get(name, 0)
                ns.memory_map[name] = MemoryTable(total, r, total - r, 0, total - r)
            r = reserved.get(n.id, {}).get("memory", 0)
            alloc = n.memory - r - hp_bytes
            ns.memory_map["memory"] = MemoryTable(n.memory, r, alloc, 0, alloc)
            self.state.machine_state[n.id] = ns
        self._masks: list[tuple[int, list[int]]] | None = None
        from ..cpu.policy_static import Counters

        self.counters = Counters()
        #: pod UID -> (mask, type) -> bytes of init-container memory later containers may reuse
        self.reusable: dict[str, dict[tuple[int, str], int]] = {}
        if state is not None:
            if state.policy_name != POLICY_NAME:
                raise InputError(f'could not restore state from checkpoint: configured policy "{POLICY_NAME}" differs '
                                 f'from state checkpoint policy "{state.policy_name}"',
                                 path="memory_manager_state.policyName")
            for uid, conts in state.entries.items():
                for name, blocks in conts.items():
                    for b in blocks:
                        for n in b.numa_affinity:
                            if n not in self.state.machine_state:
                                raise InputError(f"[memorymanager] (pod: {uid}, container: {name}) the memory "
                                                 "assignment uses the NUMA that does not exist",
                                                 path=f"memory_manager_state.entries.{uid}.{name}")
                            if b.type not in self.state.machine_state[n].memory_map:
                                raise InputError(f"[memorymanager] (pod: {uid}, container: {name}) the memory "
                                                 "assignment uses memory resource that does not exist",
                                                 path=f"memory_manager_state.entries.{uid}.{name}")
                    self._record(uid, name, blocks, reserve=("" not in conts or name == ""))
            if state.machine_state and not machine_states_equal(state.machine_state, self.state.machine_state):
                raise InputError("[memorymanager] the expected machine state is different from the real one",
                                 path="memory_manager_state.machineState",
                                 fix="the checkpoint does not match this machine, reservedMemory and entries: "
                                     "drain the node and delete the memory_manager_state file")

    def _validate_reserved(self, cfg: KubeletConfiguration) -> dict[int, dict[str, int]]:
        out: dict[int, dict[str, int]] = {}
        for i, r in enumerate(cfg.reserved_memory):
            if r.numa_node not in self.nodes:
                raise InputError(f"the reserved memory has a NUMA node {r.numa_node} that does not exist",
                                 path=f"reservedMemory[{i}].numaNode")
            for name, q in r.limits.items():
                out.setdefault(r.numa_node, {})[name] = out.get(r.numa_node, {}).get(name, 0) + q.value()
        if not any(v.get("memory", 0) > 0 for v in out.values()):
            raise InputError("[memorymanager] you should specify the system reserved memory", path="reservedMemory")
        want = 0
        for res in (cfg.kube_reserved, cfg.system_reserved):
            q = res.get("memory")
            if q is not None:
                want += q.value()
        for t in cfg.hard_eviction_thresholds():
            if t.signal == "memory.available":
                from ...model.quantity import parse_quantity

                want += t.value.amount(parse_quantity(str(self.machine.memory_capacity))).value()
        got = sum(v.get("memory", 0) for v in out.values())
        if got != want:
            raise InputError(f'the total amount "{got}" of type "memory" is not equal to the value "{want}" determined '
                             f"by Node Allocatable feature", path="reservedMemory",
                             fix="reservedMemory must add up to kubeReserved + systemReserved + evictionHard memory.available")
        return out

    # --- bookkeeping ------------------------------------------------------------------------
    def _record(self, uid: str, name: str, blocks: list[Block], reserve: bool) -> None:
        self.state.entries.setdefault(uid, {})[name] = blocks
        ms = self.state.machine_state
        for b in blocks:
            if reserve:
                need = b.size
                for n in b.numa_affinity:
                    t = ms[n].memory_map.get(b.type)
                    if t is None or need == 0:
                        continue
                    take = min(t.free, need)
                    t.free -= take
                    t.reserved += take
                    need -= take
        # updateMachineState: every block counts once on each node of its affinity
        for b in blocks:
            for n in b.numa_affinity:
                ms[n].number_of_assignments += 1
                ms[n].cells = list(b.numa_affinity)

    def remove_pod(self, uid: str) -> None:
        conts = self.state.entries.pop(uid, None)
        self.reusable.pop(uid, None)
        if not conts:
            return
        # rebuild from the remaining entries: exact and simple
        entries = self.state.entries
        for ns in self.state.machine_state.values():
            ns.number_of_assignments = 0
            for t in ns.memory_map.values():
                t.reserved, t.free = 0, t.allocatable
        for n, ns in self.state.machine_state.items():
            ns.cells = [n]
        self.state.entries = {}
        for u, cs in entries.items():
            for name, blocks in cs.items():
                self._record(u, name, blocks, reserve=("" not in cs or name == ""))

    def numa_nodes_for(self, uid: str, name: str) -> list[int] | None:
        blocks = self.state.entries.get(uid, {}).get(name)
        if not blocks:
            return None
        return sorted({n for b in blocks for n in b.numa_affinity})

    def machine_state_json(self) -> dict:
        return {str(n): ns.to_json() for n, ns in sorted(self.state.machine_state.items())}

    # --- hints -----------------------------------------------------------------------------
    def _requests(self, c: Container) -> dict[str, int]:
        return {k: q.value() for k, q in c.resources.requests.items() if _is_memory(k) and q.value() > 0}

    def _calculate_hints(self, requests: dict[str, int], reusable: dict[tuple[int, str], int] | None = None
                         ) -> list[TopologyHint]:
        ms = self.state.machine_state
        min_size = len(self.nodes)
        found: list[int] = []
        if self._masks is None:
            self._masks = [(m, bits_of(m)) for m in iterate_bitmasks(self.nodes)]
        alloc = {r: {n: (ms[n].memory_map[r].allocatable if r in ms[n].memory_map else 0) for n in self.nodes}
                 for r in requests}
        for mask, bits in self._masks:
            if any(sum(alloc[r][n] for n in bits) < req for r, req in requests.items()):
                continue
            if len(bits) < min_size:
                min_size = len(bits)
            if len(bits) == 1:
                ns = ms[bits[0]]
                if ns.number_of_assignments > 0 and len(ns.cells) > 1:
                    continue
            else:
                bad = False
                for n in bits:
                    ns = ms[n]
                    if ns.number_of_assignments == 0:
                        continue
                    if len(ns.cells) == 1 or sorted(ns.cells) != bits:
                        bad = True
                        break
                if bad:
                    continue
            ok = True
            for r, req in requests.items():
                free = sum(ms[n].memory_map[r].free if r in ms[n].memory_map else 0 for n in bits)
                if reusable:
                    free += reusable.get((mask, r), 0)
                if free < req:
                    ok = False
                    break
            if ok:
                found.append(mask)
        return [TopologyHint(m, m.bit_count() == min_size) for m in found]

    def get_topology_hints(self, pod: Pod, c: Container):
        if get_pod_qos(pod, self.gates) != GUARANTEED or skipped_for_pod_level(pod, self.gates):
            return None
        requests = self._requests(c)
        if not requests:
            return None
        blocks = self.state.entries.get(pod.uid, {}).get(c.name)
        if blocks is not None:
            out = {}
            for r, req in requests.items():
                bs = [b for b in blocks if b.type == r]
                if not bs or sum(b.size for b in bs) != req:
                    return {k: [] for k in requests}
                out[r] = [TopologyHint(mask_of(bs[0].numa_affinity), True)]
            return out
        hints = self._calculate_hints(requests, self.reusable.get(pod.uid))
        return {r: list(hints) for r in requests}

    def get_pod_topology_hints(self, pod: Pod):
        if get_pod_qos(pod, self.gates) != GUARANTEED or skipped_for_pod_level(pod, self.gates):
            return None
        requests = {k: q.value() for k, q in pod_requests(pod).items() if _is_memory(k) and q.value() > 0}
        if not requests:
            return None
        hints = self._calculate_hints(requests)
        return {r: list(hints) for r in requests}

    # --- allocation ------------------------------------------------------------------------
    def _best(self, hints: list[TopologyHint]) -> TopologyHint | None:
        best = None
        for h in hints:
            if best is None or (not best.preferred and h.preferred) or (
                    best.preferred == h.preferred and (h.affinity.bit_count(), h.affinity)
                    < (best.affinity.bit_count(), best.affinity)):
                best = h
        return best

    def allocate(self, pod: Pod, c: Container) -> None:
        """``Allocate``, counted as upstream: every Guaranteed container is a pinning request."""
        if get_pod_qos(pod, self.gates) != GUARANTEED or skipped_for_pod_level(pod, self.gates):
            return
        m = self.counters
        m.pinning_requests += 1
        try:
            blocks = self._allocate_container(pod, c)
        except AdmissionError:
            m.pinning_errors += 1
            m.bump(m.allocation_errors, ("memory", "node"))
            raise
        if blocks is not None:
            m.bump(m.allocations, ("memory", "node"), len(blocks))
            m.bump(m.assignments, ("memory", "node_exclusive"))

    def _allocate_container(self, pod: Pod, c: Container) -> list[Block] | None:
        if c.name in self.state.entries.get(pod.uid, {}):
            return None
        requests = self._requests(c)
        if not requests:
            return []
        hint = self.affinity(pod.uid, c.name)
        reusable = self.reusable.setdefault(pod.uid, {})
        for uid in [u for u in self.reusable if u != pod.uid]:
            del self.reusable[uid]
        if hint.affinity is None:
            default = self._best(self._calculate_hints(requests, reusable))
            if default is None:
                raise _err("failed to get the default NUMA affinity, no NUMA nodes with enough memory is available")
            if hint.preferred and not default.preferred:
                raise _err("failed to find the default preferred hint")
            hint = default
        ms = self.state.machine_state
        bits = bits_of(hint.affinity)
        if any(sum(ms[n].memory_map[r].free if r in ms[n].memory_map else 0 for n in bits)
               + reusable.get((hint.affinity, r), 0) < req for r, req in requests.items()):
            ext = self._best([h for h in self._calculate_hints(requests, reusable)
                              if h.affinity & hint.affinity == hint.affinity])
            if ext is None:
                raise _err("failed to find NUMA nodes to extend the current topology hint")
            if hint.preferred and not ext.preferred:
                raise _err("failed to find the extended preferred hint")
            hint = ext
            bits = bits_of(hint.affinity)
        if self._violates_groups(bits):
            raise _err("preferred hint violates NUMA node allocation")
        init_regular = any(ic.name == c.name and not is_sidecar(ic) for ic in pod.spec.init_containers)
        blocks = []
        for r, req in requests.items():
            key = (hint.affinity, r)
            have = reusable.get(key, 0)
            used = min(have, req)
            need = req - used
            for n in bits:
                t = ms[n].memory_map.get(r)
                if t is None or need == 0:
                    continue
                take = min(t.free, need)
                t.free -= take
                t.reserved += take
                need -= take
            if init_regular:
                reusable[key] = max(have, req)
            else:
                reusable[key] = have - used
            blocks.append(Block(tuple(bits), r, req))
        self._record(pod.uid, c.name, blocks, reserve=False)
        return blocks

    def _violates_groups(self, bits: list[int]) -> bool:
        ms = self.state.machine_state
        for n in bits:
            ns = ms[n]
            if ns.number_of_assignments == 0:
                continue
            if len(bits) == 1 and len(ns.cells) > 1:
                return True
            if len(bits) > 1 and sorted(ns.cells) != bits:
                return True
        return False

    def allocate_pod(self, pod: Pod) -> None:
        """Pod-level pods: reserve the pod's budget once on its affinity; every container runs there."""
        from ...model.resources import is_pod_level_resources_set

        if not is_pod_level_resources_set(pod) or pod.spec.resources is None:
            for c, _ in pod.all_containers():
                self.allocate(pod, c)
            return
        if get_pod_qos(pod, self.gates) != GUARANTEED or pod.uid in self.state.entries:
            return
        requests = {k: q.value() for k, q in pod.spec.resources.requests.items() if _is_memory(k) and q.value() > 0}
        if not requests:
            return
        first = next(iter(pod.all_containers()))[0]
        hint = self.affinity(pod.uid, first.name)
        if hint.affinity is None:
            best = self._best(self._calculate_hints(requests))
            if best is None:
                raise _err("failed to get the default NUMA affinity, no NUMA nodes with enough memory is available")
            hint = best
        bits = bits_of(hint.affinity)
        ms = self.state.machine_state
        for r, req in requests.items():
            if sum(ms[n].memory_map[r].free if r in ms[n].memory_map else 0 for n in bits) < req:
                raise _err(f"not enough {r} on NUMA nodes {bits} for the pod budget")
        budget = [Block(tuple(bits), r, req) for r, req in requests.items()]
        self._record(pod.uid, "", budget, reserve=True)
        conts = self.state.entries[pod.uid]
        for c, _ in pod.all_containers():
            own = self._requests(c)
            conts[c.name] = [Block(tuple(bits), r, v) for r, v in own.items()] or [Block(tuple(bits), "memory", 0)]

    def numa_nodes_for_pod_budget(self, uid: str) -> list[int] | None:
        blocks = self.state.entries.get(uid, {}).get("")
        return sorted({n for b in blocks for n in b.numa_affinity}) if blocks else None
