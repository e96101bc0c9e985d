"""The kubelet's CRI calls for a node, and what the runtime below leaves in each container's cgroup.

Behaviour from kubernetes v1.36 ``pkg/kubelet/kuberuntime/kuberuntime_manager.go`` (``SyncPod``:
sandbox, init containers in turn, app containers), ``pkg/kubelet/cm/cpumanager/cpu_manager.go``
(``AddContainer`` records exclusive CPUs; ``reconcileState`` updates running containers whose
cpuset differs from the last one sent; terminated containers skipped; nothing under policy
``none``), ``internal_container_lifecycle_linux.go`` (cpusets at ``PreCreateContainer``),
``kuberuntime_container.go`` (``killContainer`` grace period), containerd v2.3 CRI plugin.
"""

from __future__ import annotations

import dataclasses
import json

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.machine.spec import parse_spec
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.blockio import parse_blockio_config
from kubetwin.runtime.containerd import RuntimeConfig
from kubetwin.runtime.kubelet_sequence import KubeletSequence, pod_has_exclusive_cpus
from kubetwin.runtime.rdt import parse_rdt_config
from kubetwin.runtime.runtime_state import RuntimeState

from .resctrl_fixtures import FIXTURES

DISKS = {"8:0": {"name": "sda", "major": 8, "minor": 0, "size": 1 << 40, "scheduler": "mq-deadline"}}


def machine(resctrl: dict | None = None):
    m = parse_spec("1s1n4c2t")
    extra = m.extra
    extra["disk_map"] = DISKS
    if resctrl is not None:
        extra["resctrl"] = resctrl
    return dataclasses.replace(m, extra_json=json.dumps(extra, sort_keys=True))


def kubelet(policy: str = "static", **kw) -> NodeAdmission:
    cfg = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "cpuManagerPolicy": policy,
           **({"reservedSystemCPUs": "0"} if policy == "static" else {}), **kw}
    return NodeAdmission(machine(), KubeletConfiguration.from_dict(cfg))


def pod(name: str, containers: list[dict], init: list[dict] | None = None, annotations: dict | None = None, **spec):
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                                       "annotations": annotations or {}},
                          "spec": {"containers": containers, "initContainers": init or [], **spec}})


def c(name: str, cpu: str | None = None, mem: str = "100Mi", guaranteed: bool = False, **extra) -> dict:
    req = {"memory": mem, **({"cpu": cpu} if cpu else {})}
    return {"name": name, "resources": {"requests": req, "limits": dict(req) if guaranteed else {}}, **extra}


def run(node: NodeAdmission, pods, runtime: RuntimeState | None = None) -> KubeletSequence:
    seq = KubeletSequence(node, runtime or RuntimeState(node.machine, RuntimeConfig()))
    for p in pods:
        seq.admitted(node.admit(p))
    seq.reconcile()
    return seq


def rpcs(seq: KubeletSequence) -> list[str]:
    return [f"{x.rpc} {x.container}".strip() for x in seq.calls]


def test_a_pod_starts_with_its_sandbox_then_init_then_app_containers() -> None:
    seq = run(kubelet("none"), [pod("p", [c("app")], init=[c("init"), c("proxy", restartPolicy="Always")])])
    assert rpcs(seq) == ["RunPodSandbox", "CreateContainer init", "StartContainer init", "CreateContainer proxy",
                         "StartContainer proxy", "CreateContainer app", "StartContainer app"]


def test_no_reconcile_under_policy_none() -> None:
    seq = run(kubelet("none"), [pod("p", [c("app", "500m")])])
    assert "UpdateContainerResources app" not in rpcs(seq)


def test_a_rejected_pod_gets_no_call() -> None:
    seq = run(kubelet(), [pod("big", [c("app", "64", guaranteed=True)])])
    assert seq.calls == [] and seq.rejected[0]["pod"] == "big"


def test_exclusive_container_is_created_with_its_cpus_and_not_reconciled() -> None:
    seq = run(kubelet(), [pod("db", [c("db", "2", guaranteed=True)])])
    create = next(x for x in seq.calls if x.rpc == "CreateContainer")
    assert create.request["config"]["linux"]["resources"]["cpusetCpus"] == "1,5"
    assert create.request["config"]["linux"]["resources"]["cpuQuota"] == -1
    assert "UpdateContainerResources db" not in rpcs(seq)


def test_shared_container_is_reconciled_once_even_when_nothing_changed() -> None:
    seq = run(kubelet(), [pod("web", [c("app", "500m")])])
    updates = [x for x in seq.calls if x.rpc == "UpdateContainerResources"]
    assert [u.request["linux"] for u in updates] == [{"cpusetCpus": "0-7"}]
    assert updates[0].why == "CPU Manager reconcileState"


def test_shared_pool_shrinks_under_a_running_container() -> None:
    seq = run(kubelet(), [pod("web", [c("app", "500m")]), pod("db", [c("db", "2", guaranteed=True)])])
    create = next(x for x in seq.calls if x.rpc == "CreateContainer" and x.container == "app")
    assert create.request["config"]["linux"]["resources"]["cpusetCpus"] == "0-7"
    update = next(x for x in seq.calls if x.rpc == "UpdateContainerResources")
    assert update.container == "app" and update.request["linux"] == {"cpusetCpus": "0,2-4,6-7"}
    view = seq.report()["pods"][0]["containers"][0]
    assert view["files"]["cpuset.cpus"] == "0,2-4,6-7"


def test_completed_init_containers_are_not_reconciled() -> None:
    seq = run(kubelet(), [pod("p", [c("app", "500m")], init=[c("init", "100m")])])
    assert [x.container for x in seq.calls if x.rpc == "UpdateContainerResources"] == ["app"]


def test_stopping_a_pod_frees_its_cpus_for_the_next_reconcile() -> None:
    node = kubelet()
    web, db = pod("web", [c("app", "500m")]), pod("db", [c("db", "2", guaranteed=True)])
    seq = run(node, [web, db])
    seq.stop_pod(db)
    assert rpcs(seq)[-4:] == ["StopContainer db", "StopPodSandbox", "RemoveContainer db", "RemovePodSandbox"]
    seq.reconcile()
    assert seq.calls[-1].rpc == "UpdateContainerResources" and seq.calls[-1].request["linux"] == {"cpusetCpus": "0-7"}


def test_stop_order_is_apps_then_sidecars_in_reverse_with_the_grace_period() -> None:
    p = pod("p", [c("a"), c("b")], init=[c("s1", restartPolicy="Always"), c("s2", restartPolicy="Always")],
            terminationGracePeriodSeconds=5)
    seq = run(kubelet("none"), [p])
    seq.stop_pod(p)
    stops = [x for x in seq.calls if x.rpc == "StopContainer"]
    assert [x.container for x in stops] == ["a", "b", "s2", "s1"]
    assert {x.request["timeout"] for x in stops} == {5}


def test_container_cgroup_end_state() -> None:
    seq = run(kubelet("none", cgroupDriver="systemd"), [pod("web", [c("app", "250m", mem="256Mi")])])
    view = seq.report()["pods"][0]["containers"][0]
    assert view["cgroup"].startswith("/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/"
                                     "kubepods-burstable-poduid_web.slice/cri-containerd-")
    assert view["files"]["cpu.weight"] == "35" and view["files"]["cpu.max"] == "max 100000"
    assert view["files"]["memory.oom.group"] == "1" and view["files"]["memory.swap.max"] == "0"
    assert "memory.max" not in view["files"]
    assert view["oomScoreAdj"] > 0


def test_sandbox_runs_with_two_shares_and_oom_score_adj_minus_998() -> None:
    sandbox = run(kubelet("none"), [pod("web", [c("app")])]).report()["pods"][0]["sandbox"]
    assert sandbox["files"] == {"cpu.weight": "1"} and sandbox["oomScoreAdj"] == -998


def test_linear_weight_curve_for_older_runc() -> None:
    node = kubelet("none")
    runtime = RuntimeState(node.machine, RuntimeConfig(cpu_weight_curve="linear"))
    view = run(node, [pod("web", [c("app", "1")])], runtime).report()["pods"][0]["containers"][0]
    assert view["files"]["cpu.weight"] == "39"


def test_blockio_and_rdt_classes_reach_the_container() -> None:
    node = NodeAdmission(machine(FIXTURES["resctrl.full"]), kubelet("none").config)
    rdt = parse_rdt_config({"partitions": {"p": {"l3Allocation": "100%", "mbAllocation": ["100%"],
                                                 "classes": {"gold": {"mbAllocation": ["50%"]}}}}})
    blockio = parse_blockio_config({"Classes": {"slow": [{"Weight": "80"}, {"Devices": ["/dev/sda"],
                                                                            "ThrottleReadBps": "10M"}]}})
    runtime = RuntimeState(node.machine, RuntimeConfig(), rdt=rdt, blockio=blockio)
    p = pod("web", [c("app")], annotations={"rdt.resources.beta.kubernetes.io/pod": "gold",
                                             "blockio.resources.beta.kubernetes.io/pod": "slow"})
    view = run(node, [p], runtime).report()["pods"][0]["containers"][0]
    assert view["rdtClass"] == "gold" and view["resctrlGroup"] == "/sys/fs/resctrl/gold"
    assert view["schemata"] == {"L3": "0=fffff;1=fffff;2=fffff;3=fffff", "MB": "0=50;1=50;2=50;3=50"}
    assert view["blockioClass"] == "slow"
    assert view["files"]["io.weight"] == "default 708"
    assert view["files"]["io.max"] == "8:0 rbps=10000000 wbps=max riops=max wiops=max"


def test_a_class_the_runtime_refuses_fails_the_container_not_the_pod() -> None:
    p = pod("web", [c("app")], annotations={"rdt.resources.beta.kubernetes.io/pod": "gold"})
    seq = run(kubelet("none"), [p])
    failed = next(x for x in seq.calls if x.rpc == "CreateContainer")
    assert failed.error == 'failed to set RDT class: RDT not initialized, class "gold" not available'
    assert "StartContainer app" not in rpcs(seq)
    assert seq.report()["pods"][0]["containers"][0]["error"] == failed.error


def test_an_init_container_that_cannot_be_created_blocks_the_app_containers() -> None:
    p = pod("web", [c("app")], init=[c("init")],
            annotations={"blockio.resources.beta.kubernetes.io/container.init": "slow"})
    seq = run(kubelet("none"), [p])
    assert rpcs(seq) == ["RunPodSandbox", "CreateContainer init"]


def test_pod_has_exclusive_cpus_only_with_a_container_of_its_own() -> None:
    node = kubelet()
    g, s = pod("g", [c("g", "1", guaranteed=True)]), pod("s", [c("s", "500m")])
    node.admit(g)
    node.admit(s)
    assert pod_has_exclusive_cpus(node, g) and not pod_has_exclusive_cpus(node, s)


def test_sandbox_of_an_exclusive_pod_has_no_quota() -> None:
    seq = run(kubelet(), [pod("g", [c("g", "1", guaranteed=True)])])
    sandbox = seq.calls[0].request["config"]["linux"]["resources"]
    assert sandbox["cpuQuota"] == -1


def test_in_place_resize_updates_the_container_then_the_sandbox() -> None:
    node = kubelet("none")
    before = pod("web", [{"name": "app", "resources": {"requests": {"cpu": "500m", "memory": "100Mi"},
                                                       "limits": {"cpu": "1", "memory": "200Mi"}}}])
    after = pod("web", [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "100Mi"},
                                                      "limits": {"cpu": "2", "memory": "300Mi"}}}])
    seq = run(node, [before])
    seq.resize_pod(after)
    mem, cpu, sandbox = seq.calls[-3:]
    assert (mem.rpc, mem.why) == ("UpdateContainerResources", "in-place resize (memory)")
    assert mem.request["linux"]["memoryLimitInBytes"] == 300 << 20 and mem.request["linux"]["cpuQuota"] == 100000
    assert cpu.request["linux"]["cpuQuota"] == 200000 and cpu.request["linux"]["cpuShares"] == 1024
    assert sandbox.rpc == "UpdatePodSandboxResources"
    assert sandbox.request["resources"]["memoryLimitInBytes"] == 300 << 20
    view = seq.report()["pods"][0]["containers"][0]
    assert view["files"]["cpu.max"] == "200000 100000" and view["files"]["memory.max"] == str(300 << 20)


def test_adjust_hook_sees_every_spec_before_runc_applies_it() -> None:
    seen = []

    def adjust(kind, request, spec):
        seen.append(kind)
        if kind == "container":
            spec["linux"]["resources"]["cpu"]["cpus"] = "3"
        return spec

    node = kubelet("none")
    runtime = RuntimeState(node.machine, RuntimeConfig(), adjust=adjust)
    view = run(node, [pod("web", [c("app", "500m")])], runtime).report()["pods"][0]["containers"][0]
    assert seen == ["sandbox", "container"] and view["files"]["cpuset.cpus"] == "3"
