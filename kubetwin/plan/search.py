"""The search for the smallest (or cheapest) mix, deterministic and stated.

1. **Bounds** (:mod:`.bounds`): per node type the fewest nodes any placement needs.
2. **Each type alone**: simulate the type's lower bound, then gallop (+1, +2, +4, ...) until a
   count fits, then bisect between the last count that did not and the first that did, then
   simulate every count left untried between the bound and the answer, lowest first (the first
   that fits is the answer). An answer equal to its lower bound is *proven minimal* (no
   placement at all does with less); one whose smaller counts were all simulated is *minimal
   for the default scheduler*: below the bound no placement fits, from the bound up the
   scheduler's own placement and the kubelets did not.
3. **Mixes** (two types or more): every mix cheaper than the best single type (fewer nodes
   without prices), with each type's count up to its own answer (or ``max``), that passes the
   resource-sum relaxation, simulated cheapest first (ties: fewer nodes, then the types' order).
   When no type alone fits (pods held to different types) or there are too many such mixes, a
   mix that fits is grown first (:mod:`.grow`) and the mixes cheaper than it are searched;
   the first that fits is the answer, minimal for the scheduler when no cheaper candidate was
   left untried, proven minimal when its price (node count) meets the lower bound.
4. The trial budget (``max_trials``) caps the simulations: when it runs out the best mix found
   is the answer, reported as a **bound** with the number of candidates left untried.
5. The same search with the kubelet's admission switched off gives the **scheduler-only**
   count (what kube-scheduler and the Cluster Autoscaler's estimator would size), for comparison.

Not an upstream module: kubetwin's own planner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from .bounds import INFEASIBLE, Demand, TypeBound, mix_admissible, mix_node_bound, price_bound, type_bound
from .trial import Trial, run_trial

#: simulations the search may run unless told otherwise
DEFAULT_MAX_TRIALS = 200
#: mixes the search enumerates at most (over all types)
MAX_CANDIDATES = 200_000


@dataclass
class TypeAnswer:
    """One node type alone."""

    name: str
    bound: TypeBound
    nodes: int | None = None          # the fewest that fit (None: none up to max)
    exhaustive: bool = False           # every count from the bound to the answer simulated
    untried: int = 0                   # counts between the bound and the answer not simulated
    scheduler_only: int | None = None  # the same without kubelet admission
    scheduler_only_exhaustive: bool = False

    @property
    def proven(self) -> bool:
        """The answer meets the lower bound: no placement does with fewer nodes of this type."""
        return self.nodes is not None and self.nodes <= self.bound.nodes


@dataclass
class Plan:
    """The search's outcome."""

    types: list[Any]
    demand: Demand
    priced: bool
    alone: list[TypeAnswer]
    best: Trial | None
    #: every cheaper candidate (from the bounds up) was simulated and did not fit
    exhaustive: bool
    lower_bound: float
    lower_basis: str
    untried: int
    trials: list[Trial] = field(default_factory=list)
    budget_spent: bool = False
    #: more cheaper mixes than the search enumerates (:data:`MAX_CANDIDATES`): mixes not searched
    too_many_mixes: bool = False

    def cost(self, counts: tuple[int, ...]) -> float:
        return sum(c * (t.price if self.priced else 1.0) for t, c in zip(self.types, counts))

    @property
    def proven(self) -> bool:
        """The answer meets the lower bound: no mix, however placed, does with less."""
        return self.best is not None and self.cost(tuple(c for _, c in self.best.mix)) <= self.lower_bound + 1e-9


class Searcher:
    """Runs trials, each mix once (memoised), within the budget."""

    def __init__(self, workload: Any, types: list[Any], *, kubernetes_version: str | None, max_trials: int,
                 progress: Callable[[str], None] | None = None):
        self.workload = workload
        self.types = types
        self.version = kubernetes_version
        self.max_trials = max_trials
        self.progress = progress
        self.done: dict[tuple[tuple[int, ...], bool], Trial] = {}
        self.order: list[Trial] = []

    @property
    def spent(self) -> bool:
        return len(self.done) >= self.max_trials

    def trial(self, counts: tuple[int, ...], kubelet: bool = True) -> Trial | None:
        key = (counts, kubelet)
        got = self.done.get(key)
        if got is not None:
            return got
        if self.spent:
            return None
        if self.progress is not None:
            mix = ", ".join(f"{c} {t.name}" for t, c in zip(self.types, counts) if c) or "no nodes"
            self.progress(f"trial {len(self.done) + 1}: {mix}{'' if kubelet else ' (scheduler only)'}")
        got = run_trial(self.workload, self.types, counts, kubelet=kubelet, kubernetes_version=self.version)
        self.done[key] = got
        self.order.append(got)
        return got

    def alone(self, i: int, low: int, high: int, kubelet: bool = True) -> tuple[int | None, bool, int]:
        """The fewest nodes of type ``i`` alone in [low, high] that fit: (count, exhaustive, untried)."""
        def counts(n: int) -> tuple[int, ...]:
            return tuple(n if j == i else 0 for j in range(len(self.types)))

        def fits(n: int) -> bool | None:
            t = self.trial(counts(n), kubelet)
            return None if t is None else t.fits

        low = max(low, 0)
        if low > high:
            return None, True, 0
        bad, good = low - 1, None
        step, n = 1, low
        while n <= high:
            ok = fits(n)
            if ok is None:
                break
            if ok:
                good = n
                break
            bad = n
            n = bad + step
            step *= 2
            if n > high and bad < high:
                n = high
        if good is None:
            untried = sum(1 for k in range(low, high + 1) if (counts(k), kubelet) not in self.done)
            return None, untried == 0, untried
        while good - bad > 1:   # bisect, counting on more nodes fitting no worse
            mid = (bad + good) // 2
            ok = fits(mid)
            if ok is None:
                break
            if ok:
                good = mid
            else:
                bad = mid
        for k in range(low, good):   # every count below, lowest first: the first that fits wins
            if (counts(k), kubelet) in self.done:
                continue
            ok = fits(k)
            if ok is None:
                break
            if ok:
                good = k
                break
        untried = sum(1 for k in range(low, good) if (counts(k), kubelet) not in self.done)
        return good, untried == 0, untried


def plan(workload: Any, types: list[Any], *, kubernetes_version: str | None = None,
         max_trials: int = DEFAULT_MAX_TRIALS, scheduler_only: bool = True,
         progress: Callable[[str], None] | None = None) -> Plan:
    """Search the mixes of ``types`` for the smallest (cheapest with prices) that runs the workload."""
    from .bounds import daemon_demand, demand_of
    from .workload import scenario_for

    priced = any(t.priced for t in types)
    empty = scenario_for(workload, [], kubernetes_version=kubernetes_version)
    demand = demand_of(empty)
    s = Searcher(workload, types, kubernetes_version=kubernetes_version, max_trials=max_trials, progress=progress)
    alone: list[TypeAnswer] = []
    from ..model.features import gates_for
    from ..sim.cluster_autoscaler import node_local_fit
    from .grow import owners

    gates = gates_for(kubernetes_version)
    pods = owners(empty, gates)
    rooms = []
    plain_bounds = []
    for i, t in enumerate(types):
        daemon = daemon_demand(workload, t, kubernetes_version)
        tb = type_bound(_scoped(demand, workload, t, kubernetes_version, empty), t, daemon)
        pb = type_bound(demand, t, daemon, numa=False)
        # a pod the scheduler's node-local filters keep off this type's nodes: no count of it alone runs it
        excluded = next((k for k, (pod, _) in pods.items() if not node_local_fit(pod, t.template.node, gates)), None)
        if excluded is not None:
            why = f"{excluded}: its node selector, node affinity or tolerations keep it off this type's nodes"
            tb, pb = TypeBound(INFEASIBLE, why, tb.room), TypeBound(INFEASIBLE, why, pb.room)
        plain_bounds.append(pb)
        rooms.append(tb.room)
        ans = TypeAnswer(t.name, tb)
        if tb.nodes != INFEASIBLE and tb.nodes <= t.max:
            ans.nodes, ans.exhaustive, ans.untried = s.alone(i, int(tb.nodes), t.max)
        else:
            ans.exhaustive = True   # no count of it alone can fit (its bound is infinite or past its max)
        alone.append(ans)
    n = len(types)

    def cost(counts: tuple[int, ...]) -> float:
        return sum(c * (t.price if priced else 1.0) for t, c in zip(types, counts))

    singles = [tuple(a.nodes if j == i else 0 for j in range(n)) for i, a in enumerate(alone) if a.nodes is not None]
    best_counts = min(singles, key=lambda c: (cost(c), sum(c), _rank(c))) if singles else None
    exhaustive = all(a.exhaustive for a in alone)
    untried = sum(a.untried for a in alone)
    too_many = False
    if n > 1:
        prices = [t.price if priced else 1.0 for t in types]
        limits = [min(t.max, a.nodes if a.nodes is not None else t.max) for t, a in zip(types, alone)]
        bar = (cost(best_counts), sum(best_counts)) if best_counts is not None else (math.inf, math.inf)
        found = cheaper_mixes(limits, prices, bar, MAX_CANDIDATES)
        if found is None:   # no type alone fits, or too many cheaper mixes: grow one that fits, search below it
            from .grow import grow

            grown = grow(s.trial, types, rooms, pods, gates, priced=priced)
            if grown is not None and (cost(grown), sum(grown)) < bar:
                best_counts = grown
                bar = (cost(grown), sum(grown))
                limits = [min(t.max, int(bar[0] // p)) for t, p in zip(types, prices)]
                found = cheaper_mixes(limits, prices, bar, MAX_CANDIDATES)
        if found is None:
            exhaustive = False
            too_many = True
        else:
            cands = [c for c in found if mix_admissible(demand, rooms, c)]
            cands.sort(key=lambda c: (cost(c), sum(c), _rank(c)))
            for k, c in enumerate(cands):
                t = s.trial(c)
                if t is None:
                    exhaustive = False
                    untried += len(cands) - k
                    break
                if t.fits:
                    best_counts = c
                    break
    if priced:
        lb, basis = price_bound(demand, rooms, [t.price for t in types])
    elif n == 1:
        lb, basis = alone[0].bound.nodes, alone[0].bound.basis
    else:
        lb, basis = mix_node_bound(demand, rooms)
    best = None
    if best_counts is not None:
        best = s.done.get((best_counts, True))
        if best is not None and best.fits:
            best = run_trial(workload, types, best_counts, kubernetes_version=kubernetes_version, keep=True)
    if scheduler_only and not s.spent:
        for i, (t, a, pb) in enumerate(zip(types, alone, plain_bounds)):
            if pb.nodes == INFEASIBLE or pb.nodes > t.max:
                continue
            high = a.nodes if a.nodes is not None else t.max
            a.scheduler_only, a.scheduler_only_exhaustive, _ = s.alone(i, int(pb.nodes), high, kubelet=False)
    out = Plan(types, demand, priced, alone, best, exhaustive, lb, basis, untried, s.order, s.spent)
    out.too_many_mixes = too_many
    return out


def cheaper_mixes(limits: list[int], prices: list[float], bar: tuple[float, float],
                  cap: int) -> list[tuple[int, ...]] | None:
    """Every mix of two types or more, each type's count up to its limit, that is cheaper than
    ``bar`` (price, then nodes); None when there are more than ``cap``. Enumerated depth first,
    a branch cut as soon as its price alone reaches the bar."""
    out: list[tuple[int, ...]] = []
    n = len(limits)
    counts = [0] * n

    def walk(i: int, price: float, nodes: int) -> bool:
        if i == n:
            if sum(1 for c in counts if c) > 1 and (price, nodes) < bar:
                out.append(tuple(counts))
                if len(out) > cap:
                    return False
            return True
        for c in range(limits[i] + 1):
            p = price + c * prices[i]
            if c and p > bar[0]:
                break
            counts[i] = c
            if not walk(i + 1, p, nodes + c):
                return False
        counts[i] = 0
        return True

    return out if walk(0, 0.0, 0) else None


def _rank(counts: tuple[int, ...]) -> tuple[int, ...]:
    """Ties broken by the types' order: more of the earlier types first."""
    return tuple(-c for c in counts)


def _scoped(demand: Demand, workload: Any, t: Any, version: str | None, empty: Any) -> Demand:
    """The demand with exclusive-CPU items as the type's topology manager scope counts them."""
    from .bounds import demand_of

    scope = t.template.kubelet.topology_manager_scope if t.template.kubelet is not None else "container"
    return demand_of(empty, scope=scope) if scope != "container" else demand
