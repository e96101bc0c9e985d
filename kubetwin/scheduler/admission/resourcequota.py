"""ResourceQuota admission for pods: scopes, required resources, and the quota arithmetic.

For each quota of the namespace whose scopes all match the pod, the resources it limits must
be stated by every container (cpu/memory requests and limits, the historical rule) and the
pod's usage added to ``status.used`` must stay within ``status.hard``. A quota without a
status is taken as the quota controller would have synced it: ``hard`` from the spec, ``used``
counted over the running pods of the namespace.

Upstream: ``plugin/pkg/admission/resourcequota``, ``pkg/quota/v1/evaluator/core/pods.go``."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...model.features import FeatureGates
from ...model.pod import Pod, is_extended_resource, is_hugepage_resource
from ...model.quantity import Quantity
from ..labels import requirement_matcher
from . import AdmissionRejected

PLUGIN = "ResourceQuota"
#: the resources whose use a container must state when a quota limits them
VALIDATION_SET = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")
_ZERO = Quantity.from_int(0)


def _is_terminating(pod: Pod) -> bool:
    ads = pod.spec.active_deadline_seconds
    return ads is not None and ads >= 0


def _best_effort(pod: Pod, gates: FeatureGates | None) -> bool:
    from ...kubelet.qos import get_pod_qos

    return get_pod_qos(pod, gates) == "BestEffort"


def _cross_namespace_affinity(pod: Pod) -> bool:
    aff = pod.spec.affinity
    if aff is None:
        return False
    terms = []
    for pa in (aff.pod_affinity, aff.pod_anti_affinity):
        if pa is None:
            continue
        terms += list(pa.required_during_scheduling_ignored_during_execution)
        terms += [w.pod_affinity_term for w in pa.preferred_during_scheduling_ignored_during_execution]
    return any(t.namespaces or t.namespace_selector is not None for t in terms)


def scope_matches(scope: str, operator: str, values: Sequence[str], pod: Pod, gates: FeatureGates | None) -> bool:
    """``podMatchesScopeFunc``."""
    if scope == "Terminating":
        return _is_terminating(pod)
    if scope == "NotTerminating":
        return not _is_terminating(pod)
    if scope == "BestEffort":
        return _best_effort(pod, gates)
    if scope == "NotBestEffort":
        return not _best_effort(pod, gates)
    if scope == "PriorityClass":
        if operator == "Exists":
            return bool(pod.spec.priority_class_name)
        m = requirement_matcher("PriorityClass", operator, tuple(values), check=False)
        return bool(m and m({"PriorityClass": pod.spec.priority_class_name}))
    if scope == "CrossNamespacePodAffinity":
        return _cross_namespace_affinity(pod)
    return False


def quota_matches(quota: Any, pod: Pod, gates: FeatureGates | None) -> bool:
    """Every scope (plain scopes are ``Exists`` requirements) must match."""
    reqs = [(s, "Exists", ()) for s in quota.spec.scopes]
    if quota.spec.scope_selector is not None:
        reqs += [(r.scope_name, r.operator, r.values) for r in quota.spec.scope_selector.match_expressions]
    return all(scope_matches(s, op, vals, pod, gates) for s, op, vals in reqs)


def _usage_of(requests: Mapping[str, Quantity], limits: Mapping[str, Quantity]) -> dict[str, Quantity]:
    """``podComputeUsageHelper``."""
    out: dict[str, Quantity] = {"pods": Quantity.from_int(1)}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            if name != "ephemeral-storage":
                out[name] = requests[name]
            out[f"requests.{name}"] = requests[name]
        if name in limits:
            out[f"limits.{name}"] = limits[name]
    for name, q in requests.items():
        if is_hugepage_resource(name):
            out[name] = q
            out[f"requests.{name}"] = q
        if is_extended_resource(name):
            out[f"requests.{name}"] = q
    return out


def pod_usage(pod: Pod, gates: FeatureGates | None) -> dict[str, Quantity]:
    """What creating the pod adds to a quota (terminal pods add nothing)."""
    from ...model.resources import PodResourcesOptions, pod_limits, pod_requests

    if pod.status.phase in ("Succeeded", "Failed"):
        return {}
    skip = gates is not None and not gates.enabled("PodLevelResources")
    opts = PodResourcesOptions(skip_pod_level_resources=skip)
    usage = _usage_of(pod_requests(pod, opts), pod_limits(pod, opts))
    usage["count/pods"] = Quantity.from_int(1)
    return usage


def _matching_resources(names: Sequence[str]) -> list[str]:
    """Quota resources the pod evaluator counts."""
    out = []
    for n in names:
        if n in ("pods", "count/pods", "cpu", "memory", "ephemeral-storage") or n.startswith(("requests.", "limits.")) \
                or is_hugepage_resource(n):
            out.append(n)
    return out


def constraints(pod: Pod, required: Sequence[str]) -> str | None:
    """``podEvaluator.Constraints``: containers must state what a quota on cpu/memory limits."""
    req_set = {r for r in required if r in VALIDATION_SET}
    if not req_set:
        return None
    missing: dict[str, set[str]] = {}
    for c in list(pod.spec.containers) + list(pod.spec.init_containers):
        have = set(_usage_of(c.resources.requests, c.resources.limits))
        for r in req_set - have:
            missing.setdefault(r, set()).add(c.name)
    if not missing:
        return None
    return "must specify " + "; ".join(f"{r} for: {','.join(sorted(missing[r]))}" for r in sorted(missing))


def _pretty(values: Mapping[str, Quantity]) -> str:
    return ",".join(f"{k}={values[k].canonical()}" for k in sorted(values))


def _hard_and_used(quota: Any, running: Sequence[Pod], gates: FeatureGates | None) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    if quota.status.hard:
        return dict(quota.status.hard), dict(quota.status.used)
    hard = dict(quota.spec.hard)
    used = {k: _ZERO for k in hard}
    for p in running:
        if p.metadata.namespace != quota.metadata.namespace or not quota_matches(quota, p, gates):
            continue
        for k, q in pod_usage(p, gates).items():
            if k in used:
                used[k] = used[k] + q
    return hard, used


def validate(pod: Pod, quotas: Sequence[Any], running: Sequence[Pod] = (), gates: FeatureGates | None = None) -> None:
    """``checkRequest`` for a pod create; raises :class:`AdmissionRejected`."""
    interesting = []
    for quota in quotas:
        if not quota_matches(quota, pod, gates):
            continue
        hard, used = _hard_and_used(quota, running, gates)
        restricted = _matching_resources(list(hard))
        err = constraints(pod, restricted)
        if err:
            raise AdmissionRejected(PLUGIN, pod, f"failed quota: {quota.metadata.name}: {err}")
        missing = [r for r in restricted if r not in used]
        if missing:
            raise AdmissionRejected(PLUGIN, pod, f"status unknown for quota: {quota.metadata.name}, resources: "
                                    f"{','.join(sorted(restricted))}")
        interesting.append((quota, hard, used))
    if not interesting:
        return
    delta = {k: v for k, v in pod_usage(pod, gates).items() if not v.is_zero()}
    if not delta:
        return
    for quota, hard, used in interesting:
        requested = {k: v for k, v in delta.items() if k in hard}
        new_used = dict(used)
        for k, v in requested.items():
            new_used[k] = new_used.get(k, _ZERO) + v
        exceeded = [k for k in requested if k in hard and hard[k] < new_used[k]]
        if exceeded:
            raise AdmissionRejected(PLUGIN, pod, f"exceeded quota: {quota.metadata.name}, "
                                    f"requested: {_pretty({k: requested[k] for k in exceeded})}, "
                                    f"used: {_pretty({k: used.get(k, _ZERO) for k in exceeded})}, "
                                    f"limited: {_pretty({k: hard[k] for k in exceeded})}")
