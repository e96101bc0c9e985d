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


def test_gpu_figures_kept_by_reserve_and_unreserve_match_the_free_table(tmp_path, kit):
    # pods of every shape come and go on nodes of different sizes: the running figures
    # equal the ones read off the per-GPU free thousandths at the end
    import numpy as np

    from kubetwin.sim.loop import Simulator

    shapes = [("300", "1"), ("700", "1"), ("1000", "2"), ("1000", "1"), ("150", "1")]
    workloads = [{**gpu_pod(f"w{k}", milli, gpus, duration=f"{40 + 25 * k}s", arrival={"interval": "7s"}),
                  "count": 6} for k, (milli, gpus) in enumerate(shapes)]
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group("a", count=2, gpus={"count": 2, "model": "T4"}),
                                                kit.group("b", count=1, gpus={"count": 4, "model": "T4"})],
                                 "workloads": workloads, "horizon": "100s"})
    sim = Simulator(sc)
    sim.run()
    gpu = sim.gpu
    free = gpu.free
    assert gpu.allocated_milli() > 0
    assert gpu.allocated_milli() == int((1000 - free)[free >= 0].sum())
    assert gpu.fragmentation_milli() == int(free[(free > 0) & (free < 1000)].sum())
    assert gpu.fragmentation_milli() > 0
    assert list(gpu.max_free) == [int(r.max()) for r in free]
    assert list(gpu.whole_free) == [int((r == 1000).sum()) for r in free]
    assert np.array_equal(gpu.fragmentation_milli(500), free[(free > 0) & (free < 500)].sum())


def test_the_vector_filter_gives_each_node_the_code_and_reasons_of_the_node_by_node_filter(tmp_path, kit):
    # the wrong model is worked out only when the cycle fails: the verdict's codes and reasons,
    # once asked for, are those of the plugin's own Filter on every node
    from kubetwin.scheduler.framework.interface import CycleState
    from kubetwin.sim.gpushare import _vector_filter
    from kubetwin.sim.loop import Simulator

    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group("t4", count=2, gpus={"count": 1, "model": "T4"}),
                                                kit.group("v100", count=2, gpus={"count": 1, "model": "V100"})],
                                 "workloads": [gpu_pod("a", "700", model="V100", arrival={"at": "0s"}),
                                               gpu_pod("b", "500", model="V100|A100", arrival={"at": "1s"})]})
    sim = Simulator(sc)
    sim.run()
    pod = next(a.pod for a in sc.arrivals if a.pod.metadata.name.startswith("b"))
    cs, gpu = sim.cluster, sim.gpu
    verdict = _vector_filter(cs, pod, gpu, CycleState()).settle()
    got = [(bool(verdict.fail[i]), verdict.status(i).code, verdict.status(i).reasons) for i in range(cs.n)]
    want = []
    for i in range(cs.n):
        st = gpu.filter(CycleState(), pod, cs.infos[i])
        want.append((not st.is_success, st.code, st.reasons))
    failing = [w for w in want if w[0]]
    assert {w[2] for w in failing} == {("node(s) didn't match the GPU model",), ("Insufficient GPU",)}
    assert [g for g in got if g[0]] == failing
    assert [g[0] for g in got] == [w[0] for w in want]


def test_the_fused_filter_rejects_the_nodes_the_vector_filter_rejects(tmp_path, kit):
    # shares, whole GPUs and model sets, on nodes partly taken: (amount, column) pairs and masks
    # reject exactly the nodes whose vector verdict fails
    import numpy as np

    from kubetwin.model.meta import convert
    from kubetwin.model.pod import Pod
    from kubetwin.scheduler.framework.interface import CycleState
    from kubetwin.sim.gpushare import _vector_filter
    from kubetwin.sim.loop import Simulator

    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group("t4", count=3, gpus={"count": 2, "model": "T4"}),
                                                kit.group("v100", count=2, gpus={"count": 4, "model": "V100"})],
                                 "workloads": [{**gpu_pod("a", "700"), "count": 4},
                                               {**gpu_pod("b", "1000", count="2"), "count": 2}]})
    sim = Simulator(sc)
    sim.run()
    cs, gpu = sim.cluster, sim.gpu
    for count, milli, model in [("1", "300", None), ("1", "800", "V100"), ("2", "1000", None),
                                ("3", "1000", "T4|V100"), ("1", "1000", "A100"), ("0", "0", None)]:
        ann = {"alibabacloud.com/gpu-count": count, "alibabacloud.com/gpu-milli": milli}
        if model:
            ann["alibabacloud.com/gpu-card-model"] = model
        pod = convert({"metadata": {"name": "p", "annotations": ann}, "spec": {"containers": [{"name": "c"}]}}, Pod)
        wants, masks = gpu.fused_filter(pod)
        fail = np.zeros(cs.n, dtype=bool)
        for want, column in wants:
            fail |= want > column
        for mask in masks:
            fail |= mask
        assert fail.tolist() == _vector_filter(cs, pod, gpu, CycleState()).fail.tolist(), (count, milli, model)
