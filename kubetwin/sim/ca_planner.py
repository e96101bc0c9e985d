"""The Cluster Autoscaler's scale-down planner: which nodes are checked for removal in a scan, in
which order, how many, which ones are skipped as recently unremovable, and how many of the
unneeded ones are deleted at once.

Upstream (read, not copied): cluster-autoscaler 1.36.1
``core/scaledown/planner/planner.go`` (``categorizeNodes``: the candidates are simulated in order
until ``unneededNodesLimit`` removable nodes are found; a node the simulation cannot remove is
not checked again for ``--unremovable-node-recheck-timeout``; ``minUpdateInterval``; the
unneeded list replaced by each scan's removable nodes, their first-seen times kept),
``core/scaledown/unremovable/nodes.go`` (the recheck TTLs), ``core/scaledown/unneeded/nodes.go``
(``RemovableAt``: unneeded for longer than ``--scale-down-unneeded-time``, strictly; the node
group's target size above its minimum, counted down per node taken),
``core/scaledown/eligibility/eligibility.go`` (utilization *at or below* the threshold),
``processors/scaledowncandidates`` (the candidates sorted: empty nodes first, then the nodes
unneeded in the previous scan) and ``core/scaledown/budgets/budgets.go`` (``CropNodes``: empty
nodes up to ``--max-scale-down-parallelism``, nodes to drain up to the rest of it and
``--max-drain-parallelism``, node group by node group).

Not modelled, stated: ``--scale-down-simulation-timeout`` is wall time (kubetwin's simulation
takes none, so it never fires); node groups scaled atomically (``ZeroOrMaxNodeScaling``); the
PDB tracker's ``IsRisky`` ordering of nodes to drain; upstream sorts with Go's unstable
``sort.Sort`` over the node lister's order, kubetwin sorts stably over the node-tree order.
``--scale-down-non-empty-candidates-count`` and the candidates-pool flags are parsed by 1.36 but
read by nothing, so kubetwin has no such option.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence, TypeVar

T = TypeVar("T")

_NS = 1_000_000_000


@dataclass(frozen=True)
class PlannerLimits:
    """The flags that bound a scale-down scan (cluster-autoscaler 1.36 defaults)."""

    max_scale_down_parallelism: int = 10
    max_drain_parallelism: int = 1
    unremovable_node_recheck_timeout: float = 300.0


def unneeded_nodes_limit(unneeded: int, parallelism: int, unneeded_time: float, min_update_interval: float) -> int:
    """``Planner.unneededNodesLimit``: the unneeded nodes a scan stops looking beyond — the ones
    already unneeded plus twice the parallelism, but at most the parallelism times the loops one
    unneeded time spans, plus the parallelism. Durations in whole nanoseconds, as upstream divides."""
    n = parallelism
    limit = unneeded + n + n
    loop = max(1, round(min_update_interval * _NS))
    u = max(round(unneeded_time * _NS), loop)
    return min(n * (u // loop) + n, limit)


def order_candidates(nodes: Sequence[T], empty: Callable[[T], bool], previous: Callable[[T], bool]) -> list[T]:
    """``ScaleDownCandidatesSortingProcessor`` with its comparers in upstream's order: empty nodes
    first (``EmptySorting``), then the previous scan's unneeded nodes (``PreviousCandidates``)."""
    return sorted(nodes, key=lambda n: (not empty(n), not previous(n)))


def crop(empty: Sequence[tuple[str, str]], drain: Sequence[tuple[str, str]],
         limits: PlannerLimits) -> tuple[list[str], list[str]]:
    """``ScaleDownBudgetProcessor.CropNodes`` with no deletion in progress, for ``(node, group)``
    pairs: the nodes grouped by node group (groups in first-seen order), empty ones taken up to
    the parallelism, then nodes to drain up to what is left of it and the drain parallelism."""
    def take(pairs: Sequence[tuple[str, str]], budget: int) -> list[str]:
        groups: dict[str, list[str]] = {}
        for name, g in pairs:
            groups.setdefault(g, []).append(name)
        out: list[str] = []
        for names in groups.values():
            if budget < 1:
                break
            got = names[:budget]
            out += got
            budget -= len(got)
        return out

    first = take(empty, limits.max_scale_down_parallelism)
    budget = min(limits.max_scale_down_parallelism - len(first), limits.max_drain_parallelism)
    return first, take(drain, budget)


@dataclass
class Planner:
    """The planner's state across scans: the unneeded nodes with the time each was first found
    unneeded, the recently unremovable ones with the time they are checked again, and the
    shortest interval seen between two scans."""

    limits: PlannerLimits
    unneeded_time: float
    unneeded: dict[str, float] = field(default_factory=dict)
    unremovable_until: dict[str, float] = field(default_factory=dict)
    latest_update: float | None = None
    min_update_interval: float = 0.0

    def __post_init__(self) -> None:
        # ``planner.New``: the unneeded time, or one nanosecond when it is zero
        self.min_update_interval = self.unneeded_time if self.unneeded_time > 0 else 1 / _NS

    def begin(self, now: float, nodes: Iterable[str]) -> None:
        """``UpdateClusterState``'s start: the scan interval's minimum kept; TTLs that ran out
        (at ``now`` or before) or of nodes that left are dropped."""
        if self.latest_update is not None and now - self.latest_update < self.min_update_interval:
            self.min_update_interval = now - self.latest_update
        self.latest_update = now
        present = set(nodes)
        self.unremovable_until = {n: t for n, t in self.unremovable_until.items() if n in present and t > now}

    def recently_unremovable(self, name: str) -> bool:
        return name in self.unremovable_until

    def limit(self) -> int:
        return unneeded_nodes_limit(len(self.unneeded), self.limits.max_scale_down_parallelism,
                                    self.unneeded_time, self.min_update_interval)

    def mark_unremovable(self, name: str, now: float) -> None:
        """The simulation could not remove the node: not checked again before the recheck timeout."""
        self.unremovable_until[name] = now + self.limits.unremovable_node_recheck_timeout

    def finish(self, removable: Iterable[str], now: float) -> None:
        """``unneeded.Nodes.Update``: this scan's removable nodes, first-seen times kept."""
        self.unneeded = {n: self.unneeded.get(n, now) for n in removable}

    def unneeded_long_enough(self, name: str, now: float) -> bool:
        """``RemovableAt``: unneeded for more than the unneeded time (any time when it is zero)."""
        return self.unneeded_time <= 0 or self.unneeded[name] + self.unneeded_time < now
