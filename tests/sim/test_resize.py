"""In-place resizes in a simulation (``spec.resizes``, ``kubetwin.sim.resize``)."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.sim.loop import simulate

NODE = {"name": "n", "count": 1, "machine": "1s1n4c1t:mem=8Gi",
        "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}}


def burstable(name: str, count: int = 1, cpu: str = "1", duration: str | None = None) -> dict:
    w = {"name": name, "count": count, "arrival": {"at": "0s"},
         "template": {"spec": {"containers": [{"name": "app", "resources": {
             "requests": {"cpu": cpu, "memory": "1Gi"}, "limits": {"cpu": cpu, "memory": "2Gi"}}}]}}}
    if duration:
        w["duration"] = duration
    return w


def grow(cpu: str) -> dict:
    return {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}}


def resize_events(result) -> list[tuple]:
    return [(e["time"], e["pod"], e["status"], e.get("source") or e.get("trigger"))
            for e in result.events if e["type"] == "PodResize"]


def test_a_resize_that_fits_completes_at_its_time(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [NODE], "workloads": [burstable("web", duration="10m")],
                                 "resizes": [{"at": "1m", "pod": "web-0", "patch": grow("2")}]})
    r = simulate(sc)
    assert resize_events(r) == [(60.0, "default/web-0", "Completed", "spec.resizes[0]")]
    assert r.summary()["inPlaceResizes"] == {"Completed": 1}


def test_a_deferred_resize_completes_when_a_pod_on_the_node_finishes(tmp_path, kit):
    """HandlePodRemoves retries the pending resize (trigger pods_removed)."""
    sc = kit.scenario(tmp_path, {"nodeGroups": [NODE],
                                 "workloads": [burstable("web", count=2), burstable("batch", duration="5m")],
                                 "resizes": [{"at": "1m", "pod": "web-0", "patch": grow("2")}]})
    r = simulate(sc)
    assert resize_events(r)[0][2:] == ("Deferred", "spec.resizes[0]")
    assert resize_events(r)[-1] == (300.0, "default/web-0", "Completed", "pods_removed")


def test_the_scheduler_counts_a_deferred_resize_at_its_desired_size(tmp_path, kit):
    """A deferred resize holds its desired requests for the scheduler (max of desired and allocated)."""
    sc = kit.scenario(tmp_path, {"nodeGroups": [NODE],
                                 "workloads": [burstable("web", count=2),
                                               {**burstable("late", cpu="500m"), "arrival": {"at": "2m"}}],
                                 "resizes": [{"at": "1m", "pod": "web-0", "patch": grow("2")}]})
    r = simulate(sc)
    late = next(p for p in r.pods if p.name == "late-0")
    assert late.phase == "Pending" and "Insufficient cpu" in late.message


def test_a_refused_resize_is_recorded_with_the_api_servers_message(tmp_path, kit):
    patch = {"spec": {"containers": [{"name": "app", "resources": {"requests": {"memory": None}}}]}}
    sc = kit.scenario(tmp_path, {"nodeGroups": [NODE], "workloads": [burstable("web", duration="10m")],
                                 "resizes": [{"at": "1m", "workload": "web", "patch": patch}]})
    [e] = [e for e in simulate(sc).events if e["type"] == "PodResize"]
    assert (e["status"], e["message"]) == ("Refused", 'Pod "web-0" is invalid: spec.containers[0].resources.requests:'
                                                      ' Forbidden: resource requests cannot be removed')


def test_a_resize_of_a_pod_that_no_longer_runs_is_recorded_as_such(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [NODE], "workloads": [burstable("web", duration="30s")],
                                 "resizes": [{"at": "1m", "pod": "web-0", "patch": grow("2")}]})
    [e] = [e for e in simulate(sc).events if e["type"] == "PodResize"]
    assert e["status"] == "NotRunning"


def test_a_scenario_without_resizes_reports_none(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [NODE], "workloads": [burstable("web", duration="1m")]})
    assert "inPlaceResizes" not in simulate(sc).summary()


@pytest.mark.parametrize("resize, where", [
    ({"at": "1m", "pod": "wbe-0", "patch": grow("2")}, 'spec.resizes[0].pod: no pod "wbe-0" in the scenario'),
    ({"at": "1m", "workload": "nope", "patch": grow("2")}, 'spec.resizes[0].workload: no workload "nope"'),
    ({"at": "1m", "pod": "web-0", "workload": "web", "patch": grow("2")}, "give one of pod and workload"),
    ({"pod": "web-0", "patch": grow("2")}, "spec.resizes[0].at: Required value"),
    ({"at": "1m", "pod": "web-0", "patch": {"spec": {"containers": [{"name": "app", "image": "x"}]}}},
     'unknown field "spec.resizes[0].patch.spec.containers[0].image"'),
    ({"at": "1m", "pod": "web-0", "patch": grow("2"), "when": "now"}, 'unknown field "spec.resizes[0].when"'),
])
def test_bad_resizes_are_refused_with_their_path(tmp_path, kit, resize, where):
    with pytest.raises(InputError) as e:
        kit.scenario(tmp_path, {"nodeGroups": [NODE], "workloads": [burstable("web")], "resizes": [resize]})
    assert where in str(e.value) and "scenario.yaml" in str(e.value)


def test_a_misspelt_pod_name_gets_the_nearest_one(tmp_path, kit):
    with pytest.raises(InputError) as e:
        kit.scenario(tmp_path, {"nodeGroups": [NODE], "workloads": [burstable("web")],
                                "resizes": [{"at": "1m", "pod": "wbe-0", "patch": grow("2")}]})
    assert e.value.fix == 'did you mean "web-0"?'


def test_a_memory_limit_below_the_pods_usage_is_reported_as_not_modelled(tmp_path, kit):
    """doPodResizeAction's usage check (v1.35+ lets a memory limit go down) is not modelled: a warning."""
    from kubetwin.diagnostics import collecting

    web = {**burstable("web", duration="10m"), "usage": {"memory": "1536Mi"}}
    patch = {"spec": {"containers": [{"name": "app", "resources": {"limits": {"memory": "1280Mi"}}}]}}
    sc = kit.scenario(tmp_path, {"nodeGroups": [NODE], "workloads": [web],
                                 "resizes": [{"at": "1m", "pod": "web-0", "patch": patch}]})
    with collecting() as warnings:
        simulate(sc)
    assert any("the kubelet would abort the resize" in w for w in warnings)
