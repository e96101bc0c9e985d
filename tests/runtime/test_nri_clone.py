"""``api.clone``: the runtime's copy of an NRI message is a deep copy, field for field."""

from __future__ import annotations

import copy

from kubetwin.runtime.nri import api


def _container() -> api.Container:
    res = api.LinuxResources().ensure()
    res.cpu.cpus = "0-3"
    res.hugepage_limits.append(api.HugepageLimit("2MB", 1 << 21))
    return api.Container(id="c" * 64, pod_sandbox_id="s" * 64, name="app", labels={"a": "b"},
                         annotations={"k": "v"}, linux=api.LinuxContainer(resources=res))


def test_clone_equals_deepcopy_of_a_container():
    c = _container()
    assert api.clone(c) == copy.deepcopy(c)


def test_clone_shares_no_mutable_part_with_the_original():
    c = _container()
    d = api.clone(c)
    d.labels["a"] = "changed"
    d.linux.resources.cpu.cpus = "9"
    d.linux.resources.hugepage_limits.clear()
    assert c.labels == {"a": "b"} and c.linux.resources.cpu.cpus == "0-3" and c.linux.resources.hugepage_limits


def test_clone_equals_deepcopy_of_an_adjustment():
    a = api.ContainerAdjustment()
    a.set_linux_cpuset_cpus("1-3")
    a.add_annotation("x", "y")
    assert api.to_json(api.clone(a)) == api.to_json(copy.deepcopy(a))
