"""Memory Manager ``Static`` policy (``memorymanager/policy_static.go``).

Guaranteed containers get their memory and hugepages reserved on the NUMA nodes of their
affinity, greedily in ascending node order. Nodes used together form a group: a node used
alone may not later join a multi-node group and vice versa. Errors are plain errors (reason
``UnexpectedAdmissionError``); Topology Manager rejections come from the merge.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from ...errors import InputError
from ...machine.model import Machine
from ...model.kubelet_config import KubeletConfiguration
from ...model.pod import Container, Pod, is_sidecar
from ..admission_errors import AdmissionError
from ..memo import SharedMemo
from ..podlevel import get_pod_qos, is_container_equivalent_guaranteed, skipped_for_pod_level
from ..qos import GUARANTEED
from ..topology.bitmask import bits_of, iterate_bitmasks, mask_of
from ..topology.hint import TopologyHint
from .podlevel_memory import allocate_pod_bubble, pod_level_managed, pod_requested_resources, validate_pod_scope_memory
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


def regenerate_hints(blocks: list[Block], requests: dict[str, int]) -> dict[str, list[TopologyHint]] | None:
    """``regenerateHints``: the blocks' own masks when they match the request exactly, else no preference."""
    if len(blocks) != len(requests):
        return None
    hints: dict[str, list[TopologyHint]] = {r: [] for r in requests}
    for b in blocks:
        if b.type not in requests or b.size != requests[b.type]:
            return None
        hints[b.type].append(TopologyHint(mask_of(b.numa_affinity), True))
    return hints


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
    name = POLICY_NAME

    def __init__(self, cfg: KubeletConfiguration, machine: Machine, affinity: Callable[[str, str], TopologyHint],
                 state: MemoryState | None = None):
        self.gates = cfg.feature_gate_values
        self.affinity = affinity
        self.machine = machine
        self.nodes = tuple(sorted(n.id for n in machine.nodes))
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
        self._masks: tuple[tuple[int, tuple[int, ...]], ...] | None = None
        #: answers shared by every kubelet copied from this one (see ``kubelet.memo``)
        self.memo = SharedMemo()
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
                        for nid in b.numa_affinity:
                            if nid not in self.state.machine_state:
                                raise InputError(f"[memorymanager] (pod: {uid}, container: {name}) the memory "
                                                 "assignment uses the NUMA that does not exist",
                                                 path=f"memory_manager_state.entries.{uid}.{name}")
                            if b.type not in self.state.machine_state[nid].memory_map:
                                raise InputError(f"[memorymanager] (pod: {uid}, container: {name}) the memory "
                                                 "assignment uses memory resource that does not exist",
                                                 path=f"memory_manager_state.entries.{uid}.{name}")
                    self._record(uid, name, blocks, reserve=self._counts(conts, name),
                                 where=f"memory_manager_state.{'podEntries' if name == '' else 'entries'}.{uid}"
                                       + (f".{name}" if name else ""))
            if state.machine_state and not machine_states_equal(state.machine_state, self.state.machine_state):
                raise InputError("[memorymanager] the expected machine state is different from the real one",
                                 path="memory_manager_state.machineState",
                                 fix="the checkpoint does not match this machine, reservedMemory and entries: "
                                     "drain the node and delete the memory_manager_state file")

    def fork(self, affinity: Callable[[str, str], TopologyHint]) -> "StaticMemoryPolicy":
        """A copy with its own state and counters, asking ``affinity``; set-up and memo shared."""
        new = copy.copy(self)
        new.affinity = affinity
        new.state = self.state.clone()
        new.counters = self.counters.copy()
        new.reusable = {uid: dict(r) for uid, r in self.reusable.items()}
        return new

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
            reserved_q = res.get("memory")
            if reserved_q is not None:
                want += reserved_q.value()
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
    def _record(self, uid: str, name: str, blocks: list[Block], reserve: bool, where: str = "") -> None:
        """Store blocks; ``reserve``: they take memory and count as assignments (``updateMachineState``).

        A pod-level pod's container blocks are views into its bubble: only the bubble (name
        ``""``) reserves and counts, as ``AllocatePod`` and ``validateState`` do. Restoring a
        checkpoint (``where`` names the entry), blocks that do not fit the free memory of their
        NUMA nodes are refused: the kubelet's ``validateState`` would drop the excess without a
        word, and no kubelet writes such a checkpoint."""
        self.state.entries.setdefault(uid, {})[name] = blocks
        if not reserve:
            return
        ms = self.state.machine_state
        for i, b in enumerate(blocks):
            left = _reserve(ms, b.numa_affinity, b.type, b.size)
            if left and where:
                raise InputError(f"memory over-assigned: the block of {b.size} bytes of {b.type} on NUMA nodes "
                                 f"{list(b.numa_affinity)} exceeds their free {b.type} by {left} bytes",
                                 path=f"{where}[{i}].size",
                                 fix="the entries add up to more than the machine's allocatable memory (after "
                                     "reservedMemory): drain the node and delete the memory_manager_state file")
        # updateMachineState: every block counts once on each node of its affinity
        for b in blocks:
            cells = list(b.numa_affinity)  # one list per block (upstream shares the block's slice too)
            for n in b.numa_affinity:
                ms[n].number_of_assignments += 1
                ms[n].cells = cells

    def _counts(self, conts: dict[str, list[Block]], name: str) -> bool:
        """Whether these blocks take memory: the bubble of a pod-level pod (with the gate on, as
        ``validateState`` reads ``podEntries`` only then), else the container's own blocks."""
        if "" in conts and self.gates.enabled("PodLevelResourceManagers"):
            return name == ""
        return name != ""

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
                self._record(u, name, blocks, reserve=self._counts(cs, name))

    def numa_nodes_for(self, uid: str, name: str) -> list[int] | None:
        blocks = self.state.entries.get(uid, {}).get(name)
        if not blocks:
            return None
        return sorted({n for b in blocks for n in b.numa_affinity})

    def machine_state_json(self) -> dict:
        return {str(n): ns.to_json() for n, ns in sorted(self.state.machine_state.items())}

    # --- hints -----------------------------------------------------------------------------
    def _requests(self, pod: Pod, c: Container) -> dict[str, int]:
        if pod_level_managed(pod, self.gates) and not is_container_equivalent_guaranteed(c):
            return {}
        return {k: q.value() for k, q in c.resources.requests.items() if _is_memory(k) and q.value() > 0}

    def _calculate_hints(self, requests: dict[str, int], reusable: dict[tuple[int, str], int] | None = None
                         ) -> list[TopologyHint]:
        """``calculateHints``, remembered per (requests, reusable memory, free-memory state)."""
        ms = self.state.machine_state
        # everything the answer reads from the state: free memory, whether a node is used, its group
        state = tuple((tuple(t.free for t in ns.memory_map.values()), ns.number_of_assignments > 0, tuple(ns.cells))
                      for ns in ms.values())
        req_key = tuple(sorted(requests.items()))
        reuse_key = tuple(sorted(kv for kv in reusable.items() if kv[1])) if reusable else ()
        key = (req_key, reuse_key, state)
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo.put(key, tuple(self._calculate_hints_uncached(requests, reusable)))
        return list(hit)

    def _feasible_masks(self, requests: dict[str, int]) -> tuple[int, tuple[tuple[int, tuple[int, ...]], ...]]:
        """The masks whose allocatable memory could hold ``requests``, and the fewest nodes among
        them (the preferred width); allocatable never changes, so this depends on the request only."""
        key = ("feasible", tuple(sorted(requests.items())))
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        ms = self.state.machine_state
        if self._masks is None:
            self._masks = tuple((m, tuple(bits_of(m))) for m in iterate_bitmasks(self.nodes))
        alloc = {r: {n: (ms[n].memory_map[r].allocatable if r in ms[n].memory_map else 0) for n in self.nodes}
                 for r in requests}
        min_size = len(self.nodes)
        out = []
        for mask, bits in self._masks:
            if any(sum(alloc[r][n] for n in bits) < req for r, req in requests.items()):
                continue
            min_size = min(min_size, len(bits))
            out.append((mask, bits))
        return self.memo.put(key, (min_size, tuple(out)))

    def _calculate_hints_uncached(self, requests: dict[str, int],
                                  reusable: dict[tuple[int, str], int] | None = None) -> list[TopologyHint]:
        ms = self.state.machine_state
        min_size, masks = self._feasible_masks(requests)
        found: list[int] = []
        free = {r: {n: (ms[n].memory_map[r].free if r in ms[n].memory_map else 0) for n in self.nodes}
                for r in requests}
        for mask, bits in masks:
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
                    if len(ns.cells) == 1 or tuple(sorted(ns.cells)) != bits:
                        bad = True
                        break
                if bad:
                    continue
            ok = True
            for r, req in requests.items():
                have = sum(free[r][n] for n in bits)
                if reusable:
                    have += reusable.get((mask, r), 0)
                if have < req:
                    ok = False
                    break
            if ok:
                found.append(mask)
        return [TopologyHint(m, m.bit_count() == min_size) for m in found]

    def get_topology_hints(self, pod: Pod, c: Container):
        if get_pod_qos(pod, self.gates) != GUARANTEED or skipped_for_pod_level(pod, self.gates):
            return None
        requests = self._requests(pod, c)
        if not requests:
            return None
        blocks = self.state.entries.get(pod.uid, {}).get(c.name)
        if blocks is not None:
            return regenerate_hints(blocks, requests)
        hints = self._calculate_hints(requests, self.reusable.get(pod.uid))
        return {r: list(hints) for r in requests}

    def get_pod_topology_hints(self, pod: Pod):
        """``GetPodTopologyHints``: an invalid pod-level pod gets empty hints (a preference that
        cannot be met), a pod with blocks already gets them back, others the calculated masks."""
        if get_pod_qos(pod, self.gates) != GUARANTEED:
            return None
        requests = pod_requested_resources(pod, self.gates)
        if skipped_for_pod_level(pod, self.gates):
            return None
        if pod_level_managed(pod, self.gates):
            try:
                validate_pod_scope_memory(pod, self.gates)
            except AdmissionError:
                return {r: [] for r in requests}
        if not requests:
            return None
        conts = self.state.entries.get(pod.uid, {})
        for c, _ in pod.all_containers():
            blocks = conts.get(c.name)
            if blocks is not None:
                return regenerate_hints(blocks, requests)
        hints = self._calculate_hints(requests)
        return {r: list(hints) for r in requests}

    # --- allocation ------------------------------------------------------------------------
    def _best(self, hints: list[TopologyHint]) -> TopologyHint | None:
        best: TopologyHint | None = None
        best_key = (0, 0)   # (NUMA node count, mask) of best
        for h in hints:
            assert h.affinity is not None  # memory hints name nodes
            key = (h.affinity.bit_count(), h.affinity)
            if best is None or (not best.preferred and h.preferred) or (
                    best.preferred == h.preferred and key < best_key):
                best, best_key = h, key
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

    def final_hint(self, hint: "TopologyHint", requests: dict[str, int],
                   reusable: dict[tuple[int, str], int] | None = None) -> "TopologyHint":
        """The NUMA nodes a memory allocation will use: the Topology Manager's hint, or the policy's
        default hint when it has none, extended until its nodes have the memory free
        (``getDefaultHint`` / ``extendTopologyManagerHint`` in ``Allocate`` and ``AllocatePod``)."""
        reusable = reusable or {}
        if hint.affinity is None:
            default = self._best(self._calculate_hints(requests, reusable))
            if default is None:
                raise _err("failed to get the default NUMA affinity, no NUMA nodes with enough memory is available")
            if hint.preferred and not default.preferred:
                raise _err("failed to find the default preferred hint")
            hint = default
        assert hint.affinity is not None
        affinity = hint.affinity
        ms = self.state.machine_state
        bits = bits_of(affinity)
        if any(sum(ms[n].memory_map[r].free if r in ms[n].memory_map else 0 for n in bits)
               + reusable.get((affinity, r), 0) < req for r, req in requests.items()):
            ext = self._best([h for h in self._calculate_hints(requests, reusable)
                              if h.affinity is not None and h.affinity & affinity == affinity])
            if ext is None:
                raise _err("failed to find NUMA nodes to extend the current topology hint")
            if hint.preferred and not ext.preferred:
                raise _err("failed to find the extended preferred hint")
            hint = ext
        assert hint.affinity is not None
        if self._violates_groups(bits_of(hint.affinity)):
            raise _err("preferred hint violates NUMA node allocation")
        return hint

    def _allocate_container(self, pod: Pod, c: Container) -> list[Block] | None:
        existing = self.state.entries.get(pod.uid, {}).get(c.name)
        if existing is not None:
            self._update_pod_reusable_memory(pod, c, existing)
            return None
        requests = self._requests(pod, c)
        if not requests:
            return None
        hint = self.affinity(pod.uid, c.name)
        for uid in [u for u in self.reusable if u != pod.uid]:
            del self.reusable[uid]
        reusable = self.reusable.get(pod.uid, {})
        hint = self.final_hint(hint, requests, reusable)
        assert hint.affinity is not None
        bits = bits_of(hint.affinity)
        ms = self.state.machine_state
        blocks = []
        for r, req in requests.items():
            have = reusable.get((hint.affinity, r), 0)
            _reserve(ms, bits, r, req - min(have, req))
            blocks.append(Block(tuple(bits), r, req))
        self._update_pod_reusable_memory(pod, c, blocks)
        self.state.entries.setdefault(pod.uid, {})[c.name] = blocks
        for b in blocks:  # updateMachineState: every block counts once on each node of its affinity
            for n in b.numa_affinity:
                ms[n].number_of_assignments += 1
                ms[n].cells = list(b.numa_affinity)
        self._update_init_containers_memory_blocks(pod, c, blocks)
        return blocks

    def _update_pod_reusable_memory(self, pod: Pod, c: Container, blocks: list[Block]) -> None:
        """``updatePodReusableMemory``: a regular init container's blocks become reusable by the
        containers after it (the largest per mask and type); a later container uses them up."""
        for uid in [u for u in self.reusable if u != pod.uid]:
            del self.reusable[uid]
        if any(ic.name == c.name and not is_sidecar(ic) for ic in pod.spec.init_containers):
            reusable = self.reusable.setdefault(pod.uid, {})
            for b in blocks:
                key = (mask_of(b.numa_affinity), b.type)
                if b.size > reusable.get(key, 0):
                    reusable[key] = b.size
            return
        kept = self.reusable.get(pod.uid)
        if not kept:
            return
        reusable = kept
        for b in blocks:
            key = (mask_of(b.numa_affinity), b.type)
            have = kept.get(key, 0)
            if have:
                kept[key] = 0 if b.size >= have else have - b.size

    def _update_init_containers_memory_blocks(self, pod: Pod, c: Container, blocks: list[Block]) -> None:
        """``updateInitContainersMemoryBlocks``: the memory a container took over from regular init
        containers before it is taken off their blocks, so that the blocks of a pod add up to what
        the machine state reserves for it — the invariant the kubelet checks when it restarts from
        its checkpoint (``validateState``). An init block may end at size 0."""
        conts = self.state.entries.get(pod.uid, {})
        for block in blocks:
            size = block.size
            for ic in pod.spec.init_containers:
                if ic.name == c.name or size == 0:
                    break
                if is_sidecar(ic):
                    continue
                init_blocks = conts.get(ic.name)
                if not init_blocks:
                    continue
                updated = []
                for ib in init_blocks:
                    if ib.size == 0 or ib.type != block.type or set(ib.numa_affinity) != set(block.numa_affinity):
                        updated.append(ib)
                        continue
                    if ib.size > size:
                        updated.append(Block(ib.numa_affinity, ib.type, ib.size - size))
                        size = 0
                    else:
                        size -= ib.size
                        updated.append(Block(ib.numa_affinity, ib.type, 0))
                conts[ic.name] = updated

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
        """``AllocatePod`` for a pod-level pod (the pod-scope admit handler calls it once)."""
        if not pod_level_managed(pod, self.gates):
            for c, _ in pod.all_containers():
                self.allocate(pod, c)
            return
        if pod.uid in self.state.entries:
            return
        allocate_pod_bubble(self, pod)

    def numa_nodes_for_pod_budget(self, uid: str) -> list[int] | None:
        blocks = self.state.entries.get(uid, {}).get("")
        return sorted({n for b in blocks for n in b.numa_affinity}) if blocks else None


def _reserve(ms: Any, nodes: Any, resource: str, need: int) -> int:
    """Take ``need`` of ``resource`` from the free memory of ``nodes`` in order, as far as each has;
    the part no node had is returned."""
    for n in nodes:
        t = ms[n].memory_map.get(resource)
        if t is None or need == 0:
            continue
        take = min(t.free, need)
        t.free -= take
        t.reserved += take
        need -= take
    return need
