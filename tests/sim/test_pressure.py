"""Node pressure in the loop: usage curves, OOM kills, the eviction manager, pressure taints."""

from __future__ import annotations

import pytest

from kubetwin.sim import simulate


def test_a_container_growing_past_its_limit_is_oom_killed_and_restarts(tmp_path, kit):
    w = kit.workload("leaky", cpu="1", memory="1Gi", limits=True,
                     usage={"memory": [["0s", "256Mi"], ["1m", "2Gi"]]})
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "sampleInterval": "10s", "horizon": "5m",
                                 "workloads": [w]})
    r = simulate(sc)
    p = r.pods[0]
    assert p.phase == "Running" and p.restarts >= 2
    assert r.counters.oom_killed == p.restarts
    ev = [e for e in r.events if e["type"] == "OOMKilled"]
    assert ev[0]["message"] == "container c was OOM-killed: its memory limit" and ev[0]["restarts"] is True


def test_a_never_restarting_pod_fails_with_oomkilled(tmp_path, kit):
    w = kit.workload("once", cpu="1", memory="1Gi", limits=True, usage={"memory": [["0s", "0"], ["30s", "2Gi"]]})
    w["template"]["spec"]["restartPolicy"] = "Never"
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "sampleInterval": "10s", "workloads": [w]})
    p = simulate(sc).pods[0]
    assert (p.phase, p.reason) == ("Failed", "OOMKilled")


def hog_scenario(tmp_path, kit, *more):
    """An 8Gi node: a Guaranteed pod using 1Gi, a Burstable one growing to 6.95Gi on a 1Gi request."""
    hog = kit.workload("hog", cpu="1", memory="1Gi", usage={"memory": [["0s", "1Gi"], ["2m", "6.95Gi"]]})
    calm = kit.workload("calm", cpu="1", memory="2Gi", limits=True, usage={"memory": "1Gi"})
    return kit.scenario(tmp_path, {"nodeGroups": [kit.group(memory="8Gi")], "sampleInterval": "10s",
                                   "workloads": [calm, hog, *more]})


def test_memory_pressure_evicts_the_pod_over_its_request_with_the_kubelets_message(tmp_path, kit):
    r = simulate(hog_scenario(tmp_path, kit))
    pods = {p.name: p for p in r.pods}
    assert (pods["hog-0"].phase, pods["hog-0"].reason) == ("Failed", "Evicted")
    assert pods["hog-0"].message.startswith("The node was low on resource: memory. Threshold quantity: 100Mi, "
                                            "available: ")
    assert "Container c was using " in pods["hog-0"].message
    assert pods["calm-0"].phase == "Running"
    assert r.counters.evicted == 1 and r.counters.evicted_by_signal == {"memory.available": 1}
    assert any(s.pressure.get("MemoryPressure") == 1 for s in r.samples)


def test_the_memory_pressure_taint_keeps_new_best_effort_pods_away_until_it_clears(tmp_path, kit):
    be = {"name": "be", "arrival": {"at": "3m"}, "template": {"spec": {"containers": [{"name": "c"}]}}}
    r = simulate(hog_scenario(tmp_path, kit, be))
    pods = {p.name: p for p in r.pods}
    evicted_at = pods["hog-0"].end
    cleared = next(e["time"] for e in r.events if e["type"] == "NodeConditions" and not e["conditions"])
    assert cleared >= evicted_at + 300    # evictionPressureTransitionPeriod
    assert pods["be-0"].phase == "Running" and pods["be-0"].start == cleared
    assert pods["be-0"].attempts == 2


@pytest.mark.parametrize(("usage", "path", "text"), [
    ({"memory": [["1m", "1Gi"], ["30s", "2Gi"]]}, "usage.memory[1][0]", "times must increase"),
    ({"memory": [["0s", "lots"]]}, "usage.memory[0][1]", "lots"),
    ({"cpu": "1", "gpu": "1"}, "usage.gpu", 'unknown field "gpu"'),
    ({"containers": {"c": {"memory": "1Gi", "dsk": 1}}}, "usage.containers.c.dsk", 'unknown field "dsk"'),
])
def test_bad_usage_curves_are_refused_with_their_field(tmp_path, kit, usage, path, text):
    from kubetwin.errors import InputError

    with pytest.raises(InputError) as e:
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "workloads": [kit.workload(usage=usage)]})
    assert f"spec.workloads[0].{path}" in str(e.value) and text in str(e.value)
    assert "scenario.yaml" in str(e.value)


def test_pods_without_a_curve_use_their_request_and_are_never_oom_killed_at_their_limit(tmp_path, kit):
    steady = kit.workload("steady", cpu="1", memory="1Gi", limits=True)
    leaky = kit.workload("leaky", cpu="1", memory="1Gi", limits=True, usage={"memory": [["0s", "0"], ["1m", "2Gi"]]})
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "sampleInterval": "10s", "horizon": "3m",
                                 "workloads": [steady, leaky]})
    r = simulate(sc)
    assert {e["pod"] for e in r.events if e["type"] == "OOMKilled"} == {"default/leaky-0"}


def test_the_pressure_taints_coming_and_going_do_not_requeue_a_pod_only_cpu_keeps_out(tmp_path, kit, monkeypatch):
    # QueueingHints: NodeResourcesFit registers Node Add|UpdateNodeAllocatable only, so the
    # MemoryPressure condition and taint updates leave a pod it rejected parked; the coarse
    # "any node update" registration kubetwin had before retried it on each of them
    from kubetwin.scheduler.backend.queue import PLUGIN_EVENTS
    from kubetwin.scheduler.framework.events import ASSIGNED_POD_DELETE, NODE_ADD, NODE_UPDATE, Registration

    big = kit.workload("big", cpu="5", memory="1Gi", arrival={"at": "5m"})   # more than the node has
    big["template"]["spec"]["tolerations"] = [{"key": "node.kubernetes.io/memory-pressure", "operator": "Exists"}]

    def attempts() -> int:
        r = simulate(hog_scenario(tmp_path, kit, big))
        return {p.name: p for p in r.pods}["big-0"].attempts

    hinted = attempts()
    monkeypatch.setitem(PLUGIN_EVENTS, "NodeResourcesFit",
                        tuple(Registration(e) for e in (ASSIGNED_POD_DELETE, NODE_ADD, NODE_UPDATE)))
    coarse = attempts()
    # parked at 300 s; at 420 s the condition and the taint clear: the hints leave it parked,
    # the coarse registration retried it (the taint event then found it in backoff)
    assert (hinted, coarse) == (1, 2)
