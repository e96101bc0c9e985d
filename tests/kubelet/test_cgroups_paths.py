"""Cgroup names and their cgroupfs / systemd paths (cgroup_manager_linux.go, pod_container_manager_linux.go)."""

import pytest

from kubetwin.errors import InputError
from kubetwin.kubelet.cgroup_paths import (
    CgroupLayout,
    cgroup_mount,
    expand_slice,
    parse_cgroupfs,
    to_cgroupfs,
    to_systemd,
)

UID = "8b3c7d2e-4f5a-6b7c-9d1e-3f4a5b6c7d8e"


@pytest.mark.parametrize("text,name", [("/", ()), ("", ()), ("/kubepods", ("kubepods",)),
                                       ("/a/b", ("a", "b")), ("a/b", ("a", "b"))])
def test_parse_cgroupfs(text, name):
    assert parse_cgroupfs(text) == name


def test_cgroupfs_joins_components():
    assert to_cgroupfs(()) == "/" and to_cgroupfs(("kubepods", "burstable")) == "/kubepods/burstable"


@pytest.mark.parametrize("name,path", [
    ((), "/"),
    (("kubepods",), "/kubepods.slice"),
    (("kubepods", "burstable"), "/kubepods.slice/kubepods-burstable.slice"),
    (("kubepods", "besteffort", "pod" + UID),
     "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod8b3c7d2e_4f5a_6b7c_9d1e_3f4a5b6c7d8e.slice"),
])
def test_systemd_escapes_dashes_and_nests_slices(name, path):
    assert to_systemd(name) == path


@pytest.mark.parametrize("bad", ["a.slice/b.slice", "-a.slice", "a--b.slice", "a-.slice", ".slice", "a"])
def test_expand_slice_rejects_invalid_names(bad):
    with pytest.raises(ValueError):
        expand_slice(bad)


def test_expand_slice_root():
    assert expand_slice("-.slice") == "/"


def test_default_layout_paths_per_qos_class():
    lay = CgroupLayout()
    assert lay.path(lay.pod("Burstable", UID)) == f"/kubepods/burstable/pod{UID}"
    assert lay.path(lay.pod("BestEffort", UID)) == f"/kubepods/besteffort/pod{UID}"
    assert lay.path(lay.pod("Guaranteed", UID)) == f"/kubepods/pod{UID}"


def test_systemd_guaranteed_pod_is_directly_under_kubepods_slice():
    lay = CgroupLayout("systemd")
    assert lay.path(lay.pod("Guaranteed", "ab-cd")) == "/kubepods.slice/kubepods-podab_cd.slice"


def test_cgroup_root_prefixes_every_name_in_cgroupfs_form_for_both_drivers():
    assert CgroupLayout(cgroup_root="/custom/root").path(CgroupLayout(cgroup_root="/custom/root").qos("Burstable")) \
        == "/custom/root/kubepods/burstable"
    lay = CgroupLayout("systemd", cgroup_root="/custom")
    assert lay.path(lay.qos("Burstable")) == "/custom.slice/custom-kubepods.slice/custom-kubepods-burstable.slice"


def test_systemd_cgroup_root_with_an_empty_component_is_an_input_error():
    lay = CgroupLayout("systemd", cgroup_root="/a//b")
    with pytest.raises(InputError) as exc:
        lay.path(lay.node_allocatable())
    assert "cgroupRoot" in str(exc.value) and "invalid slice name" in str(exc.value)


def test_without_cgroups_per_qos_the_kubelet_makes_no_pod_cgroups():
    lay = CgroupLayout(cgroups_per_qos=False)
    assert lay.node_allocatable() is None and lay.pod("Burstable", UID) is None
    assert lay.container_path(None) is None


def test_container_cgroups_are_named_by_the_runtime():
    fs, sd = CgroupLayout(), CgroupLayout("systemd")
    assert fs.container_path(fs.pod("Burstable", "u"), "abc") == "/kubepods/burstable/podu/abc"
    assert sd.container_path(sd.pod("Burstable", "u"), "abc") == \
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podu.slice/cri-containerd-abc.scope"
    assert sd.container_path(sd.pod("Burstable", "u"), "abc", runtime="cri-o").endswith("/crio-abc.scope")


def test_mount_points():
    assert cgroup_mount(2) == "/sys/fs/cgroup" and cgroup_mount(1, "cpu") == "/sys/fs/cgroup/cpu"
