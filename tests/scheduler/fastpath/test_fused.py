"""The fused cycle answers exactly as the vectorised cycle it shortcuts.

On random clusters (labels, taints, cordons, extended resources, pods already bound, shared GPUs)
and random streams of pods (requests, node selectors, tolerations, ``nodeName``, GPU share
annotations; and pods it does not cover: affinity, spread, host ports), with binds, removals
and node updates in between, a scheduler with the fused cycle and one without give every pod
the same result — node, code, message, feasible and examined counts, rejecting plugins — and
keep the same sampling rotation and random generator state. Pods it does not cover go to the
vectorised path; the trace's profile is one it covers.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import msgspec
import pytest

import kubetwin.sim.gpushare  # noqa: F401  (registers the GPUShare plugin)
from kubetwin import _kernel
from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert, enc_hook
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.fastpath import fused
from kubetwin.scheduler.profile import Profile
from kubetwin.scheduler.scheduler import Scheduler
from kubetwin.sim.gpushare import GPU_COUNT, GPU_MILLI, GPU_MODEL

from ..randomcluster import random_node, random_pod

MODELS = ["V100", "T4", "A10"]


@pytest.fixture(autouse=True, params=["compiled", "pure-python"])
def kernel(request):
    """Every test runs with the compiled kernel (where built) and with its pure-Python twin."""
    if request.param == "compiled" and _kernel.pick_c is None:
        pytest.skip("the C kernel was not built here")
    before = _kernel.use(request.param == "compiled")
    yield request.param
    _kernel.use(before)


def _gpu_node(rng: random.Random, i: int) -> Node:
    node = random_node(rng, i)
    if rng.random() < 0.6:
        gpus = rng.randint(1, 4)
        obj = msgspec.to_builtins(node, enc_hook=enc_hook)
        obj["status"]["allocatable"][GPU_COUNT] = str(gpus)
        obj["metadata"]["labels"][GPU_MODEL] = rng.choice(MODELS)
        node = convert(obj, Node)
    return node


def _covered_pod(rng: random.Random, name: str) -> Pod:
    """A pod of the kinds the fused cycle covers: requests, selectors, tolerations, GPU shares."""
    pod = random_pod(rng, name)
    obj = msgspec.to_builtins(pod, enc_hook=enc_hook)
    spec = obj["spec"]
    for key in ("affinity", "topologySpreadConstraints"):
        spec.pop(key, None)
    for c in spec["containers"]:
        c.pop("ports", None)
    if rng.random() < 0.5:
        count = rng.choice([1, 1, 1, 2])
        ann = {GPU_COUNT: str(count), GPU_MILLI: str(rng.choice([100, 250, 500, 1000]) if count == 1 else 1000)}
        if rng.random() < 0.4:
            ann[GPU_MODEL] = "|".join(rng.sample(MODELS, rng.randint(1, 2)))
        obj["metadata"]["annotations"] = ann
    if rng.random() < 0.03:
        spec["nodeName"] = f"n{rng.randrange(10)}"
    return convert(obj, Pod)


def _pair(seed: int, n_nodes: int, gpu_share: bool, running_covered: bool, pct: int | None = None):
    rng = random.Random(seed)
    nodes = [_gpu_node(rng, i) for i in range(n_nodes)]
    make = _covered_pod if running_covered else random_pod
    running = []
    for k in range(n_nodes // 2):
        pod = make(rng, f"r{k}")
        obj = msgspec.to_builtins(pod, enc_hook=enc_hook)
        obj["spec"]["nodeName"] = f"n{rng.randrange(n_nodes)}"
        running.append(convert(obj, Pod))
    profile = Profile(percentage_of_nodes_to_score=pct)
    if gpu_share:
        profile = dataclasses.replace(profile, plugins=profile.plugins + (("GPUShare", 0),))
    gates = gates_for()
    with_fused = Scheduler(profile, nodes, gates, seed, pods=running)
    without = Scheduler(profile, nodes, gates, seed, pods=running)
    without.fused = None
    assert with_fused.fused is not None
    return rng, with_fused, without


def _renamed(pod: Pod, name: str) -> Pod:
    meta = msgspec.structs.replace(pod.metadata, name=name, uid=f"uid-{name}")
    return msgspec.structs.replace(pod, metadata=meta)


def _same(a, b, where: str) -> None:
    assert (a.node, a.code, a.message, a.feasible, a.evaluated, a.unschedulable_plugins, a.nominated_node) == (
        b.node, b.code, b.message, b.feasible, b.evaluated, b.unschedulable_plugins, b.nominated_node), where


def _run(seed: int, n_nodes: int, *, gpu_share: bool, running_covered: bool, covered_share: float,
         pct: int | None = None, pods: int = 60, windowed: bool = False) -> int:
    rng, a, b = _pair(seed, n_nodes, gpu_share, running_covered, pct)
    if windowed:   # as on clusters of window_min_nodes or more: the reference reads windows of nodes
        a.fast.window_min_nodes = b.fast.window_min_nodes = 0
    bound: list[Pod] = []
    templates: list[Pod] = []
    for k in range(pods):
        if templates and rng.random() < 0.5:   # another replica: the template's spec object shared
            pod = _renamed(rng.choice(templates), f"p{k}")
        else:
            pod = _covered_pod(rng, f"p{k}") if rng.random() < covered_share else random_pod(rng, f"p{k}")
            templates.append(pod)
        ra, rb = a.schedule(pod), b.schedule(pod)
        _same(ra, rb, f"seed {seed}, pod {k}")
        assert a.next_start == b.next_start and a.rng.getstate() == b.rng.getstate()
        if ra.node is not None:
            a.bind(pod, ra.node)
            b.bind(pod, rb.node)
            bound.append(pod)
        r = rng.random()
        if r < 0.1 and bound:   # a pod leaves
            gone = bound.pop(rng.randrange(len(bound)))
            assert a.remove(gone) == b.remove(gone)
        elif r < 0.18:          # a node object changes: new taints, a cordon, new labels
            node = _gpu_node(rng, rng.randrange(n_nodes))
            assert a.update_node(node) == b.update_node(node)
    assert a.fused is not None
    return a.fused.cycles


@pytest.mark.parametrize("seed", range(8))
def test_covered_pods_get_the_vectorised_cycles_answers(seed):
    assert _run(seed, 80, gpu_share=True, running_covered=True, covered_share=1.0) > 0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("pct", [None, 5, 50, 100])
def test_the_sampling_rotation_and_random_draws_follow_the_vectorised_cycle(seed, pct):
    _run(seed, 150, gpu_share=True, running_covered=True, covered_share=0.9, pct=pct, pods=80)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("pct", [None, 10])
def test_on_large_clusters_the_kernel_finds_what_the_windowed_search_finds(seed, pct, kernel):
    answered = _run(seed, 150, gpu_share=True, running_covered=True, covered_share=0.9, pct=pct, pods=60,
                    windowed=True)
    # the compiled kernel answers on large clusters; its pure-Python twin leaves them to the windows
    assert (answered > 0) == (kernel == "compiled")


@pytest.mark.parametrize("seed", range(6))
def test_pods_not_covered_and_clusters_with_affinity_go_the_vectorised_way_alike(seed):
    _run(seed, 60, gpu_share=False, running_covered=False, covered_share=0.5)
    assert _run(seed, 60, gpu_share=False, running_covered=True, covered_share=0.5) > 0


def test_a_node_tainted_since_the_specs_last_cycle_is_rejected():
    rng, a, b = _pair(4, 12, False, True)
    template = convert({"metadata": {"name": "t"}, "spec": {"containers": [{"name": "c"}]}}, Pod)
    ra = a.schedule(template)
    assert ra.node is not None and a.fused is not None and a.fused.cycles == 1
    taints = [{"key": "k", "effect": "NoSchedule"}]
    for name in a.cluster.names:
        node = convert({"metadata": {"name": name}, "spec": {"taints": taints},
                        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}, Node)
        a.update_node(node)
        b.update_node(node)
    pod = _renamed(template, "u")
    _same(a.schedule(pod), b.schedule(pod), "tainted")
    assert a.schedule(pod).node is None


def test_a_pod_with_affinity_or_host_ports_is_not_covered():
    rng, a, _ = _pair(1, 40, True, True)
    assert a.fused is not None
    pod = convert({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}]}]}}, Pod)
    assert a.fused.cycle(pod, 0, rng) is None
    pod = convert({"metadata": {"name": "q"}, "spec": {"containers": [{"name": "c"}], "affinity": {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "x"}}}]}}}}, Pod)
    assert a.fused.cycle(pod, 0, rng) is None


def test_a_cycle_where_no_node_fits_is_left_to_the_vectorised_path():
    rng, a, _ = _pair(2, 30, True, True)
    pod = convert({"metadata": {"name": "big"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": "1000"}}}]}}, Pod)
    assert a.fused is not None and a.fused.cycle(pod, 0, rng) is None
    assert a.schedule(pod).node is None


def test_a_profile_with_a_plugin_it_does_not_know_has_no_fused_cycle(tmp_path):
    from kubetwin.scheduler.profile import load_profile

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      enabled: [{name: NodeResourceTopologyMatch}]
""")
    nodes = [random_node(random.Random(0), i) for i in range(5)]
    assert Scheduler(load_profile(cfg), nodes, gates_for()).fused is None
    assert Scheduler(None, nodes, gates_for()).fused is not None
    assert Scheduler(None, nodes, gates_for(), vectorised=False).fused is None


def test_turned_off_the_vectorised_cycle_answers(monkeypatch):
    monkeypatch.setattr(fused, "ENABLED", False)
    rng, a, _ = _pair(3, 40, True, True)
    pod = _covered_pod(rng, "p")
    a.schedule(pod)
    assert a.fused is not None and a.fused.cycles == 0


TRACE = Path("/work/shared/data/traces/alibaba-gpu-v2023")


@pytest.mark.skipif(not TRACE.exists(), reason="shared trace data not present")
def test_every_cycle_of_the_alibaba_trace_that_places_a_pod_takes_the_fused_cycle(kernel):
    from kubetwin.sim.loop import simulate
    from kubetwin.sim.sweep import RunSpec, load_run

    before = fused.FusedCycle.answered
    r = simulate(load_run(RunSpec(("alibaba", str(TRACE), "openb_pod_list_default.csv", False))))
    assert r.counters.bound == 7995
    assert fused.FusedCycle.answered - before == 7995
