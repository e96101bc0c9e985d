"""The balloons policy: its CPU tree and tree allocator (cputree.go), the built-in balloon types
and configuration checks (fillBuiltinBalloonDefs, validateConfig), and balloons inflating,
deflating and being freed as containers come and go (balloons-policy.go)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubetwin.errors import InputError
from kubetwin.machine.machineinfo import machine_from_machineinfo
from kubetwin.model.cpuset import CPUSet
from kubetwin.runtime.config import decode_balloons
from kubetwin.runtime.nri.api import Container, LinuxPodSandbox, PodSandbox
from kubetwin.runtime.policies.balloons import BalloonsPolicy
from kubetwin.runtime.policies.balloons.cputree import CpuTreeAllocator, TreeError, cpu_tree_from_system
from kubetwin.runtime.policies.balloons.expand import ExpandError, expand
from kubetwin.runtime.resmgr.cache import Cache
from kubetwin.runtime.resmgr.policy import PolicyError
from kubetwin.runtime.sysfs import System

N4C16 = Path(__file__).parents[2] / "cases" / "machines" / "n4c16.json"


def n4c16_system() -> System:
    return System(machine_from_machineinfo(json.loads(N4C16.read_text()), name="n4c16"))


def policy(spec: dict) -> BalloonsPolicy:
    sys = n4c16_system()
    p = BalloonsPolicy()
    p.setup(sys, Cache(sys.machine.memory_capacity), decode_balloons(spec))
    return p


def add_container(p: BalloonsPolicy, pod: str, name: str, namespace: str = "default",
                  annotations: dict | None = None):
    if pod not in p.cache.pods:
        p.cache.insert_pod(PodSandbox(id=pod, name=pod, namespace=namespace, annotations=annotations or {},
                                      linux=LinuxPodSandbox(cgroup_parent="")))
    return p.cache.insert_container(Container(id=f"{pod}/{name}", pod_sandbox_id=pod, name=name))


def names(p: BalloonsPolicy) -> list[str]:
    return [b.pretty_name() for b in p.balloons]


# --- the CPU tree ------------------------------------------------------------------------------
def test_cpu_tree_levels_are_packages_dies_nodes_l2_caches_cores_threads() -> None:
    tree = cpu_tree_from_system(n4c16_system())
    path = [tree]
    while path[-1].children:
        path.append(path[-1].children[0])
    assert [(t.level, t.name) for t in path] == [
        ("system", "system"), ("package", "p0"), ("die", "p0d0"), ("numa", "p0d0n0"), ("l2cache", "p0d0n0$0"),
        ("core", "p0d0n0cpu0"), ("thread", "p0d0n0cpu0t0")]
    assert tree.cpus == CPUSet.range(0, 15)


def test_tree_allocator_with_topology_balancing_grows_into_the_emptiest_package() -> None:
    tree = cpu_tree_from_system(n4c16_system())
    add_from, _ = CpuTreeAllocator(tree, True).resize_cpus(CPUSet(), CPUSet.parse("0-5,8-15"), 2)
    assert add_from.is_subset_of(CPUSet.range(8, 15))


def test_tree_allocator_without_balancing_packs_into_the_fullest_package() -> None:
    tree = cpu_tree_from_system(n4c16_system())
    add_from, _ = CpuTreeAllocator(tree, False).resize_cpus(CPUSet(), CPUSet.parse("0-5,8-15"), 2)
    assert add_from.is_subset_of(CPUSet.range(0, 5))


def test_tree_allocator_grows_next_to_the_cpus_the_balloon_has() -> None:
    tree = cpu_tree_from_system(n4c16_system())
    add_from, _ = CpuTreeAllocator(tree, True).resize_cpus(CPUSet([12]), CPUSet.parse("0-11,13-15"), 1)
    assert add_from == CPUSet([13])


def test_tree_allocator_keeps_away_from_far_cpus() -> None:
    tree = cpu_tree_from_system(n4c16_system())
    add_from, _ = CpuTreeAllocator(tree, False, far=[[CPUSet.range(0, 7)]]).resize_cpus(
        CPUSet(), CPUSet.range(0, 15), 2)
    assert add_from.is_subset_of(CPUSet.range(8, 15))


def test_tree_allocator_refuses_more_cpus_than_free() -> None:
    tree = cpu_tree_from_system(n4c16_system())
    with pytest.raises(TreeError, match="not enough free CPUs"):
        CpuTreeAllocator(tree, True).resize_cpus(CPUSet(), CPUSet.range(0, 1), 3)


# --- configuration -----------------------------------------------------------------------------
def test_builtin_reserved_type_comes_first_and_default_last() -> None:
    p = policy({"reservedResources": {"cpu": "1"}, "balloonTypes": [{"name": "mine"}]})
    assert [d.name for d in p.defs] == ["reserved", "mine", "default"]
    assert p.reserved_def.namespaces == ["kube-system"]
    assert sorted(names(p)) == ["default[0]", "reserved[0]"]


def test_reserved_quantity_sizes_the_reserved_balloon() -> None:
    p = policy({"reservedResources": {"cpu": "1500m"}})
    assert next(b for b in p.balloons if b.defn.name == "reserved").cpus.size() == 2


def test_reserved_quantity_contradicting_reserved_min_cpus_is_refused() -> None:
    with pytest.raises(PolicyError, match="mismatching reserved balloon minCpus: 3"):
        policy({"reservedResources": {"cpu": "1"}, "balloonTypes": [{"name": "reserved", "minCPUs": 3}]})


def test_min_balloons_above_max_balloons_is_refused() -> None:
    with pytest.raises(PolicyError, match='MinBalloons .* in balloon type "impossible"'):
        policy({"reservedResources": {"cpu": "1"},
                "balloonTypes": [{"name": "impossible", "minBalloons": 2, "maxBalloons": 1}]})


def test_unmodelled_balloon_type_field_is_refused_not_ignored() -> None:
    with pytest.raises(InputError, match="not modelled") as err:
        policy({"reservedResources": {"cpu": "1"}, "balloonTypes": [{"name": "g", "preferCoreType": "efficient"}]})
    assert err.value.path == "spec.balloonTypes[0].preferCoreType"


def test_min_balloons_are_created_in_allocator_priority_order() -> None:
    p = policy({"reservedResources": {"cpu": "1"},
                "balloonTypes": [{"name": "low", "minBalloons": 1, "minCPUs": 1, "allocatorPriority": "low"},
                                 {"name": "high", "minBalloons": 1, "minCPUs": 1}]})
    assert names(p) == ["high[0]", "reserved[0]", "low[0]", "default[0]"]


# --- containers --------------------------------------------------------------------------------
def test_balloon_annotation_picks_the_type_and_an_unknown_one_fails() -> None:
    p = policy({"reservedResources": {"cpu": "1"}, "balloonTypes": [{"name": "two", "minCPUs": 2}]})
    c = add_container(p, "pod0", "c0", annotations={"balloon.balloons.resource-policy.nri.io": "two"})
    p.allocate_resources(c)
    assert len(CPUSet.parse(c.cpuset_cpus())) == 2
    bad = add_container(p, "pod1", "c0", annotations={"balloon.balloons.resource-policy.nri.io": "nope"})
    with pytest.raises(PolicyError, match='no balloon for annotation "nope"'):
        p.allocate_resources(bad)


def test_namespace_globs_match_in_type_order() -> None:
    p = policy({"reservedResources": {"cpu": "1"},
                "balloonTypes": [{"name": "a", "namespaces": ["team-*"]}, {"name": "b", "namespaces": ["*"]}]})
    c = add_container(p, "pod0", "c0", namespace="team-x")
    p.allocate_resources(c)
    assert p._balloon_of(c).defn.name == "a"


def test_empty_balloon_above_min_balloons_is_freed_and_its_cpus_returned() -> None:
    p = policy({"reservedResources": {"cpu": "1"}, "balloonTypes": [{"name": "dyn", "namespaces": ["*"]}]})
    free_before = p.free_cpus
    c = add_container(p, "pod0", "c0")
    p.allocate_resources(c)
    assert "dyn[0]" in names(p)
    p.release_resources(c)
    assert "dyn[0]" not in names(p)
    assert p.free_cpus == free_before


def test_prefer_new_balloons_puts_each_pod_in_its_own_balloon() -> None:
    p = policy({"reservedResources": {"cpu": "1"},
                "balloonTypes": [{"name": "dyn", "namespaces": ["*"], "preferNewBalloons": True}]})
    a, b = add_container(p, "pod0", "c0"), add_container(p, "pod1", "c0")
    p.allocate_resources(a)
    p.allocate_resources(b)
    assert p._balloon_of(a) is not p._balloon_of(b)
    assert not CPUSet.parse(a.cpuset_cpus()) & CPUSet.parse(b.cpuset_cpus())


def test_containers_of_a_pod_share_a_balloon_unless_spreading_pods() -> None:
    p = policy({"reservedResources": {"cpu": "1"},
                "balloonTypes": [{"name": "dyn", "namespaces": ["*"], "preferNewBalloons": True}]})
    a, b = add_container(p, "pod0", "c0"), add_container(p, "pod0", "c1")
    p.allocate_resources(a)
    p.allocate_resources(b)
    assert p._balloon_of(a) is p._balloon_of(b)


def test_share_idle_cpus_in_same_numa_adds_the_nodes_idle_cpus_to_the_cpuset() -> None:
    p = policy({"reservedResources": {"cpu": "1"},
                "balloonTypes": [{"name": "sharing", "namespaces": ["*"], "minBalloons": 1, "minCPUs": 1,
                                  "shareIdleCPUsInSame": "numa"}]})
    c = add_container(p, "pod0", "c0")
    p.allocate_resources(c)
    bln = p._balloon_of(c)
    node = next(n for n in p.sys.nodes.values() if n.cpus & bln.cpus)
    assert CPUSet.parse(c.cpuset_cpus()) == bln.cpus | (node.cpus & p.free_cpus)
    assert CPUSet.parse(c.cpuset_cpus()).size() > bln.cpus.size()


def test_hide_hyperthreads_annotation_overrides_the_balloon_type() -> None:
    p = policy({"reservedResources": {"cpu": "1"},
                "balloonTypes": [{"name": "fc", "namespaces": ["*"], "minCPUs": 2, "hideHyperthreads": True}]})
    hidden, shown = add_container(p, "pod0", "c0"), add_container(
        p, "pod1", "c0", annotations={"hide-hyperthreads.resource-policy.nri.io": "false"})
    p.allocate_resources(hidden)
    p.allocate_resources(shown)
    assert CPUSet.parse(hidden.cpuset_cpus()).size() == 1
    assert CPUSet.parse(shown.cpuset_cpus()).size() == 2


def test_group_by_puts_pods_of_one_group_in_one_balloon() -> None:
    p = policy({"reservedResources": {"cpu": "1"},
                "balloonTypes": [{"name": "g", "namespaces": ["*"], "groupBy": "${pod/name}x", "minCPUs": 1,
                                  "preferNewBalloons": True}]})
    a, b = add_container(p, "pod0", "c0"), add_container(p, "pod0", "c1")
    p.allocate_resources(a)
    p.allocate_resources(b)
    assert p._balloon_of(a) is p._balloon_of(b)
    assert p._balloon_of(a).groups == {"pod0x": 2}


class _Subject:
    def eval_key(self, key: str):
        return {"namespace": "ns1", "labels": {"app": "web"}}.get(key)


@pytest.mark.parametrize("src, out", [
    ("${namespace}-${labels/app}", "ns1-web"), ("ns=$namespace", "ns=ns1"), ("$$x", "$x"), ("plain", "plain"),
    ("${nope}", ""),
])
def test_expand_substitutes_references(src: str, out: str) -> None:
    assert expand(src, _Subject(), False) == out


@pytest.mark.parametrize("src", ["${namespace", "${}", "$x}", "$"])
def test_expand_refuses_malformed_references(src: str) -> None:
    with pytest.raises(ExpandError):
        expand(src, _Subject(), False)


def test_expand_must_resolve_refuses_unknown_keys() -> None:
    with pytest.raises(ExpandError, match='unresolvable key "nope"'):
        expand("${nope}", _Subject(), True)
