"""The table's per-state and per-miss bookkeeping made lean: figures from state keys, rows of a miss.

:mod:`.runtime_memo`'s table takes the node figures of every new state while a real node is in
it (:func:`.runtime_policies.runtime_figures`), and the placement rows of every miss
(:meth:`.runtime_policies.RuntimePolicies.record`). At 5,000 nodes x 50,000 pods a node ends the
run in only a third of the states (topology-aware: 1,272 of 3,977; balloons: 2,437 of 7,583),
so most states' figures are never read. This module:

* **figures from the canonical key** (pod-keyed states, :mod:`.runtime_canon`): the key of a
  state already holds, per container, everything the figures read — its runtime state, its
  ``cpuset`` CPUs and memory nodes, the policy's grant with its exclusive CPUs — and the pod
  shape (the event number) that says how many CPUs each container wants. So a state keeps its
  key and its figures are computed from it only when read (at the end of the run, for the
  states a node ends in), no real node needed. The key holds a grant for a container the
  resource manager's cache holds (topology-aware grants and caches containers at creation and
  drops both at removal), which is what the figures read the exclusive CPUs through;
* **the canonical key** of a miss's new state (:func:`snapshot`): :func:`.runtime_canon.snapshot`'s
  value (the test holds the two equal), read with fewer calls — a container's CPU resources read
  directly, the pools' free supplies as attributes, the pods sorted by a C key function;
* **figures of a new state not made from its key** (balloons): taken while the real node is there
  as before, by :func:`.runtime_policies._lean_runtime_figures` (the policy's map of every
  container's placement asked once, the CPU resources read directly);
* **the rows of a miss** (:func:`record`): :meth:`.runtime_policies.RuntimePolicies.record`
  with the wanted CPUs read once per pod object, the misalignment answered once per (cpuset
  text, mems text, wanted CPUs) as the lean figures do, the pod's exclusive CPUs and memory
  nodes kept as masks (their texts kept per mask), the edge's row templates made with the rows
  (balloons' fast policy answers a lone container's placement without its map of every
  container: ``policies.balloons.fast.LONE_PLACEMENT``).

``ENABLED = False`` keeps the table's own bookkeeping (figures at every new state through
:func:`.runtime_policies.runtime_figures`, rows through ``record``);
``runtime_policies.LEAN_FIGURES = False`` the plain figures as well;
``tests/sim/test_runtime_fig.py`` compares the two, and the plain NRI path, on random workloads.

Not an upstream module: a kubetwin fast path over nri-plugins' policies (``cmd/plugins``);
the figures are kubetwin's own (:mod:`kubetwin.report.placement`).
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any, Hashable

from ..model.cpuset import CPUSet
from . import runtime_policies

if TYPE_CHECKING:
    from ..runtime.node import RuntimeNode
    from .loop import SimPod
    from .runtime_policies import RuntimePolicies

#: figures from state keys, lean rows of a miss (False: the table's own bookkeeping)
ENABLED = True


def figures_from_keys() -> bool:
    """Whether a new pod-keyed table keeps keys for figures (off with this module or with
    :data:`.runtime_policies.LEAN_FIGURES`: the plain figures at every new state)."""
    return ENABLED and runtime_policies.LEAN_FIGURES


class KeyFigures:
    """What a table's figures from keys read besides the key: the machine, the policy's reserved
    CPUs (fixed at start-up), a pod of each event number (the shape: its containers' CPU
    requests)."""

    __slots__ = ("machine", "reserved", "pods")

    def __init__(self, machine: Any):
        self.machine = machine
        self.reserved: CPUSet | None = None   # read off the first real node that makes a state
        self.pods: dict[int, Any] = {}


def keep_key(kf: KeyFigures, rn: "RuntimeNode") -> None:
    """Before a state keeps its key instead of its figures: the reserved CPUs read once."""
    if kf.reserved is None:
        # topology-aware's reserved CPUs are set at start-up and never change
        kf.reserved = rn.resmgr.policy.reserved_cpus() if rn.resmgr is not None else CPUSet()


def key_figures(kf: KeyFigures, key: Any) -> tuple[int, int, int, CPUSet, CPUSet]:
    """:func:`.runtime_policies.runtime_figures` of a node in the state of ``key`` (a key of
    :func:`.runtime_canon.snapshot`): containers, unpinned and misaligned containers, exclusive
    CPUs, reserved CPUs."""
    lay = runtime_policies._layout(kf.machine)
    known = lay.misaligned_text
    machine = kf.machine
    exclusive = 0
    containers = unpinned = misplaced = 0
    for ev, ctrs in key[0]:
        wanted: dict[str, int] | None = None
        for name, state, cpus, mems, _shares, grant, _req in ctrs:
            if state == "exited":
                continue
            containers += 1
            if grant:
                exclusive |= grant[3]
            if not cpus:
                unpinned += 1
                continue
            if wanted is None:
                wanted = runtime_policies._pod_wanted(lay, kf.pods[ev])
            k = (cpus, mems, wanted.get(name, 1))
            bad = known.get(k)
            if bad is None:
                bad = runtime_policies.misaligned_text(lay, machine, k)
            if bad:
                misplaced += 1
    assert kf.reserved is not None
    return containers, unpinned, misplaced, CPUSet.from_mask(exclusive), kf.reserved


def record(rt: "RuntimePolicies", i: int, rn: "RuntimeNode", sp: "SimPod",
           templates: list[dict[str, Any]] | None = None, pod_key: str | None = None,
           wanted_by: dict[Hashable, dict[str, int]] | None = None, shape: Hashable = None) -> list[dict[str, Any]]:
    """:meth:`.runtime_policies.RuntimePolicies.record`: the rows of ``sp``'s containers just
    placed on ``rn`` (appended to ``rt.placed``), the pod's exclusive CPUs and memory nodes.
    ``templates``: filled with each row without its pod, time and node (what the table's edge
    keeps), made here rather than filtered out of the rows after. ``pod_key``: ``sp.pod.key``
    when the caller has it. ``wanted_by``: each container name's wanted CPUs kept per pod shape
    (``shape``: the pod's event key, which spells out its containers' names and CPU requests),
    not per pod object — a miss's pod is new to the run."""
    if pod_key is None:
        pod_key = sp.pod.key
    rec = rn.pods[pod_key]
    pod = rec.pod
    machine = rn.machine
    lay = runtime_policies._layout(machine)
    known = lay.misaligned_text
    resmgr = rn.resmgr
    cached = resmgr.cache.containers if resmgr is not None else None
    placement = resmgr.policy.container_placement if resmgr is not None else None
    sim = rt.sim
    now, node = sim.now, sim.cluster.names[i]
    wanted: dict[str, int] | None = None
    exclusive = mems_mask = 0
    rows = []
    for c in rec.containers:
        if c.state == "exited":
            continue
        # ``c.ctr.resources().ensure_cpu()``, the calls made only when something is missing
        # (they fill it in)
        ctr = c.ctr
        linux = ctr.linux
        res = linux.resources if linux is not None else None
        if res is None or res.cpu is None or res.memory is None:
            res = ctr.resources()
        cpu: Any = res.cpu
        cpus, mems = cpu.cpus, cpu.mems
        pool = ""
        excl: CPUSet | None = None
        if cached is not None and placement is not None:
            cc = cached.get(ctr.id)
            got = placement(cc) if cc is not None else None
            if got is not None:
                pool, excl = got
        bad: bool | None = False
        if cpus:
            if wanted is None:
                if wanted_by is None:
                    wanted = runtime_policies._pod_wanted(lay, pod)
                else:
                    wanted = wanted_by.get(shape)
                    if wanted is None:
                        wanted = wanted_by[shape] = runtime_policies.pod_wanted(pod)
            k = (cpus, mems, wanted.get(c.name, 1))
            bad = known.get(k)
            if bad is None:
                bad = runtime_policies.misaligned_text(lay, machine, k)
        if excl is not None:
            m = excl.mask
            exclusive |= m
            etext = _mask_text(m)
        else:
            etext = _NONE_TEXT
        tmpl: dict[str, Any] = {"container": c.name, "qosClass": c.qos, "cpusetCpus": cpus, "cpusetMems": mems,
                                "exclusive": etext, "pool": pool, "misaligned": bad}
        if res.blockio_class is not None:
            tmpl["blockioClass"] = res.blockio_class
        rows.append({"pod": pod_key, **tmpl, "time": now, "node": node})
        if templates is not None:
            templates.append(tmpl)
        if mems:
            mm = _MEMS_MASKS.get(mems)
            if mm is None:
                if len(_MEMS_MASKS) > 4096:
                    _MEMS_MASKS.clear()
                mm = _MEMS_MASKS[mems] = runtime_policies._cpuset(mems).mask
            mems_mask |= mm
    rt.placed.extend(rows)
    sp.cpus = _mask_text(exclusive)
    sp.mems = _mems_text(mems_mask) if exclusive else ""
    return rows


#: cpuset text -> its mask, mask -> its text (the rows' texts read once per set, as
#: :func:`.runtime_policies._cpuset_text` would give them)
_MEMS_MASKS: dict[str, int] = {}
_MASK_TEXTS: dict[int, str] = {}
_MEMS_TEXTS: dict[int, str] = {}
_NONE_TEXT = str(CPUSet())


def _mask_text(mask: int) -> str:
    """``str(CPUSet.from_mask(mask))``, kept per mask."""
    got = _MASK_TEXTS.get(mask)
    if got is None:
        if len(_MASK_TEXTS) > 65536:
            _MASK_TEXTS.clear()
        got = _MASK_TEXTS[mask] = runtime_policies._cpuset_text(CPUSet.from_mask(mask))
    return got


def _mems_text(mask: int) -> str:
    """The memory nodes of ``mask`` joined by commas (the plain record's ``sp.mems``), kept per mask."""
    got = _MEMS_TEXTS.get(mask)
    if got is None:
        if len(_MEMS_TEXTS) > 4096:
            _MEMS_TEXTS.clear()
        got = _MEMS_TEXTS[mask] = ",".join(str(m) for m in CPUSet.from_mask(mask))
    return got


_FIRST = itemgetter(0)


def container_cpu(ctr: Any) -> Any:
    """A container's CPU resources as the state keys read them (``resources()`` only when
    something is missing, as it fills it in)."""
    linux = ctr.linux
    res = linux.resources if linux is not None else None
    cpu = res.cpu if res is not None else None
    if cpu is None or res is None or res.memory is None:
        cpu = ctr.resources().cpu
    return cpu


def pod_descriptor(rec: Any, ev: int, grants: dict[str, Any], requests: dict[str, Any]) -> tuple[int, tuple[Any, ...]]:
    """One pod's part of a topology-aware state key: its event number and, per container, its
    name, runtime state, ``cpuset`` CPUs, memory nodes and shares, grant and libmem request (one
    definition for :func:`snapshot` and :mod:`.runtime_inckey`)."""
    ctrs = []
    for r in rec.containers:
        ctr = r.ctr
        cid = ctr.id
        cpu = container_cpu(ctr)
        g = grants.get(cid)
        m = requests.get(cid)
        ctrs.append((r.name, r.state, cpu.cpus, cpu.mems, -1 if cpu.shares is None else cpu.shares,
                     (g.node.id, g.cpu_type, g.cpu_class, g.exclusive.mask, g.cpu_portion, g.mem_type,
                      g.mem_size, g.mem_zone, g.cold_start) if g is not None else (),
                     (m.limit, m.priority, m.types, m.affinity, m.zone, m.strict) if m is not None else ()))
    return ev, tuple(ctrs)


def node_part(policy: Any) -> tuple[Any, ...]:
    """The node's part of a topology-aware state key: every pool's free supply, the CPU classes,
    the memory zones (one definition for :func:`snapshot` and :mod:`.runtime_inckey`)."""
    pools = []
    for n in policy.pools:
        s = n.free_supply()
        pools.append((s.isolated.mask, s.reserved.mask, s.sharable.mask, s.granted_reserved, s.granted_shared))
    return tuple(pools), tuple(sorted(policy.cpu_class_of.items())), tuple(sorted(policy.mem_allocator.zones))


def snapshot(rn: "RuntimeNode", evs: dict[str, int]) -> tuple[Hashable, list[str]]:
    """:func:`.runtime_canon.snapshot` (the same value: ``(key, pods in canonical order)``) with
    fewer calls per container and pool."""
    assert rn.resmgr is not None
    policy: Any = rn.resmgr.policy
    grants = policy.allocations
    requests = policy.mem_allocator.requests
    descs = [(pod_descriptor(rec, evs[key], grants, requests), key) for key, rec in rn.pods.items()]
    descs.sort(key=_FIRST)
    return (tuple([d for d, _ in descs]), node_part(policy)), [k for _, k in descs]
