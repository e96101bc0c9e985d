"""The Topology Manager's admit handler: scopes ``container`` and ``pod`` over hint providers.

Providers are the CPU, memory and device managers. Each answers hints for a container or a
whole pod and allocates once the merged affinity is stored; the manager keeps that affinity per
(pod, container) so providers can ask for it (``GetAffinity``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

from ...model.features import FeatureGates
from ...model.pod import Container, Pod
from ...model.resources import is_pod_level_resources_set
from ..admission_errors import AdmissionError, KubeletHang, TopologyAffinityError
from .hint import TopologyHint
from .policy import NONE, Policy, ProviderHints


class HintProvider(Protocol):
    def get_topology_hints(self, pod: Pod, c: Container) -> ProviderHints | None: ...
    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints | None: ...
    def allocate(self, pod: Pod, c: Container) -> None: ...
    def allocate_pod(self, pod: Pod) -> None: ...


@dataclass
class ExplainRecord:
    """What ``--explain`` shows: each provider's hints and the merged hint, per container (or pod)."""

    container: str | None
    providers: list[tuple[str, ProviderHints | None]]
    merged: TopologyHint
    admit: bool


@dataclass
class TopologyManager:
    policy: Policy
    scope: str = "container"
    gates: FeatureGates | None = None
    providers: list[tuple[str, HintProvider]] = field(default_factory=list)
    affinities: dict[tuple[str, str], TopologyHint] = field(default_factory=dict)
    admission_requests: int = 0
    admission_errors: int = 0
    explain: list[ExplainRecord] | None = None
    #: (scope, "numa_node") -> containers (or pods) admitted / refused with guaranteed alignment
    aligned: dict[tuple[str, str], int] = field(default_factory=dict)
    aligned_failures: dict[tuple[str, str], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.policy.name != NONE:  # initializeMetrics: the four series exist from the start
            for scope in ("container", "pod"):
                self.aligned.setdefault((scope, "numa_node"), 0)
                self.aligned_failures.setdefault((scope, "numa_node"), 0)

    def _alignment_guaranteed(self) -> bool:
        """``IsAlignmentGuaranteed``: only single-numa-node promises NUMA alignment or failure."""
        return self.policy.name == "single-numa-node"

    def _count_alignment(self, scope: str, ok: bool) -> None:
        if self._alignment_guaranteed():
            table = self.aligned if ok else self.aligned_failures
            table[(scope, "numa_node")] = table.get((scope, "numa_node"), 0) + 1

    def fork(self) -> "TopologyManager":
        """A copy with no providers (the caller adds the copied ones) and its own affinities and counts."""
        return TopologyManager(self.policy, self.scope, self.gates, [], dict(self.affinities),
                               self.admission_requests, self.admission_errors,
                               None if self.explain is None else list(self.explain),
                               dict(self.aligned), dict(self.aligned_failures))

    def add_provider(self, name: str, provider: HintProvider) -> None:
        self.providers.append((name, provider))

    def get_affinity(self, pod_uid: str, container: str) -> TopologyHint:
        return self.affinities.get((pod_uid, container), TopologyHint(None, True))

    def remove_pod(self, pod_uid: str) -> None:
        for key in [k for k in self.affinities if k[0] == pod_uid]:
            del self.affinities[key]

    def admit(self, pod: Pod) -> None:
        """Raise an ``AdmissionError`` whose type is the pod's rejection reason."""
        self.admission_requests += 1
        try:
            if self.policy.name == NONE:
                self._admit_none(pod)
            elif self.scope == "pod":
                self._admit_pod_scope(pod)
            else:
                self._admit_container_scope(pod)
        except AdmissionError:
            self.admission_errors += 1
            raise
        except KubeletHang:
            raise  # no verdict at all: the admission never returns upstream
        except Exception as exc:  # noqa: BLE001 - any provider error is an admission failure
            self.admission_errors += 1
            raise AdmissionError(str(exc)) from None

    # --- scopes ----------------------------------------------------------------------------
    def _admit_none(self, pod: Pod) -> None:
        for c, _ in pod.all_containers():
            for _, p in self.providers:
                p.allocate(pod, c)

    def _record(self, container: str | None, hints: Sequence[tuple[str, ProviderHints | None]],
                merged: TopologyHint, admit: bool) -> None:
        if self.explain is not None:
            self.explain.append(ExplainRecord(container, list(hints), merged, admit))

    def _admit_container_scope(self, pod: Pod) -> None:
        for c, _ in pod.all_containers():
            hints = [(name, p.get_topology_hints(pod, c)) for name, p in self.providers]
            best, admit = self.policy.merge([h for _, h in hints])
            self._record(c.name, hints, best, admit)
            if not admit:
                self._count_alignment("container", False)
                raise TopologyAffinityError().with_hints(c, hints)
            self.affinities[(pod.uid, c.name)] = best
            for _, p in self.providers:
                p.allocate(pod, c)
            self._count_alignment("container", True)

    def pod_level_pod_scope(self, pod: Pod) -> bool:
        """Whether admission went through ``AllocatePod`` (pod scope, pod-level resource managers)."""
        return (self.policy.name != NONE and self.scope == "pod" and self.gates is not None
                and self.gates.enabled("PodLevelResources") and self.gates.enabled("PodLevelResourceManagers")
                and is_pod_level_resources_set(pod))

    def _admit_pod_scope(self, pod: Pod) -> None:
        hints = [(name, p.get_pod_topology_hints(pod)) for name, p in self.providers]
        best, admit = self.policy.merge([h for _, h in hints])
        self._record(None, hints, best, admit)
        pod_level = (self.gates is not None and self.gates.enabled("PodLevelResources")
                     and self.gates.enabled("PodLevelResourceManagers") and is_pod_level_resources_set(pod))
        if not admit:
            self._count_alignment("pod", False)
            if pod_level:
                raise TopologyAffinityError("Pod Scope: Resources cannot be allocated with Topology "
                                            "locality").with_hints(None, hints)
            raise TopologyAffinityError().with_hints(None, hints)
        for c, _ in pod.all_containers():
            self.affinities[(pod.uid, c.name)] = best
        if pod_level:
            for _, p in self.providers:
                p.allocate_pod(pod)
        else:
            for c, _ in pod.all_containers():
                for _, p in self.providers:
                    p.allocate(pod, c)
        self._count_alignment("pod", True)
