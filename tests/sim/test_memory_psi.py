"""Memory stalls in the simulation: the kernel's memory.high penalty (mm/memcontrol.c:
calculate_overage, calculate_high_delay, mem_cgroup_handle_over_high), the page allocator's
watermarks (mm/page_alloc.c: calculate_min_free_kbytes, __setup_per_zone_wmarks), and the
memory.pressure figures over time and in the Summary API (stats/v1alpha1 MemoryStats.PSI)."""

from __future__ import annotations

import pytest

from kubetwin.sim import simulate
from kubetwin.sim.loop import Simulator
from kubetwin.sim.memory_psi import (
    calculate_high_delay,
    calculate_overage,
    global_share,
    hierarchy_sleep,
    high_stall_share,
    max_overage,
    min_free_kbytes,
    over_high_sleep,
    watermarks,
)

PAGE = 4096


def test_the_overage_is_the_excess_over_memory_high_in_2_to_the_minus_20_units():
    assert calculate_overage(1050, 1000) == (50 << 20) // 1000 == 52428
    assert calculate_overage(1000, 1000) == 0


def test_the_penalty_grows_with_the_square_of_the_overage_and_the_pages_charged():
    # 52428^2 * HZ(1000) >> 20 >> 14 = 159 jiffies for a nominal batch of 64 pages; twice for 128
    assert calculate_high_delay(64, 52428) == 159
    assert calculate_high_delay(128, 52428) == 318


def test_a_penalty_of_at_most_ten_milliseconds_is_not_slept():
    # 1.3 % over: 10 jiffies (<= HZ / 100) -> no sleep; 1.4 % over: 12 jiffies
    assert over_high_sleep(1013 * PAGE, 1000 * PAGE) == 0
    assert over_high_sleep(1014 * PAGE, 1000 * PAGE) == 12


def test_the_sleep_is_clamped_to_two_seconds():
    assert over_high_sleep(1500 * PAGE, 1000 * PAGE) == 2000   # MEMCG_MAX_HIGH_DELAY_JIFFIES


def test_a_growing_container_sleeps_one_penalty_per_charge_batch():
    # growing one batch (64 pages) per second at 5 % over: 159 ms asleep per second
    assert high_stall_share(1050 * PAGE, 1000 * PAGE, 64 * PAGE) == pytest.approx(0.159)


def test_a_working_set_that_stays_flat_above_memory_high_is_not_throttled():
    assert high_stall_share(1050 * PAGE, 1000 * PAGE, 0.0) == 0.0


def test_the_sleep_takes_the_largest_overage_of_the_cgroup_and_its_ancestors():
    # mem_find_max_overage: the container is 1 % over its memory.high, its pod 10 % over the pod's
    container, pod = (101 * PAGE * 1000, 100 * PAGE * 1000), (110 * PAGE * 1000, 100 * PAGE * 1000)
    assert max_overage([container, pod]) == calculate_overage(110_000, 100_000)
    assert hierarchy_sleep([container, pod]) == over_high_sleep(*pod) > over_high_sleep(*container)


def test_a_container_without_memory_high_is_throttled_by_its_pods():
    pod = (110 * PAGE * 1000, 100 * PAGE * 1000)
    assert high_stall_share(PAGE * 1000, None, 1 << 30, (pod,)) > 0
    assert high_stall_share(PAGE * 1000, None, 1 << 30, ((90 * PAGE * 1000, 100 * PAGE * 1000),)) == 0


def test_min_free_kbytes_is_the_square_root_of_sixteen_times_lowmem_clamped():
    assert min_free_kbytes(8 << 30) == 11585          # int_sqrt(8388608 * 16)
    assert min_free_kbytes(1 << 20) == 128
    assert min_free_kbytes(16 << 40) == 262144


def test_the_low_watermark_is_min_plus_the_larger_of_a_quarter_and_watermark_scale_factor():
    # 8 GiB: min 11585 kB; max(724 pages, 2097152 pages * 10 / 10000 = 2097 pages)
    assert watermarks(8 << 30) == (11585 * 1024, 11585 * 1024 + 2097 * PAGE)


def test_global_reclaim_stalls_nobody_above_the_low_watermark_and_everybody_below_min():
    cap = 8 << 30
    wmin, low = watermarks(cap)
    assert global_share(cap, cap - low) == 0.0
    assert global_share(cap, cap - wmin) == 1.0
    assert global_share(cap, cap - (wmin + low) // 2) == pytest.approx(0.5, abs=1e-6)


def memory_qos(tmp_path, kit, curve, gates=None, **spec):
    w = kit.workload("w", cpu="1", memory="1Gi", usage={"memory": curve}, duration="12m")
    w["template"]["spec"]["containers"][0]["resources"]["limits"] = {"memory": "2Gi"}
    cfg = {"featureGates": {"MemoryQoS": True, **(gates or {})}}
    return kit.scenario(tmp_path, {"nodeGroups": [kit.group(kubeletConfig=cfg)], "sampleInterval": "10s",
                                   "workloads": [w], **spec})


GROWING = [["0s", "1Gi"], ["10m", "1990Mi"]]


def test_a_container_growing_past_memory_high_stalls_on_memory(tmp_path, kit):
    r = simulate(memory_qos(tmp_path, kit, GROWING))
    pod = r.node_psi["memory"]["pods"]["default/w-0"]
    c = pod["containers"][0]
    # MemoryQoS: memory.high = floor((1Gi + 0.9 * (2Gi - 1Gi)) / 4096) * 4096
    assert c["why"].startswith("memory.high 2040107008:")
    some, full = c["memory.pressure"]["some"], c["memory.pressure"]["full"]
    assert some["total"] > 0 and some == full           # every allocating task sleeps
    assert pod["peakSomeAvg10"] > 0
    assert r.summary()["memoryPressure"]["stalledPods"] == 1


def test_without_memory_qos_there_is_no_memory_high_and_no_memory_stall(tmp_path, kit):
    w = kit.workload("w", cpu="1", memory="1Gi", usage={"memory": GROWING}, duration="12m")
    w["template"]["spec"]["containers"][0]["resources"]["limits"] = {"memory": "2Gi"}
    r = simulate(kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "sampleInterval": "10s", "workloads": [w]}))
    assert r.node_psi is None and "memoryPressure" not in r.summary() and "pressure" not in r.to_json()


def test_a_flat_working_set_above_memory_high_does_not_stall(tmp_path, kit):
    r = simulate(memory_qos(tmp_path, kit, "1990Mi"))
    assert r.node_psi is None


def test_a_node_short_of_memory_stalls_every_container_and_reports_full(tmp_path, kit):
    # 8Gi node, the eviction threshold below the kernel's watermarks: the working set fills it
    hog = kit.workload("hog", cpu="1", memory="1Gi", usage={"memory": [["0s", "1Gi"], ["1m", "8112Mi"]]},
                       duration="6m")
    idle = kit.workload("idle", cpu="1", memory="64Mi", duration="6m")
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(kubeletConfig={"evictionHard": {"memory.available": "1Mi"}})],
                                 "sampleInterval": "10s", "workloads": [idle, hog]})
    r = simulate(sc)
    mem = r.node_psi["memory"]
    assert set(mem["pods"]) == {"default/hog-0", "default/idle-0"}
    assert mem["pods"]["default/idle-0"]["containers"][0]["why"].startswith("node memory below the low watermark")
    assert r.summary()["memoryPressure"]["peakNodeMemoryFullAvg10"] > 0


def summary_at(tmp_path, kit, version=None, gates=None):
    sc = memory_qos(tmp_path, kit, GROWING, horizon="10m")
    if version:
        sc.settings.kubernetes_version = version
    if gates:
        sc.settings.feature_gates = gates
    sim = Simulator(sc)
    sim.run()
    return sim.pressure.summary(0, sim.now)


def test_the_summary_api_carries_memory_psi_while_kubelet_psi_is_on(tmp_path, kit):
    s = summary_at(tmp_path, kit)
    pod = s.pods[0]
    assert pod.containers[0].memory.psi.some.avg10 > 0
    assert pod.memory.psi.some == pod.containers[0].memory.psi.some     # the pod's worst container
    assert s.node.memory.psi.some.avg10 == pod.memory.psi.some.avg10
    assert s.node.memory.psi.full.total == 0                          # no node-wide shortage
    assert pod.containers[0].memory.working_set_bytes > 0


def test_the_summary_api_has_no_memory_psi_while_the_kubelet_psi_gate_is_off(tmp_path, kit):
    assert summary_at(tmp_path, kit, "1.34", {"KubeletPSI": False}).pods[0].memory.psi is None


def pod_level(tmp_path, kit, gates=None, version="1.37"):
    """A pod (Kubernetes ``version``: the pod cgroup's memory.high comes in v1.37) with pod-level resources (requests 1Gi, limits 2Gi memory: the pod cgroup's
    memory.high = floor((1Gi + 0.9 * (2Gi - 1Gi)) / 4096) * 4096 = 2040107008) and two containers
    requesting 512Mi each without a limit of their own (theirs: 512Mi + 0.9 * (2Gi - 512Mi), about
    1894Mi). ``a`` grows to 1500Mi while ``b`` stays at 500Mi: the pod is over its memory.high
    (2000Mi), ``a`` is not over its own."""
    w = kit.workload("w", cpu="1", memory="512Mi", duration="12m",
                     usage={"containers": {"a": {"memory": [["0s", "512Mi"], ["10m", "1500Mi"]]},
                                           "b": {"memory": "500Mi"}}})
    spec = w["template"]["spec"]
    spec["containers"] = [{"name": n, "resources": {"requests": {"memory": "512Mi"}}} for n in ("a", "b")]
    spec["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}
    cfg = {"featureGates": {"MemoryQoS": True, **(gates or {})}, "memoryThrottlingFactor": 0.9}
    return kit.scenario(tmp_path, {"nodeGroups": [kit.group(kubeletConfig=cfg)], "sampleInterval": "10s",
                                   "workloads": [w], "kubernetesVersion": version})


def test_a_pod_growing_past_its_pod_level_memory_high_stalls_on_memory(tmp_path, kit):
    r = simulate(pod_level(tmp_path, kit))
    [a] = r.node_psi["memory"]["pods"]["default/w-0"]["containers"]   # b does not grow: it charges nothing
    assert a["container"] == "a" and a["why"].startswith("pod memory.high 2040107008:")
    assert a["memory.pressure"]["some"]["total"] > 0


def test_with_pod_level_resources_off_at_the_kubelet_the_pod_cgroup_has_no_memory_high(tmp_path, kit):
    r = simulate(pod_level(tmp_path, kit, gates={"PodLevelResources": False}))
    assert r.node_psi is None


def test_v1_36_writes_no_pod_level_memory_high_so_the_pod_is_not_throttled_by_it(tmp_path, kit):
    r = simulate(pod_level(tmp_path, kit, version="1.36"))
    assert r.node_psi is None


def test_a_container_above_memory_high_is_throttled_not_oom_killed(tmp_path, kit):
    r = simulate(memory_qos(tmp_path, kit, GROWING))
    assert r.counters.oom_killed == 0 and r.node_psi["memory"]["pods"]["default/w-0"]["peakSomeAvg10"] > 0


def test_a_container_reaching_memory_max_is_throttled_on_the_way_then_oom_killed(tmp_path, kit):
    r = simulate(memory_qos(tmp_path, kit, [["0s", "1Gi"], ["10m", "2Gi"]]))
    assert r.counters.oom_killed >= 1
    assert r.node_psi["memory"]["pods"]["default/w-0"]["containers"][0]["why"].startswith("memory.high")
