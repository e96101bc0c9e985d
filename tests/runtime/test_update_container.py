"""CRI ``UpdateContainerResources`` through NRI ``UpdateContainer`` (in-place resize): the
resource manager re-allocates a container whose requirements changed, short-circuits one whose
requirements did not, and the runtime applies the adjusted request as containerd does."""

from __future__ import annotations

from typing import Any

from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.kubelet_config import load_kubelet_config
from kubetwin.model.loader import Document
from kubetwin.model.objects import decode_document
from kubetwin.runtime.config import decode_policy
from kubetwin.runtime.node import RuntimeNode
from kubetwin.runtime.nri.stub import Container, ContainerUpdate, LinuxResources, Plugin, PodSandbox

POLICY = {"apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy", "metadata": {"name": "default"},
          "spec": {"reservedResources": {"cpu": "750m"}, "preferIsolatedCPUs": False}}


def pod(obj: dict[str, Any]) -> Any:
    return decode_document(Document(obj, "test", 0))


def guaranteed(name: str, cpu: str) -> Any:
    return pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                            "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                                "requests": {"cpu": cpu, "memory": "1Gi"},
                                "limits": {"cpu": cpu, "memory": "1Gi"}}}]}})


def node(plugins: list[Plugin] = (), policy: dict | None = POLICY) -> RuntimeNode:
    return RuntimeNode(load_machine("1s1n8c2t"), decode_policy(policy) if policy else None,
                       load_kubelet_config(None, None), plugins=list(plugins))


def resources(n: RuntimeNode, key: str) -> Any:
    return n.pods[key].containers[0].ctr.resources()


def cri(cpus: int) -> dict[str, Any]:
    return {"cpuShares": 1024 * cpus, "cpuQuota": 100000 * cpus, "cpuPeriod": 100000,
            "memoryLimitInBytes": 1 << 30, "oomScoreAdj": -997}


def test_a_resize_to_more_cpus_reallocates_exclusive_cpus() -> None:
    n = node()
    assert n.create_pod(guaranteed("p", "2")) is None
    assert CPUSet.parse(resources(n, "default/p").cpu.cpus).size() == 2
    assert n.update_container_resources("default/p", "c", cri(4)) is None
    r = resources(n, "default/p")
    assert CPUSet.parse(r.cpu.cpus).size() == 4
    assert (r.cpu.shares, r.cpu.quota) == (4096, 400000)


def test_a_resize_with_identical_requirements_keeps_the_cpus() -> None:
    n = node()
    n.create_pod(guaranteed("p", "2"))
    before = resources(n, "default/p").cpu.cpus
    assert n.update_container_resources("default/p", "c", cri(2)) is None
    assert resources(n, "default/p").cpu.cpus == before
    entry = next(e for e in reversed(n.adaptation.trace) if e.event == "UPDATE_CONTAINER")
    reply = entry.replies[0]
    # short-circuited: the resource manager re-sends the container's current values
    assert reply["update"][0]["linux"]["resources"]["cpu"]["cpus"] == before


def test_the_shared_pool_of_other_containers_follows_a_resize() -> None:
    n = node()
    n.create_pod(guaranteed("p", "2"))
    n.create_pod(pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"},
                                  "spec": {"containers": [{"name": "c", "image": "x"}]}}))
    shared_before = CPUSet.parse(resources(n, "default/b").cpu.cpus)
    n.update_container_resources("default/p", "c", cri(4))
    shared_after = CPUSet.parse(resources(n, "default/b").cpu.cpus)
    exclusive = CPUSet.parse(resources(n, "default/p").cpu.cpus)
    assert shared_after.size() == shared_before.size() - 2
    assert not (shared_after & exclusive)


class Refuse(Plugin):
    name = "refuse"
    index = "10"

    def update_container(self, pod: PodSandbox, container: Container,
                         resources: LinuxResources) -> list[ContainerUpdate]:
        raise ValueError("no resizes here")


def test_a_plugin_error_fails_the_update_and_leaves_the_container() -> None:
    n = node([Refuse()], policy=None)
    n.create_pod(guaranteed("p", "2"))
    err = n.update_container_resources("default/p", "c", cri(4))
    assert err is not None and "no resizes here" in err
    assert resources(n, "default/p").cpu.shares == 2048


def test_without_plugin_changes_the_request_is_applied_as_sent() -> None:
    n = node(policy=None)
    n.create_pod(guaranteed("p", "2"))
    assert n.update_container_resources("default/p", "c", cri(3)) is None
    r = resources(n, "default/p")
    assert (r.cpu.shares, r.cpu.quota) == (3072, 300000)


def test_updating_a_container_the_node_does_not_run_is_an_error() -> None:
    assert "not running" in (node().update_container_resources("default/nope", "c", cri(1)) or "")
