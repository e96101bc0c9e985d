"""Runtime policies in ``simulate``: node groups naming an NRI policy, the variant key, the figures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from kubetwin.errors import InputError
from kubetwin.sim import load_scenario
from kubetwin.sim.loop import simulate
from kubetwin.sim.runtime_policies import misaligned, needed_numa_nodes
from kubetwin.sim.sweep import RunSpec, load_run, parse_variant

ROOT = Path(__file__).resolve().parents[2]
GUARANTEED = {"requests": {"cpu": "4", "memory": "1Gi"}, "limits": {"cpu": "4", "memory": "1Gi"}}
BURSTABLE = {"requests": {"cpu": "500m", "memory": "256Mi"}}


def _workload(name: str, count: int, resources: dict, duration: float | None = None, **meta: object) -> dict:
    w: dict = {"name": name, "count": count, "arrival": {"interval": "1s"},
               "template": {"metadata": dict(meta), "spec": {"containers": [{"name": "app", "resources": resources}]}}}
    if duration is not None:
        w["duration"] = duration
    return w


def _scenario(tmp_path: Path, group: dict, workloads: list[dict], **spec: object) -> Path:
    doc = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "rt"},
           "spec": {"nodeGroups": [{"name": "nri", "count": 1, "machine": "2s2n8c2t", **group}],
                    "workloads": workloads, **spec}}
    p = tmp_path / "sim.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def _refusal(tmp_path: Path, group: dict, **spec: object) -> InputError:
    with pytest.raises(InputError) as exc:
        load_scenario(_scenario(tmp_path, group, [_workload("g", 1, GUARANTEED)], **spec))
    return exc.value


def _run(tmp_path: Path, group: dict, workloads: list[dict]):
    return simulate(load_scenario(_scenario(tmp_path, group, workloads)))


# --- placing containers through NRI ------------------------------------------------------------
def test_topology_aware_gives_a_guaranteed_pod_exclusive_cpus_of_one_numa_node(tmp_path):
    r = _run(tmp_path, {"runtime": {"policy": "topology-aware"}}, [_workload("g", 1, GUARANTEED)])
    pod = r.pods[0]
    assert pod.phase == "Running"
    assert pod.cpus == "8-9,40-41" and pod.mems == "1"
    row = r.placement["containers"][0]
    assert row["pool"] == "NUMA node #1" and row["exclusive"] == "8-9,40-41" and row["misaligned"] is False


def test_a_burstable_pod_in_the_root_pool_is_numa_misaligned(tmp_path):
    r = _run(tmp_path, {"runtime": {"policy": "topology-aware"}}, [_workload("b", 1, BURSTABLE)])
    row = r.placement["containers"][0]
    assert row["pool"] == "root" and row["exclusive"] == "" and row["misaligned"] is True
    assert r.pods[0].cpus == ""


def test_completed_pods_give_their_exclusive_cpus_back_through_nri(tmp_path):
    r = _run(tmp_path, {"runtime": {"policy": "topology-aware"}}, [_workload("g", 3, GUARANTEED, duration=10)])
    assert [p.phase for p in r.pods] == ["Succeeded"] * 3
    assert r.placement["totals"]["exclusiveCpus"] == 0 and r.placement["totals"]["containers"] == 0


def test_running_pods_count_in_the_node_figures_at_the_end(tmp_path):
    r = _run(tmp_path, {"runtime": {"policy": "topology-aware"}}, [_workload("g", 2, GUARANTEED)])
    node = r.placement["nodes"][0]
    assert node["manager"] == "topology-aware"
    assert node["exclusiveCpus"] == 8 and node["containers"] == 2 and node["misalignedContainers"] == 0
    assert r.node_reports[0].policies["runtimePolicy"] == "topology-aware"
    assert r.node_reports[0].stranded_cpus == node["strandedCpus"]


def test_balloons_gives_a_guaranteed_pod_a_dedicated_balloon_whose_cpus_are_its_own(tmp_path):
    r = _run(tmp_path, {"runtime": {"policy": "balloons"}}, [_workload("g", 1, GUARANTEED)])
    row = r.placement["containers"][0]
    assert row["pool"] == "dedicated-cpus[0]" and row["exclusive"] == row["cpusetCpus"] != ""


def test_a_policy_resource_file_configures_the_policy(tmp_path):
    (tmp_path / "ta.yaml").write_text(yaml.safe_dump({
        "apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy", "metadata": {"name": "default"},
        "spec": {"reservedResources": {"cpu": "2"}, "pinCPU": True, "pinMemory": True}}))
    r = _run(tmp_path, {"runtime": {"policy": "topology-aware", "config": "ta.yaml"}}, [_workload("g", 1, GUARANTEED)])
    assert r.pods[0].phase == "Running" and r.pods[0].cpus


def test_a_python_plugin_places_containers(tmp_path):
    shutil.copy(ROOT / "examples/nri/numa_spread.py", tmp_path / "numa_spread.py")
    r = _run(tmp_path, {"runtime": {"policy": "numa_spread.py"}}, [_workload("b", 2, BURSTABLE)])
    assert [c["cpusetMems"] for c in r.placement["containers"]] == ["0", "1"]
    assert r.placement["nodes"][0]["manager"] == "numa_spread.py"


def test_a_pod_the_plugin_refuses_fails_with_create_container_error(tmp_path):
    shutil.copy(ROOT / "examples/nri/numa_spread.py", tmp_path / "numa_spread.py")
    bad = _workload("bad", 1, BURSTABLE, annotations={"numa-spread.example.com/node": "9"})
    r = _run(tmp_path, {"runtime": {"policy": "numa_spread.py"}}, [bad])
    assert r.pods[0].phase == "Failed" and r.pods[0].reason == "CreateContainerError"
    assert "no NUMA node 9" in r.pods[0].message
    assert r.placement["totals"]["rejectedByRuntime"] == 1 and r.placement["totals"]["rejectedByKubelet"] == 0


def test_kubelet_static_nodes_get_the_same_figures_without_runtime_containers(tmp_path):
    group = {"kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}}}
    r = _run(tmp_path, group, [_workload("g", 1, GUARANTEED), _workload("b", 1, BURSTABLE)])
    assert r.placement["nodes"][0]["manager"] == "kubelet static"
    assert r.placement["totals"]["exclusiveCpus"] == 4
    assert r.placement["totals"]["misalignedContainers"] == 1   # the burstable one in the shared pool
    assert "containers" not in r.placement


def test_the_results_json_carries_the_placement(tmp_path):
    r = _run(tmp_path, {"runtime": {"policy": "topology-aware"}}, [_workload("g", 1, GUARANTEED)])
    out = json.loads(json.dumps(r.to_json()))
    assert out["placement"]["containers"][0]["pod"] == "default/g-0"


def test_the_report_has_a_placement_section_only_with_runtime_policies(tmp_path):
    from kubetwin.report.html import render_html

    with_rt = _run(tmp_path, {"runtime": {"policy": "topology-aware"}}, [_workload("g", 1, GUARANTEED)])
    without = _run(tmp_path, {}, [_workload("g", 1, GUARANTEED)])
    assert "CPU placement" in render_html([with_rt])
    assert "CPU placement" not in render_html([without])


# --- refusals ------------------------------------------------------------------------------------
def test_an_unknown_policy_is_refused_with_the_nearest_name(tmp_path):
    err = _refusal(tmp_path, {"runtime": {"policy": "topology-awar"}})
    assert err.path == "spec.nodeGroups[0].runtime.policy" and "topology-aware" in (err.fix or "")


def test_a_misspelt_runtime_field_is_refused(tmp_path):
    err = _refusal(tmp_path, {"runtime": {"polcy": "balloons"}})
    assert "spec.nodeGroups[0].runtime.polcy" in str(err)


def test_a_config_of_the_other_policy_is_refused(tmp_path):
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy",
                                                    "metadata": {"name": "default"}, "spec": {"reservedResources": {"cpu": "1"}}}))
    err = _refusal(tmp_path, {"runtime": {"policy": "topology-aware", "config": "b.yaml"}})
    assert err.path == "spec.nodeGroups[0].runtime.config" and "BalloonsPolicy" in err.message


def test_a_config_with_policy_none_is_refused(tmp_path):
    err = _refusal(tmp_path, {"runtime": {"policy": "none", "config": "x.yaml"}})
    assert err.path == "spec.nodeGroups[0].runtime.config"


def test_a_missing_plugin_file_is_refused(tmp_path):
    err = _refusal(tmp_path, {"runtime": {"policy": "nothere.py"}})
    assert err.path == "spec.nodeGroups[0].runtime.policy" and "no such plugin file" in err.message


def test_a_runtime_policy_needs_a_machine(tmp_path):
    doc = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "rt"},
           "spec": {"nodeGroups": [{"name": "n", "capacity": {"cpu": "8", "memory": "8Gi"},
                                    "runtime": {"policy": "balloons"}}]}}
    p = tmp_path / "sim.yaml"
    p.write_text(yaml.safe_dump(doc))
    with pytest.raises(InputError) as exc:
        load_scenario(p)
    assert exc.value.path == "spec.nodeGroups[0].machine"


def test_a_runtime_policy_without_kubelet_admission_is_refused(tmp_path):
    sc = load_scenario(_scenario(tmp_path, {"runtime": {"policy": "balloons"}}, [_workload("g", 1, GUARANTEED)],
                                 kubeletAdmission=False))
    with pytest.raises(InputError) as exc:
        simulate(sc)
    assert exc.value.path == "spec.kubeletAdmission"


# --- the variant key -----------------------------------------------------------------------------
def test_the_runtime_policy_variant_switches_every_node_with_a_machine(tmp_path):
    p = _scenario(tmp_path, {}, [_workload("g", 1, GUARANTEED)])
    sc = load_run(RunSpec(("file", str(p)), parse_variant("nri:runtime.policy=topology-aware")))
    assert all(n.runtime is not None and n.runtime.name == "topology-aware" for n in sc.nodes)
    assert simulate(sc).placement["containers"][0]["exclusive"] == "8-9,40-41"


def test_the_variant_says_what_it_changed():
    assert parse_variant("nri:runtime.policy=balloons").changes() == ("runtime.policy=balloons",)


def test_a_misspelt_runtime_variant_key_is_refused_with_the_nearest_key():
    with pytest.raises(InputError) as exc:
        parse_variant("x:runtime.polcy=balloons")
    assert "runtime.policy" in str(exc.value)


def test_an_unknown_runtime_policy_variant_value_is_refused():
    with pytest.raises(InputError) as exc:
        parse_variant("x:runtime.policy=baloons")
    assert "balloons" in (exc.value.fix or "")


def test_runtime_config_variant_needs_runtime_policy():
    with pytest.raises(InputError) as exc:
        parse_variant("x:runtime.config=ta.yaml")
    assert "runtime.policy" in exc.value.message


def test_runtime_policy_none_variant_removes_the_groups_policy(tmp_path):
    p = _scenario(tmp_path, {"runtime": {"policy": "balloons"}}, [_workload("g", 1, GUARANTEED)])
    sc = load_run(RunSpec(("file", str(p)), parse_variant("off:runtime.policy=none")))
    assert all(n.runtime is None for n in sc.nodes)


# --- the figures' definitions ----------------------------------------------------------------------
def test_needed_numa_nodes_is_the_fewest_nodes_holding_the_cpus():
    from kubetwin.machine import load_machine

    m = load_machine("2s2n8c2t")   # 4 NUMA nodes of 16 CPUs
    assert [needed_numa_nodes(m, k) for k in (1, 16, 17, 64)] == [1, 1, 2, 4]


def test_a_cpuset_within_one_numa_node_with_local_memory_is_aligned():
    from kubetwin.machine import load_machine
    from kubetwin.model.cpuset import CPUSet

    m = load_machine("2s2n8c2t")
    assert not misaligned(m, CPUSet.parse("8-9,40-41"), CPUSet.parse("1"), 4)
    assert misaligned(m, CPUSet.parse("8-9,40-41"), CPUSet.parse("0-1"), 4)   # memory on a remote node
    assert misaligned(m, CPUSet.parse("7-8"), CPUSet(), 2)                   # two NUMA nodes for 2 CPUs


# --- scheduling against NRI-managed nodes -----------------------------------------------------------
NRT_PROFILE = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
               "profiles": [{"schedulerName": "default-scheduler",
                             "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}}}]}


def _nrt_of(sim, node: str):
    from kubetwin.scheduler.plugins.noderesourcetopology import NAME

    return sim.sched.framework.plugin(NAME)._object(node)


def test_node_resource_topology_match_reads_the_policys_export_of_an_nri_node(tmp_path):
    from kubetwin.sim.loop import Simulator

    p = _scenario(tmp_path, {"runtime": {"policy": "topology-aware"}}, [_workload("g", 1, GUARANTEED)],
                  schedulerConfig=NRT_PROFILE)
    sim = Simulator(load_scenario(p))
    before = _nrt_of(sim, "nri-0")
    assert [(a.name, a.value) for a in before.attributes] == [("TopologyPolicy", "topology-aware")]
    sim.run()
    after = _nrt_of(sim, "nri-0")
    free = {z.name: next(r.available for r in z.resources if r.name == "cpu") for z in after.zones}
    assert str(free["NUMA node #1"]) == "12"   # the pod's 4 exclusive CPUs are gone from NUMA node #1's 16


def test_nodes_without_a_runtime_policy_keep_the_scenarios_node_resource_topologies(tmp_path):
    from kubetwin.sim.loop import Simulator

    p = _scenario(tmp_path, {}, [_workload("g", 1, GUARANTEED)], schedulerConfig=NRT_PROFILE)
    sim = Simulator(load_scenario(p))
    assert _nrt_of(sim, "nri-0") is None


def test_nodes_copied_from_a_started_template_give_the_same_run_as_nodes_started_afresh(tmp_path, monkeypatch):
    import kubetwin.sim.runtime_policies as rp

    workloads = [_workload("g", 5, GUARANTEED, duration=3), _workload("b", 5, BURSTABLE)]
    runs = []
    for fork in (False, True):
        monkeypatch.setattr(rp, "FORK", fork)
        for policy in ("topology-aware", "balloons"):
            p = _scenario(tmp_path, {"count": 2, "runtime": {"policy": policy}}, workloads)
            r = simulate(load_scenario(p))
            runs.append(json.dumps({"pods": r.to_json()["pods"],
                                    "placement": r.placement}, sort_keys=True, default=str))
    assert runs[0] == runs[2] and runs[1] == runs[3]


def test_least_numa_nodes_scores_an_nri_node_highest_for_a_guaranteed_pod(tmp_path):
    profile = {**NRT_PROFILE, "profiles": [{**NRT_PROFILE["profiles"][0], "pluginConfig": [
        {"name": "NodeResourceTopologyMatch", "args": {"scoringStrategy": {"type": "LeastNUMANodes"}}}]}]}
    doc = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "rt"},
           "spec": {"seed": 1, "schedulerConfig": profile,   # seed 1: without the policy, plain-1 wins
                    "nodeGroups": [{"name": "plain", "count": 3, "machine": "2s2n8c2t"},
                                   {"name": "nri", "count": 1, "machine": "2s2n8c2t",
                                    "runtime": {"policy": "topology-aware"}}],
                    "workloads": [_workload("g", 1, GUARANTEED)]}}
    p = tmp_path / "sim.yaml"
    p.write_text(yaml.safe_dump(doc))
    assert simulate(load_scenario(p)).pods[0].node == "nri-0"


def test_a_policy_that_does_not_start_on_the_machine_is_refused_before_the_run(tmp_path):
    (tmp_path / "ta.yaml").write_text(yaml.safe_dump({
        "apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy", "metadata": {"name": "default"},
        "spec": {"reservedResources": {"cpu": "cpuset:200"}}}))
    err = _refusal(tmp_path, {"runtime": {"policy": "topology-aware", "config": "ta.yaml"}})
    assert err.path == "spec.nodeGroups[0].runtime" and "200" in err.message


def test_a_plugin_whose_configure_fails_is_refused_before_the_run(tmp_path):
    (tmp_path / "bad.py").write_text(
        "from kubetwin.runtime.nri.stub import Plugin\n\n\n"
        "class Bad(Plugin):\n    name = 'bad'\n    index = '10'\n\n"
        "    def configure(self, config, runtime, version):\n        raise ValueError('no way')\n")
    err = _refusal(tmp_path, {"runtime": {"policy": "bad.py"}})
    assert err.path == "spec.nodeGroups[0].runtime" and "no way" in err.message


def test_an_evicted_pod_is_torn_down_through_nri(tmp_path, monkeypatch):
    from kubetwin.sim.loop import Simulator

    # the plain path's runtime node is read below (test_runtime_memo holds the fast path to it)
    monkeypatch.setattr("kubetwin.sim.runtime_memo.ENABLED", False)
    sim = Simulator(load_scenario(_scenario(tmp_path, {"runtime": {"policy": "topology-aware"}},
                                            [_workload("g", 1, GUARANTEED)])))
    sim.run()
    node = sim.runtime.nodes[0]
    assert "default/g-0" in node.pods
    sim.evict(sim.pods[0], "The node was low on resource: memory.", "memory.available")
    assert node.pods == {}
    assert sim.runtime.versions[0] == 2   # created, then stopped: two NodeResourceTopology updates
    assert placement_totals(sim)["exclusiveCpus"] == 0


def placement_totals(sim) -> dict:
    from kubetwin.sim.runtime_policies import placement_report

    return placement_report(sim, sim._result(0.0).node_reports)["totals"]


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_the_reserved_cpus_the_figures_read_are_the_ones_the_policy_describes(policy: str) -> None:
    from kubetwin.kubelet.admission import NodeAdmission
    from kubetwin.machine import load_machine
    from kubetwin.model.cpuset import CPUSet
    from kubetwin.model.kubelet_config import KubeletConfiguration
    from kubetwin.runtime.config import load_policy
    from kubetwin.sim.runtime_policies import RuntimePolicy, fork_runtime_node

    machine = load_machine("2s2n16c2t")
    config = KubeletConfiguration.from_dict({"kubeReserved": {"cpu": "2", "memory": "2Gi"}})
    rn = fork_runtime_node(machine, RuntimePolicy(policy, load_policy(policy)), config,
                           NodeAdmission(machine, config))
    assert rn.resmgr is not None
    described = CPUSet.parse(rn.resmgr.policy.describe()["reserved"])
    assert described and rn.resmgr.policy.reserved_cpus() == described


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
@pytest.mark.parametrize("seed", range(4))
def test_the_lean_node_figures_equal_the_plain_ones_after_every_creation_and_deletion(
        policy: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    from kubetwin.kubelet.admission import NodeAdmission
    from kubetwin.machine import load_machine
    from kubetwin.model.kubelet_config import KubeletConfiguration
    from kubetwin.model.pod import pod_from_dict
    from kubetwin.sim import runtime_policies
    from kubetwin.sim.runtime_policies import fork_runtime_node, runtime_figures

    from ..runtime import fastpath_runs as runs

    rng = random.Random(seed)
    rp = runs.topology_aware() if policy == "topology-aware" else runs.balloons()
    annotations = runs.TOPOLOGY_AWARE_ANNOTATIONS if policy == "topology-aware" else runs.BALLOONS_ANNOTATIONS
    machine = load_machine(str(runs.SHARED / "machines" / runs.MACHINES[seed % len(runs.MACHINES)]))
    config = KubeletConfiguration.from_dict(runs.NONE)
    rn = fork_runtime_node(machine, rp, config, NodeAdmission(machine, config))
    checked = 0
    for k in range(30):
        if rn.pods and rng.random() < 0.3:
            rn.delete_pod(rng.choice(sorted(rn.pods)))
        else:
            doc = runs.pod_doc(rng, annotations)
            doc["metadata"].update(name=f"p{k}", uid=f"uid-{k}")
            rn.create_pod(pod_from_dict(doc))
        lean = runtime_figures(rn)
        monkeypatch.setattr(runtime_policies, "LEAN_FIGURES", False)
        plain = runtime_figures(rn)
        monkeypatch.setattr(runtime_policies, "LEAN_FIGURES", True)
        assert lean == plain
        checked += lean[0] > 0
    assert checked
