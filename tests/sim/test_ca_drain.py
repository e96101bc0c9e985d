"""The Cluster Autoscaler's fast drain simulation places pods exactly where the plain first-fit walk does."""

from __future__ import annotations

import random

import numpy as np

from kubetwin.sim.ca_drain import DrainScan


class P:
    """A pod with a request vector and the nodes its node-local checks refuse."""

    def __init__(self, vec, refused=()):
        self.vec = np.array(vec, dtype=np.int64)
        self.refused = set(refused)


def plain_place(free, npods, alloc, unsched, skip, busy, pods):
    """The reference: each pod on the first node in order, outside busy and skip, with room."""
    tf, tn = free.copy(), npods.copy()
    for p in pods:
        for k in range(len(tn)):
            if k == skip or k in busy or unsched[k] or tn[k] >= alloc[k] or (tf[k] < p.vec).any() \
                    or k in p.refused:
                continue
            tf[k] -= p.vec
            tn[k] += 1
            break
        else:
            return False
    free[:] = tf
    npods[:] = tn
    return True


def scan(free, npods, alloc, unsched):
    return DrainScan(free, npods, alloc, unsched, lambda p: p.vec, lambda p, k: k not in p.refused)


def test_pods_go_to_the_first_node_with_room_outside_the_drained_and_busy_nodes():
    free = np.array([[0, 0], [1000, 4], [4000, 16], [4000, 16]], dtype=np.int64)
    npods = np.array([3, 0, 0, 0], dtype=np.int64)
    alloc = np.array([110] * 4, dtype=np.int64)
    s = scan(free, npods, alloc, np.zeros(4, dtype=bool))
    s.set_busy([2])
    assert s.place_elsewhere(0, [P([500, 2]), P([1000, 2])])
    assert free.tolist() == [[0, 0], [500, 2], [4000, 16], [3000, 14]]
    assert npods.tolist() == [3, 1, 0, 1]
    s.mark_busy(2, False)   # found needed: a destination again
    assert s.place_elsewhere(3, [P([4000, 16])])
    assert free.tolist()[2] == [0, 0]


def test_a_failed_drain_gives_back_the_room_it_took():
    free = np.array([[0, 0], [1000, 4], [500, 4]], dtype=np.int64)
    npods = np.zeros(3, dtype=np.int64)
    s = scan(free, npods, np.array([110] * 3, dtype=np.int64), np.zeros(3, dtype=bool))
    assert not s.place_elsewhere(0, [P([1000, 1]), P([1000, 1])])
    assert free.tolist() == [[0, 0], [1000, 4], [500, 4]] and npods.tolist() == [0, 0, 0]
    # the room the failed trial had taken is there for the next one
    assert s.place_elsewhere(2, [P([1000, 1])])
    assert free.tolist() == [[0, 0], [0, 3], [500, 4]]


def test_a_node_the_node_local_checks_refuse_is_passed_over_for_that_pod_only():
    free = np.array([[0, 0], [2000, 4], [2000, 4]], dtype=np.int64)
    npods = np.zeros(3, dtype=np.int64)
    s = scan(free, npods, np.array([110] * 3, dtype=np.int64), np.zeros(3, dtype=bool))
    assert s.place_elsewhere(0, [P([1000, 1], refused={1}), P([1000, 1])])
    assert free.tolist() == [[0, 0], [1000, 3], [1000, 3]]


def test_pod_slots_and_unschedulable_nodes_are_respected():
    free = np.array([[0, 0], [4000, 4], [4000, 4], [4000, 4]], dtype=np.int64)
    npods = np.array([0, 10, 0, 0], dtype=np.int64)
    unsched = np.array([False, False, True, False])
    s = scan(free, npods, np.array([110, 10, 110, 110], dtype=np.int64), unsched)
    assert s.place_elsewhere(0, [P([1000, 1])])
    assert npods.tolist() == [0, 10, 0, 1]


def test_random_scans_agree_with_the_plain_walk():
    rng = random.Random(7)
    for _ in range(60):
        n = rng.randint(3, 25)
        free = np.array([[rng.choice([0, 500, 1000, 2000, 4000]), rng.choice([0, 1, 2, 4, 8])] for _ in range(n)],
                        dtype=np.int64)
        npods = np.array([rng.randint(0, 5) for _ in range(n)], dtype=np.int64)
        alloc = np.array([rng.choice([3, 5, 110]) for _ in range(n)], dtype=np.int64)
        unsched = np.array([rng.random() < 0.1 for _ in range(n)])
        ref_free, ref_n = free.copy(), npods.copy()
        fast = scan(free, npods, alloc, unsched)
        busy: set[int] = set()
        for i in rng.sample(range(n), n):
            pods = [P([rng.choice([0, 250, 500, 1000]), rng.choice([0, 1, 2])],
                      refused={k for k in range(n) if rng.random() < 0.15}) for _ in range(rng.randint(1, 6))]
            want = plain_place(ref_free, ref_n, alloc, unsched, i, busy, pods)
            assert fast.place_elsewhere(i, pods) == want
            assert free.tolist() == ref_free.tolist() and npods.tolist() == ref_n.tolist()
            if want and rng.random() < 0.7:
                busy.add(i)
                fast.mark_busy(i, True)
            elif rng.random() < 0.3:
                k = rng.choice(range(n))
                busy.discard(k)
                fast.mark_busy(k, False)


def test_a_simulation_scales_down_the_same_with_the_fast_and_the_plain_drain(tmp_path, kit, monkeypatch):
    """Deployments of three request shapes, one pinned by a nodeSelector, one tolerating the
    tainted group, shrink under their HPAs; the Cluster Autoscaler drains the same nodes either way."""
    from kubetwin.sim.cluster_autoscaler import ClusterAutoscalerLoop
    from kubetwin.sim.loop import simulate

    def dep(name, cpu, memory, replicas, curve, extra=None):
        return {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "annotations": {"kubetwin.io/load": curve}},
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}}, "spec": {
                             **(extra or {}),
                             "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}}}}

    def hpa(name):
        return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                         "minReplicas": 1, "maxReplicas": 40, "metrics": [{"type": "Resource", "resource": {
                             "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]}}

    falling = "{cpu: [[0m, 24], [20m, 24], [40m, 2], [3h, 2]]}"
    spec = {"horizon": "3h", "sampleInterval": "1m",
            "autoscaling": {"horizontalPodAutoscaler": {"syncPeriod": "1m"},
                            "clusterAutoscaler": {"scanInterval": "1m", "expander": "least-waste"}},
            "nodeGroups": [
                {"name": "tainted", "count": 3, "minSize": 0, "maxSize": 6, "labels": {"pool": "t"},
                 "taints": [{"key": "dedicated", "value": "t", "effect": "NoSchedule"}],
                 "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
                {"name": "pool", "count": 8, "minSize": 1, "maxSize": 12, "labels": {"pool": "p"},
                 "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}}]}
    objs = [dep("a", "500m", "1Gi", 30, falling), hpa("a"),
            dep("b", "1", "3Gi", 20, falling, {"nodeSelector": {"pool": "p"}}), hpa("b"),
            dep("c", "750m", "2Gi", 20, falling, {"tolerations": [{"key": "dedicated", "operator": "Equal",
                                                                      "value": "t", "effect": "NoSchedule"}]}),
            hpa("c")]

    def run(fast: bool):
        monkeypatch.setattr(ClusterAutoscalerLoop, "fast_drain", fast)
        r = simulate(kit.scenario(tmp_path, spec, *objs))
        ca = r.autoscaling["clusterAutoscaler"]
        return ca["scaleDowns"], ca["scaleUps"], [(p.name, p.phase, p.node, p.reason) for p in r.pods]

    fast, plain = run(True), run(False)
    assert fast[0], "the scenario must scale down"
    assert any(not d["empty"] for d in fast[0]), "and drain at least one node"
    assert fast == plain
