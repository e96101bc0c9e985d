"""policy/v1 PodDisruptionBudget as preemption reads it: which pods it guards and how many
more disruptions its status allows (the disruption controller's count, taken as given)."""

from __future__ import annotations

from typing import Any


from ....model.meta import KubeStruct, LabelSelector, ObjectMeta, convert
from ....model.pod import Pod
from ...labels import label_selector_matcher


class PodDisruptionBudgetSpec(KubeStruct, frozen=True):
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None


class PodDisruptionBudgetStatus(KubeStruct, frozen=True):
    disruptions_allowed: int = 0
    disrupted_pods: dict[str, str] = {}
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0


class PodDisruptionBudget(KubeStruct, frozen=True):
    api_version: str = "policy/v1"
    kind: str = "PodDisruptionBudget"
    metadata: ObjectMeta = ObjectMeta()
    spec: PodDisruptionBudgetSpec = PodDisruptionBudgetSpec()
    status: PodDisruptionBudgetStatus = PodDisruptionBudgetStatus()


def pdbs_from_objects(raw: list[dict[str, Any]], origins: list[str] | None = None) -> list[PodDisruptionBudget]:
    out = []
    for k, obj in enumerate(raw):
        where = origins[k] if origins and k < len(origins) else None
        out.append(convert(obj, PodDisruptionBudget, file=where))
    return out


def _selects(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """A nil or empty selector matches nothing here (``selector.Empty()``)."""
    sel = pdb.spec.selector
    if sel is None or (not sel.match_labels and not sel.match_expressions):
        return False
    return label_selector_matcher(sel)(pod.metadata.labels)


def violating_pods(pods: list[Pod], pdbs: list[PodDisruptionBudget]) -> tuple[list[Pod], list[Pod]]:
    """``filterPodsWithPDBViolation``: (violating, non-violating), order kept.

    Each matching PDB's allowance is spent pod by pod; a pod the API server already counts
    as disrupted (``status.disruptedPods``) spends nothing.
    """
    allowed = [p.status.disruptions_allowed for p in pdbs]
    violating, fine = [], []
    for pod in pods:
        hit = False
        if pod.metadata.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.metadata.namespace != pod.metadata.namespace or not _selects(pdb, pod):
                    continue
                if pod.metadata.name in pdb.status.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    hit = True
        (violating if hit else fine).append(pod)
    return violating, fine


__all__ = ["PodDisruptionBudget", "pdbs_from_objects", "violating_pods"]
