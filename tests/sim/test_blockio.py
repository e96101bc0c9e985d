"""Block I/O classes in ``simulate`` (kubetwin.sim.blockio): goresctrl's classes (intel/goresctrl
pkg/blockio) as containerd assigns them and runc writes them (io.bfq.weight / io.weight / io.max),
acting on the simulated disk of kubetwin.sim.io_psi."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubetwin.errors import InputError
from kubetwin.sim import load_scenario
from kubetwin.sim.blockio import ClassIO, Want, class_stalls
from kubetwin.sim.loop import simulate
from kubetwin.sim.usage import parse_usage

MI = 1 << 20
CONFIG = {"Classes": {
    "throttled": [{"Weight": "50"}, {"Devices": ["/dev/sd[a-z]"], "ThrottleReadBps": "40Mi", "ThrottleWriteBps": "10Mi"}],
    "priority": [{"Weight": "400"}],
    "nvme-only": [{"Devices": ["/dev/nvme*"], "ThrottleReadBps": "1Mi"}],
}}
SDA = {"name": "sda", "major": 8, "minor": 0, "scheduler": "bfq"}


class _Pod:
    def __init__(self, name: str):
        self.key, self.uid = f"default/{name}", name


class _SimPod:
    def __init__(self, name: str):
        self.pod = _Pod(name)


def _cls(name: str = "c", weight: int = 100, rbps: int | None = None, wbps: int | None = None) -> ClassIO:
    return ClassIO(name, {}, (), weight, rbps, wbps)


def _steady(v: str) -> list:
    """A constant rate that keeps the clock going for two minutes (a still curve ends the run)."""
    return [["0s", v], ["2m", v]]


def _workload(name: str, io: object, annotations: dict | None = None, count: int = 1) -> dict:
    if isinstance(io, str):
        io = _steady(io)
    elif isinstance(io, dict):
        io = {k: _steady(v) for k, v in io.items()}
    return {"name": name, "count": count,
            "template": {"metadata": {"annotations": annotations or {}},
                         "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}]}},
            "usage": {"io": io}}


def _scenario(tmp_path: Path, workloads: list[dict], blockio: dict | None = None, config: dict | None = None,
              groups: list[dict] | None = None, **spec: object) -> Path:
    (tmp_path / "blockio.yaml").write_text(yaml.safe_dump(config if config is not None else CONFIG))
    group: dict = {"name": "io", "count": 1, "machine": "1s1n8c2t", "disk": {"nodefs": "100Gi", "ioBandwidth": "100Mi"}}
    if blockio is not False:
        group["blockio"] = blockio if blockio is not None else {"config": "blockio.yaml", "devices": [SDA]}
    doc = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "bio"},
           "spec": {"horizon": "2m", "sampleInterval": "30s", "nodeGroups": groups or [group],
                    "workloads": workloads, **spec}}
    p = tmp_path / "sim.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def _run(tmp_path: Path, workloads: list[dict], **kw: object):
    return simulate(load_scenario(_scenario(tmp_path, workloads, **kw)))


def _refusal(tmp_path: Path, workloads: list[dict], **kw: object) -> InputError:
    with pytest.raises(InputError) as exc:
        load_scenario(_scenario(tmp_path, workloads, **kw))
    return exc.value


def _some(r, pod: str) -> float:
    return r.node_psi["io"]["pods"][pod]["containers"][0]["io.pressure"]["some"]["total"]


# --- the model ---------------------------------------------------------------------------------
def test_weights_split_a_saturated_disk_in_proportion():
    wants = [Want(_SimPod("hi"), "c", 100.0, 0.0, _cls("hi", 300)), Want(_SimPod("lo"), "c", 100.0, 0.0, _cls("lo", 100))]
    stalls, _, per = class_stalls(100, wants)
    assert [s.some for s in stalls] == [pytest.approx(0.25), pytest.approx(0.75)]   # got 75 and 25 of 100
    assert per == [(0.0, pytest.approx(25.0)), (0.0, pytest.approx(75.0))]


def test_a_container_without_a_class_has_the_default_weight():
    wants = [Want(_SimPod("a"), "c", 100.0, 0.0, None), Want(_SimPod("b"), "c", 100.0, 0.0, _cls(weight=100))]
    stalls, _, _ = class_stalls(100, wants)
    assert [s.some for s in stalls] == [pytest.approx(0.5), pytest.approx(0.5)]


def test_io_max_caps_a_container_that_stalls_on_an_idle_disk():
    stalls, full, per = class_stalls(1000, [Want(_SimPod("a"), "c", 80.0, 0.0, _cls("t", rbps=20))])
    assert [s.some for s in stalls] == [pytest.approx(0.75)] and full == pytest.approx(0.75)
    assert per == [(60.0, 0.0)] and "io.max of class t" in stalls[0].why


def test_read_and_write_limits_cap_each_direction_alone():
    stalls, _, _ = class_stalls(1000, [Want(_SimPod("a"), "c", 50.0, 50.0, _cls(rbps=100, wbps=10))])
    assert stalls[0].some == pytest.approx(0.4)   # writes cut from 50 to 10: 60 of 100 served


def test_what_io_max_lets_through_is_what_contends_for_the_disk():
    wants = [Want(_SimPod("t"), "c", 200.0, 0.0, _cls(rbps=20)), Want(_SimPod("b"), "c", 100.0, 0.0, None)]
    stalls, _, per = class_stalls(100, wants)
    assert per == [(180.0, 0.0), (0.0, pytest.approx(20.0))]     # 20 + 80: the disk is shared after the cap


# --- the io curve's read/write split --------------------------------------------------------------
def test_an_io_curve_split_into_reads_and_writes_has_their_sum_as_its_total():
    u = parse_usage({"io": {"read": [["0s", "10Mi"], ["1m", "30Mi"]], "write": "5Mi"}}, "usage")
    assert u.io[0][1].at(30) == 25 * MI and u.io_write[0][1].at(30) == 5 * MI


def test_a_split_io_curve_with_an_unknown_key_is_refused_with_its_path():
    with pytest.raises(InputError) as exc:
        parse_usage({"io": {"read": "1Mi", "writes": "1Mi"}}, "usage")
    assert exc.value.path == "usage.io.writes" and "write" in (exc.value.fix or "")


def test_a_split_io_curve_needs_reads_or_writes():
    with pytest.raises(InputError) as exc:
        parse_usage({"io": {}}, "usage")
    assert exc.value.path == "usage.io"


def test_an_unsplit_io_curve_is_half_reads_half_writes(tmp_path):
    r = _run(tmp_path, [_workload("w", "80Mi", {"blockio.resources.beta.kubernetes.io/pod": "throttled"})])
    # reads 40Mi (rbps 40Mi: all pass), writes 40Mi (wbps 10Mi): 50 of 80 served
    assert r.node_psi["io"]["pods"]["default/w-0"]["containers"][0]["io.pressure"]["some"]["avg10"] > 0
    cls = {c["class"]: c for c in r.blockio["nodes"]["io-0"]["classes"]}["throttled"]
    assert cls["throttledBytes"] == 30 * MI * 4 * 30


def test_a_read_only_curve_is_not_held_back_by_a_write_limit(tmp_path):
    r = _run(tmp_path, [_workload("r", {"read": "40Mi"}, {"blockio.resources.beta.kubernetes.io/pod": "throttled"})])
    assert r.node_psi is None or "io" not in r.node_psi


# --- classes as containerd gives them ----------------------------------------------------------------
def test_the_pod_annotation_gives_the_class_and_its_cgroup_lines(tmp_path):
    r = _run(tmp_path, [_workload("w", "1Mi", {"blockio.resources.beta.kubernetes.io/pod": "throttled"})])
    row = r.blockio["pods"]["default/w-0"][0]
    assert row["blockioClass"] == "throttled" and row["origin"] == "annotation"
    assert row["files"] == {"io.bfq.weight": "default 50",
                            "io.max": "8:0 rbps=41943040 wbps=10485760 riops=max wiops=max"}


def test_a_per_container_annotation_wins_over_the_pod_one(tmp_path):
    r = _run(tmp_path, [_workload("w", "1Mi", {"blockio.resources.beta.kubernetes.io/pod": "throttled",
                                              "blockio.resources.beta.kubernetes.io/container.app": "priority"})])
    assert r.blockio["pods"]["default/w-0"][0]["blockioClass"] == "priority"


def test_a_container_without_an_annotation_has_no_class(tmp_path):
    r = _run(tmp_path, [_workload("w", "1Mi")])
    assert r.blockio["pods"]["default/w-0"] == [{"container": "app", "node": "io-0", "blockioClass": None}]


def test_annotated_weights_split_the_saturated_disk_in_proportion(tmp_path):
    r = _run(tmp_path, [_workload("hi", "100Mi", {"blockio.resources.beta.kubernetes.io/pod": "priority"}),
                        _workload("lo", "100Mi")])
    # BFQ weights 400 vs 100: 80 and 20 of 100 MiB/s, waiting 20 % and 80 % of the time
    assert _some(r, "default/lo-0") == pytest.approx(4 * _some(r, "default/hi-0"), rel=1e-3)


def test_without_bfq_the_class_weight_is_written_to_io_weight_and_acts_there(tmp_path):
    r = _run(tmp_path, [_workload("hi", "100Mi", {"blockio.resources.beta.kubernetes.io/pod": "priority"})],
             blockio={"config": "blockio.yaml", "devices": [{**SDA, "scheduler": "mq-deadline"}]})
    row = r.blockio["pods"]["default/hi-0"][0]
    assert row["files"] == {"io.weight": "default 3940"}
    assert r.blockio["nodes"]["io-0"]["classes"][0]["weight"] == 3940


def test_a_class_whose_device_globs_miss_the_simulated_disk_does_not_cap_it(tmp_path):
    r = _run(tmp_path, [_workload("w", "50Mi", {"blockio.resources.beta.kubernetes.io/pod": "nvme-only"})],
             blockio={"config": "blockio.yaml",
                      "devices": [SDA, {"name": "nvme0n1", "major": 259, "minor": 0}]})
    row = r.blockio["pods"]["default/w-0"][0]
    assert row["files"] == {"io.max": "259:0 rbps=1048576 wbps=max riops=max wiops=max"}
    assert r.node_psi is None or "io" not in r.node_psi


def test_device_globs_resolve_against_the_listed_devices(tmp_path):
    r = _run(tmp_path, [_workload("w", "1Mi", {"blockio.resources.beta.kubernetes.io/pod": "throttled"})],
             blockio={"config": "blockio.yaml", "devices": [SDA, {"name": "/dev/sdb", "major": 8, "minor": 16}]})
    assert r.blockio["pods"]["default/w-0"][0]["files"]["io.max"].splitlines() == [
        "8:0 rbps=41943040 wbps=10485760 riops=max wiops=max", "8:16 rbps=41943040 wbps=10485760 riops=max wiops=max"]


def test_a_class_no_node_group_defines_is_refused_with_the_annotation_path(tmp_path):
    err = _refusal(tmp_path, [_workload("w", "1Mi", {"blockio.resources.beta.kubernetes.io/pod": "throtled"})])
    assert err.path == 'spec.workloads[0].template.metadata.annotations["blockio.resources.beta.kubernetes.io/pod"]'
    assert "throtled" in err.message and err.fix == 'did you mean "throttled"?' and "sim.yaml" in err.file


def test_a_pod_object_with_a_class_no_node_group_defines_is_refused_with_its_file(tmp_path):
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "annotations": {"blockio.resources.beta.kubernetes.io/container.app": "gold"}},
        "spec": {"containers": [{"name": "app"}]}}))
    err = _refusal(tmp_path, [], objects=["pods.yaml"])
    assert "pods.yaml" in err.file
    assert err.path == 'metadata.annotations["blockio.resources.beta.kubernetes.io/container.app"]'


def test_a_class_only_another_group_defines_fails_the_container(tmp_path):
    (tmp_path / "other.yaml").write_text(yaml.safe_dump({"Classes": {"gold": [{"Weight": "200"}]}}))
    disk = {"nodefs": "100Gi", "ioBandwidth": "100Mi"}
    groups = [{"name": "a", "machine": "1s1n8c2t", "disk": disk, "blockio": {"config": "blockio.yaml", "devices": [SDA]},
               "labels": {"g": "a"}},
              {"name": "b", "machine": "1s1n8c2t", "disk": disk, "blockio": {"config": "other.yaml", "devices": [SDA]}}]
    w = _workload("w", "1Mi", {"blockio.resources.beta.kubernetes.io/pod": "gold"})
    w["template"]["spec"]["nodeSelector"] = {"g": "a"}
    r = _run(tmp_path, [w], groups=groups)
    assert (r.pods[0].phase, r.pods[0].reason) == ("Failed", "CreateContainerError")
    assert r.pods[0].message == 'no OCI BlockIO parameters for class "gold"'


def test_the_class_a_runtime_policy_sets_wins_over_none(tmp_path):
    (tmp_path / "ta.yaml").write_text(yaml.safe_dump({
        "apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy", "metadata": {"name": "default"},
        "spec": {"reservedResources": {"cpu": "1"},
                 "control": {"blockio": {"enable": True, "usePodQoSAsDefaultClass": True}}}}))
    config = {"Classes": {**CONFIG["Classes"], "Burstable": [{"Weight": "200"}]}}
    r = _run(tmp_path, [_workload("w", "1Mi")], config=config,
             groups=[{"name": "io", "machine": "1s1n8c2t", "disk": {"nodefs": "100Gi", "ioBandwidth": "100Mi"},
                      "blockio": {"config": "blockio.yaml", "devices": [SDA]},
                      "runtime": {"policy": "topology-aware", "config": "ta.yaml"}}])
    row = r.blockio["pods"]["default/w-0"][0]
    assert (row["blockioClass"], row["origin"], row["files"]) == ("Burstable", "policy", {"io.bfq.weight": "default 200"})


def test_a_runtime_policy_class_the_configuration_lacks_fails_the_container(tmp_path):
    (tmp_path / "ta.yaml").write_text(yaml.safe_dump({
        "apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy", "metadata": {"name": "default"},
        "spec": {"reservedResources": {"cpu": "1"},
                 "control": {"blockio": {"enable": True, "usePodQoSAsDefaultClass": True}}}}))
    r = _run(tmp_path, [_workload("w", "1Mi")],
             groups=[{"name": "io", "machine": "1s1n8c2t", "disk": {"nodefs": "100Gi", "ioBandwidth": "100Mi"},
                      "blockio": {"config": "blockio.yaml", "devices": [SDA]},
                      "runtime": {"policy": "topology-aware", "config": "ta.yaml"}}])
    assert (r.pods[0].phase, r.pods[0].reason) == ("Failed", "CreateContainerError")
    assert "failed to adjust BlockIO class in OCI Spec" in r.pods[0].message and "Burstable" in r.pods[0].message


# --- the node group's blockio, strictly --------------------------------------------------------------
def test_iops_limits_on_the_simulated_disk_are_refused_as_not_modelled(tmp_path):
    config = {"Classes": {"iops": [{"Devices": ["/dev/sda"], "ThrottleReadIOPS": "100"}]}}
    err = _refusal(tmp_path, [_workload("w", "1Mi")], config=config)
    assert err.path == "Classes.iops[0].ThrottleReadIOPS" and err.file.endswith("blockio.yaml")
    assert "not modelled" in err.message


def test_a_misspelt_blockio_field_is_refused_with_its_path(tmp_path):
    err = _refusal(tmp_path, [_workload("w", "1Mi")], blockio={"config": "blockio.yaml", "device": [SDA]})
    assert "spec.nodeGroups[0].blockio.device" in str(err)


def test_an_unknown_scheduler_is_refused(tmp_path):
    err = _refusal(tmp_path, [_workload("w", "1Mi")],
                   blockio={"config": "blockio.yaml", "devices": [{**SDA, "scheduler": "bqf"}]})
    assert err.path == "spec.nodeGroups[0].blockio.devices[0].scheduler" and err.fix == 'did you mean "bfq"?'


def test_a_device_without_its_numbers_is_refused(tmp_path):
    err = _refusal(tmp_path, [_workload("w", "1Mi")], blockio={"config": "blockio.yaml", "devices": [{"name": "sda"}]})
    assert err.path == "spec.nodeGroups[0].blockio.devices[0].major"


def test_a_device_listed_twice_is_refused(tmp_path):
    err = _refusal(tmp_path, [_workload("w", "1Mi")], blockio={"config": "blockio.yaml", "devices": [SDA, SDA]})
    assert err.path == "spec.nodeGroups[0].blockio.devices[1]"


def test_blockio_needs_the_disk_bandwidth_it_splits(tmp_path):
    groups = [{"name": "io", "machine": "1s1n8c2t", "disk": {"nodefs": "100Gi"},
               "blockio": {"config": "blockio.yaml", "devices": [SDA]}}]
    err = _refusal(tmp_path, [_workload("w", "1Mi")], groups=groups)
    assert err.path == "spec.nodeGroups[0].blockio" and "ioBandwidth" in err.message


def test_a_bad_configuration_is_refused_with_its_file(tmp_path):
    err = _refusal(tmp_path, [_workload("w", "1Mi")], config={"Classes": {"x": [{"Weight": "5000"}]}})
    assert err.file.endswith("blockio.yaml") and err.path == "Classes.x[0].Weight"


def test_without_a_blockio_configuration_the_results_have_no_blockio(tmp_path):
    r = _run(tmp_path, [_workload("w", "200Mi", {"blockio.resources.beta.kubernetes.io/pod": "throttled"})],
             blockio=False)
    assert r.blockio is None and "blockio" not in r.to_json()
    assert r.node_psi["io"]["pods"]["default/w-0"]["containers"][0]["io.pressure"]["some"]["avg10"] > 0


def test_the_worked_example_gives_the_figures_the_docs_show():
    root = Path(__file__).resolve().parents[2]
    r = simulate(load_scenario(root / "examples/simulate/blockio/scenario.yaml"))
    avg10 = {p: v["containers"][0]["io.pressure"]["some"]["avg10"] for p, v in r.node_psi["io"]["pods"].items()}
    assert avg10 == {"default/db-0": 33.0, "default/etl-0": 83.94, "default/etl-1": 83.94, "default/web-0": 44.0}
    doc = (root / "docs/pressure-stalls.md").read_text()
    assert "etl 83.94 io.max of class throttled let 52428800 of 115343360 B/s through" in doc


def test_containers_the_runtime_memo_places_get_the_policys_class_too(tmp_path):
    (tmp_path / "ta.yaml").write_text(yaml.safe_dump({
        "apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy", "metadata": {"name": "default"},
        "spec": {"reservedResources": {"cpu": "1"},
                 "control": {"blockio": {"enable": True, "usePodQoSAsDefaultClass": True}}}}))
    config = {"Classes": {**CONFIG["Classes"], "Burstable": [{"Weight": "200"}]}}
    disk = {"nodefs": "100Gi", "ioBandwidth": "100Mi"}
    r = _run(tmp_path, [_workload("w", "1Mi", count=4)], config=config,
             groups=[{"name": "io", "count": 2, "machine": "1s1n8c2t", "disk": disk,
                      "blockio": {"config": "blockio.yaml", "devices": [SDA]},
                      "runtime": {"policy": "topology-aware", "config": "ta.yaml"}}])
    assert [(c[0]["blockioClass"], c[0]["origin"]) for c in r.blockio["pods"].values()] == [("Burstable", "policy")] * 4


def test_without_devices_a_machine_that_lists_no_disks_is_refused(tmp_path):
    err = _refusal(tmp_path, [_workload("w", "1Mi")], blockio={"config": "blockio.yaml"})
    assert err.path == "spec.nodeGroups[0].blockio.devices" and "lists none" in err.message


def test_without_devices_the_machines_disk_map_gives_them(tmp_path):
    import json

    from kubetwin.machine import load_machine
    from kubetwin.machine.machineinfo import to_machineinfo

    info = to_machineinfo(load_machine("1s1n8c2t"))
    info["disk_map"] = {"8:0": {"name": "sda", "major": 8, "minor": 0, "size": 1 << 40, "scheduler": "bfq"}}
    (tmp_path / "machine.json").write_text(json.dumps(info))
    groups = [{"name": "io", "machine": "machine.json", "disk": {"nodefs": "100Gi", "ioBandwidth": "100Mi"},
               "blockio": {"config": "blockio.yaml"}}]
    r = _run(tmp_path, [_workload("w", "1Mi", {"blockio.resources.beta.kubernetes.io/pod": "throttled"})],
             groups=groups)
    assert r.blockio["nodes"]["io-0"]["disk"] == {"name": "sda", "device": "8:0", "scheduler": "bfq"}


def test_block_io_classes_need_kubelet_admission(tmp_path):
    sc = load_scenario(_scenario(tmp_path, [_workload("w", "1Mi")], kubeletAdmission=False))
    with pytest.raises(InputError) as exc:
        simulate(sc)
    assert exc.value.path == "spec.kubeletAdmission"


def test_a_class_annotation_for_a_container_the_pod_lacks_is_warned_about(tmp_path):
    from kubetwin.diagnostics import collecting

    with collecting() as seen:
        load_scenario(_scenario(tmp_path, [_workload("w", "1Mi", {
            "blockio.resources.beta.kubernetes.io/container.ap": "throttled"})]))
    assert any('no container "ap"' in str(w) and 'did you mean "container.app"?' in str(w) for w in seen)


def test_a_missing_configuration_file_is_refused_with_the_field_path(tmp_path):
    err = _refusal(tmp_path, [_workload("w", "1Mi")], blockio={"config": "nope.yaml", "devices": [SDA]})
    assert err.path == "spec.nodeGroups[0].blockio.config" and "no such file" in err.message


def test_a_device_that_is_not_a_mapping_is_refused(tmp_path):
    err = _refusal(tmp_path, [_workload("w", "1Mi")], blockio={"config": "blockio.yaml", "devices": [None]})
    assert err.path == "spec.nodeGroups[0].blockio.devices[0]"
