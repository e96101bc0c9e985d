"""Each topology-aware option and annotation, end to end: kubelet, NRI events, the policy, the
container's final cpuset, memory nodes and adjustments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetwin.diagnostics import collecting
from kubetwin.errors import InputError
from kubetwin.runtime.resmgr.policy import PolicyError
from kubetwin.runtime.run import RuntimeInputs, run_runtime

MACHINES = Path(__file__).parents[2] / "cases" / "machines"


def pod(name: str, cpu: str | None = "1", mem: str = "100M", n: int = 1, ann: dict | None = None,
        ns: str = "default", limit_cpu: str | None = "same", init: list[dict] | None = None) -> dict[str, Any]:
    def container(i: int) -> dict[str, Any]:
        c: dict[str, Any] = {"name": f"{name}c{i}", "image": "busybox"}
        if cpu is not None:
            lim = {"cpu": cpu if limit_cpu == "same" else limit_cpu, "memory": mem}
            if lim["cpu"] is None:
                del lim["cpu"]
            c["resources"] = {"requests": {"cpu": cpu, "memory": mem}, "limits": lim}
        return c

    spec: dict[str, Any] = {"containers": [container(i) for i in range(n)]}
    if init:
        spec["initContainers"] = init
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "annotations": ann or {}}, "spec": spec}


def policy(**spec: Any) -> dict[str, Any]:
    base = {"reservedResources": {"cpu": "750m"}, "preferIsolatedCPUs": False}
    base.update(spec)
    return {"apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy",
            "metadata": {"name": "default"}, "spec": base}


def run(tmp: Path, spec: dict, pods: list[dict], machine: str = "n4c16", **kw: Any) -> dict[str, Any]:
    (tmp / "policy.yaml").write_text(yaml.safe_dump(spec))
    paths = []
    if pods:
        (tmp / "pods.yaml").write_text(yaml.safe_dump_all(pods))
        paths = [str(tmp / "pods.yaml")]
    return run_runtime(RuntimeInputs(machine=str(MACHINES / f"{machine}.json"), policy=str(tmp / "policy.yaml"),
                                     pods=paths, **kw))


def by_name(out: dict) -> dict[str, dict]:
    return {c["name"]: c for c in out["containers"]}


def test_pin_cpu_false_leaves_containers_on_every_cpu(tmp_path: Path) -> None:
    c = by_name(run(tmp_path, policy(pinCPU=False), [pod("p", cpu="2")]))["pc0"]
    assert c["cpusetCpus"] == "" and c["cpus"] == "0-15"
    assert "exclusive" in c["grant"]


def test_pin_memory_false_leaves_containers_on_every_memory_node(tmp_path: Path) -> None:
    c = by_name(run(tmp_path, policy(pinMemory=False), [pod("p")]))["pc0"]
    assert c["mems"] == "0-3" and c["cpus"] != "0-15"


def test_a_one_cpu_container_gets_an_isolated_cpu_when_preferred(tmp_path: Path) -> None:
    c = by_name(run(tmp_path, policy(preferIsolatedCPUs=True), [pod("p")], isolated="6-7"))["pc0"]
    assert c["grant"]["isolated"] in ("6", "7")


def test_required_isolated_cpus_that_do_not_exist_refuse_the_container(tmp_path: Path) -> None:
    out = run(tmp_path, policy(), [pod("p", ann={"require-isolated-cpus.resource-policy.nri.io/pod": "true"})])
    assert out["rejected"][0]["reason"] == "CreateContainerError"
    assert "granted isolated CPUs" in out["rejected"][0]["message"]
    assert out["containers"] == []


def test_prefer_shared_turns_an_exclusive_request_shared(tmp_path: Path) -> None:
    c = by_name(run(tmp_path, policy(), [pod("p", cpu="2", ann={"prefer-shared-cpus.resource-policy.nri.io/pod":
                                                                "true"})]))["pc0"]
    assert c["grant"]["cpuType"] == "normal" and "exclusive" not in c["grant"] and c["grant"]["sharedPortion"] == "2000m"


def test_a_fraction_above_two_cpus_is_mixed_when_shared_is_refused(tmp_path: Path) -> None:
    c = by_name(run(tmp_path, policy(), [pod("p", cpu="2500m", ann={"prefer-shared-cpus.resource-policy.nri.io/pod":
                                                                    "false"})]))["pc0"]
    assert len(c["grant"]["exclusive"].split(",")) >= 1 and c["grant"]["sharedPortion"] == "500m"


def test_hide_hyperthreads_keeps_one_thread_per_core(tmp_path: Path) -> None:
    c = by_name(run(tmp_path, policy(), [pod("p", cpu="4", ann={"hide-hyperthreads.resource-policy.nri.io/pod":
                                                                "true"})]))["pc0"]
    assert len(c["cpus"].split(",")) == 2 and "exclusive" in c["grant"]


def test_the_cpu_priority_preference_is_read_but_every_cpu_is_of_normal_priority(tmp_path: Path) -> None:
    plain = by_name(run(tmp_path, policy(), [pod("p")]))["pc0"]["cpus"]
    low = by_name(run(tmp_path, policy(), [pod("p", ann={"prefer-cpu-priority.resource-policy.nri.io/pod": "low"})]))
    assert low["pc0"]["cpus"] == plain


def test_a_scheduling_class_becomes_the_containers_linux_scheduler(tmp_path: Path) -> None:
    spec = policy(schedulingClasses=[{"name": "rt", "policy": "fifo", "priority": 42, "ioClass": "rt",
                                      "ioPriority": 2}], namespaceSchedulingClasses={"default": "rt"})
    adj = by_name(run(tmp_path, spec, [pod("p")]))["pc0"]["adjustments"][0]["adjust"]["linux"]
    assert adj["scheduler"] == {"policy": "SCHED_FIFO", "priority": 42}
    assert adj["ioPriority"] == {"class": "IOPRIO_CLASS_RT", "priority": 2}


def test_cpu_classes_are_applied_to_exclusive_cpus(tmp_path: Path) -> None:
    spec = policy(cpuClasses=[{"name": "turbo"}, {"name": "normal"}], sharedPoolCPUClass="normal",
                  defaultExclusiveCPUClass="turbo")
    out = run(tmp_path, spec, [pod("p", cpu="2")])
    c = by_name(out)["pc0"]
    assert c["grant"]["cpuClass"] == "turbo"
    assert out["node"]["policy"]["cpuClasses"]["turbo"] == c["grant"]["exclusive"]


def test_an_unknown_cpu_class_refuses_the_container(tmp_path: Path) -> None:
    spec = policy(cpuClasses=[{"name": "normal"}], sharedPoolCPUClass="normal")
    out = run(tmp_path, spec, [pod("p", cpu="2", ann={"cpu-class.resource-policy.nri.io/pod": "turbo"})])
    assert 'unknown CPU class "turbo"' in out["rejected"][0]["message"]


def test_a_container_scoped_cpu_class_on_a_burstable_container_refuses_it(tmp_path: Path) -> None:
    spec = policy(cpuClasses=[{"name": "normal"}], sharedPoolCPUClass="normal")
    p = pod("p", cpu="1", limit_cpu="2", ann={"cpu-class.resource-policy.nri.io/container.pc0": "normal"})
    out = run(tmp_path, spec, [p])
    assert "invalid for non-Guaranteed QoS class (Burstable)" in out["rejected"][0]["message"]


def test_a_cold_start_keeps_the_container_off_dram_at_start(tmp_path: Path) -> None:
    with collecting() as warnings:
        out = run(tmp_path, policy(), [pod("p", cpu="100m", ann={
            "memory-type.resource-policy.nri.io/pod": "dram,pmem",
            "cold-start.resource-policy.nri.io/pod": "duration: 30s"})], machine="n6-hbm-cxl")
    c = by_name(out)["pc0"]
    assert c["mems"] in ("4", "5") and c["grant"]["coldStart"] == "30s"
    assert any("cold start ends later" in w for w in warnings)


def test_a_malformed_cold_start_refuses_the_container(tmp_path: Path) -> None:
    out = run(tmp_path, policy(), [pod("p", ann={"cold-start.resource-policy.nri.io/pod": "duration: soon"})])
    assert "coldstart preference" in out["rejected"][0]["message"]


def test_a_malformed_affinity_refuses_the_container(tmp_path: Path) -> None:
    out = run(tmp_path, policy(), [pod("p", ann={"resource-policy.nri.io/affinity": "pc0: [{match: 3}]"})])
    assert "affinity" in out["rejected"][0]["message"]


def test_a_container_that_does_not_fit_any_pool_is_refused_by_the_policy(tmp_path: Path) -> None:
    out = run(tmp_path, policy(), [pod("a", cpu="8"), pod("b", cpu="8")])
    assert [r["pod"] for r in out["rejected"]] == ["b"]
    assert "can't slice 8 exclusive CPUs" in out["rejected"][0]["message"]
    assert [c["pod"] for c in out["containers"]] == ["a"]


def test_the_kubelet_refuses_before_the_runtime_sees_the_pod(tmp_path: Path) -> None:
    out = run(tmp_path, policy(), [pod("big", cpu="17")])
    assert out["rejected"][0]["reason"] == "OutOfcpu"


def test_a_sidecar_keeps_running_while_plain_init_containers_exit(tmp_path: Path) -> None:
    res = {"requests": {"cpu": "1", "memory": "100M"}, "limits": {"cpu": "1", "memory": "100M"}}
    init = [{"name": "setup", "image": "busybox", "resources": res},
            {"name": "proxy", "image": "envoy", "restartPolicy": "Always", "resources": res}]
    out = run(tmp_path, policy(), [pod("p", init=init)])
    assert {c["name"]: c["type"] for c in out["containers"]} == {"proxy": "sidecar", "pc0": "app"}


def test_rdt_and_blockio_classes_follow_the_qos_class_when_enabled(tmp_path: Path) -> None:
    spec = policy(control={"rdt": {"enable": True, "usePodQoSAsDefaultClass": True},
                           "blockio": {"enable": True, "usePodQoSAsDefaultClass": True}})
    c = by_name(run(tmp_path, spec, [pod("p")]))["pc0"]
    assert (c["rdtClass"], c["blockioClass"]) == ("Guaranteed", "Guaranteed")


def test_an_annotated_rdt_class_wins_over_the_qos_default(tmp_path: Path) -> None:
    spec = policy(control={"rdt": {"enable": True, "usePodQoSAsDefaultClass": True}})
    c = by_name(run(tmp_path, spec, [pod("p", ann={"rdtclass.resource-policy.nri.io/pod": "gold"})]))["pc0"]
    assert c["rdtClass"] == "gold"


def test_without_rdt_control_no_class_is_set(tmp_path: Path) -> None:
    c = by_name(run(tmp_path, policy(), [pod("p", ann={"rdtclass.resource-policy.nri.io/pod": "gold"})]))["pc0"]
    assert c["rdtClass"] is None


@pytest.mark.parametrize("spec, message", [
    (policy(availableResources={"cpu": "cpuset:4-7,8-13"}, reservedResources={"cpu": "cpuset:3,7,11,15"}),
     "invalid reserved cpuset"),
    (policy(availableResources={"cpu": "cpuset:4-7,8-13"}, reservedResources={"cpu": "11"}), "cannot reserve"),
    (policy(availableResources={"cpu": "4"}), "can't handle CPU resources given as resource.Quantity"),
], ids=["reserved outside available", "more reserved than available", "available as a quantity"])
def test_a_configuration_the_plugin_cannot_start_with_is_refused(tmp_path: Path, spec: dict, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        run(tmp_path, spec, [])


def test_a_misspelt_annotation_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown annotation"):
        run(tmp_path, policy(), [pod("p", ann={"prefer-isolated-cpu.resource-policy.nri.io": "true"})])
