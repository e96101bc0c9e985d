"""GPU sharing (the open-gpu-share model of the Alibaba trace) as a scheduler plugin in the loop."""

from __future__ import annotations

from kubetwin.sim import simulate


def gpu_pod(name, milli="500", count="1", model=None, **kw):
    ann = {"alibabacloud.com/gpu-count": count, "alibabacloud.com/gpu-milli": milli}
    if model:
        ann["alibabacloud.com/gpu-card-model"] = model
    return {"name": name, "template": {"metadata": {"annotations": ann},
                                       "spec": {"containers": [{"name": "c"}]}}, **kw}


def test_fractions_share_one_gpu_best_fit(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(gpus={"count": 2, "model": "T4"})],
                                 "workloads": [gpu_pod("a", "600"), gpu_pod("b", "300"), gpu_pod("c", "400")]})
    pods = {p.name: p for p in simulate(sc).pods}
    assert pods["a-0"].gpus == [[0, 600]]
    assert pods["b-0"].gpus == [[0, 300]]      # the fullest GPU that still fits
    assert pods["c-0"].gpus == [[1, 400]]


def test_a_pod_waits_with_insufficient_gpu_until_a_share_is_freed(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(gpus={"count": 1, "model": "T4"})],
                                 "workloads": [gpu_pod("a", "800", duration="1m"),
                                               gpu_pod("b", "500", arrival={"at": "1s"})]})
    r = simulate(sc)
    pods = {p.name: p for p in r.pods}
    assert pods["b-0"].start == 60.0
    assert pods["b-0"].attempts == 2


def test_whole_gpus_and_the_model_are_filtered(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(gpus={"count": 2, "model": "T4"})],
                                 "workloads": [gpu_pod("whole", "1000", count="3"),
                                               gpu_pod("v100", "1000", model="V100")]})
    pods = {p.name: p for p in simulate(sc).pods}
    assert pods["whole-0"].message.startswith("0/1 nodes are available: 1 Insufficient GPU.")
    assert pods["v100-0"].message.startswith("0/1 nodes are available: 1 node(s) didn't match the GPU model.")


def test_gpu_use_is_sampled_as_utilisation_and_fragmentation(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(gpus={"count": 2, "model": "T4"})],
                                 "workloads": [gpu_pod("a", "700")]})
    s = simulate(sc).summary()
    assert s["utilization"]["gpu"] == 0.35
    assert s["gpuFragmentation"] == 0.15    # 300 milli left on a GPU: too little for a whole one
