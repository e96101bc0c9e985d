"""The event loop: arrivals, completions, retries, controllers, preemption, kubelet rejection."""

from __future__ import annotations

from kubetwin.sim import simulate


def by_name(result):
    return {p.name: p for p in result.pods}


def test_pods_arrive_at_their_times_and_bind_at_once(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "workloads": [kit.workload(count=3, arrival={"interval": "10s"})]})
    pods = by_name(simulate(sc))
    assert [pods[f"w-{k}"].start for k in range(3)] == [0.0, 10.0, 20.0]
    assert all(p.phase == "Running" for p in pods.values())


def test_a_pod_with_a_duration_completes_and_frees_its_node(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="1")],
                             "workloads": [kit.workload(count=2, duration="1m")]})
    pods = by_name(simulate(sc))
    assert pods["w-0"].phase == "Succeeded" and pods["w-0"].end == 60.0
    assert pods["w-1"].start == 60.0   # retried when w-0 left the node


def test_an_unschedulable_pod_keeps_kube_schedulers_message(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(count=2, cpu="1")], "workloads": [kit.workload(cpu="2")]})
    r = simulate(sc)
    p = r.pods[0]
    assert p.phase == "Pending"
    assert p.message.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert r.summary()["pendingByReason"] == {"Insufficient cpu": 1}


def test_unschedulable_pods_are_retried_after_backoff_when_a_pod_leaves(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="1")],
                             "workloads": [kit.workload("a", duration="5s"),
                                           kit.workload("b", arrival={"at": "1s"})]})
    pods = by_name(simulate(sc))
    assert pods["b-0"].phase == "Running"
    # a left at 5s; b failed its first attempt at 1s, so its backoff (1s) had expired
    assert pods["b-0"].start == 5.0
    assert pods["b-0"].attempts == 2


def test_higher_priority_pods_are_scheduled_first(tmp_path, kit):
    pcs = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="1")],
                             "workloads": [kit.workload("low"), kit.workload("high", priorityClassName="high")]}, pcs)
    pods = by_name(simulate(sc))
    assert pods["high-0"].phase == "Running" and pods["low-0"].phase == "Pending"


def test_preemption_evicts_a_lower_priority_victim(tmp_path, kit):
    pcs = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="1")],
                             "workloads": [kit.workload("low"),
                                           kit.workload("high", priorityClassName="high", arrival={"at": "10s"})]}, pcs)
    r = simulate(sc)
    pods = by_name(r)
    assert pods["low-0"].phase == "Failed" and pods["low-0"].reason == "Preempted"
    assert pods["high-0"].phase == "Running"
    assert r.counters.preempted == 1


def test_an_unknown_priority_class_is_rejected_by_admission_control(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "workloads": [kit.workload(priorityClassName="nope")]})
    r = simulate(sc)
    assert r.pods[0].phase == "Rejected"
    assert r.summary()["rejectedByAdmissionControl"] == {"Priority": 1}
    assert r.pods[0].message == 'pods "w-0" is forbidden: no PriorityClass with name nope was found'


def test_a_deployment_recreates_a_preempted_pod(tmp_path, kit):
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}}
    pcs = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="1")],
                             "workloads": [kit.workload("vip", priorityClassName="high", arrival={"at": "10s"},
                                                    duration="1m")]}, dep, pcs)
    r = simulate(sc)
    web = [p for p in r.pods if p.owner == "Deployment/default/web"]
    assert len(web) == 2 and r.counters.recreated == 1
    assert web[0].reason == "Preempted" and web[1].phase == "Running" and web[1].start == 70.0


def test_a_job_runs_its_completions_with_its_parallelism(tmp_path, kit):
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "annotations": {"kubetwin.io/duration": "1m"}},
           "spec": {"parallelism": 2, "completions": 5,
                    "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}}
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="4")], "controllerDelay": 0}, job)
    r = simulate(sc)
    assert sum(p.phase == "Succeeded" for p in r.pods) == 5
    assert max(p.end for p in r.pods) == 180.0


def test_kubelet_rejects_with_topology_affinity_error_and_the_controller_recreates(tmp_path, kit):
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "big"},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "big"}},
                    "template": {"metadata": {"labels": {"app": "big"}},
                                 "spec": {"containers": [{"name": "c", "resources": {
                                     "requests": {"cpu": "10", "memory": "1Gi"},
                                     "limits": {"cpu": "10", "memory": "1Gi"}}}]}}}}
    node = {"name": "n", "machine": "1s2n4c2t",
            "kubeletConfig": {"cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node",
                              "kubeReserved": {"cpu": "1"}}}
    sc = kit.scenario(tmp_path, {"nodeGroups": [node], "maxRecreations": 2}, dep)
    r = simulate(sc)
    assert r.summary()["rejectedByKubelet"] == {"TopologyAffinityError": 3}
    assert r.counters.recreated == 2
    assert all(p.phase == "Failed" for p in r.pods)


def test_admitted_guaranteed_pods_get_exclusive_cpus(tmp_path, kit):
    node = {"name": "n", "machine": "1s2n4c2t",
            "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}}}
    sc = kit.scenario(tmp_path, {"nodeGroups": [node], "workloads": [kit.workload(cpu="2", limits=True)]})
    r = simulate(sc)
    assert r.pods[0].phase == "Running" and r.pods[0].cpus


def test_the_horizon_stops_the_clock(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "horizon": "30s",
                             "workloads": [kit.workload(count=3, arrival={"interval": "20s"})]})
    r = simulate(sc)
    assert r.sim_time == 30.0
    assert [p.phase for p in r.pods] == ["Running", "Running", "Pending"]


def test_runs_are_reproducible_with_a_seed(tmp_path, kit):
    spec = {"seed": 3, "nodeGroups": [kit.group(count=5)],
            "workloads": [kit.workload(count=30, arrival={"rate": 1}, duration={"exponential": "20s"})]}
    a = simulate(kit.scenario(tmp_path, spec))
    b = simulate(kit.scenario(tmp_path, spec))
    assert [(p.node, p.start) for p in a.pods] == [(p.node, p.start) for p in b.pods]


def test_a_start_time_is_the_whole_second_as_the_api_serves_it_also_when_the_last_one_is_kept():
    import random
    from datetime import datetime, timedelta, timezone

    from kubetwin.sim.loop import _rfc3339

    epoch = datetime(2026, 1, 1, tzinfo=timezone.utc)
    rng = random.Random(7)
    times = [0.0, 0.2, 0.99, 1.0, 59.5, 59.9, 60.0] + sorted(rng.uniform(0, 1e7) for _ in range(200))
    for t in times + times[::-1]:
        assert _rfc3339(t) == (epoch + timedelta(seconds=int(t))).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_samples_with_nothing_changed_between_repeat_the_figures_each_in_its_own_dict(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"sampleInterval": "10s", "nodeGroups": [kit.group(cpu="2")],
                                 "workloads": [kit.workload(count=2, arrival={"interval": "35s"}, duration="100s")]})
    r = simulate(sc)
    still = [(a, b) for a, b in zip(r.samples, r.samples[1:]) if a.running == b.running and a.pending == b.pending]
    assert still and all(a.utilization == b.utilization and a.utilization is not b.utilization for a, b in still)
    assert [s.utilization["cpu"] for s in r.samples[1:5]] == [0.5, 0.5, 0.5, 1.0]   # one pod, then both
    assert r.samples[10].utilization["cpu"] == 0.5   # the first one finished at 100 s
