"""The VPA admission controller and the updater's priority, as the simulation applies them."""

from __future__ import annotations

from types import SimpleNamespace

from kubetwin.autoscale import vpa as V
from kubetwin.model.pod import pod_from_dict
from kubetwin.sim.autoscalers import apply_recommendation, vpa_update_priority
from kubetwin.sim.autoscaling_config import VPAFlags


def _pod(requests, limits=None):
    res = {"requests": requests}
    if limits:
        res["limits"] = limits
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u"},
                          "spec": {"containers": [{"name": "c", "resources": res}]}})


def _vpa(**policy):
    obj = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "v"},
           "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}}
    if policy:
        obj["spec"]["resourcePolicy"] = {"containerPolicies": [{"containerName": "c", **policy}]}
    return V.parse_vpa(obj)


def _rec(cpu, mem, lo=None, hi=None):
    t = V.Resources(cpu, mem)
    return {"c": V.RecommendedContainerResources(t, lo or t, hi or t)}


def test_admission_sets_requests_to_the_target_and_keeps_the_limit_ratio():
    pod = _pod({"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "2Gi"})
    out = apply_recommendation(pod, _vpa(), _rec(500, 512 * 1024 * 1024))
    res = out.spec.containers[0].resources
    assert res.requests["cpu"].milli_value() == 500 and res.limits["cpu"].milli_value() == 1000
    assert res.requests["memory"].value() == 512 * 1024 * 1024 and res.limits["memory"].value() == 1024 ** 3


def test_requests_only_leaves_the_limits_alone():
    pod = _pod({"cpu": "1"}, {"cpu": "2"})
    out = apply_recommendation(pod, _vpa(controlledValues="RequestsOnly"), _rec(500, None))
    assert out.spec.containers[0].resources.limits["cpu"].milli_value() == 2000


def test_a_container_whose_policy_is_off_is_left_alone():
    pod = _pod({"cpu": "1"})
    assert apply_recommendation(pod, _vpa(mode="Off"), _rec(500, None)) is pod


def test_a_request_outside_the_bounds_is_updated_at_once():
    sp = SimpleNamespace(pod=_pod({"cpu": "4", "memory": "1Gi"}), start=0.0)
    rec = _rec(300, 1024 ** 3, V.Resources(200, 1024 ** 3), V.Resources(1000, 2 * 1024 ** 3))
    assert vpa_update_priority(sp, rec, 60.0, VPAFlags()) is not None


def test_a_request_within_the_bounds_waits_for_the_pod_lifetime_threshold():
    sp = SimpleNamespace(pod=_pod({"cpu": "500m", "memory": "1Gi"}), start=0.0)
    rec = _rec(300, 1024 ** 3, V.Resources(200, 512 * 1024 ** 2), V.Resources(1000, 2 * 1024 ** 3))
    assert vpa_update_priority(sp, rec, 3600.0, VPAFlags()) is None
    assert vpa_update_priority(sp, rec, 13 * 3600.0, VPAFlags()) is not None
