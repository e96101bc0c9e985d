"""The kubelet's eviction order per signal (first = evicted first)."""

from kubetwin.kubelet.eviction import DiskLayout, rank_pods, resource_request

from .helpers import Gi, Mi, pod, pod_stats, summary


def names(pods):
    return [p.name for p in pods]


def test_memory_pods_over_their_request_go_before_pods_under_it_whatever_their_priority():
    over = pod("over", requests={"memory": "100Mi"}, priority=10)
    under = pod("under", requests={"memory": "1Gi"}, priority=-10)
    s = summary(pod_stats("over", memory=200 * Mi), pod_stats("under", memory=500 * Mi))
    assert names(rank_pods("memory.available", [under, over], s)) == ["over", "under"]


def test_memory_lower_priority_goes_first_among_pods_over_their_request():
    a = pod("a", requests={"memory": "100Mi"}, priority=5)
    b = pod("b", requests={"memory": "100Mi"}, priority=1)
    s = summary(pod_stats("a", memory=900 * Mi), pod_stats("b", memory=150 * Mi))
    assert names(rank_pods("memory.available", [a, b], s)) == ["b", "a"]


def test_memory_larger_usage_above_request_goes_first_at_equal_priority():
    a = pod("a", requests={"memory": "100Mi"})
    b = pod("b", requests={"memory": "500Mi"})
    s = summary(pod_stats("a", memory=300 * Mi), pod_stats("b", memory=600 * Mi))
    assert names(rank_pods("memory.available", [b, a], s)) == ["a", "b"]


def test_usage_equal_to_request_does_not_exceed_it():
    equal = pod("equal", requests={"memory": "100Mi"}, priority=-5)
    over = pod("over", requests={"memory": "100Mi"}, priority=5)
    s = summary(pod_stats("equal", memory=100 * Mi), pod_stats("over", memory=100 * Mi + 1))
    assert names(rank_pods("memory.available", [equal, over], s)) == ["over", "equal"]


def test_pods_without_stats_rank_first():
    known = pod("known")
    unknown = pod("unknown", priority=100)
    s = summary(pod_stats("known", memory=Gi))
    assert names(rank_pods("memory.available", [known, unknown], s)) == ["unknown", "known"]


def test_stats_are_matched_by_uid_not_name():
    p = pod("p")
    stats = pod_stats("p", memory=Gi)
    stats["podRef"]["uid"] = "someone-else"
    q = pod("q", priority=-1)
    s = summary(stats, pod_stats("q", memory=1))
    assert names(rank_pods("memory.available", [q, p], s)) == ["p", "q"]


def test_pid_ranking_is_priority_then_process_count_without_an_exceeds_step():
    low = pod("low", priority=0)
    busy = pod("busy", priority=1)
    idle = pod("idle", priority=1)
    s = summary(pod_stats("low", processes=1), pod_stats("busy", processes=500), pod_stats("idle", processes=5))
    assert names(rank_pods("pid.available", [idle, busy, low], s)) == ["low", "busy", "idle"]


def test_disk_counts_rootfs_logs_and_disk_backed_volumes_but_not_memory_backed_empty_dirs():
    vols = [{"name": "disk", "emptyDir": {}}, {"name": "ram", "emptyDir": {"medium": "Memory"}}]
    a = pod("a", requests={"ephemeral-storage": "1Gi"}, volumes=vols)
    b = pod("b", requests={"ephemeral-storage": "1Gi"})
    s = summary(pod_stats("a", rootfs=100 * Mi, logs=100 * Mi, volumes={"disk": 100 * Mi, "ram": 5 * Gi}),
                pod_stats("b", rootfs=200 * Mi, logs=200 * Mi))
    assert names(rank_pods("nodefs.available", [a, b], s)) == ["b", "a"]


def test_inode_tie_break_subtracts_the_ephemeral_storage_request_in_bytes():
    req = pod("req", requests={"ephemeral-storage": "1Ki"})
    plain = pod("plain")
    s = summary(pod_stats("req", rootfs_inodes=1000), pod_stats("plain", rootfs_inodes=900))
    assert names(rank_pods("nodefs.inodesFree", [req, plain], s)) == ["plain", "req"]


def test_dedicated_imagefs_nodefs_ranking_ignores_writable_layers():
    layers = pod("layers")
    logs = pod("logs")
    s = summary(pod_stats("layers", rootfs=10 * Gi, logs=1 * Mi), pod_stats("logs", rootfs=0, logs=100 * Mi))
    layout = DiskLayout(dedicated_image_fs=True)
    assert names(rank_pods("nodefs.available", [layers, logs], s, layout=layout)) == ["logs", "layers"]
    assert names(rank_pods("imagefs.available", [layers, logs], s, layout=layout)) == ["layers", "logs"]


def test_request_adds_sidecars_and_peaks_init_containers():
    p = pod("p", requests={"memory": "100Mi"},
            init=[{"name": "side", "restartPolicy": "Always", "resources": {"requests": {"memory": "50Mi"}}},
                  {"name": "init", "resources": {"requests": {"memory": "120Mi"}}}])
    assert resource_request(p, "memory").value() == 170 * Mi


def test_request_with_pod_level_resources_skips_containers_so_ephemeral_storage_counts_zero():
    p = pod("p", requests={"memory": "100Mi", "ephemeral-storage": "1Gi"},
            spec={"resources": {"requests": {"memory": "300Mi"}}})
    assert resource_request(p, "memory").value() == 300 * Mi
    assert resource_request(p, "ephemeral-storage").value() == 0


def test_overhead_is_added_only_to_a_non_zero_request():
    p = pod("p", requests={"memory": "100Mi"}, spec={"overhead": {"memory": "10Mi"}})
    q = pod("q", spec={"overhead": {"memory": "10Mi"}})
    assert resource_request(p, "memory").value() == 110 * Mi
    assert resource_request(q, "memory").value() == 0
