"""``kubetwin snapshot``: dumps merged into one cluster, written as a scenario folder that
``simulate`` reads as is, without creating a controller's pods twice."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from kubetwin.errors import InputError
from kubetwin.sim import load_scenario, simulate
from kubetwin.sim.snapshot import builtins, load, write


def node(name, **spec):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": spec, "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                                     "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def pod(name, node_name=None, owner=None, phase="Running", ns="default"):
    meta = {"name": name, "namespace": ns, "labels": {"app": "web"}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": "u",
                                    "controller": True}]
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def controller(kind, name, replicas, owner=None):
    meta = {"name": name, "namespace": "default"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": "d",
                                    "controller": True}]
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "x",
                                                           "resources": {"requests": {"cpu": "1"}}}]}}}}


def dump(path, *objs):
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}))
    return path


def test_several_dumps_make_one_cluster(tmp_path):
    snap = load([dump(tmp_path / "nodes.json", node("a"), node("b")), dump(tmp_path / "pods.json", pod("p", "a"))])
    assert [n["metadata"]["name"] for n in map(builtins, snap.nodes)] == ["a", "b"] and len(snap.pods) == 1


def test_a_folder_is_walked_for_yaml_and_json_dumps(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    dump(tmp_path / "d" / "nodes.json", node("a"))
    (tmp_path / "d" / "sub" / "pods.yaml").write_text(yaml.safe_dump_all([pod("p", "a"), pod("q")]))
    (tmp_path / "d" / "README.txt").write_text("not a dump")
    snap = load([tmp_path / "d"])
    assert len(snap.nodes) == 1 and len(snap.pods) == 1 and len(snap.pending) == 1


def test_managed_fields_are_dropped(tmp_path):
    n = node("a")
    n["metadata"]["managedFields"] = [{"manager": "kubelet", "operation": "Update"}]
    snap = load([dump(tmp_path / "d.json", n)])
    assert "managedFields" not in builtins(snap.nodes[0])["metadata"]


def test_owner_references_are_kept(tmp_path):
    snap = load([dump(tmp_path / "d.json", pod("p", "a", owner=("ReplicaSet", "web-1")))])
    assert builtins(snap.pods[0])["metadata"]["ownerReferences"][0]["name"] == "web-1"


def test_secrets_and_config_maps_are_ignored_with_one_note_per_kind(tmp_path):
    objs = [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"s{i}"}} for i in range(3)]
    objs += [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}]
    snap = load([dump(tmp_path / "d.json", *objs)])
    assert snap.ignored == {"Secret": 3, "ConfigMap": 1}
    assert sum("Secret" in n for n in snap.notes()) == 1


def test_services_are_kept_for_the_default_spreading_they_select(tmp_path):
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    snap = load([dump(tmp_path / "d.json", svc)])
    assert [builtins(o)["kind"] for o in snap.objects] == ["Service"] and not snap.ignored


def test_finished_pods_are_left_out_with_a_note(tmp_path):
    snap = load([dump(tmp_path / "d.json", pod("done", "a", phase="Succeeded"), pod("p", "a"))])
    assert len(snap.pods) == 1 and snap.terminal == {"Succeeded": 1}
    assert any("Succeeded" in n for n in snap.notes())


def test_a_misspelt_field_is_refused_with_the_file_and_path(tmp_path):
    bad = pod("p", "a")
    bad["spec"]["containers"][0]["resorces"] = {}
    with pytest.raises(InputError) as err:
        load([dump(tmp_path / "d.json", bad)])
    assert "resorces" in str(err.value) and "d.json" in str(err.value)


def test_the_same_object_in_two_dumps_is_taken_once(tmp_path):
    snap = load([dump(tmp_path / "a.json", node("a")), dump(tmp_path / "b.json", node("a"))])
    assert len(snap.nodes) == 1


def test_two_different_objects_under_one_name_are_refused(tmp_path):
    other = node("a")
    other["metadata"]["labels"]["x"] = "y"
    with pytest.raises(InputError, match="twice"):
        load([dump(tmp_path / "a.json", node("a")), dump(tmp_path / "b.json", other)])


def test_a_daemon_set_gets_a_pod_on_each_eligible_node_without_one(tmp_path):
    ds = controller("DaemonSet", "agent", 0)
    del ds["spec"]["replicas"]
    running = pod("agent-x", "a", owner=("DaemonSet", "agent"))
    snap = load([dump(tmp_path / "d.json", node("a"), node("b"), node("c", taints=[
        {"key": "k", "value": "v", "effect": "NoSchedule"}]), ds, running)])
    new = [p for p in map(builtins, snap.pending) if p["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"]
    assert [p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"][0]["matchFields"][0]["values"] for p in new] == [["b"]]


def test_a_daemon_pod_is_read_by_its_controller_reference_only_once(tmp_path):
    """metav1.GetControllerOf: the first controller reference decides; a pod listing it 100,000 times
    is read once, not once per reference (the fuzzer found the quadratic walk as a hang)."""
    ds = controller("DaemonSet", "agent", 0)
    del ds["spec"]["replicas"]
    running = pod("agent-x", "a", owner=("DaemonSet", "agent"))
    running["metadata"]["ownerReferences"] *= 100_000
    snap = load([dump(tmp_path / "d.json", node("a"), node("b"), ds, running)])
    assert snap.daemon_pods["default/agent"] == 1


def test_a_daemon_set_is_kept_so_simulate_runs_no_second_pod_on_a_node(tmp_path):
    """The DaemonSet goes to workloads.json: simulate's controller counts the dump's pod and the
    pod the snapshot created as its own and creates none more (nodes that join later get theirs)."""
    ds = controller("DaemonSet", "agent", 0)
    del ds["spec"]["replicas"]
    ds["metadata"]["uid"] = "u"   # the UID its pod's controller reference names, as in a real cluster
    running = pod("agent-x", "a", owner=("DaemonSet", "agent"))
    snap = load([dump(tmp_path / "d.json", node("a"), node("b"), ds, running)])
    assert [builtins(w)["kind"] for w in snap.workloads] == ["DaemonSet"]
    r = simulate(load_scenario(write(snap, tmp_path / "out") / "scenario.yaml"))
    assert sorted(p.node for p in r.pods) == ["a", "b"]


def test_the_folder_is_a_scenario_simulate_reads(tmp_path):
    snap = load([dump(tmp_path / "d.json", node("a"), pod("p", "a"), pod("q"))])
    out = write(snap, tmp_path / "out")
    sc = load_scenario(out / "scenario.yaml")
    assert len(sc.nodes) == 1 and len(sc.arrivals) == 2


def test_a_deployments_running_pods_are_not_created_twice(tmp_path):
    objs = [node("a"), controller("Deployment", "web", 3),
            controller("ReplicaSet", "web-5f", 3, owner=("Deployment", "web")),
            pod("web-5f-1", "a", owner=("ReplicaSet", "web-5f")), pod("web-5f-2", "a", owner=("ReplicaSet", "web-5f"))]
    out = write(load([dump(tmp_path / "d.json", *objs)]), tmp_path / "out")
    r = simulate(load_scenario(out / "scenario.yaml"))
    web = [p for p in r.pods if p.owner == "Deployment/default/web"]
    assert len(r.pods) == 3 and len(web) == 3


def test_a_statefulsets_pods_are_adopted_by_ordinal_and_the_missing_one_created(tmp_path):
    objs = [node("a"), controller("StatefulSet", "web", 3),
            pod("web-0", "a", owner=("StatefulSet", "web")), pod("web-2", "a", owner=("StatefulSet", "web"))]
    snap = load([dump(tmp_path / "d.json", *objs)])
    assert [snapshot_kind(o) for o in snap.workloads] == ["StatefulSet"]
    assert any("StatefulSet(s) kept as workloads" in n for n in snap.notes())
    r = simulate(load_scenario(write(snap, tmp_path / "out") / "scenario.yaml"))
    assert sorted((p.name, p.owner) for p in r.pods) == [(f"web-{i}", "StatefulSet/default/web") for i in range(3)]
    assert [p.name for p in r.pods if p.arrival > 0] == ["web-1"]


def snapshot_kind(obj):
    from kubetwin.sim.snapshot import get

    return get(obj, "kind")


def test_a_replica_set_of_its_own_keeps_its_replicas(tmp_path):
    objs = [node("a"), controller("ReplicaSet", "rs", 2), pod("rs-1", "a", owner=("ReplicaSet", "rs"))]
    out = write(load([dump(tmp_path / "d.json", *objs)]), tmp_path / "out")
    r = simulate(load_scenario(out / "scenario.yaml"))
    assert len([p for p in r.pods if p.owner == "ReplicaSet/default/rs"]) == 2


def test_an_earlier_snapshot_is_replaced(tmp_path):
    write(load([dump(tmp_path / "a.json", node("a"))]), tmp_path / "out")
    write(load([dump(tmp_path / "b.json", node("b"))]), tmp_path / "out")
    items = json.loads((tmp_path / "out" / "nodes.json").read_text())["items"]
    assert [n["metadata"]["name"] for n in items] == ["b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json", "out"]


def test_a_folder_that_is_not_a_snapshot_is_left_alone(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("keep")
    with pytest.raises(InputError, match="not a kubetwin snapshot"):
        write(load([dump(tmp_path / "a.json", node("a"))]), tmp_path / "out")
    assert (tmp_path / "out" / "mine.txt").read_text() == "keep"


def test_the_command_prints_a_summary_line(tmp_path):
    d = dump(tmp_path / "d.json", node("a"), pod("p", "a"), {"apiVersion": "v1", "kind": "Secret",
                                                             "metadata": {"name": "s"}})
    out = subprocess.run([sys.executable, "-m", "kubetwin", "snapshot", "-f", str(d), "-o", str(tmp_path / "o")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "1 nodes, 1 pods (1 Running), 0 workloads, 0 other objects, 1 ignored (1 kinds)" in out.stdout
    assert "note: 1 Secret object(s) ignored" in out.stderr


def test_bad_input_exits_1_and_writes_nothing(tmp_path):
    bad = node("a")
    bad["spec"]["taint"] = []
    d = dump(tmp_path / "d.json", bad)
    out = subprocess.run([sys.executable, "-m", "kubetwin", "snapshot", "-f", str(d), "-o", str(tmp_path / "o")],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "Traceback" not in out.stderr and 'unknown field "spec.taint"' in out.stderr
    assert not (tmp_path / "o").exists()


def test_a_large_json_list_takes_the_fast_path_with_the_same_answer(tmp_path, monkeypatch):
    import kubetwin.model.objects as objects
    from kubetwin.sim import snapshot

    monkeypatch.setattr(objects, "FAST_PATH_MIN_BYTES", 0)
    d = dump(tmp_path / "pods.json", pod("p", "a"), pod("q"))
    assert snapshot._fast_items(d) is not None
    snap = load([d])
    assert len(snap.pods) == 1 and len(snap.pending) == 1


def test_a_misspelt_field_in_a_large_json_list_gets_the_precise_error(tmp_path, monkeypatch):
    import kubetwin.model.objects as objects

    monkeypatch.setattr(objects, "FAST_PATH_MIN_BYTES", 0)
    bad = pod("q")
    bad["spec"]["nodeNmae"] = "a"
    with pytest.raises(InputError) as err:
        load([dump(tmp_path / "pods.json", pod("p", "a"), bad)])
    assert 'unknown field "spec.nodeNmae"' in str(err.value) and 'did you mean "spec.nodeName"' in str(err.value)


def test_a_large_json_list_of_several_kinds_is_decoded_item_by_item(tmp_path, monkeypatch):
    import kubetwin.model.objects as objects
    from kubetwin.sim import snapshot

    monkeypatch.setattr(objects, "FAST_PATH_MIN_BYTES", 0)
    d = dump(tmp_path / "all.json", node("a"), pod("p", "a"), controller("Deployment", "web", 1))
    items = snapshot._fast_items(d)
    assert [snapshot.get(i, "kind") for i in items] == ["Node", "Pod", "Deployment"]


def test_the_written_files_hold_the_objects_as_dumped_without_managed_fields(tmp_path, monkeypatch):
    import kubetwin.model.objects as objects

    monkeypatch.setattr(objects, "FAST_PATH_MIN_BYTES", 0)
    p = pod("p", "a")
    p["spec"]["containers"][0]["resources"]["limits"] = {"cpu": 2, "memory": 1.5}
    p["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update"}]
    d = dump(tmp_path / "pods.json", p)
    write(load([d]), tmp_path / "o")
    del p["metadata"]["managedFields"]
    assert json.loads((tmp_path / "o" / "pods.json").read_text())["items"] == [p]


def test_an_invalid_quantity_is_an_error_naming_the_object_and_field(tmp_path):
    bad = pod("p", "a")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "e3"
    with pytest.raises(InputError) as err:
        load([dump(tmp_path / "d.json", node("a"), bad)])
    assert "Pod p" in str(err.value) and "spec.containers[0].resources.requests[cpu]" in str(err.value)


def test_a_resource_name_that_is_not_a_qualified_name_is_refused(tmp_path):
    bad = pod("p", "a")
    bad["spec"]["containers"][0]["resources"]["requests"]["fuzz unknown field!"] = 1
    with pytest.raises(InputError, match=r"Pod p.*a resource name must be a qualified name"):
        load([dump(tmp_path / "d.json", node("a"), bad)])


def test_a_bad_resource_name_is_refused_after_the_same_quantities_were_seen_good(tmp_path):
    good, bad = pod("p", "a"), pod("q", "a")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu "] = bad["spec"]["containers"][0]["resources"]["requests"]["cpu"]
    with pytest.raises(InputError, match=r"Pod q.*requests\[cpu \]"):
        load([dump(tmp_path / "d.json", node("a"), good, bad)])


def test_an_invalid_node_capacity_is_an_error_naming_the_node(tmp_path):
    bad = node("a")
    bad["status"]["capacity"]["memory"] = "-"
    with pytest.raises(InputError, match=r"Node a.*status\.capacity\[memory\]"):
        load([dump(tmp_path / "d.json", bad)])


def test_a_list_of_another_api_version_is_refused(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"apiVersion": "fuzz.example.com/v0", "kind": "List", "items": [node("a")]}))
    with pytest.raises(InputError, match='no kind "List" is registered for version "fuzz.example.com/v0"'):
        load([path])
