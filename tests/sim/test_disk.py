"""Disk and PIDs in the simulation: the node's filesystems and process table feed the eviction
manager (kubelet eviction_manager.go: localStorageEviction, DiskPressure / PIDPressure, node reclaim),
and the image GC manager (pkg/kubelet/images/image_gc_manager.go) frees unused images."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.summary import NodeStats, PodReference, PodStats, Summary
from kubetwin.sim import simulate
from kubetwin.sim.disk import DiskSpec, NodeDisk, PodDisk, parse_disk

GI = 1 << 30


def node(kit, disk, **kw):
    return kit.group(cpu="8", memory="32Gi", disk=disk, **kw)


def run(tmp_path, kit, disk, *workloads, horizon="30m", **group):
    return simulate(kit.scenario(tmp_path, {"nodeGroups": [node(kit, disk, **group)], "sampleInterval": "10s",
                                            "horizon": horizon, "workloads": list(workloads)}))


def writer(name="writer", rootfs=(("0s", "0"), ("20m", "60Gi")), **kw):
    return {"name": name, "template": {"spec": {"containers": [{"name": "app", "resources": {
        "requests": {"cpu": "500m", "memory": "1Gi"}}}], **kw}},
            "usage": {"rootfs": [list(p) for p in rootfs]}}


DISK = {"nodefs": "100Gi", "nodefsUsed": "20Gi", "images": ["10Gi", "5Gi"], "imagesInUse": "5Gi"}


def test_an_empty_dir_over_its_size_limit_evicts_the_pod_at_once(tmp_path, kit):
    w = {"name": "scratch", "template": {"spec": {
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
        "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}}]}},
         "usage": {"emptyDir": {"tmp": [["0s", "0"], ["5m", "2Gi"]]}}}
    r = run(tmp_path, kit, DISK, w)
    p = r.pods[0]
    assert (p.phase, p.reason, p.end) == ("Failed", "Evicted", 160.0)   # past 1Gi at 150 s: the next sample
    assert p.message == 'Usage of EmptyDir volume "tmp" exceeds the limit "1Gi". '
    assert r.counters.evicted_by_signal == {"localStorage": 1}


def test_image_gc_deletes_whole_unused_images_least_recently_used_first(tmp_path, kit):
    r = run(tmp_path, kit, DISK, writer())
    gc = next(e for e in r.events if e["type"] == "ImageGC")
    # at 900 s the disk is at 85%: free 100Gi * 20% - available = 5Gi; the 10Gi image goes whole
    assert (gc["time"], gc["bytesToFree"], gc["freed"]) == (900.0, 5 * GI, 10 * GI)


def test_image_gc_that_cannot_free_enough_reports_the_kubelets_event(tmp_path, kit):
    r = run(tmp_path, kit, DISK, writer())
    failed = next(e for e in r.events if e["type"] == "FreeDiskSpaceFailed")
    assert failed["message"] == ("Failed to garbage collect required amount of images. Attempted to free 5368709120 "
                                 "bytes, but only found 0 bytes eligible to free.")


def test_a_filling_writable_layer_raises_disk_pressure_reclaims_images_then_evicts(tmp_path, kit):
    r = run(tmp_path, kit, DISK, writer())
    kinds = [(e["type"], e.get("reason", e.get("cause", ""))) for e in r.events]
    reclaim = kinds.index(("ImageGC", "eviction manager reclaim"))
    evicted = kinds.index(("Evicted", "imagefs.available"))
    assert reclaim < evicted
    cond = next(e for e in r.events if e["type"] == "NodeConditions")
    assert cond["conditions"] == ["DiskPressure"]
    p = r.pods[0]
    assert p.message.startswith("The node was low on resource: ephemeral-storage. ")
    assert "Container app was using 60Gi, request is 0, has larger consumption of ephemeral-storage." in p.message


def test_disk_pressure_taints_the_node_and_keeps_new_pods_away(tmp_path, kit):
    late = {"name": "late", "arrival": {"at": "1190s"},
            "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}
    r = run(tmp_path, kit, DISK, writer(), late)
    pods = {p.name: p for p in r.pods}
    set_at = next(e["time"] for e in r.events if e["type"] == "NodeConditions" and e["conditions"])
    assert pods["late-0"].start is not None and pods["late-0"].start > set_at
    assert pods["late-0"].attempts >= 2      # node.kubernetes.io/disk-pressure:NoSchedule turned it away first


def test_pid_pressure_evicts_the_pod_with_the_most_processes(tmp_path, kit):
    forker = {"name": "forker", "template": {"spec": {"containers": [{"name": "c", "resources": {
        "requests": {"cpu": "1", "memory": "1Gi"}}}]}}, "usage": {"pids": [["0s", "10"], ["10m", "9000"]]}}
    calm = {"name": "calm", "template": {"spec": {"containers": [{"name": "c", "resources": {
        "requests": {"cpu": "1", "memory": "1Gi"}}}]}}, "usage": {"pids": "50"}}
    r = run(tmp_path, kit, {**DISK, "maxPID": 10000, "pids": 300}, forker, calm, machine="1s1n4c2t",
            kubeletConfig={"evictionHard": {"pid.available": "1000"}})
    pods = {p.name: p for p in r.pods}
    assert pods["forker-0"].reason == "Evicted" and pods["calm-0"].phase == "Running"
    assert pods["forker-0"].message.startswith("The node was low on resource: pids. Threshold quantity: 1k, ")
    assert any(e["type"] == "NodeConditions" and e["conditions"] == ["PIDPressure"] for e in r.events)


def test_a_pod_reaching_its_pids_limit_is_not_killed_its_forks_fail(tmp_path, kit):
    forker = {"name": "forker", "template": {"spec": {"containers": [{"name": "c", "resources": {
        "requests": {"cpu": "1", "memory": "1Gi"}}}]}}, "usage": {"pids": [["0s", "10"], ["10m", "5000"]]}}
    r = run(tmp_path, kit, {**DISK, "maxPID": 100000}, forker, machine="1s1n4c2t", kubeletConfig={"podPidsLimit": 1024})
    ev = [e for e in r.events if e["type"] == "PIDLimitReached"]
    assert len(ev) == 1 and "pids.max (1024, podPidsLimit)" in ev[0]["message"]
    assert r.pods[0].phase == "Running"
    assert max(p[2] for p in r.node_disk["n-0"]["pods"]["default/forker-0"]) == 1024


def spec(**kw):
    return DiskSpec(nodefs=100 * GI, **kw)


def decorate(s, rootfs=0, logs=0):
    d = NodeDisk(s, KubeletConfiguration.from_dict(None))
    base = Summary(node=NodeStats(node_name="n"), pods=[PodStats(pod_ref=PodReference(uid="u"))])
    return d.decorate(base, {"u": PodDisk({"c": rootfs}, {"c": logs}, {}, {})}, 0.0, "2026-01-01T00:00:00Z")


def test_writable_layers_on_a_dedicated_imagefs_fill_the_imagefs():
    s = decorate(spec(imagefs=200 * GI), rootfs=30 * GI, logs=GI)
    assert (s.node.fs.used_bytes, s.node.runtime.image_fs.used_bytes) == (GI, 30 * GI)
    assert s.node.runtime.container_fs == s.node.runtime.image_fs


def test_a_split_image_filesystem_keeps_writable_layers_on_nodefs():
    s = decorate(spec(imagefs=200 * GI, split=True), rootfs=30 * GI, logs=GI)
    assert (s.node.fs.used_bytes, s.node.runtime.image_fs.used_bytes) == (31 * GI, 0)
    assert s.node.runtime.container_fs == s.node.fs


def test_image_gc_spares_images_younger_than_the_minimum_age():
    d = NodeDisk(spec(images=(GI,)), KubeletConfiguration.from_dict(None))   # imageMinimumGCAge 2m
    assert d.free_space(GI, 60.0) == 0 and d.free_space(GI, 121.0) == GI


def test_a_split_filesystem_needs_kubelet_separate_disk_gc():
    from kubetwin.model.features import gates_for

    with pytest.raises(InputError, match="needs feature gate KubeletSeparateDiskGC"):
        parse_disk({"nodefs": "10Gi", "imagefs": "10Gi", "writableLayers": "nodefs"}, "disk",
                   gates_for("1.34", {"KubeletSeparateDiskGC": False}))


def test_a_misspelt_disk_field_is_refused(tmp_path, kit):
    with pytest.raises(InputError, match='unknown field ".*disk.imagesfs" .fix: did you mean ".*disk.imagefs"'):
        run(tmp_path, kit, {"nodefs": "10Gi", "imagesfs": "10Gi"}, writer())


def test_an_empty_dir_curve_must_name_an_empty_dir_volume(tmp_path, kit):
    w = {"name": "w", "template": {"spec": {"containers": [{"name": "app"}],
                                            "volumes": [{"name": "scratch", "emptyDir": {}}]}},
         "usage": {"emptyDir": {"scrach": "1Gi"}}}
    with pytest.raises(InputError, match='unknown emptyDir volume "scrach" .fix: did you mean "scratch"'):
        run(tmp_path, kit, DISK, w)


def test_the_report_shows_disk_and_pid_pressure_over_time(tmp_path, kit):
    from kubetwin.report.html import render_html
    from kubetwin.report.sections.disk import render_disk

    r = run(tmp_path, kit, DISK, writer())
    page = render_html([r])
    assert "Disk and PIDs — t" in page and "nodefs used" in page and "pod ephemeral storage (GiB)" in page
    assert "<td class=l>FreeDiskSpaceFailed</td>" in page
    assert render_disk(simulate(kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "workloads": [
        kit.workload(usage={"memory": "1Gi"})]}))) == ""
