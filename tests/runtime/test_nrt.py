"""The NodeResourceTopology an nri-plugins policy publishes: the policies' ``GetTopologyZones``,
the agent's ``updateNrtCR`` / ``zonesToNrt`` and ``kubetwin runtime -o nrt``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.loader import load_documents
from kubetwin.model.objects import decode_document
from kubetwin.runtime.config import decode_policy, load_policy
from kubetwin.runtime.node import RuntimeNode
from kubetwin.runtime.nrt import export, node_resource_topology, nrt_enabled

ROOT = Path(__file__).resolve().parents[2]
TWO_PODS = ROOT / "examples/runtime/two-pods.yaml"


def _node(policy, machine: str = "2s1n8c2t") -> RuntimeNode:
    return RuntimeNode(load_machine(machine), policy, KubeletConfiguration.from_dict(None))


def _with_two_pods(policy) -> RuntimeNode:
    node = _node(policy)
    for doc in load_documents(str(TWO_PODS)):
        assert node.create_pod(decode_document(doc)) is None
    return node


def _zones(nrt: dict) -> dict[str, dict]:
    return {z["name"]: z for z in nrt["zones"]}


def _resource(zone: dict, name: str) -> dict:
    return next(r for r in zone["resources"] if r["name"] == name)


def _attrs(zone: dict) -> dict[str, str]:
    return {a["name"]: a["value"] for a in zone.get("attributes", [])}


def _balloons(spec: dict):
    return decode_policy({"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy",
                          "metadata": {"name": "default"}, "spec": spec})


# --- updateNrtCR / zonesToNrt ----------------------------------------------------------------------
def test_update_nrt_cr_names_the_node_and_the_active_policy():
    nrt = export(_with_two_pods(load_policy("topology-aware")), "worker-1")
    assert nrt["apiVersion"] == "topology.node.k8s.io/v1alpha2" and nrt["kind"] == "NodeResourceTopology"
    assert nrt["metadata"] == {"name": "worker-1"}
    assert nrt["attributes"] == [{"name": "TopologyPolicy", "value": "topology-aware"}]


def test_update_topology_zones_publishes_nothing_without_zones():
    assert node_resource_topology("n", "topology-aware", []) is None


def test_agent_config_defaults_node_resource_topology_to_true_only_when_agent_is_absent():
    assert nrt_enabled({}) is True
    assert nrt_enabled({"agent": {}}) is False
    assert nrt_enabled({"agent": {"nodeResourceTopology": True}}) is True


def test_agent_without_node_resource_topology_publishes_nothing():
    spec = {"reservedResources": {"cpu": "1"}, "agent": {"nodeResourceTopology": False}}
    policy = decode_policy({"apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy",
                            "metadata": {"name": "default"}, "spec": spec})
    assert export(_node(policy), "n") is None


def test_zones_to_nrt_leaves_out_the_root_zones_parent():
    zones = _zones(export(_with_two_pods(load_policy("topology-aware")), "n"))
    assert "parent" not in zones["root"] and zones["socket #0"]["parent"] == "root"


# --- topology-aware GetTopologyZones ----------------------------------------------------------------
def test_topology_aware_get_topology_zones_has_one_zone_per_pool_with_its_kind():
    zones = _zones(export(_with_two_pods(load_policy("topology-aware")), "n"))
    assert {n: z["type"] for n, z in zones.items()} == {"socket #0": "socket", "socket #1": "socket",
                                                       "root": "virtual node"}


def test_topology_aware_get_topology_zones_cpu_is_sharable_plus_reserved_with_free_shared_available():
    zones = _zones(export(_with_two_pods(load_policy("topology-aware")), "n"))
    # socket #1: 16 CPUs; db's 4 exclusive CPUs are no longer shared, 12 remain available
    assert _resource(zones["socket #1"], "cpu") == {"name": "cpu", "capacity": "16", "allocatable": "16",
                                                   "available": "12"}
    # socket #0: reserved CPU 0 counts in the capacity; web's 500m request is taken from the shared CPUs
    assert _resource(zones["socket #0"], "cpu")["available"] == "14500m"


def test_topology_aware_get_topology_zones_memory_is_a_decimal_si_quantity_of_bytes():
    zones = _zones(export(_with_two_pods(load_policy("topology-aware")), "n"))
    mem = _resource(zones["socket #1"], "memory")
    assert mem["capacity"] == mem["allocatable"] == "34359738368"
    assert mem["available"] == str(34359738368 - 4 * 1024 ** 3)   # db's 4Gi pinned to node 1


def test_topology_aware_get_topology_zones_attributes_memset_shared_and_reserved():
    zones = _zones(export(_with_two_pods(load_policy("topology-aware")), "n"))
    assert _attrs(zones["socket #0"]) == {"memory set": "0", "shared cpuset": "1-7,16-23", "reserved cpuset": "0"}
    assert _attrs(zones["socket #1"]) == {"memory set": "1", "shared cpuset": "10-15,26-31"}


def test_topology_aware_get_topology_zones_lists_isolated_cpus_while_some_are_free():
    from kubetwin.model.cpuset import CPUSet

    node = RuntimeNode(load_machine("2s1n8c2t"), load_policy("topology-aware"), KubeletConfiguration.from_dict(None),
                       isolated=CPUSet.parse("30-31"))
    zones = _zones(export(node, "n"))
    assert _attrs(zones["socket #1"])["isolated cpuset"] == "30-31"


# --- balloons GetTopologyZones ----------------------------------------------------------------------
def test_balloons_get_topology_zones_has_one_balloon_zone_per_balloon():
    zones = export(_with_two_pods(load_policy("balloons")), "n")["zones"]
    assert [(z["name"], z["type"]) for z in zones] == [
        ("reserved[0]", "balloon"), ("default[0]", "balloon"), ("dedicated-cpus[0]", "balloon"),
        ("shared-local-cpus[0]", "balloon")]


def test_balloons_get_topology_zones_capacity_is_every_cpu_of_the_system():
    zones = export(_with_two_pods(load_policy("balloons")), "n")["zones"]
    assert {_resource(z, "cpu")["capacity"] for z in zones} == {"32"}


def test_balloons_get_topology_zones_allocatable_is_the_largest_balloon_of_the_type():
    zones = _zones(export(_with_two_pods(load_policy("balloons")), "n"))
    # ifreeCpus: 31 (the reserved balloon pre-created with CPU 0); a pre-created type adds its minCPUs
    assert _resource(zones["reserved[0]"], "cpu")["allocatable"] == "32"
    assert _resource(zones["dedicated-cpus[0]"], "cpu")["allocatable"] == "31"


def test_balloons_get_topology_zones_allocatable_is_capped_by_max_cpus():
    spec = {"reservedResources": {"cpu": "1"}, "balloonTypes": [{"name": "small", "maxCPUs": 2, "minBalloons": 1}]}
    zones = _zones(export(_node(_balloons(spec)), "n"))
    assert _resource(zones["small[0]"], "cpu")["allocatable"] == "2"


def test_balloons_get_topology_zones_available_is_what_fits_when_inflated():
    zones = _zones(export(_with_two_pods(load_policy("balloons")), "n"))
    # 26 free CPUs + the balloon's own 1, less web's 500m request
    assert _resource(zones["shared-local-cpus[0]"], "cpu")["available"] == "26500m"


def test_balloons_get_topology_zones_attributes_cpuset_shared_and_excess():
    zones = _zones(export(_with_two_pods(load_policy("balloons")), "n"))
    assert _attrs(zones["shared-local-cpus[0]"]) == {"cpuset": "1", "shared cpuset": "2-7,16-23",
                                                      "excess cpus": "500m"}


def test_balloons_show_containers_in_nrt_adds_an_allocation_zone_per_container():
    spec = {"reservedResources": {"cpu": "1"}, "showContainersInNrt": True}
    zones = export(_with_two_pods(_balloons(spec)), "n")["zones"]
    subs = [z for z in zones if z["type"] == "allocation for container"]
    assert [(z["name"], z["parent"]) for z in subs] == [("default/db/postgres", "default[0]"),
                                                        ("default/web/nginx", "default[0]")]
    web = subs[1]
    assert _resource(web, "cpu") == {"name": "cpu", "capacity": "2", "allocatable": "500m", "available": "0"}
    assert set(_attrs(web)) == {"cpuset", "memory set"}


def test_balloons_show_containers_in_nrt_of_a_balloon_type_overrides_the_policys():
    spec = {"reservedResources": {"cpu": "1"}, "showContainersInNrt": True,
            "balloonTypes": [{"name": "default", "showContainersInNrt": False}]}
    zones = export(_with_two_pods(_balloons(spec)), "n")["zones"]
    assert not [z for z in zones if z["type"] == "allocation for container"]


# --- kubetwin runtime -o nrt ------------------------------------------------------------------------
def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", "runtime", *args], capture_output=True, text=True,
                          cwd=ROOT)


def test_runtime_o_nrt_prints_the_resource_as_yaml_named_by_node_name():
    import yaml

    proc = _cli("--machine", "2s1n8c2t", "--policy", "balloons", "--node-name", "worker-1", str(TWO_PODS),
                "-o", "nrt")
    assert proc.returncode == 0, proc.stderr
    doc = yaml.safe_load(proc.stdout)
    assert doc["kind"] == "NodeResourceTopology" and doc["metadata"]["name"] == "worker-1"


@pytest.mark.parametrize("policy", ["none"])
def test_runtime_o_nrt_without_a_policy_is_refused(policy):
    proc = _cli("--machine", "2s1n8c2t", "--policy", policy, str(TWO_PODS), "-o", "nrt")
    assert proc.returncode == 1 and "publishes no NodeResourceTopology" in proc.stderr
