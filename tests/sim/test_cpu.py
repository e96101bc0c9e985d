"""CPU in the simulation: usage curves, CFS throttling (cgroup v2 cpu.stat), the weight split of a
contended pool, CPU pressure, and the Summary API's cpu stats (stats/v1alpha1 CPUStats, KubeletPSI)."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.sim import simulate
from kubetwin.sim.loop import Simulator
from kubetwin.sim.usage import parse_usage


def one_pod(tmp_path, kit, usage, *, cpu="1", limits=True, node_cpu="4", extra=(), **spec):
    w = kit.workload("w", cpu=cpu, memory="1Gi", limits=limits, usage=usage, duration="5m")
    return kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu=node_cpu)], "sampleInterval": "10s",
                                   "workloads": [w, *extra], **spec})


def container(r, pod="w-0"):
    return next(v for k, v in r.node_cpu["pods"].items() if k.endswith("/" + pod))["containers"][0]


def test_a_container_wanting_more_than_its_limit_is_throttled_every_period(tmp_path, kit):
    r = simulate(one_pod(tmp_path, kit, {"cpu": "1500m"}))
    c = container(r)
    assert c["cpu.max"] == "100000 100000"
    st = c["cpu.stat"]
    assert st["nr_periods"] == st["nr_throttled"] == 3000          # 300 s of 100 ms periods
    assert st["usage_usec"] == 300_000_000                         # one CPU for 300 s
    assert st["throttled_usec"] == pytest.approx(3000 * 2 * 100_000 / 3, rel=1e-6)
    assert c["cpu.pressure"]["some"]["avg10"] == 33.0              # a third of the wanted CPU is not given


def test_a_container_within_its_limit_counts_periods_but_is_not_throttled(tmp_path, kit):
    c = container(simulate(one_pod(tmp_path, kit, {"cpu": "600m"})))
    assert c["cpu.stat"]["nr_periods"] == 3000 and c["cpu.stat"]["nr_throttled"] == 0
    assert c["cpu.pressure"]["some"]["total"] == 0


def test_a_cpu_curve_moves_between_its_points(tmp_path, kit):
    r = simulate(one_pod(tmp_path, kit, {"cpu": [["0s", "0"], ["100s", "2"]]}))
    series = next(v for k, v in r.node_cpu["pods"].items() if k.endswith("/w-0"))["series"]
    first = series[0]
    assert first[0] > 50 and first[1] > 0        # throttled only once the curve passes the 1 CPU limit


def test_a_contended_shared_pool_is_split_by_cpu_weight(tmp_path, kit):
    big = kit.workload("big", cpu="3", memory="1Gi", usage={"cpu": "4"}, duration="5m")
    small = kit.workload("small", cpu="1", memory="1Gi", usage={"cpu": "4"}, duration="5m")
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="4")], "sampleInterval": "10s",
                                 "workloads": [big, small]})
    r = simulate(sc)
    b, s = container(r, "big-0"), container(r, "small-0")
    # runc's quadratic shares -> weight: 3072 shares -> ceil(10^2.3796) = 240, 1024 -> 100
    assert (b["cpu.weight"], s["cpu.weight"]) == (240, 100)
    ratio = b["cpu.stat"]["usage_usec"] / s["cpu.stat"]["usage_usec"]
    assert ratio == pytest.approx(240 / 100, rel=1e-3)
    assert b["cpu.stat"]["nr_periods"] == 0          # no limit: no bandwidth timer
    assert s["cpu.pressure"]["some"]["avg10"] > b["cpu.pressure"]["some"]["avg10"] > 0


def test_cpu_accounting_is_off_without_cpu_curves(tmp_path, kit):
    r = simulate(one_pod(tmp_path, kit, {"memory": "512Mi"}))
    assert r.node_cpu is None and "cpu" not in r.to_json() and "cpu" not in r.summary()


def test_the_summary_reports_throttling_and_peak_pressure(tmp_path, kit):
    s = simulate(one_pod(tmp_path, kit, {"cpu": "2"})).summary()["cpu"]
    assert s["throttledPods"] == 1 and s["throttledPeriodShare"] == 1.0
    assert s["peakPodCpuSomeAvg10"] == 50.0


def test_a_cpu_only_usage_leaves_memory_at_the_requests(tmp_path, kit):
    r = simulate(one_pod(tmp_path, kit, {"cpu": "3"}))
    assert r.counters.oom_killed == 0 and r.counters.evicted == 0 and r.pods[0].phase == "Succeeded"


def summary_at(tmp_path, kit, version=None, gates=None):
    sc = one_pod(tmp_path, kit, {"cpu": "1500m"}, horizon="2m")
    if version:
        sc.settings.kubernetes_version = version
    if gates:
        sc.settings.feature_gates = gates
    sim = Simulator(sc)
    sim.run()
    return sim.cpu.summary(0)


def test_the_summary_api_carries_cpu_psi_while_kubelet_psi_is_on(tmp_path, kit):
    s = summary_at(tmp_path, kit)
    pod = s.pods[0]
    assert pod.cpu.usage_nano_cores == 1_000_000_000
    assert pod.containers[0].cpu.psi.some.avg10 == 33.0
    assert s.node.cpu.psi.full.avg10 == 0.0 and s.node.cpu.psi.some.avg10 == 33.0
    assert pod.memory is None and pod.io is None     # memory and I/O: NodePressure.psi_summary


def test_the_summary_api_has_no_psi_while_the_kubelet_psi_gate_is_off(tmp_path, kit):
    # KubeletPSI: beta in 1.34 (on by default, may be turned off), locked on once GA
    assert summary_at(tmp_path, kit, "1.34", {"KubeletPSI": False}).pods[0].cpu.psi is None


def test_a_misspelt_cpu_curve_key_is_refused():
    with pytest.raises(InputError, match='unknown field "cpus" .fix: did you mean "cpu"'):
        parse_usage({"cpus": "1"}, "usage")


def test_a_negative_cpu_amount_is_refused():
    with pytest.raises(InputError, match="must not be negative"):
        parse_usage({"cpu": [["0s", "-1"]]}, "usage")


def static_node(kit):
    return kit.group(cpu="8", machine="1s1n4c2t", kubeletConfig={"cpuManagerPolicy": "static",
                                                                 "kubeReserved": {"cpu": "1"}})


def test_a_container_on_exclusive_cpus_runs_on_them_alone_without_a_quota(tmp_path, kit):
    pinned = kit.workload("pinned", cpu="2", memory="1Gi", limits=True, usage={"cpu": "3"}, duration="5m")
    shared = kit.workload("shared", cpu="1", memory="1Gi", usage={"cpu": "6"}, duration="5m")
    sc = kit.scenario(tmp_path, {"nodeGroups": [static_node(kit)], "sampleInterval": "10s",
                                 "workloads": [pinned, shared]})
    r = simulate(sc)
    p, s = container(r, "pinned-0"), container(r, "shared-0")
    # DisableCPUQuotaWithExclusiveCPUs: no cpu.max on exclusive CPUs; it waits for its 2 CPUs instead
    assert (p["pool"], p["cpu.max"], p["cpu.stat"]["nr_throttled"]) == ("exclusive", "max 100000", 0)
    assert p["cpu.stat"]["usage_usec"] == 2 * 300_000_000
    assert p["cpu.pressure"]["some"]["avg10"] == 33.0
    # the other pod has the 6 CPUs left in the shared pool, all it wants
    assert s["pool"] == "shared" and s["cpu.stat"]["usage_usec"] == 6 * 300_000_000


def test_a_pod_table_may_carry_measured_cpu_usage(tmp_path):
    from kubetwin.sim.traces import read_pod_table

    (tmp_path / "pods.csv").write_text("name,cpu,memory,cpu_usage,memory_usage\np,1,1Gi,1500m,700Mi\nq,1,1Gi,,\n")
    p, q = read_pod_table(tmp_path / "pods.csv")
    assert p.usage.cpu[0][1].values == (1500,) and p.usage.memory[0][1].values == (700 << 20,)
    assert q.usage is None


def test_a_bad_cpu_usage_cell_names_its_column(tmp_path):
    from kubetwin.sim.traces import read_pod_table

    (tmp_path / "pods.csv").write_text("name,cpu,memory,cpu_usage\np,1,1Gi,lots\n")
    with pytest.raises(InputError, match="pods.csv: line 2: cpu_usage: "):
        read_pod_table(tmp_path / "pods.csv")


def test_a_manifest_in_a_pod_table_keeps_its_usage_annotation(tmp_path):
    import json

    from kubetwin.sim.traces import read_pod_table

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {
        "kubetwin.io/usage": '{"cpu": "2"}'}}, "spec": {"containers": [{"name": "c"}]}}
    (tmp_path / "pods.ndjson").write_text(json.dumps(pod) + "\n")
    assert read_pod_table(tmp_path / "pods.ndjson")[0].usage.cpu[0][1].values == (2000,)


def test_a_curve_for_a_container_the_pod_does_not_have_is_refused(tmp_path, kit):
    w = kit.workload("w", usage={"containers": {"ap": {"cpu": "1"}}})
    w["template"]["spec"]["containers"][0]["name"] = "app"
    with pytest.raises(InputError, match='unknown container "ap" .fix: did you mean "app"'):
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "workloads": [w]})


def test_a_container_held_below_its_quota_by_a_contended_pool_waits_and_is_not_throttled(tmp_path, kit):
    # 2 CPUs; the limited pod (quota 1.5) gets 1 of them against an equal-weight hog: never uses its quota up
    limited = kit.workload("limited", cpu="1", memory="1Gi", usage={"cpu": "2"}, duration="5m")
    limited["template"]["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "1500m"}
    hog = kit.workload("hog", cpu="1", memory="1Gi", usage={"cpu": "4"}, duration="5m")
    r = simulate(kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="2")], "sampleInterval": "10s",
                                         "workloads": [limited, hog]}))
    c = container(r, "limited-0")
    assert c["cpu.stat"]["nr_periods"] == 3000 and c["cpu.stat"]["nr_throttled"] == 0
    assert c["cpu.stat"]["usage_usec"] == 300_000_000
    assert c["cpu.pressure"]["some"]["avg10"] == 50.0


def test_sidecars_of_a_pod_level_pod_share_its_pod_shared_pool(tmp_path, kit):
    # the pod-level resource managers: an 8-CPU bubble, 6 exclusive CPUs for the database, the
    # sidecars in the 2 left (podlevel_cpu: "everything else shares the final pod shared pool")
    pod = {"spec": {"resources": {"requests": {"cpu": "8", "memory": "4Gi"}, "limits": {"cpu": "8", "memory": "4Gi"}},
                    "initContainers": [{"name": "exporter", "restartPolicy": "Always"},
                                       {"name": "backup", "restartPolicy": "Always"}],
                    "containers": [{"name": "database", "resources": {"requests": {"cpu": "6", "memory": "2Gi"},
                                                                      "limits": {"cpu": "6", "memory": "2Gi"}}}]}}
    w = {"name": "db", "template": pod, "duration": "5m",
         "usage": {"containers": {"exporter": {"cpu": "2"}, "backup": {"cpu": "2"}, "database": {"cpu": "4"}}}}
    cfg = {"featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
           "cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "topologyManagerPolicy": "best-effort",
           "topologyManagerScope": "pod"}
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="16", memory="16Gi", machine="1s2n4c2t",
                                                          kubeletConfig=cfg)],
                                 "featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
                                 "sampleInterval": "10s", "workloads": [w]})
    r = simulate(sc)
    assert r.pods[0].phase == "Succeeded", r.pods[0].message
    figs = {c["container"]: c for c in next(iter(r.node_cpu["pods"].values()))["containers"]}
    assert (figs["database"]["pool"], figs["exporter"]["pool"], figs["backup"]["pool"]) == (
        "exclusive", "pod shared pool", "pod shared pool")
    assert figs["database"]["cpu.stat"]["usage_usec"] == 4 * 300_000_000
    assert figs["exporter"]["cpu.stat"]["usage_usec"] == 300_000_000     # 2 CPUs shared by two wanting 2 each
    assert figs["exporter"]["cpu.pressure"]["some"]["avg10"] == 50.0


def test_the_vectorised_curve_reading_gives_the_curves_own_amounts():
    import random

    import numpy as np

    from kubetwin.sim.cpu import curve_at
    from kubetwin.sim.usage import parse_curve

    rng = random.Random(7)
    for _ in range(50):
        pts = sorted(rng.sample(range(0, 10_000), 4))
        curve = parse_curve([[f"{t}s", f"{rng.randrange(0, 64_000)}m"] for t in pts], "cpu",
                            lambda v, p: int(str(v)[:-1]))
        ages = [rng.uniform(-100, 11_000) for _ in range(200)] + [float(t) for t in pts]
        assert curve_at(curve, np.array(ages)).tolist() == [float(curve.at(a)) for a in ages]


def test_a_container_restarted_after_an_oom_kill_reads_its_cpu_curve_from_the_start_again(tmp_path, kit):
    # memory limit 1Gi, working set 0 -> 2Gi over 35 s: OOM-killed at every second 10 s sample (20, 40, ...)
    # and restarted; its CPU curve (0 -> 1 CPU over 100 s) starts over each time, so over the 100 s it
    # wants 0.1 then 0.2 CPU per 10 s interval, five times (15 CPU-seconds), not the 55 of one long ramp
    usage = {"memory": [["0s", "0"], ["35s", "2Gi"]], "cpu": [["0s", "0"], ["100s", "1"]]}
    sc = one_pod(tmp_path, kit, usage, limits=True, horizon="100s")
    r = simulate(sc)
    assert [e["time"] for e in r.events if e["type"] == "OOMKilled"] == [20.0, 40.0, 60.0, 80.0, 100.0]
    assert container(r)["cpu.stat"]["usage_usec"] == 15_000_000


def test_a_throttled_node_has_one_series_point_per_sample_and_its_peak_pressure(tmp_path, kit):
    r = simulate(one_pod(tmp_path, kit, {"cpu": "1500m"}))
    (node,) = r.node_cpu["nodes"].values()
    times = [p[0] for p in node["series"]]
    assert times == sorted(times) and times[0] == 10.0                 # [time, cores, some avg10, throttled]
    assert all(p[1] == 1.0 and p[3] == 1 for p in node["series"][:-1])  # one CPU used, one container throttled
    assert node["peakCpuSomeAvg10"] == max(p[2] for p in node["series"]) > 0
