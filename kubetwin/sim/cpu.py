"""CPU on every simulated node: usage curves, CFS bandwidth, the split of contended CPU, CPU pressure.

Runs when some pod of the scenario has a CPU curve (``usage.cpu``, :mod:`.usage`). Every running
container is one row of numpy columns; at each sample the interval since the previous one is
accounted for all rows at once:

1. **want** — the container's CPU curve at the sample time (cores), else its CPU request;
2. **cpu.max** — the kubelet's quota (``MilliCPUToQuota`` of the container's limit, or the pod-level
   limit; none with ``cpuCFSQuota: false``, and none for containers with exclusive CPUs while
   ``DisableCPUQuotaWithExclusiveCPUs`` is on) caps it and throttles it (:func:`.cfs.fluid_step`:
   ``nr_periods``, ``nr_throttled``, ``throttled_usec``) — unless its pool held it below the quota
   (step 3), in which case it never used the quota up and waits instead of being throttled;
3. **pools** — a container runs in the CPU set the CPU Manager gave it: exclusive CPUs (static
   policy), the pod shared pool of a pod-level pod, or the node's shared pool (all CPUs not given
   out). Where a pool's capped wants exceed its CPUs, CFS splits it by ``cpu.weight``
   (:func:`.cfs.fair_share`; weights from the kubelet's shares, converted as the runtime does);
4. **PSI** — each container's CPU stall share (:mod:`.psi`): ``some`` = the share of wanted CPU it
   did not get (throttled or waiting in a contended pool), ``full`` = the throttled share, plus the
   waiting share when it runs one thread (wants ≤ 1 CPU: a waiting thread is all of its tasks).
   A pod reports its worst container, a node its worst pod; the node's ``full`` CPU line is zero
   as the kernel reports it for the whole system.

A container's CPU need not be spread evenly inside a sample interval, so a curve is read as a
steady want between samples (the model's resolution is ``spec.sampleInterval``). The split is one
level (containers of a pool by their own weights; the kubepods / QoS / pod cgroup levels above
them are not modelled). Memory and I/O stalls are :mod:`.memory_psi` and :mod:`.io_psi`; the
Summary here carries the ``cpu`` figures only.

Not an upstream module: kubetwin's glue between the scheduler's placements, the kubelet's cgroup
values (``pkg/kubelet/cm``: ``MilliCPUToQuota``, ``MilliCPUToShares``) and the kernel models.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..kubelet.cgroups import QUOTA_PERIOD, milli_cpu_to_quota, milli_cpu_to_shares, runtime_cpu_weight
from ..kubelet.oom import gate
from ..kubelet.podlevel import guaranteed_cpus
from .cfs import fair_share_pools, fluid_step
from .psi import FIXED_1, FSHIFT, PSIAverages
from .usage import _pick, curve_containers

if TYPE_CHECKING:
    from ..model.summary import Summary
    from .cpu_result import CPUResult
    from .loop import SimPod, Simulator

_EPS = 1e-9
#: the results carry time series for this many pods, the worst (highest peak some avg10) first
MAX_POD_SERIES = 200


class ContainerCPU(NamedTuple):
    """One container's CPU figures at the end of its run (or of the simulation). A named tuple:
    the end of a run makes one per container, so it is built at the cost of a tuple."""

    container: str
    cpu_max: str                 # cgroup v2 cpu.max
    weight: int                  # cgroup v2 cpu.weight
    pool: str                    # "shared", "pod shared pool", "exclusive"
    usage_usec: int
    nr_periods: int
    nr_throttled: int
    throttled_usec: int
    some_avg10: float
    some_avg60: float
    some_avg300: float
    some_total_usec: int
    full_avg10: float
    full_total_usec: int
    peak_some_avg10: float

    def to_json(self) -> dict[str, Any]:
        return {"container": self.container, "cpu.max": self.cpu_max, "cpu.weight": self.weight, "pool": self.pool,
                "cpu.stat": {"usage_usec": self.usage_usec, "nr_periods": self.nr_periods,
                             "nr_throttled": self.nr_throttled, "throttled_usec": self.throttled_usec},
                "cpu.pressure": {"some": {"avg10": self.some_avg10, "avg60": self.some_avg60,
                                          "avg300": self.some_avg300, "total": self.some_total_usec},
                                 "full": {"avg10": self.full_avg10, "total": self.full_total_usec}},
                "peakSomeAvg10": self.peak_some_avg10}


class NodeCPU:
    """Every node's CPU accounting: rows of containers in numpy columns."""

    def __init__(self, sim: "Simulator", capacity: int = 1024):
        self.sim = sim
        st = sim.sc.settings
        self.gates = sim.gates
        self.weight_curve = "quadratic"
        self.custom_period = gate(self.gates, "CustomCPUCFSQuotaPeriod")
        self.pod_level = gate(self.gates, "PodLevelResources")
        self.no_quota_on_exclusive = gate(self.gates, "DisableCPUQuotaWithExclusiveCPUs")
        self._weights: dict[int, int] = {}
        #: id(kubelet configuration) -> (it, cpuCFSQuota, period µs, gates)
        self._facts: dict[int, tuple[Any, bool, int, Any]] = {}
        #: rows started since the last sample: (row, node, pod, want, quota, period, weight, pool, start,
        #: request, curve id, origin) — numbers only, written to the columns as one array
        self.pending: list[tuple[float, ...]] = []
        self.n = 0                          # rows in use: [0, n)
        self._alloc(capacity)
        self.free: list[int] = []
        self.rows_of: dict[int, list[int]] = {}
        #: moving CPU curves by id (a row's ``curve_id`` column; -1: a steady want); equal curves share
        #: an id, so their rows are read in one vectorised pass
        self.curve_ids: dict[Any, int] = {}
        self.curve_list: list[Any] = []
        #: row -> (container, cpu.max quota µs (0: max), period µs, weight, pool kind)
        self.meta: dict[int, tuple[str, int, int, int, str]] = {}
        # pools: one shared pool per node, one per distinct cpuset given out on a node
        self.pool_cap: list[float] = []
        self.pool_users: list[int] = []
        self.pool_node: list[int] = []
        self.node_pool: dict[int, int] = {}
        self.cpuset_pool: dict[tuple[int, int], int] = {}
        self.pool_key: dict[int, tuple[int, int]] = {}     # cpuset pool -> its key in cpuset_pool
        self.last = 0.0
        self.interval = st.sample_interval
        #: cluster figures per sample; per-node figures per sample for nodes with throttling or stalls:
        #: (time, nodes, cores used, some avg10, containers throttled), made into series by :meth:`node_series`
        self.series: list[dict[str, float]] = []
        self.node_steps: list[tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        #: per sample, the pods throttled or stalled: (time, pods, throttled share, some avg10, cores)
        self.pod_steps: list[tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.finished: dict[int, list[ContainerCPU]] = {}
        #: each node's highest some avg10 at a sample
        self.peak_node = np.zeros(0)
        self.last_grant = np.zeros(0)
        #: each node's cpu.pressure some avg10 at the last sample (its worst container's)
        self.node_psi = np.zeros(len(sim.sim_nodes))

    # --- columns ---------------------------------------------------------------------------------
    def _alloc(self, cap: int) -> None:
        self.cap = cap
        self.node = np.zeros(cap, dtype=np.int64)
        self.pod = np.zeros(cap, dtype=np.int64)
        self.want_const = np.zeros(cap)
        self.request = np.zeros(cap)
        self.quota = np.full(cap, math.inf)
        self.period = np.full(cap, float(QUOTA_PERIOD))
        self.weight = np.ones(cap)
        self.pool = np.zeros(cap, dtype=np.int64)
        self.start = np.zeros(cap)
        self.end = np.full(cap, math.inf)
        self.curve_id = np.full(cap, -1, dtype=np.int64)
        self.origin = np.zeros(cap)        # the pod's SimPod.origin: its curve's time zero
        self.used = np.zeros(cap, dtype=bool)
        self.usage_us = np.zeros(cap)
        self.periods = np.zeros(cap)
        self.thr_periods = np.zeros(cap)
        self.thr_us = np.zeros(cap)
        self.peak = np.zeros(cap)
        self.psi = PSIAverages(cap)

    def _grow(self) -> None:
        old = self.cap
        new = old * 2
        for name in ("node", "pod", "want_const", "request", "quota", "period", "weight", "pool", "start", "end", "used",
                     "usage_us", "periods", "thr_periods", "thr_us", "peak", "curve_id", "origin"):
            a = getattr(self, name)
            b = np.empty(new, dtype=a.dtype)
            b[:old] = a
            fill = {"quota": math.inf, "end": math.inf, "period": float(QUOTA_PERIOD), "weight": 1.0,
                    "curve_id": -1}.get(name, 0)
            b[old:] = fill
            setattr(self, name, b)
        self.psi.grow(new)
        self.cap = new

    def _row(self) -> int:
        if self.free:
            return self.free.pop()
        if self.n == self.cap:
            self._grow()
        self.n += 1
        return self.n - 1

    # --- pools -----------------------------------------------------------------------------------
    def _node_cores(self, i: int) -> float:
        sn = self.sim.sim_nodes[i]
        if sn.machine is not None:
            return float(sn.machine.num_cores)   # MachineInfo.NumCores: logical CPUs
        q = sn.node.status.capacity.get("cpu")
        return q.milli_value() / 1000.0 if q is not None else 0.0

    def _shared_pool(self, i: int) -> int:
        p = self.node_pool.get(i)
        if p is None:
            p = self.node_pool[i] = len(self.pool_cap)
            self.pool_cap.append(self._node_cores(i))
            self.pool_users.append(0)
            self.pool_node.append(i)
        return p

    def _cpuset_pool(self, i: int, cpus: Any) -> int:
        """The pool of one CPU set given out on node ``i`` (keyed by its bit mask)."""
        key = (i, cpus.mask)
        p = self.cpuset_pool.get(key)
        if p is None:
            p = self.cpuset_pool[key] = len(self.pool_cap)
            self.pool_key[p] = key
            self.pool_cap.append(float(len(cpus)))
            self.pool_users.append(0)
            self.pool_node.append(i)
            self.pool_cap[self._shared_pool(i)] -= len(cpus)
        return p

    def _release_pool(self, p: int) -> None:
        self.pool_users[p] -= 1
        i = self.pool_node[p]
        if self.pool_users[p] == 0 and self.node_pool.get(i) != p:
            key = self.pool_key.pop(p, None)
            if key is not None:
                del self.cpuset_pool[key]
            self.pool_cap[self._shared_pool(i)] += self.pool_cap[p]

    # --- pods come and go ----------------------------------------------------------------------------
    def _kubelet_facts(self, i: int) -> tuple[bool, int, Any]:
        """What node ``i``'s kubelet configuration says of every container it starts: whether it
        sets a quota (``cpuCFSQuota``), the quota period (µs), its feature gates — read once per
        configuration (a frozen object, shared by a node group's nodes)."""
        cfg = self.sim.sim_nodes[i].kubelet
        if cfg is None:
            return True, QUOTA_PERIOD, self.gates
        got = self._facts.get(id(cfg))
        if got is None or got[0] is not cfg:
            # a Go duration: ns -> µs
            period = int(cfg.cpu_cfs_quota_period) // 1000 if self.custom_period else QUOTA_PERIOD
            got = self._facts[id(cfg)] = (cfg, cfg.cpu_cfs_quota, period, cfg.feature_gate_values)
        return got[1], got[2], got[3]

    def started(self, i: int, sp: "SimPod") -> None:
        """The pod's containers start: one row each (written to the columns in bulk at the next sample)."""
        pod = sp.pod
        curves = sp.usage.cpu if sp.usage is not None else ()
        quota_on, period, kgates = self._kubelet_facts(i)
        kubelet = self.sim.kubelets[i]
        cpu_state = kubelet.cpu.state if kubelet and kubelet.cpu.static is not None else None
        uid = pod.uid
        assigned = cpu_state.entries.get(uid) if cpu_state is not None else None   # CPUState.get, per pod
        pod_limit = 0
        if pod.spec.resources is not None and self.pod_level:
            q = pod.spec.resources.limits.get("cpu")
            pod_limit = q.milli_value() if q is not None else 0
        rows = self.rows_of.get(sp.i)
        if rows is None:
            rows = self.rows_of[sp.i] = []
        now = self.sim.now
        for c, lead in curve_containers(pod):
            curve = _pick(curves, c.name, lead) if curves else None
            requests = c.resources.requests
            q = requests.get("cpu")
            request = q.milli_value() if q is not None else 0
            q = c.resources.limits.get("cpu")
            limit = (q.milli_value() if q is not None else 0) or pod_limit
            shares = milli_cpu_to_shares(request if "cpu" in requests or not limit else limit)
            cpus = assigned.get(c.name) if assigned is not None else None
            # exclusive: the static policy's own CPUs, or a pod-level pod's exclusive slice of its bubble
            exclusive = bool(cpus) and cpu_state is not None and (
                uid not in cpu_state.pod_entries or guaranteed_cpus(pod, c, kgates) > 0)
            quota_us = milli_cpu_to_quota(limit, period) if quota_on and limit else 0
            if exclusive and self.no_quota_on_exclusive:
                quota_us = 0
            w = self._weights.get(shares)
            if w is None:
                w = self._weights[shares] = runtime_cpu_weight(shares, self.weight_curve)
            if cpus:
                pool = self._cpuset_pool(i, cpus)
                kind = "exclusive" if exclusive else "pod shared pool"
            else:
                pool = self._shared_pool(i)
                kind = "shared"
            self.pool_users[pool] += 1
            r = self._row()
            self.end[r] = math.inf
            cid = -1
            if curve is not None and len(curve.times) > 1:
                got = self.curve_ids.get(curve)
                if got is None:
                    got = self.curve_ids[curve] = len(self.curve_list)
                    self.curve_list.append(curve)
                cid = got
            self.pending.append((r, i, sp.i, (curve.values[0] if curve is not None else request) / 1000.0,
                                 quota_us / period if quota_us else math.inf, period, w, pool, now,
                                 request / 1000.0, cid, sp.origin))
            self.meta[r] = (c.name, quota_us, period, w, kind)
            rows.append(r)

    def _flush(self) -> None:
        """Write the rows of the containers started since the last sample into the columns."""
        if not self.pending:
            return
        cols = np.array(self.pending, dtype=float).T   # whole numbers below 2**53: exact as floats
        self.pending = []
        r = cols[0].astype(np.int64)
        self.used[r] = True
        self.node[r] = cols[1]
        self.pod[r] = cols[2]
        self.want_const[r] = cols[3]
        self.quota[r] = cols[4]
        self.period[r] = cols[5]
        self.weight[r] = cols[6]
        self.pool[r] = cols[7]
        self.start[r] = cols[8]
        self.request[r] = cols[9]
        self.curve_id[r] = cols[10]
        self.origin[r] = cols[11]
        for a in (self.usage_us, self.periods, self.thr_periods, self.thr_us, self.peak):
            a[r] = 0.0
        self.last_grant[r[r < len(self.last_grant)]] = 0.0   # a reused row: not the previous pod's rate
        self.psi.reset(r)

    def busy(self, now: float, psi_eviction: Any = None) -> bool:
        """Whether a later sample could still change something: a CPU curve still moving, or a node
        at the what-if PSI eviction threshold (:mod:`.whatif_psi`)."""
        self._flush()
        n = self.n
        moving = np.flatnonzero(self.used[:n] & (self.curve_id[:n] >= 0))
        if len(moving):
            settles = np.array([c.settles_at for c in self.curve_list], dtype=float)
            if ((now - self.origin[moving]) < settles[self.curve_id[moving]]).any():
                return True
        return psi_eviction is not None and bool((self.node_psi >= psi_eviction.threshold).any())

    def restarted(self, sp: "SimPod") -> None:
        """The pod's containers started again (an OOM kill, restartPolicy): its curves count from
        its new origin."""
        self._flush()
        rows = self.rows_of.get(sp.i)
        if rows:
            self.origin[np.array(rows, dtype=np.int64)] = sp.origin

    def forget(self, i: int, sp: "SimPod") -> None:
        """The pod stopped: its rows are accounted up to now at the next sample, then let go."""
        for r in self.rows_of.get(sp.i, ()):
            if self.end[r] == math.inf:
                self.end[r] = self.sim.now

    # --- one sample ----------------------------------------------------------------------------------
    def step(self, t: float) -> None:
        self._flush()
        n = self.n
        dt = t - self.last
        if n == 0 or dt <= 0:
            self.last = max(self.last, t)
            self._let_go(t)
            return
        used = self.used[:n]
        lo = np.maximum(self.start[:n], self.last)
        hi = np.minimum(self.end[:n], t)
        span = np.where(used, np.clip(hi - lo, 0.0, None), 0.0)
        frac = span / dt
        want = self.want_const[:n].copy()
        for curve, at in self._curve_groups(n):
            want[at] = curve_at(curve, np.minimum(t, self.end[at]) - self.origin[at]) / 1000.0
        want = np.where(span > 0, want, 0.0)
        quota = self.quota[:n]
        capped, periods, thr_periods, thr_us = fluid_step(want, quota, self.period[:n], span * 1e6)
        grant = capped.copy()
        pools = self.pool[:n]
        load = np.bincount(pools, weights=capped * frac, minlength=len(self.pool_cap))
        caps = np.asarray(self.pool_cap, dtype=float)
        hot = np.nonzero(load > caps + _EPS)[0]
        if len(hot):
            members = np.nonzero(np.isin(pools, hot) & (span > 0))[0]
            count = np.bincount(pools[members], minlength=len(caps))
            alone = members[count[pools[members]] == 1]     # one container: it gets the whole pool
            grant[alone] = np.minimum(capped[alone], caps[pools[alone]] / frac[alone])
            members = members[count[pools[members]] > 1]
            if len(members):   # every shared pool's split at once (cfs.fair_share, pool by pool, is the plain form)
                got = fair_share_pools(caps, pools[members], capped[members] * frac[members], self.weight[members])
                grant[members] = got / frac[members]
        # a container the pool held below its quota never used the quota up: waiting, not throttled
        held = grant < capped * (1.0 - 1e-9)
        thr_periods = np.where(held, 0.0, thr_periods)
        thr_us = np.where(held, 0.0, thr_us)
        self.usage_us[:n] += grant * span * 1e6
        self.periods[:n] += periods
        self.thr_periods[:n] += thr_periods
        self.thr_us[:n] += thr_us
        safe = np.where(want > 0, want, 1.0)
        some = np.where(want > 0, np.clip(1.0 - grant / safe, 0.0, 1.0), 0.0)
        throttled = np.where((want > quota) & ~held, 1.0 - quota / safe, 0.0)
        full = np.where(want <= 1.0, some, throttled)
        self.psi.advance(some * frac, full * frac, dt * 1e9)
        avg10 = self.psi.avg10(0, n)
        np.maximum(self.peak[:n], np.where(used, avg10, 0.0), out=self.peak[:n])
        self.last_grant = np.where(span > 0, grant, 0.0)
        self._record(t, n, span, want, grant, throttled, avg10)
        self.last = t
        self._let_go(t)

    def _curve_groups(self, n: int) -> list[tuple[Any, np.ndarray]]:
        """The rows in use with a moving curve, grouped by curve."""
        cid = self.curve_id[:n]
        moving = np.flatnonzero(self.used[:n] & (cid >= 0))
        if not len(moving):
            return []
        order = moving[np.argsort(cid[moving], kind="stable")]
        ids = cid[order]
        cuts = np.flatnonzero(ids[1:] != ids[:-1]) + 1
        return [(self.curve_list[int(group[0])], rows) for group, rows in zip(np.split(ids, cuts), np.split(order, cuts))]

    def _record(self, t: float, n: int, span: np.ndarray, want: np.ndarray, grant: np.ndarray,
                throttled: np.ndarray, avg10: np.ndarray) -> None:
        live = span > 0
        nodes = self.node[:n]
        n_nodes = len(self.sim.sim_nodes)
        used_cores = np.bincount(nodes, weights=np.where(live, grant, 0.0), minlength=n_nodes)
        node_thr = np.bincount(nodes, weights=(live & (throttled > 0)).astype(float), minlength=n_nodes)
        node_psi = np.zeros(n_nodes)
        np.maximum.at(node_psi, nodes, np.where(self.used[:n], avg10, 0.0))
        self.node_psi = node_psi
        total_want = float(want[live].sum())
        self.series.append({"time": t, "cpuUsedCores": float(used_cores.sum()), "cpuWantedCores": total_want,
                            "throttledContainers": int((live & (throttled > 0)).sum()),
                            "nodesWithCpuPressure": int((node_psi >= 10.0).sum()),
                            "maxNodeCpuSomeAvg10": float(node_psi.max()) if n_nodes else 0.0})
        shown = np.flatnonzero((node_thr > 0) | (node_psi > 0))
        if len(shown):
            self.node_steps.append((t, shown, used_cores[shown], node_psi[shown], node_thr[shown]))
            if len(self.peak_node) < n_nodes:
                self.peak_node = np.concatenate([self.peak_node, np.zeros(n_nodes - len(self.peak_node))])
            np.maximum.at(self.peak_node, shown, node_psi[shown])
        hot = np.nonzero(live & ((throttled > 0) | (avg10 > 0)))[0]
        if len(hot):   # per pod: its worst container's throttled share and avg10, its CPU
            pods, inv = np.unique(self.pod[hot], return_inverse=True)
            thr = np.zeros(len(pods))
            psi10 = np.zeros(len(pods))
            np.maximum.at(thr, inv, throttled[hot])
            np.maximum.at(psi10, inv, avg10[hot])
            cores = np.bincount(inv, weights=grant[hot], minlength=len(pods))
            self.pod_steps.append((t, pods, thr, psi10, cores))

    def _let_go(self, t: float) -> None:
        n = self.n
        done = np.nonzero(self.used[:n] & (self.end[:n] <= t))[0]
        if not len(done):
            return
        rows = [int(k) for k in done.tolist()]
        for r, figures in zip(rows, self._figures(rows)):
            p = int(self.pod[r])
            self.finished.setdefault(p, []).append(figures)
            self.used[r] = False
            self.curve_id[r] = -1
            self.meta.pop(r, None)
            self._release_pool(int(self.pool[r]))
            mine = self.rows_of.get(p)
            if mine is not None:
                mine.remove(r)
                if not mine:
                    del self.rows_of[p]
            self.free.append(r)

    def _figures(self, rows: list[int]) -> list[ContainerCPU]:
        """The figures of these rows (vectorised: the run's end reads every running container)."""
        if not rows:
            return []
        idx = np.array(rows, dtype=np.int64)
        avg = self.psi.avg[:, idx, :]
        shown = ((avg >> FSHIFT) * 100 + (((avg & (FIXED_1 - 1)) * 100) >> FSHIFT)) / 100   # two decimals
        totals = self.psi.total_ns[:, idx] // 1000
        meta = self.meta
        names, cpu_max, weights, kinds = [], [], [], []
        for r in rows:
            name, quota_us, period, weight, kind = meta[r]
            names.append(name)
            cpu_max.append(f"{quota_us or 'max'} {period}")
            weights.append(weight)
            kinds.append(kind)
        return list(map(ContainerCPU, names, cpu_max, weights, kinds, self.usage_us[idx].astype(np.int64).tolist(),
                        np.round(self.periods[idx]).astype(np.int64).tolist(),
                        np.round(self.thr_periods[idx]).astype(np.int64).tolist(),
                        self.thr_us[idx].astype(np.int64).tolist(), shown[0, :, 0].tolist(), shown[0, :, 1].tolist(),
                        shown[0, :, 2].tolist(), totals[0].tolist(), shown[1, :, 0].tolist(), totals[1].tolist(),
                        self.peak[idx].tolist()))

    # --- results ---------------------------------------------------------------------------------
    def result(self) -> "CPUResult":
        """For :class:`~kubetwin.sim.results.SimResult`: cluster figures per sample, per-node and
        per-pod series (only where something was throttled or stalled), and every pod's
        per-container ``cpu.max``, ``cpu.stat`` and ``cpu.pressure`` — as a mapping built when read
        (:class:`~kubetwin.sim.cpu_result.CPUResult`: the figures stay tuples and arrays)."""
        from .cpu_result import CPUResult

        pods = self.sim.pods
        figures = self.pod_figures()
        series = self.pod_series()
        return CPUResult(list(self.series), self.sim.cluster.names, list(self.node_steps), self.peak_node.copy(),
                         [(pods[p].pod.key, figs, series.get(p, [])) for p, figs in sorted(figures.items())])

    def node_series(self) -> dict[int, tuple[float, list[list[float]]]]:
        """Per node that was throttled or stalled at some sample: :func:`.cpu_result.node_series`."""
        from .cpu_result import node_series

        return node_series(self.node_steps, self.peak_node)

    def pod_series(self, limit: int = MAX_POD_SERIES) -> dict[int, list[list[float]]]:
        """[time, throttled share, some avg10, cores] per sample for the ``limit`` pods whose some
        avg10 peaked highest (then the most throttled)."""
        if not self.pod_steps:
            return {}
        every = np.concatenate([pods for _, pods, _, _, _ in self.pod_steps])
        seen, at = np.unique(every, return_inverse=True)
        peak_psi = np.zeros(len(seen))
        peak_thr = np.zeros(len(seen))
        np.maximum.at(peak_psi, at, np.concatenate([psi10 for _, _, _, psi10, _ in self.pod_steps]))
        np.maximum.at(peak_thr, at, np.concatenate([thr for _, _, thr, _, _ in self.pod_steps]))
        # highest peak avg10 first, then the most throttled, then by pod
        keep = seen[np.lexsort((seen, -peak_thr, -peak_psi))[:limit]].tolist()
        wanted = np.array(sorted(keep), dtype=np.int64)
        out: dict[int, list[list[float]]] = {p: [] for p in keep}
        for t, pods, thr, psi10, cores in self.pod_steps:
            at = np.nonzero(np.isin(pods, wanted))[0]
            for k in at.tolist():
                out[int(pods[k])].append([t, float(thr[k]), float(psi10[k]), float(cores[k])])
        return out

    def pod_figures(self) -> dict[int, list[ContainerCPU]]:
        """Per pod (SimPod index): its containers' figures — finished pods and those still running."""
        self._flush()
        out = {p: list(v) for p, v in self.finished.items()}
        running = [(p, r) for p, rows in self.rows_of.items() for r in rows if self.used[r]]
        for (p, _), figures in zip(running, self._figures([r for _, r in running])):
            out.setdefault(p, []).append(figures)
        return out

    def summary(self, i: int, t: float | None = None) -> "Summary":
        """The CPU part of node ``i``'s ``/stats/summary`` now (``cpu.usageNanoCores``,
        ``usageCoreNanoSeconds`` and, while ``KubeletPSI`` is on, ``cpu.psi``)."""
        from datetime import timedelta

        from ..model.summary import ContainerStats, CPUStats, NodeStats, PodReference, PodStats, PSIData, PSIStats
        from ..model.summary import Summary as SummaryT
        from .loop import EPOCH

        self._flush()
        now = self.sim.now if t is None else t
        stamp = (EPOCH + timedelta(seconds=now)).strftime("%Y-%m-%dT%H:%M:%SZ")
        psi_on = gate(self.gates, "KubeletPSI")

        def psi_of(rows: list[int]) -> PSIStats | None:
            if not psi_on:
                return None
            lines = []
            for kind in (0, 1):
                best = max((self.psi.line(kind, r) for r in rows), key=lambda ln: (ln.avg10, ln.total_us),
                           default=None)
                lines.append(PSIData(total=best.total_us if best else 0, avg10=best.avg10 if best else 0.0,
                                     avg60=best.avg60 if best else 0.0, avg300=best.avg300 if best else 0.0))
            return PSIStats(some=lines[0], full=lines[1])

        pods = []
        node_rows: list[int] = []
        node_usage = 0.0
        node_rate = 0.0
        for p, rows in sorted(self.rows_of.items()):
            rows = [r for r in rows if self.used[r] and int(self.node[r]) == i]
            if not rows:
                continue
            node_rows.extend(rows)
            sp = self.sim.pods[p]
            conts = []
            for r in rows:
                conts.append(ContainerStats(name=self.meta[r][0], cpu=CPUStats(
                    time=stamp, usage_nano_cores=int(self._rate(r) * 1e9),
                    usage_core_nano_seconds=int(self.usage_us[r] * 1000),
                    psi=psi_of([r]))))
            usage = float(sum(self.usage_us[r] for r in rows))
            rate = sum(self._rate(r) for r in rows)
            node_usage += usage
            node_rate += rate
            pods.append(PodStats(pod_ref=PodReference(name=sp.pod.name, namespace=sp.pod.namespace, uid=sp.pod.uid),
                                 containers=conts, cpu=CPUStats(time=stamp, usage_nano_cores=int(rate * 1e9),
                                                                usage_core_nano_seconds=int(usage * 1000),
                                                                psi=psi_of(rows))))
        node_psi = psi_of(node_rows)
        if node_psi is not None:   # system-wide CPU "full" is undefined and reported as zero
            node_psi = PSIStats(some=node_psi.some, full=PSIData(total=0, avg10=0.0, avg60=0.0, avg300=0.0))
        node = NodeStats(node_name=self.sim.cluster.names[i], cpu=CPUStats(
            time=stamp, usage_nano_cores=int(node_rate * 1e9), usage_core_nano_seconds=int(node_usage * 1000),
            psi=node_psi))
        return SummaryT(node=node, pods=pods)

    def _rate(self, r: int) -> float:
        """Cores the container ran over the last interval (the Summary's ``usageNanoCores``)."""
        return float(self.last_grant[r]) if r < len(self.last_grant) else 0.0


def summary_figures(cpu: Mapping[str, Any]) -> dict[str, Any]:
    """The run's CPU figures for ``SimResult.summary()``: throttling over the whole run, the worst
    CPU pressure seen on a node and a pod."""
    periods = throttled = 0
    throttled_us = 0
    pods = containers = 0
    worst_pod = 0.0
    if hasattr(cpu, "pod_containers"):   # a CPUResult: the figures as tuples, no dicts built
        per_pod: Any = ([(c.nr_periods, c.nr_throttled, c.throttled_usec, c.peak_some_avg10) for c in figs]
                        for figs in cpu.pod_containers())
    else:
        per_pod = ([(c["cpu.stat"]["nr_periods"], c["cpu.stat"]["nr_throttled"], c["cpu.stat"]["throttled_usec"],
                     c["peakSomeAvg10"]) for c in p["containers"]] for p in cpu["pods"].values())
    for conts in per_pod:
        hit = False
        for nr_periods, nr_throttled, thr_usec, peak in conts:
            periods += nr_periods
            throttled += nr_throttled
            throttled_us += thr_usec
            if nr_throttled:
                containers += 1
                hit = True
            worst_pod = max(worst_pod, peak)
        pods += hit
    series = cpu["series"]
    return {"throttledPods": pods, "throttledContainers": containers,
            "throttledPeriodShare": round(throttled / periods, 4) if periods else 0.0,
            "throttledSeconds": round(throttled_us / 1e6, 3),
            "peakNodeCpuSomeAvg10": max((s["maxNodeCpuSomeAvg10"] for s in series), default=0.0),
            "peakPodCpuSomeAvg10": worst_pod,
            "peakNodesWithCpuPressure": max((s["nodesWithCpuPressure"] for s in series), default=0)}


def curve_at(curve: Any, ages: np.ndarray) -> np.ndarray:
    """:meth:`kubetwin.sim.usage.Curve.at` for many ages at once, with the same arithmetic in the
    same order (so the same truncated amounts)."""
    ts = np.asarray(curve.times, dtype=float)
    vs = np.asarray(curve.values, dtype=float)
    k = np.searchsorted(ts, ages, side="right")
    kk = np.clip(k, 1, len(ts) - 1)
    t0, t1, v0, v1 = ts[kk - 1], ts[kk], vs[kk - 1], vs[kk]
    mid = np.trunc(v0 + (v1 - v0) * (ages - t0) / (t1 - t0))
    return np.where(ages <= ts[0], vs[0], np.where(k >= len(ts), vs[-1], mid))
