"""Runtime resource policies in ``simulate``: the NRI path below each node's kubelet.

A node group may name a runtime policy (``runtime: {policy, config}`` in the ``Simulation``
object, or ``--variant NAME:runtime.policy=...``): nri-plugins' ``topology-aware`` or
``balloons`` (with its ``config.nri/v1alpha1`` custom resource, default: the Helm chart's
``config``), or a Python NRI plugin (``FILE.py[:Class]``). Each node of such a group gets a
:class:`kubetwin.runtime.node.RuntimeNode` sharing the node's simulated kubelet: a pod the
kubelet admits then runs its sandbox and creates its containers through NRI (``RunPodSandbox``,
``CreateContainer``, ... — the resource manager places each container), and a pod that leaves
the node for any reason (completion, eviction, OOM kill, preemption) is torn down through NRI
(``StopContainer``, ``RemoveContainer``, ``StopPodSandbox``, ``RemovePodSandbox``), so shared
pools grow back as upstream's policies rebalance them.

A pod whose sandbox or container the plugins refuse fails with ``CreatePodSandboxError`` /
``CreateContainerError`` and the plugin's message. A real kubelet keeps retrying the container
with back-off; kubetwin fails the pod instead (its controller replaces it) — the same
simplification as ``kubetwin runtime`` (docs/runtime.md).

The run records every container placed on such a node (cpuset CPUs and memory nodes, the
policy's exclusive CPUs — topology-aware's exclusive and isolated CPUs, the CPUs of a balloon that holds
one pod —, whether it is NUMA-misaligned), and at the end, for every node with a
kubelet (runtime policy or not, so "kubelet static + single-numa-node" and "kubelet none +
topology-aware" compare on the same figures): exclusive CPUs, stranded CPUs, misaligned and
unpinned containers, rejected pods. :mod:`kubetwin.report.placement` renders them.

Not an upstream module: kubetwin's glue between its event loop and containerd's NRI adaptation
(containerd/nri v0.12.2 ``pkg/adaptation``, nri-plugins v0.14.0 ``pkg/resmgr``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..errors import InputError
from ..model.cpuset import CPUSet

if TYPE_CHECKING:
    from ..runtime.config import PolicyResource
    from ..runtime.node import RuntimeNode
    from .loop import SimPod, Simulator

#: the nri-plugins policies by their chart names, and "none" (no runtime policy)
POLICY_NAMES = ("topology-aware", "balloons", "none")


@dataclass(frozen=True)
class RuntimePolicy:
    """A node group's runtime policy: an nri-plugins policy (``resource``) or a Python NRI
    plugin (``plugin``: ``FILE.py[:Class]``)."""

    name: str                               # "topology-aware", "balloons", or the plugin as given
    resource: "PolicyResource | None" = None
    plugin: str | None = None
    config: str | None = None               # the custom resource's file, as given

    def new_plugins(self) -> list[Any]:
        """A fresh instance of the Python plugin (its file is loaded once per process)."""
        if not self.plugin:
            return []
        cls = _PLUGIN_CLASSES.get(self.plugin)
        if cls is None:
            from ..runtime.plugins import load_plugin

            first = load_plugin(self.plugin)[0]
            _PLUGIN_CLASSES[self.plugin] = type(first)
            return [first]
        return [cls()]


_PLUGIN_CLASSES: dict[str, type] = {}


def _is_plugin(name: str) -> bool:
    return name.partition(":")[0].endswith(".py") or (len(name) > 2 and name[1] == ":" and ".py" in name)


def resolve_policy(policy: Any, config: Any, path: str, root: Path) -> RuntimePolicy | None:
    """The runtime policy named ``policy`` with ``config`` (a custom resource file, relative to
    ``root``); None for ``none``. Everything is read and checked now, before any run."""
    from ..model.strict import suggest
    from ..runtime.config import KINDS, load_policy

    if not isinstance(policy, str) or not policy:
        raise InputError("Required value: policy (topology-aware, balloons, none or a Python NRI plugin "
                         "FILE.py[:Class])", path=f"{path}.policy")
    if config is not None and not isinstance(config, str):
        raise InputError("expected the path of a config.nri/v1alpha1 policy resource", path=f"{path}.config")
    if policy == "none":
        if config:
            raise InputError("config is given but the runtime policy is none: it would be ignored",
                             path=f"{path}.config", fix="drop config, or name its policy")
        return None
    if _is_plugin(policy):
        from ..runtime.plugins import load_plugin

        file, sep, cls = policy.partition(":")
        spec = str(root / file) + (sep + cls if sep else "")
        if config:
            raise InputError("a Python NRI plugin takes no policy resource: config would be ignored",
                             path=f"{path}.config", fix="drop config")
        try:
            load_plugin(spec)   # loads, checks and instantiates it once now
        except InputError as exc:
            exc.path = f"{path}.policy"
            raise
        return RuntimePolicy(policy, plugin=spec)
    if policy not in POLICY_NAMES:
        near = suggest(policy, POLICY_NAMES)
        raise InputError(f'Unsupported value: "{policy}": supported values: "topology-aware", "balloons", "none", '
                         "or a Python NRI plugin FILE.py[:Class]", path=f"{path}.policy",
                         fix=f'did you mean "{near}"?' if near else None)
    if not config:
        return RuntimePolicy(policy, load_policy(policy))
    resource = load_policy(str(root / config))
    if resource.policy != policy:
        kind = next(k for k, v in KINDS.items() if v == policy)
        raise InputError(f"the policy is {policy} but {config} is a {resource.kind}", path=f"{path}.config",
                         fix=f"give a {kind} resource, or policy: {resource.policy}")
    return RuntimePolicy(policy, resource, config=config)


def parse_node_group_runtime(raw: Any, path: str, root: Path) -> RuntimePolicy | None:
    """A node group's ``runtime: {policy, config}``."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise InputError("expected a mapping {policy, config}", path=path)
    return resolve_policy(raw.get("policy"), raw.get("config"), path, root)


# --- each node's runtime, started once per (machine, policy, kubelet configuration) -------------
#: copy started nodes from a template (False: start each node afresh, the plain path)
FORK = True
_TEMPLATES: dict[tuple[int, int, int], tuple[Any, Any, Any, "RuntimeNode", dict[int, Any]]] = {}


def new_runtime_node(machine: Any, rp: RuntimePolicy, config: Any, kubelet: Any) -> "RuntimeNode":
    """A freshly started runtime below ``kubelet`` (the node's simulated kubelet)."""
    from ..runtime.node import RuntimeNode

    return RuntimeNode(machine, rp.resource, config, plugins=rp.new_plugins(), admission=kubelet, traced=False)


def fork_runtime_node(machine: Any, rp: RuntimePolicy, config: Any, kubelet: Any) -> "RuntimeNode":
    """A copy of a freshly started runtime of the same machine, policy and kubelet configuration,
    below ``kubelet``: starting nri-plugins' policy (pool trees, reserved CPUs, the CPU tree) is
    done once. What never changes after start-up is shared — the machine, its sysfs view, the
    policy resource, the balloons' CPU tree —, the rest is copied. Python plugins are started
    afresh on every node (their state is theirs)."""
    if rp.plugin is not None:
        return new_runtime_node(machine, rp, config, kubelet)
    started, shared = _template(machine, rp, config, kubelet)
    return _deepcopy(started, {id(started.kubelet): kubelet}, shared)


def clone_runtime_node(rn: "RuntimeNode", rp: RuntimePolicy, config: Any, resizable: bool = True) -> "RuntimeNode":
    """A copy of ``rn`` (a node forked by :func:`fork_runtime_node`) in its current state, below
    the same kubelet, sharing what the fork shares. ``resizable`` False: neither ``rn`` nor the copy
    is ever resized in place (``update_container_resources``; the table's nodes, which only create
    and delete pods), so they share more (:data:`.runtime_copy.SHARE_UNRESIZED`)."""
    return _deepcopy(rn, {id(rn.kubelet): rn.kubelet}, _template(rn.machine, rp, config, rn.kubelet)[1], resizable)


def shared_objects(rn: "RuntimeNode", rp: RuntimePolicy, config: Any) -> list[Any]:
    """What every copy of ``rn`` (a node forked by :func:`fork_runtime_node`) shares with it,
    its kubelet included (the roots of :mod:`.runtime_snapshot`'s snapshots)."""
    return [*_template(rn.machine, rp, config, rn.kubelet)[1].values(), rn.kubelet]


#: copy runtime nodes with :func:`.runtime_copy.copy_state` (False: ``copy.deepcopy``, for A/B runs)
FAST_COPY = True


def _deepcopy(obj: Any, memo: dict[int, Any], shared: dict[int, Any], resizable: bool = True) -> Any:
    """A copy of ``obj`` with the memo ``shared`` (the template's, never changed) updated with ``memo``
    (``resizable``: see :func:`clone_runtime_node`)."""
    if FAST_COPY:
        global _copy_state
        fast = _copy_state
        if fast is None:   # imported once (an import statement per copy is a lookup in the machinery);
            # the memo is thrown away after the copy: the kernel needn't fill it
            from .runtime_copy import copy_detached

            fast = _copy_state = copy_detached
        return fast(obj, memo, shared) if resizable else fast(obj, memo, shared, False)
    import copy

    return copy.deepcopy(obj, {**shared, **memo})


_copy_state: Callable[..., Any] | None = None


def _template(machine: Any, rp: RuntimePolicy, config: Any, kubelet: Any) -> tuple["RuntimeNode", dict[int, Any]]:
    """The started runtime of (machine, policy, configuration), and the objects its copies share."""
    key = (id(machine), id(rp.resource), id(config))
    tmpl = _TEMPLATES.get(key)
    if tmpl is None or tmpl[0] is not machine or tmpl[1] is not rp.resource or tmpl[2] is not config:
        if len(_TEMPLATES) > 64:
            _TEMPLATES.clear()
        started = new_runtime_node(machine, rp, config, kubelet)
        shared: dict[int, Any] = {id(machine): machine, id(config): config, id(rp.resource): rp.resource,
                                  id(started.system): started.system}
        from .runtime_copy import read_only_parts

        shared.update((id(o), o) for o in read_only_parts(started))
        tree = getattr(started.resmgr.policy, "tree", None) if started.resmgr is not None else None
        if tree is not None:   # balloons' CPU tree: built at start-up, read-only after
            def keep(node: Any) -> bool:
                shared[id(node)] = node
                return True
            tree.walk(keep)
        tmpl = _TEMPLATES[key] = (machine, rp.resource, config, started, shared)
    return tmpl[3], tmpl[4]


def check_starts(machine: Any, config: Any, rp: RuntimePolicy | None, path: str) -> None:
    """Start the runtime of a node group once now (the run copies it): a policy that does not
    start on this machine (reserved CPUs it lacks, ...) or a plugin whose ``configure`` fails is
    an error of the scenario, named as such, before the run."""
    from ..kubelet.admission import NodeAdmission
    from ..runtime.nri.adaptation import PluginError
    from ..runtime.resmgr.policy import PolicyError

    if rp is None or machine is None or config is None:
        return
    try:
        fork_runtime_node(machine, rp, config, NodeAdmission(machine, config))
    except (PolicyError, PluginError) as exc:
        raise InputError(str(exc), path=path) from None
    except InputError as exc:
        exc.file = None
        raise exc.within(path) from None


# --- during the run ------------------------------------------------------------------------------
class RuntimePolicies:
    """The NRI path of every node whose group has a runtime policy, and the records of the run."""

    def __init__(self, sim: "Simulator"):
        if not sim.sc.settings.kubelet_admission:
            raise InputError("kubeletAdmission is false but a node group has a runtime policy: containers reach the "
                             "runtime only through the kubelet", file=sim.sc.source or None,
                             path="spec.kubeletAdmission", fix="set kubeletAdmission: true, or drop the runtime policy")
        self.sim = sim
        self.nodes: list["RuntimeNode | None"] = [None] * len(sim.sim_nodes)
        #: one record per container placed (``containers`` of the results)
        self.placed: list[dict[str, Any]] = []
        #: pods the runtime refused, per node index
        self.rejected: dict[int, int] = {}
        #: per node: bumped at every event after which the resource manager updates its
        #: NodeResourceTopology; the parsed object of that version
        self.versions = [0] * len(sim.sim_nodes)
        self._nrts: dict[int, tuple[int, Any]] = {}
        self._index = {name: i for i, name in enumerate(sim.cluster.names)}
        self._install_nrt(sim)
        #: nodes kept on the plain path (not on the fast path's table, :mod:`.runtime_memo`)
        self.plain: set[int] = set()
        from . import runtime_hit, runtime_memo

        self.memo = runtime_memo.MemoNodes(self) if runtime_memo.ENABLED else None
        self._hit = runtime_hit

    def _install_nrt(self, sim: "Simulator") -> None:
        """Scheduling against NRI-managed nodes: with NodeResourceTopologyMatch in the profile, the
        plugin reads each such node's NodeResourceTopology as its resource manager publishes it."""
        from ..scheduler.plugins.noderesourcetopology import NAME

        if sim.sched.framework.plugin(NAME) is not None:
            sim.sched.handle.live_nrt = self.live_nrt

    def live_nrt(self, node_name: str) -> Any:
        """The node's NodeResourceTopology after the last event (``updateTopologyZones`` runs after
        Synchronize, CreateContainer and StopContainer), parsed; None for nodes without an
        nri-plugins policy exporting one."""
        i = self._index.get(node_name)
        if i is None or self.sim.sim_nodes[i].runtime is None or self.sim.sim_nodes[i].runtime.resource is None:
            return None
        have = self._nrts.get(i)
        if have is not None and have[0] == self.versions[i]:
            return have[1]
        from ..runtime.nrt import export
        from ..scheduler.plugins.noderesourcetopology.nrt import nrt_from_dict

        kubelet = self.sim._kubelet(i)
        obj = export(self._node(i, kubelet), node_name)
        parsed = nrt_from_dict(obj, None) if obj is not None else None
        self._nrts[i] = (self.versions[i], parsed)
        return parsed

    def _node(self, i: int, kubelet: Any) -> "RuntimeNode":
        rn = self.nodes[i]
        if rn is None:
            sn = self.sim.sim_nodes[i]
            rn = self.nodes[i] = (fork_runtime_node(sn.machine, sn.runtime, sn.kubelet, kubelet) if FORK
                                  else new_runtime_node(sn.machine, sn.runtime, sn.kubelet, kubelet))
        return rn

    def start(self, i: int, sp: "SimPod", kubelet: Any) -> tuple[str, str] | None:
        """After the kubelet admitted ``sp`` on node ``i``: sandbox and containers through NRI.
        Returns the failure (reason, message) — the kubelet has then released the pod."""
        memo = self.memo
        if memo is not None:
            hit = self._hit   # the lean hit in one frame (:func:`.runtime_hit.start`), or the table's own
            handled, failure = hit.start(memo, i, sp, kubelet) if hit.ENABLED else memo.start(i, sp, kubelet)
            if handled:
                return failure
        rn = self._node(i, kubelet)
        return self.started(i, rn, sp, rn.start_pod(sp.pod))

    def started(self, i: int, rn: "RuntimeNode", sp: "SimPod", refused: Any) -> tuple[str, str] | None:
        """The outcome of ``rn.start_pod(sp.pod)``: the refusal counted, or the placement recorded."""
        self.versions[i] += 1
        if refused is not None:
            rn.rejected.clear()
            self.rejected[i] = self.rejected.get(i, 0) + 1
            return refused.reason, refused.message
        self.record(i, rn, sp)
        return None

    def record(self, i: int, rn: "RuntimeNode", sp: "SimPod") -> list[dict[str, Any]]:
        """The rows of ``sp``'s containers just placed on ``rn`` (appended to ``placed``), and the
        pod's exclusive CPUs and memory nodes."""
        rec = rn.pods[sp.pod.key]
        exclusive = CPUSet()
        mems = CPUSet()
        rows = []
        for c in rec.containers:
            if c.state == "exited":
                continue
            row = container_row(rn, rec.pod, c)
            row["time"] = self.sim.now
            row["node"] = self.sim.cluster.names[i]
            rows.append(row)
            exclusive = exclusive | _cpuset(row["exclusive"])
            if row["cpusetMems"]:
                mems = mems | _cpuset(row["cpusetMems"])
        self.placed.extend(rows)
        sp.cpus = str(exclusive)
        sp.mems = ",".join(str(m) for m in mems) if exclusive else ""
        return rows

    def stop(self, i: int, sp: "SimPod") -> None:
        """The pod left node ``i``: its containers and sandbox go through NRI's stop and remove."""
        if self.memo is not None and self.memo.stop(i, sp):
            return
        rn = self.nodes[i]
        if rn is not None and rn.delete_pod(sp.pod.key):
            self.versions[i] += 1


# --- placement figures ---------------------------------------------------------------------------
class _Layout:
    """What the figures read of a machine, computed once per machine: the CPUs of each NUMA node
    as one bit mask (by CPU: a CPU listed on two nodes counts on the last; and as the machine
    lists them), the nodes with CPUs, their sizes largest first — so a CPU set's nodes are read
    off its mask without walking its CPUs."""

    __slots__ = ("machine", "masks", "node_masks", "with_cpus", "sizes", "misaligned", "misaligned_text", "wanted")

    def __init__(self, machine: Any):
        self.machine = machine
        numa = {cpu: n.id for n in machine.nodes for cpu in n.cpus}
        masks: dict[int, int] = {}
        for cpu, node in numa.items():
            masks[node] = masks.get(node, 0) | 1 << cpu
        self.masks = tuple(masks.items())
        self.node_masks = tuple(n.cpus.mask for n in machine.nodes)
        self.with_cpus = frozenset(n.id for n in machine.nodes if n.cpus.size())
        self.sizes = sorted((n.cpus.size() for n in machine.nodes if n.cpus.size()), reverse=True)
        #: (cpus, mems, wanted CPUs) -> misaligned: the figures ask the same few questions all run
        self.misaligned: dict[tuple[int, int, int], bool] = {}
        #: (cpuset.cpus text, cpuset.mems text, wanted CPUs) -> misaligned (:func:`_lean_runtime_figures`)
        self.misaligned_text: dict[tuple[str, str, int], bool] = {}
        #: id(pod) -> (pod, each container name's wanted CPUs) (:func:`_pod_wanted`)
        self.wanted: dict[int, tuple[Any, dict[str, int]]] = {}


_LAYOUTS: dict[int, _Layout] = {}


def _layout(machine: Any) -> _Layout:
    got = _LAYOUTS.get(id(machine))
    if got is None or got.machine is not machine:
        if len(_LAYOUTS) > 64:
            _LAYOUTS.clear()
        got = _LAYOUTS[id(machine)] = _Layout(machine)
    return got


def needed_numa_nodes(machine: Any, cpus: int) -> int:
    """The fewest NUMA nodes whose CPUs hold ``cpus`` CPUs (at least one)."""
    have, k = 0, 0
    for s in _layout(machine).sizes:
        if have >= cpus and k:
            break
        have += s
        k += 1
    return max(k, 1)


def misaligned(machine: Any, cpus: CPUSet, mems: CPUSet, wanted_cpus: int) -> bool:
    """A pinned container is NUMA-misaligned when its ``cpuset.cpus`` spans more NUMA nodes than
    its CPUs need, or its ``cpuset.mems`` names a node with CPUs other than its CPUs' nodes
    (memory-only nodes — HBM, PMEM, CXL — count as local)."""
    lay = _layout(machine)
    key = (cpus.mask, mems.mask, wanted_cpus)
    got = lay.misaligned.get(key)
    if got is None:
        if len(lay.misaligned) > 65536:
            lay.misaligned.clear()
        have = cpus.mask
        nodes = {node for node, mask in lay.masks if have & mask}
        got = lay.misaligned[key] = (len(nodes) > needed_numa_nodes(machine, wanted_cpus)
                                     or any(m in lay.with_cpus and m not in nodes for m in mems))
    return got


def _wanted_cpus(pod: Any, name: str) -> int:
    """Whole CPUs a container asks for: its CPU request rounded up (at least one)."""
    for c, _ in pod.all_containers():
        if c.name == name:
            req = c.requests.get("cpu")
            if req is None:
                return 1
            return _whole_cpus(req)
    return 1


# CPU request -> whole CPUs, and cpuset text -> CPUSet (both immutable): the figures read the
# same few values for every container of the run
@functools.lru_cache(maxsize=4096)
def _whole_cpus(request: str) -> int:
    from ..model.quantity import parse_quantity

    return max(1, -(-parse_quantity(request).milli_value() // 1000))


@functools.lru_cache(maxsize=4096)
def _cpuset(text: str) -> CPUSet:
    return CPUSet.parse(text)


@functools.lru_cache(maxsize=4096)
def _cpuset_text(cpus: CPUSet) -> str:
    return str(cpus)


def container_row(rn: "RuntimeNode", pod: Any, rec: Any) -> dict[str, Any]:
    """One container on a runtime-policy node: what the runtime wrote and the policy granted."""
    res = rec.ctr.resources()
    pinned = bool(res.cpu.cpus)
    cpus = _cpuset(res.cpu.cpus) if pinned else rn.system.online_cpus
    mems = _cpuset(res.cpu.mems) if res.cpu.mems else CPUSet()
    exclusive = CPUSet()
    pool = ""
    if rn.resmgr is not None:
        # the policy's exclusive and isolated CPUs; a balloon of one pod: its CPUs are the pod's alone
        c = rn.resmgr.cache.lookup_container(rec.ctr.id)
        placement = rn.resmgr.policy.container_placement(c) if c is not None else None
        if placement is not None:
            pool, exclusive = placement
    row: dict[str, Any] = {"pod": pod.key, "container": rec.name, "qosClass": rec.qos,
                           "cpusetCpus": res.cpu.cpus, "cpusetMems": res.cpu.mems,
                           "exclusive": _cpuset_text(exclusive), "pool": pool}
    row["misaligned"] = pinned and misaligned(rn.machine, cpus, mems, _wanted_cpus(pod, rec.name))
    if res.blockio_class is not None:   # an NRI plugin set the Block I/O class (:mod:`.blockio`)
        row["blockioClass"] = res.blockio_class
    return row


@dataclass
class _NodeFigures:
    name: str
    group: str
    manager: str          # "topology-aware", "balloons", a plugin, or "kubelet <cpu policy>"
    exclusive: int = 0
    stranded: int = 0
    containers: int = 0
    misaligned: int = 0
    unpinned: int = 0
    rejected_kubelet: int = 0
    rejected_runtime: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "group": self.group, "manager": self.manager, "exclusiveCpus": self.exclusive,
                "strandedCpus": self.stranded, "containers": self.containers,
                "misalignedContainers": self.misaligned, "unpinnedContainers": self.unpinned,
                "rejectedByKubelet": self.rejected_kubelet, "rejectedByRuntime": self.rejected_runtime}


def _stranded(machine: Any, exclusive: CPUSet, reserved: CPUSet) -> int:
    """Free CPUs of NUMA nodes that already hold exclusive CPUs (as :mod:`.metrics` counts them)."""
    out = 0
    exclusive_mask, reserved_mask = exclusive.mask, reserved.mask
    for cpus in _layout(machine).node_masks:
        total = cpus.bit_count()
        excl = (cpus & exclusive_mask).bit_count()
        free = total - excl - (cpus & reserved_mask).bit_count()
        if excl and free > 0:
            out += free
    return out


#: node figures read by :func:`_lean_runtime_figures` (False: through :func:`container_row`, the
#: plain walk; for equivalence tests and A/B runs)
LEAN_FIGURES = True


def runtime_figures(rn: "RuntimeNode") -> tuple[int, int, int, CPUSet, CPUSet]:
    """What a runtime-policy node's figures read of it: containers, unpinned and misaligned
    containers, exclusive CPUs, the policy's reserved CPUs."""
    if LEAN_FIGURES:
        return _lean_runtime_figures(rn)
    exclusive = CPUSet()
    containers = unpinned = misplaced = 0
    for p, r in rn.running():
        row = container_row(rn, p.pod, r)
        containers += 1
        exclusive = exclusive | _cpuset(row["exclusive"])
        if not row["cpusetCpus"]:
            unpinned += 1
        elif row["misaligned"]:
            misplaced += 1
    reserved = CPUSet()
    if rn.resmgr is not None:
        reserved = rn.resmgr.policy.reserved_cpus()
    return containers, unpinned, misplaced, exclusive, reserved


def _lean_runtime_figures(rn: "RuntimeNode") -> tuple[int, int, int, CPUSet, CPUSet]:
    """:func:`runtime_figures` without a placement row per container (a fast path: ``simulate``'s
    table of node states takes them for every new state it cannot key by pods): the exclusive
    CPUs as one mask, the misalignment answered once per (cpuset text, mems text, wanted CPUs), the
    wanted CPUs read once per pod object (:func:`_pod_wanted`), a policy that keeps every
    container's placement in one map (balloons' fast path, ``_placements``) asked once, and a
    container's CPU resources read directly (through ``resources()``, which fills in what is
    missing, only when something is)."""
    lay = _layout(rn.machine)
    known = lay.misaligned_text
    wanted_by = lay.wanted
    resmgr = rn.resmgr
    cached = resmgr.cache.containers if resmgr is not None else None
    placement = resmgr.policy.container_placement if resmgr is not None else None
    every = getattr(resmgr.policy, "_placements", None) if resmgr is not None else None
    placements: dict[str, tuple[str, CPUSet]] | None = every() if every is not None else None
    exclusive = 0
    containers = unpinned = misplaced = 0
    for p in rn.pods.values():
        wanted: dict[str, int] | None = None
        for r in p.containers:
            if r.state == "exited":
                continue
            containers += 1
            ctr = r.ctr
            if cached is not None and placement is not None:
                if placements is not None:
                    got = placements.get(ctr.id) if ctr.id in cached else None
                else:
                    c = cached.get(ctr.id)
                    got = placement(c) if c is not None else None
                if got is not None:
                    exclusive |= got[1].mask
            linux = ctr.linux
            res = linux.resources if linux is not None else None
            cpu = res.cpu if res is not None else None
            if cpu is None or res is None or res.memory is None:
                cpu = ctr.resources().ensure_cpu()
            cpus = cpu.cpus
            if not cpus:
                unpinned += 1
                continue
            if wanted is None:
                pod = p.pod
                got_wanted = wanted_by.get(id(pod))
                wanted = got_wanted[1] if got_wanted is not None and got_wanted[0] is pod else _pod_wanted(lay, pod)
            key = (cpus, cpu.mems, wanted.get(r.name, 1))
            bad = known.get(key)
            if bad is None:
                bad = misaligned_text(lay, rn.machine, key)
            if bad:
                misplaced += 1
    reserved = resmgr.policy.reserved_cpus() if resmgr is not None else CPUSet()
    return containers, unpinned, misplaced, CPUSet.from_mask(exclusive), reserved


def misaligned_text(lay: _Layout, machine: Any, key: tuple[str, str, int]) -> bool:
    """:func:`misaligned` of ``key`` (cpuset.cpus text, cpuset.mems text, wanted CPUs), kept in
    the layout's ``misaligned_text`` (the lean walks read that map first and call this on a miss)."""
    known = lay.misaligned_text
    if len(known) > 65536:
        known.clear()
    cpus, mems, wanted = key
    bad = known[key] = misaligned(machine, _cpuset(cpus), _cpuset(mems) if mems else CPUSet(), wanted)
    return bad


def pod_wanted(pod: Any) -> dict[str, int]:
    """Each container name's wanted CPUs (the first container of a name, as :func:`_wanted_cpus`)."""
    wanted: dict[str, int] = {}
    for c, _ in pod.all_containers():
        if c.name not in wanted:
            req = c.requests.get("cpu")
            wanted[c.name] = 1 if req is None else _whole_cpus(req)
    return wanted


def _pod_wanted(lay: _Layout, pod: Any) -> dict[str, int]:
    """Each container name's wanted CPUs (the first container of a name, as :func:`_wanted_cpus`),
    read once per pod object (pods are immutable; the figures of every new state read them)."""
    got = lay.wanted.get(id(pod))
    if got is not None and got[0] is pod:
        return got[1]
    wanted = pod_wanted(pod)
    if len(lay.wanted) > 65536:
        lay.wanted.clear()
    lay.wanted[id(pod)] = (pod, wanted)
    return wanted


def _runtime_node_figures(fig: _NodeFigures, machine: Any, figures: tuple[int, int, int, CPUSet, CPUSet],
                          report: Any) -> None:
    fig.containers, fig.unpinned, fig.misaligned, exclusive, reserved = figures
    fig.exclusive = exclusive.size()
    fig.stranded = _stranded(machine, exclusive, reserved)
    # the node's report (NUMA map, node table) shows what the runtime policy did, not the kubelet's none
    from .results import NUMAReport

    report.stranded_cpus = fig.stranded
    report.policies = {**report.policies, "runtimePolicy": fig.manager}
    # each node's CPUs as the layout's mask (a machine's node builds its CPU set anew on every read)
    excl, res = exclusive.mask, reserved.mask
    report.numa = [NUMAReport(n.id, cpus.bit_count(), (cpus & excl).bit_count(),
                              cpus.bit_count() - (cpus & excl).bit_count() - (cpus & res).bit_count(), n.memory)
                   for n, cpus in zip(machine.nodes, _layout(machine).node_masks)]


def _kubelet_node_figures(fig: _NodeFigures, kubelet: Any, residents: Any) -> None:
    cpu = kubelet.cpu
    static = cpu.static is not None
    exclusive = CPUSet()
    for sp in residents:
        uid = sp.pod.uid
        for c, init in sp.pod.all_containers():
            if init and not _is_sidecar(c):
                continue
            fig.containers += 1
            own = cpu.state.get(uid, c.name) if static else None
            if own:
                exclusive = exclusive | own
            cpus = own if own else (cpu.state.default_cpuset if static else CPUSet())
            if not cpus:
                fig.unpinned += 1
                continue
            m = kubelet.memory.numa_nodes_for(uid, c.name) if kubelet.memory.static is not None else None
            if misaligned(kubelet.machine, cpus, CPUSet(m or ()), own.size() if own else _wanted_cpus(sp.pod, c.name)):
                fig.misaligned += 1
    fig.exclusive = exclusive.size()
    fig.stranded = _stranded(kubelet.machine, exclusive, cpu.reserved if static else CPUSet())


def _is_sidecar(c: Any) -> bool:
    from ..model.pod import is_sidecar

    return is_sidecar(c)


def placement_report(sim: "Simulator", reports: list[Any]) -> dict[str, Any] | None:
    """The run's CPU placement figures (``placement`` of the results): per node with a kubelet,
    at the end of the run, and every container a runtime policy placed. None when no node has a
    kubelet with a machine."""
    rt: RuntimePolicies | None = getattr(sim, "runtime", None)
    nodes = []
    rejected_kubelet: dict[int, int] = {}
    for sp in sim.pods:
        if sp.reason and sp.phase == "Failed" and sp.node >= 0 and sp.reason not in ("Evicted", "Preempted",
                                                                                      "OOMKilled"):
            if sp.reason in ("CreateContainerError", "CreatePodSandboxError"):
                continue
            rejected_kubelet[sp.node] = rejected_kubelet.get(sp.node, 0) + 1
    for i, name in enumerate(sim.cluster.names):
        sn = sim.sim_nodes[i]
        if sn.machine is None or sn.kubelet is None:
            continue
        rp = getattr(sn, "runtime", None)
        manager = rp.name if rp is not None else f"kubelet {sn.kubelet.cpu_manager_policy}"
        fig = _NodeFigures(name, sn.group, manager, rejected_kubelet=rejected_kubelet.get(i, 0))
        rn = rt.nodes[i] if rt is not None else None
        memo = rt.memo.figures(i, runtime_figures) if rt is not None and rt.memo is not None else None
        if memo is not None:
            fig.rejected_runtime = rt.rejected.get(i, 0) if rt is not None else 0
            _runtime_node_figures(fig, sn.machine, memo, reports[i])
        elif rn is not None:
            fig.rejected_runtime = rt.rejected.get(i, 0) if rt is not None else 0
            _runtime_node_figures(fig, rn.machine, runtime_figures(rn), reports[i])
        elif rp is None:
            k = sim.kubelets[i]
            if k:
                _kubelet_node_figures(fig, k, sim.residents[i].values())
        nodes.append(fig)
    if not nodes:
        return None
    totals: dict[str, int] = {}
    for f in nodes:
        for k, v in f.to_json().items():
            if isinstance(v, int):
                totals[k] = totals.get(k, 0) + v
    out: dict[str, Any] = {"totals": totals, "nodes": [f.to_json() for f in nodes]}
    if rt is not None:
        out["containers"] = rt.placed
    return out
