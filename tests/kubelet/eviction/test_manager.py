"""The eviction manager over time: conditions, grace periods, minimum reclaim, reclaim, admission."""

from kubetwin.kubelet.eviction import DiskLayout, EvictionManager, update_containerfs_thresholds
from kubetwin.model.duration import MINUTE, SECOND

from .helpers import Gi, Mi, config, pod, pod_stats, summary

M = MINUTE
PODS = [pod("victim", priority=-1), pod("keeper", requests={"memory": "1Gi"}, limits={"memory": "1Gi"})]


def pressured(avail=500 * Mi, **kw):
    return summary(pod_stats("victim", memory=300 * Mi), pod_stats("keeper", memory=200 * Mi),
                   memory_available=avail, memory_working_set=Gi, **kw)


def test_hard_threshold_evicts_one_pod_at_once_with_a_one_second_grace_period():
    m = EvictionManager(config(evictionHard={"memory.available": "1Gi"}))
    r = m.synchronize(0, pressured(), PODS)
    assert r.conditions == ("MemoryPressure",)
    assert [(e.pod.name, e.grace_period_seconds) for e in r.evicted] == [("victim", 1)]


def test_eviction_message_names_threshold_available_and_offending_container():
    m = EvictionManager(config(evictionHard={"memory.available": "1Gi"}))
    msg = m.synchronize(0, pressured(), PODS).evicted[0].message
    assert msg == ("The node was low on resource: memory. Threshold quantity: 1Gi, available: 500Mi. "
                   "Container victim was using 300Mi, request is 0, has larger consumption of memory. ")


def test_soft_threshold_raises_the_condition_at_once_but_evicts_after_its_grace_period():
    cfg = config(evictionHard={}, evictionSoft={"memory.available": "1Gi"},
                 evictionSoftGracePeriod={"memory.available": "1m"}, evictionMaxPodGracePeriod=30)
    m = EvictionManager(cfg)
    first = m.synchronize(0, pressured(), PODS)
    assert first.conditions == ("MemoryPressure",) and first.evicted == ()
    later = m.synchronize(M, pressured(), PODS)
    assert [(e.pod.name, e.grace_period_seconds) for e in later.evicted] == [("victim", 30)]


def _soft(grace: str):
    return config(evictionHard={}, evictionSoft={"memory.available": "1Gi"},
                  evictionSoftGracePeriod={"memory.available": grace}, evictionMaxPodGracePeriod=60)


def _tight(name: str):
    return summary(pod_stats(name, memory=Mi), memory_available=Mi, memory_working_set=Gi)


def test_soft_eviction_grace_is_the_smaller_of_max_and_the_pods_own():
    p = pod("short", spec={"terminationGracePeriodSeconds": 10})
    m = EvictionManager(_soft("1m"))
    m.synchronize(0, _tight("short"), [p])
    assert m.synchronize(M, _tight("short"), [p]).evicted[0].grace_period_seconds == 10


def test_a_soft_threshold_with_a_zero_grace_period_acts_as_a_hard_one():
    p = pod("short", spec={"terminationGracePeriodSeconds": 10})
    assert EvictionManager(_soft("0s")).synchronize(0, _tight("short"), [p]).evicted[0].grace_period_seconds == 1


def test_condition_lingers_for_the_transition_period_strictly():
    m = EvictionManager(config(evictionHard={"memory.available": "1Gi"}, evictionPressureTransitionPeriod="5m"))
    m.synchronize(0, pressured(), PODS)
    fine = pressured(avail=4 * Gi)
    assert m.synchronize(5 * M - SECOND, fine, PODS).conditions == ("MemoryPressure",)
    assert m.synchronize(5 * M, fine, PODS).conditions == ()


def test_minimum_reclaim_keeps_an_acted_on_threshold_met_until_recovered_past_it():
    m = EvictionManager(config(evictionHard={"memory.available": "1Gi"},
                               evictionMinimumReclaim={"memory.available": "500Mi"}))
    m.synchronize(0, pressured(), PODS)
    r = m.synchronize(10 * SECOND, pressured(avail=Gi + 100 * Mi), PODS)
    assert [t.signal for t in r.thresholds_met] == ["memory.available"]
    r = m.synchronize(20 * SECOND, pressured(avail=Gi + 600 * Mi), PODS)
    assert r.thresholds_met == ()


def test_minimum_reclaim_plays_no_part_in_the_first_crossing():
    m = EvictionManager(config(evictionHard={"memory.available": "1Gi"},
                               evictionMinimumReclaim={"memory.available": "500Mi"}))
    assert m.synchronize(0, pressured(avail=Gi + Mi), PODS).thresholds_met == ()


def test_stale_stats_keep_the_condition_but_do_not_evict():
    m = EvictionManager(config(evictionHard={"memory.available": "1Gi"}))
    s = pressured(time="2026-01-01T00:00:00Z")
    assert m.synchronize(0, s, PODS).evicted
    again = m.synchronize(10 * SECOND, s, PODS)
    assert again.conditions == ("MemoryPressure",) and again.evicted == ()


def test_critical_pods_are_skipped_but_keep_their_place_in_the_ranking():
    static = pod("static", annotations={"kubernetes.io/config.source": "file"}, priority=-100)
    r = EvictionManager(config(evictionHard={"memory.available": "1Gi"})).synchronize(
        0, summary(pod_stats("static", memory=Gi), pod_stats("victim", memory=Mi), memory_available=Mi,
                   memory_working_set=Gi), [static, PODS[0]])
    assert [p.name for p in r.ranking] == ["static", "victim"]
    assert [e.pod.name for e in r.evicted] == ["victim"]


def test_memory_is_reclaimed_before_disk():
    cfg = config(evictionHard={"memory.available": "1Gi", "nodefs.available": "1Gi"})
    r = EvictionManager(cfg).synchronize(0, pressured(nodefs=(Mi, 100 * Gi)), PODS)
    assert r.resource_to_reclaim == "memory"
    assert set(r.conditions) == {"MemoryPressure", "DiskPressure"}


def test_node_level_reclaim_that_frees_enough_spares_the_pods():
    cfg = config(evictionHard={"nodefs.available": "1Gi"})
    tight = summary(pod_stats("victim", rootfs=Gi), nodefs=(Mi, 100 * Gi))
    roomy = summary(pod_stats("victim", rootfs=Gi), nodefs=(10 * Gi, 100 * Gi))
    r = EvictionManager(cfg).synchronize(0, tight, PODS[:1], reclaim=lambda funcs: roomy)
    assert r.reclaimed == ("containers", "images") and r.reclaim_sufficed and r.evicted == ()


def test_local_storage_limits_evict_without_any_threshold():
    p = pod("full", volumes=[{"name": "scratch", "emptyDir": {"sizeLimit": "100Mi"}}])
    cfg = config(evictionHard={}, localStorageCapacityIsolation=True)
    r = EvictionManager(cfg).synchronize(0, summary(pod_stats("full", volumes={"scratch": 200 * Mi})), [p])
    assert [(e.pod.name, e.grace_period_seconds, e.message) for e in r.evicted] == [
        ("full", 1, 'Usage of EmptyDir volume "scratch" exceeds the limit "100Mi". ')]


def test_split_image_filesystem_with_separate_disk_gc_off_is_a_synchronize_error():
    cfg = config(evictionHard={"nodefs.available": "1Gi"}, featureGates={"KubeletSeparateDiskGC": False})
    m = EvictionManager(cfg, DiskLayout(dedicated_image_fs=True, split_container_fs=True))
    assert m.synchronize(0, summary(), []).error == \
        "KubeletSeparateDiskGC is turned off but we still have a split filesystem"


def test_containerfs_thresholds_copy_nodefs_unless_a_dedicated_imagefs_holds_the_layers():
    cfg = config(evictionHard={"nodefs.available": "1Gi", "imagefs.available": "2Gi", "containerfs.available": "9Gi"})
    ts = cfg.eviction_thresholds()
    single = update_containerfs_thresholds(ts, dedicated_image_fs=False, split_container_fs=False)
    dedicated = update_containerfs_thresholds(ts, dedicated_image_fs=True, split_container_fs=False)
    split = update_containerfs_thresholds(ts, dedicated_image_fs=True, split_container_fs=True)
    cfs = lambda lst: [str(t.value) for t in lst if t.signal == "containerfs.available"]  # noqa: E731
    assert (cfs(single), cfs(dedicated), cfs(split)) == (["1Gi"], ["2Gi"], ["1Gi"])


def test_admission_under_memory_pressure_turns_away_only_best_effort_pods_without_the_toleration():
    m = EvictionManager(config(evictionHard={"memory.available": "1Gi"}))
    m.synchronize(0, pressured(), PODS)
    tolerant = pod("tolerant", tolerations=[{"key": "node.kubernetes.io/memory-pressure", "operator": "Exists",
                                             "effect": "NoSchedule"}])
    verdicts = {p.name: m.admit(p).admitted for p in (pod("be"), tolerant, PODS[1])}
    assert verdicts == {"be": False, "tolerant": True, "keeper": True}
    assert m.admit(pod("be")).message == "The node had condition: [MemoryPressure]. "


def test_admission_under_disk_pressure_turns_away_every_non_critical_pod():
    m = EvictionManager(config(evictionHard={"nodefs.available": "1Gi"}))
    m.synchronize(0, summary(nodefs=(Mi, 100 * Gi)), [])
    assert not m.admit(PODS[1]).admitted
    assert m.admit(pod("crit", priority=2_000_000_000)).admitted


def test_a_soft_threshold_in_its_grace_period_is_observed_but_not_met():
    cfg = config(evictionHard={}, evictionSoft={"memory.available": "1Gi"},
                 evictionSoftGracePeriod={"memory.available": "1m"})
    m = EvictionManager(cfg)
    assert not m.tracking_thresholds
    m.synchronize(0, pressured(), PODS)
    assert m.thresholds_met == ()
    assert [t.signal for t in m.thresholds_first_observed] == ["memory.available"]
    assert m.tracking_thresholds
    m.synchronize(M, pressured(), PODS)
    assert [t.signal for t in m.thresholds_met] == ["memory.available"]


def test_thresholds_are_forgotten_once_usage_drops():
    m = EvictionManager(config(evictionHard={"memory.available": "1Gi"}))
    m.synchronize(0, pressured(), PODS)
    m.synchronize(M, pressured(avail=4 * Gi), PODS)
    assert m.thresholds_met == () and m.thresholds_first_observed == {} and not m.tracking_thresholds
