"""Admission controllers run when a pod is created: LimitRanger, Priority, ResourceQuota."""

from __future__ import annotations

import pytest

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.pod import Pod
from kubetwin.model.policy import limit_range_from_dict, priority_class_from_dict, resource_quota_from_dict
from kubetwin.scheduler.admission import AdmissionRejected, admit_pod

GATES = gates_for()


def pod(name="p", requests=None, limits=None, ns="default", **spec) -> Pod:
    res = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return convert({"metadata": {"name": name, "namespace": ns},
                    "spec": {"containers": [{"name": "c", "resources": res}], **spec}}, Pod)


def limit_range(*items, ns="default"):
    return limit_range_from_dict({"apiVersion": "v1", "kind": "LimitRange",
                                  "metadata": {"name": "lr", "namespace": ns}, "spec": {"limits": list(items)}})


def quota(hard, name="q", used=None, **spec):
    obj = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": "default"},
           "spec": {"hard": hard, **spec}}
    if used is not None:
        obj["status"] = {"hard": hard, "used": used}
    return resource_quota_from_dict(obj)


def pc(name, value, default=False, policy=None):
    obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
           "value": value, "globalDefault": default}
    if policy:
        obj["preemptionPolicy"] = policy
    return priority_class_from_dict(obj)


def res(p: Pod, kind: str) -> dict[str, str]:
    return {k: str(v) for k, v in getattr(p.spec.containers[0].resources, kind).items()}


# --- LimitRanger -------------------------------------------------------------------------------


def test_limit_range_fills_default_request_and_limit():
    lr = limit_range({"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"}})
    out = admit_pod(pod(), limit_ranges=[lr], gates=GATES).pod
    assert res(out, "requests") == {"cpu": "100m"}
    assert res(out, "limits") == {"cpu": "500m"}


def test_limit_range_default_limit_falls_back_to_max_and_request_to_default():
    lr = limit_range({"type": "Container", "max": {"memory": "1Gi"}})
    out = admit_pod(pod(), limit_ranges=[lr], gates=GATES).pod
    assert res(out, "limits") == {"memory": "1Gi"}
    assert res(out, "requests") == {"memory": "1Gi"}


def test_limit_range_keeps_what_the_container_states():
    lr = limit_range({"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "1"}})
    out = admit_pod(pod(requests={"cpu": "200m"}, limits={"cpu": "300m"}), limit_ranges=[lr], gates=GATES).pod
    assert res(out, "requests") == {"cpu": "200m"} and res(out, "limits") == {"cpu": "300m"}


def test_limit_range_rejects_limit_above_max():
    lr = limit_range({"type": "Container", "max": {"cpu": "1"}})
    with pytest.raises(AdmissionRejected) as e:
        admit_pod(pod(limits={"cpu": "2"}), limit_ranges=[lr], gates=GATES)
    assert str(e.value) == 'pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2'


def test_limit_range_rejects_request_below_min_and_reports_every_failure():
    lr = limit_range({"type": "Container", "min": {"cpu": "500m", "memory": "1Gi"}})
    with pytest.raises(AdmissionRejected) as e:
        admit_pod(pod(requests={"cpu": "100m", "memory": "512Mi"}, limits={"cpu": "1", "memory": "1Gi"}),
                  limit_ranges=[lr], gates=GATES)
    assert str(e.value) == ('pods "p" is forbidden: [minimum cpu usage per Container is 500m, but request is 100m, '
                            'minimum memory usage per Container is 1Gi, but request is 512Mi]')


def test_limit_range_ratio_is_checked_in_milli_units():
    lr = limit_range({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}})
    with pytest.raises(AdmissionRejected) as e:
        admit_pod(pod(requests={"cpu": "100m"}, limits={"cpu": "250m"}), limit_ranges=[lr], gates=GATES)
    assert str(e.value).endswith("cpu max limit to request ratio per Container is 2, but provided ratio is 2.500000")


def test_limit_range_pod_item_checks_the_pod_sum():
    lr = limit_range({"type": "Pod", "max": {"cpu": "1"}})
    p = convert({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "a", "resources": {"limits": {"cpu": "600m"}}},
        {"name": "b", "resources": {"limits": {"cpu": "600m"}}}]}}, Pod)
    with pytest.raises(AdmissionRejected, match="maximum cpu usage per Pod is 1, but limit is 1200m"):
        admit_pod(p, limit_ranges=[lr], gates=GATES)


def test_limit_range_of_another_namespace_does_not_apply():
    lr = limit_range({"type": "Container", "max": {"cpu": "1"}}, ns="other")
    admit_pod(pod(limits={"cpu": "2"}), limit_ranges=[lr], gates=GATES)


# --- Priority ----------------------------------------------------------------------------------


def test_priority_class_name_resolves_priority_and_policy():
    out = admit_pod(pod(priorityClassName="high"), priority_classes=[pc("high", 1000, policy="Never")]).pod
    assert (out.spec.priority, out.spec.preemption_policy) == (1000, "Never")


def test_global_default_class_applies_to_pods_without_a_class():
    out = admit_pod(pod(), priority_classes=[pc("low", 5), pc("dflt", 7, default=True)]).pod
    assert (out.spec.priority_class_name, out.spec.priority) == ("dflt", 7)


def test_no_default_class_means_priority_zero():
    out = admit_pod(pod()).pod
    assert (out.spec.priority, out.spec.preemption_policy) == (0, "PreemptLowerPriority")


def test_system_classes_exist_without_being_given():
    assert admit_pod(pod(priorityClassName="system-node-critical")).pod.spec.priority == 2000001000


def test_unknown_priority_class_is_forbidden():
    with pytest.raises(AdmissionRejected) as e:
        admit_pod(pod(priorityClassName="nope"))
    assert str(e.value) == 'pods "p" is forbidden: no PriorityClass with name nope was found'


def test_stated_priority_must_match_the_class():
    with pytest.raises(AdmissionRejected, match=r"the integer value of priority \(5\) must not be provided in pod "
                                                r"spec; priority admission controller computed 1000"):
        admit_pod(pod(priorityClassName="high", priority=5), priority_classes=[pc("high", 1000)])


# --- ResourceQuota -----------------------------------------------------------------------------


def test_quota_counts_running_pods_when_it_has_no_status():
    running = [pod("r1", requests={"cpu": "1"}, limits={"cpu": "1"}, nodeName="n")]
    q = quota({"requests.cpu": "1500m"})
    with pytest.raises(AdmissionRejected) as e:
        admit_pod(pod(requests={"cpu": "1"}), quotas=[q], running=running, gates=GATES)
    assert str(e.value) == ('pods "p" is forbidden: exceeded quota: q, requested: requests.cpu=1, used: '
                            'requests.cpu=1, limited: requests.cpu=1500m')


def test_quota_status_is_used_when_present():
    q = quota({"pods": "2"}, used={"pods": "2"})
    with pytest.raises(AdmissionRejected, match="exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"):
        admit_pod(pod(), quotas=[q], gates=GATES)


def test_quota_on_cpu_requires_every_container_to_state_it():
    with pytest.raises(AdmissionRejected) as e:
        admit_pod(pod(), quotas=[quota({"limits.cpu": "4", "requests.memory": "1Gi"})], gates=GATES)
    assert str(e.value) == ('pods "p" is forbidden: failed quota: q: must specify limits.cpu for: c; '
                            'requests.memory for: c')


def test_quota_scope_best_effort_ignores_other_pods():
    q = quota({"pods": "0"}, scopes=["BestEffort"])
    admit_pod(pod(requests={"cpu": "1"}), quotas=[q], gates=GATES)
    with pytest.raises(AdmissionRejected):
        admit_pod(pod(), quotas=[q], gates=GATES)


def test_priority_class_quota_applies_to_pods_of_that_class():
    q = quota({"pods": "0"}, scopeSelector={"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]})
    classes = [pc("high", 1000), pc("low", 1)]
    admit_pod(pod(priorityClassName="low"), quotas=[q], priority_classes=classes, gates=GATES)
    with pytest.raises(AdmissionRejected, match="exceeded quota: q"):
        admit_pod(pod(priorityClassName="high"), quotas=[q], priority_classes=classes, gates=GATES)


def test_quota_with_partial_status_is_unknown():
    q = quota({"pods": "5", "requests.cpu": "2"}, used={"pods": "1"})
    with pytest.raises(AdmissionRejected, match="status unknown for quota: q, resources: pods,requests.cpu"):
        admit_pod(pod(requests={"cpu": "1"}), quotas=[q], gates=GATES)


def test_limit_range_defaults_are_counted_by_the_quota():
    lr = limit_range({"type": "Container", "defaultRequest": {"cpu": "2"}, "default": {"cpu": "2"}})
    with pytest.raises(AdmissionRejected, match="requested: requests.cpu=2"):
        admit_pod(pod(), limit_ranges=[lr], quotas=[quota({"requests.cpu": "1"})], gates=GATES)


# --- LimitRanger with pod-level resources (PodLevelResources) ----------------------------------


def pod_level(containers, requests=None, limits=None, **spec) -> Pod:
    res = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return convert({"metadata": {"name": "p", "namespace": "default"},
                    "spec": {"containers": containers, "resources": res, **spec}}, Pod)


def ctr(name, requests=None, limits=None) -> dict:
    return {"name": name, "resources": {"requests": requests or {}, "limits": limits or {}}}


def test_pod_item_checks_the_pod_level_limit_instead_of_the_container_sum():
    lr = limit_range({"type": "Pod", "max": {"cpu": "2"}})
    p = pod_level([ctr("a", limits={"cpu": "1500m"}), ctr("b", limits={"cpu": "1500m"})],
                  requests={"cpu": "1"}, limits={"cpu": "1500m"})
    admit_pod(p, limit_ranges=[lr], gates=GATES)


def test_pod_item_rejects_a_pod_level_limit_above_max():
    lr = limit_range({"type": "Pod", "max": {"cpu": "1"}})
    p = pod_level([ctr("a")], limits={"cpu": "1500m"})
    with pytest.raises(AdmissionRejected, match="maximum cpu usage per Pod is 1, but limit is 1500m"):
        admit_pod(p, limit_ranges=[lr], gates=GATES)


def test_pod_item_sums_containers_when_pod_level_resources_are_off():
    lr = limit_range({"type": "Pod", "max": {"cpu": "2"}})
    p = pod_level([ctr("a", limits={"cpu": "1500m"}), ctr("b", limits={"cpu": "1500m"})], limits={"cpu": "1500m"})
    with pytest.raises(AdmissionRejected, match="maximum cpu usage per Pod is 2, but limit is 3"):
        admit_pod(p, limit_ranges=[lr], gates=gates_for(overrides={"PodLevelResources": False}))


def test_pod_level_request_defaults_to_the_pod_level_limit():
    lr = limit_range({"type": "Pod", "min": {"memory": "1Gi"}})
    out = admit_pod(pod_level([ctr("a")], limits={"memory": "2Gi"}), limit_ranges=[lr], gates=GATES).pod
    assert {k: str(v) for k, v in out.spec.resources.requests.items()} == {"memory": "2Gi"}


def test_pod_level_request_defaults_to_the_containers_requests():
    lr = limit_range({"type": "Pod", "min": {"cpu": "600m"}})
    p = pod_level([ctr("a", requests={"cpu": "200m"}), ctr("b", requests={"cpu": "300m"})], limits={"cpu": "1"})
    with pytest.raises(AdmissionRejected, match="minimum cpu usage per Pod is 600m, but request is 500m"):
        admit_pod(p, limit_ranges=[lr], gates=GATES)


def test_pod_level_hugepage_limit_defaults_to_the_containers_limits():
    from kubetwin.scheduler.admission.defaults import default_pod

    p = pod_level([ctr("a", limits={"hugepages-2Mi": "4Mi", "memory": "1Gi"})], requests={"cpu": "1"})
    out = default_pod(p, GATES)
    assert {k: str(v) for k, v in out.spec.resources.limits.items()} == {"hugepages-2Mi": "4Mi"}
    # with a pod-level limit now set, the other requests default too: memory from the containers
    assert {k: str(v) for k, v in out.spec.resources.requests.items()} == {
        "cpu": "1", "hugepages-2Mi": "4Mi", "memory": "1Gi"}


def test_pod_level_limits_are_not_defaulted_from_container_limits():
    from kubetwin.scheduler.admission.defaults import default_pod

    out = default_pod(pod_level([ctr("a", limits={"cpu": "1"})], requests={"cpu": "1"}), GATES)
    assert out.spec.resources.limits == {}


def test_pod_item_ignores_the_runtime_class_overhead():
    lr = limit_range({"type": "Pod", "max": {"memory": "1Gi"}})
    p = pod_level([ctr("a", limits={"memory": "1Gi"})], overhead={"memory": "100Mi"})
    admit_pod(p, limit_ranges=[lr], gates=GATES)


def test_container_defaults_still_fill_containers_of_a_pod_with_pod_level_resources():
    lr = limit_range({"type": "Container", "defaultRequest": {"cpu": "100m"}, "default": {"cpu": "200m"}})
    out = admit_pod(pod_level([ctr("a")], requests={"cpu": "1"}, limits={"cpu": "1"}), limit_ranges=[lr],
                    gates=GATES).pod
    assert res(out, "requests") == {"cpu": "100m"}
    assert res(out, "limits") == {"cpu": "200m"}
