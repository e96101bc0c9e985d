"""The CPU manager's state: shared pool, container assignments, pod-level bubbles (``state/state.go``).

Mutable on purpose (it is the kubelet's in-memory store); ``snapshot``/``restore`` give the
immutable copies checkpoints and property tests compare.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model.cpuset import EMPTY, CPUSet


@dataclass
class CPUState:
    policy_name: str = "none"
    default_cpuset: CPUSet = EMPTY
    #: pod UID -> container name -> exclusive CPUs
    entries: dict[str, dict[str, CPUSet]] = field(default_factory=dict)
    #: pod UID -> the pod-level CPU bubble (PodLevelResourceManagers)
    pod_entries: dict[str, CPUSet] = field(default_factory=dict)

    def get(self, pod_uid: str, container: str) -> CPUSet | None:
        return self.entries.get(pod_uid, {}).get(container)

    def set(self, pod_uid: str, container: str, cpus: CPUSet) -> None:
        self.entries.setdefault(pod_uid, {})[container] = cpus

    def delete(self, pod_uid: str, container: str) -> None:
        conts = self.entries.get(pod_uid)
        if conts is None:
            return
        conts.pop(container, None)
        if not conts:
            del self.entries[pod_uid]

    def cpuset_or_default(self, pod_uid: str, container: str) -> CPUSet:
        got = self.get(pod_uid, container)
        return got if got is not None else self.default_cpuset

    def assigned_cpus(self) -> CPUSet:
        m = 0
        for conts in self.entries.values():
            for c in conts.values():
                m |= c.mask
        for c in self.pod_entries.values():
            m |= c.mask
        return CPUSet.from_mask(m)

    def snapshot(self) -> tuple:
        return (self.policy_name, self.default_cpuset,
                tuple(sorted((p, tuple(sorted(c.items()))) for p, c in self.entries.items())),
                tuple(sorted(self.pod_entries.items())))

    def clone(self) -> "CPUState":
        return CPUState(self.policy_name, self.default_cpuset,
                        {p: dict(c) for p, c in self.entries.items()}, dict(self.pod_entries))
