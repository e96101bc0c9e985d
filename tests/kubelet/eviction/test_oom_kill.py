"""The kernel's side: containers over their limit, a node out of memory, MemoryQoS and swap."""

from kubetwin.kubelet.eviction.oom_kill import oom_report
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.summary import summary_from_dict

from .helpers import Gi, Mi, pod, pod_stats, summary

HUNGRY = pod("hungry", requests={"memory": "256Mi"}, limits={"memory": "2Gi"})
STEADY = pod("steady", requests={"memory": "1Gi", "cpu": "1"}, limits={"memory": "1Gi", "cpu": "1"})
SCRATCH = pod("scratch")


def node(*stats, **kw):
    return summary(*stats, memory_available=kw.get("avail", 80 * Mi), memory_working_set=4 * Gi - kw.get("avail", 80 * Mi))


def cfg(**fields):
    return KubeletConfiguration.from_dict(fields)


def test_node_oom_kills_by_memory_share_plus_oom_score_adj():
    r = oom_report([HUNGRY, STEADY, SCRATCH], node(pod_stats("hungry", memory=1536 * Mi),
                                                   pod_stats("steady", memory=800 * Mi),
                                                   pod_stats("scratch", memory=300 * Mi)), cfg())
    assert [(c.pod.name, c.oom_score_adj) for c in r.node_order] == [("hungry", 938), ("scratch", 1000),
                                                                      ("steady", -997)]


def test_best_effort_goes_first_when_usage_shares_are_close():
    r = oom_report([HUNGRY, SCRATCH], node(pod_stats("hungry", memory=300 * Mi), pod_stats("scratch", memory=300 * Mi)),
                   cfg())
    assert [c.pod.name for c in r.node_order] == ["scratch", "hungry"]


def test_container_at_its_limit_is_oom_killed_in_its_cgroup_and_restarts_per_policy():
    never = pod("never", limits={"memory": "100Mi"}, requests={"memory": "100Mi"}, spec={"restartPolicy": "Never"})
    r = oom_report([never, HUNGRY], node(pod_stats("never", memory=100 * Mi), pod_stats("hungry", memory=Gi)), cfg())
    assert [(k.pod.name, k.reason, k.restarts, k.whole_container) for k in r.container_kills] == [
        ("never", "OOMKilled", False, True)]


def test_cgroup_v1_kills_a_single_process():
    r = oom_report([STEADY], node(pod_stats("steady", memory=Gi)), cfg(), cgroup_v2=False)
    assert [k.whole_container for k in r.container_kills] == [False]


def test_memory_qos_throttles_a_container_above_memory_high():
    r = oom_report([HUNGRY], node(pod_stats("hungry", memory=1900 * Mi)),
                   cfg(featureGates={"MemoryQoS": True}, memoryThrottlingFactor=0.9))
    (c,) = r.containers
    assert c.memory_high is not None and c.throttled and not c.over_limit


def test_limited_swap_gives_a_burstable_container_headroom_before_its_oom_kill():
    s = summary_from_dict({"node": {"memory": {"availableBytes": 80 * Mi, "workingSetBytes": 4 * Gi - 80 * Mi},
                                    "swap": {"swapAvailableBytes": 4 * Gi, "swapUsageBytes": 0}},
                           "pods": [pod_stats("hungry", memory=2 * Gi)]})
    r = oom_report([HUNGRY], s, cfg(failSwapOn=False, memorySwap={"swapBehavior": "LimitedSwap"}))
    (c,) = r.containers
    assert c.swap_max == 256 * Mi and not c.over_limit and r.container_kills == ()
