"""Kubelet side: the dra_manager_state checkpoint byte for byte, CDI names and specs, a pod's
claims prepared into container CDI devices and PodResources entries, and `dra prepare`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from kubetwin.dra.api import Node, parse_resource_claim
from kubetwin.dra.cdi import CDI_VERSION, CDIDevice, CDISpec, parse_qualified_name, qualified_name
from kubetwin.dra.checkpoint import CheckpointDevice, ClaimInfoState, decode_checkpoint, encode_checkpoint
from kubetwin.dra.prepare import PrepareError, prepare_pod
from kubetwin.errors import InputError
from kubetwin.model.pod import pod_from_dict

from .conftest import KUBETWIN, NODE

# pkg/kubelet/cm/dra/checkpoint/checkpointer_test.go, "single-claim-info-state" (kubelet <= 1.35 shape).
UPSTREAM_SINGLE = r'{"Data":"{\"kind\":\"DRACheckpoint\",\"apiVersion\":\"checkpoint.dra.kubelet.k8s.io/v1\",\"Entries\":[{\"ClaimUID\":\"067798be-454e-4be4-9047-1aa06aea63f7\",\"ClaimName\":\"example\",\"Namespace\":\"default\",\"PodUIDs\":{\"139cdb46-f989-4f17-9561-ca10cfb509a6\":{}},\"DriverState\":{\"test-driver.cdi.k8s.io\":{\"Devices\":[{\"PoolName\":\"worker-1\",\"DeviceName\":\"dev-1\",\"RequestNames\":[\"test request\"],\"CDIDeviceIDs\":[\"example.com/example=cdi-example\"]}]}}}]}","Checksum":1597924435}'  # noqa: E501

POD_UID = "aaaaaaaa-0000-0000-0000-000000000001"


def entry(uid="067798be-454e-4be4-9047-1aa06aea63f7", name="example", request_names=("test request",)):
    return ClaimInfoState(uid, name, "default", frozenset({"139cdb46-f989-4f17-9561-ca10cfb509a6"}), {
        "test-driver.cdi.k8s.io": (CheckpointDevice("worker-1", "dev-1", request_names,
                                                    ("example.com/example=cdi-example",)),)})


# ---------------------------------------------------------------------------- checkpoint
def test_checkpoint_is_byte_identical_to_the_kubelets_before_share_ids():
    assert encode_checkpoint([entry()], share_id_field=False).decode() == UPSTREAM_SINGLE


def test_checkpoint_written_by_an_older_kubelet_reads_back():
    assert decode_checkpoint(UPSTREAM_SINGLE.encode()) == [entry()]


def test_checkpoint_of_136_writes_share_id_between_device_name_and_request_names():
    text = json.loads(encode_checkpoint([entry()]))["Data"]
    assert '"DeviceName":"dev-1","ShareID":null,"RequestNames"' in text


def test_checkpoint_round_trips_nil_request_names_as_null():
    e = entry(request_names=None)
    blob = encode_checkpoint([e])
    assert '\\"RequestNames\\":null' in blob.decode()
    assert decode_checkpoint(blob) == [e]


def test_checkpoint_with_a_wrong_checksum_is_corrupted():
    bad = UPSTREAM_SINGLE.replace("1597924435", "1597924436")
    with pytest.raises(InputError, match="checkpoint is corrupted"):
        decode_checkpoint(bad.encode())


def test_checkpoint_with_an_unknown_top_level_field_is_refused_with_the_nearest_name():
    outer = json.loads(UPSTREAM_SINGLE)
    outer["Checksun"] = 1
    with pytest.raises(InputError, match='unknown field \\(strict decoding error\\) "Checksun"') as err:
        decode_checkpoint(json.dumps(outer).encode())
    assert err.value.fix == 'did you mean "Checksum"?'


def test_checkpoint_that_is_not_json_is_an_error_naming_the_file():
    with pytest.raises(InputError, match="dra_manager_state: checkpoint is not JSON"):
        decode_checkpoint(b"{")


def test_checkpoint_escapes_html_characters_like_go():
    e = ClaimInfoState("u", "a<b>&c", "default")
    assert "\\\\u003c" in encode_checkpoint([e]).decode()


# ---------------------------------------------------------------------------- CDI
def test_cdi_qualified_name_is_vendor_class_equals_name():
    assert qualified_name("gpu.example.com", "gpu", "gpu-0") == "gpu.example.com/gpu=gpu-0"
    assert parse_qualified_name("nvidia.com/gpu=0") == ("nvidia.com", "gpu", "0")


@pytest.mark.parametrize("vendor,cls,name", [("1vendor", "gpu", "x"), ("v.com", "-gpu", "x"),
                                              ("v.com", "gpu", "x/y"), ("v.com", "gpu", "-x")])
def test_cdi_rejects_names_the_cdi_parser_rejects(vendor, cls, name):
    with pytest.raises(InputError):
        qualified_name(vendor, cls, name)


def test_cdi_spec_uses_the_current_spec_version_and_kind():
    spec = CDISpec("gpu.example.com", "gpu", (CDIDevice("gpu-0"),)).to_json()
    assert spec["cdiVersion"] == CDI_VERSION == "1.1.0"
    assert spec["kind"] == "gpu.example.com/gpu"
    assert spec["devices"] == [{"name": "gpu-0", "containerEdits": {}}]


def test_cdi_spec_with_duplicate_device_names_is_refused():
    with pytest.raises(InputError, match="duplicate CDI device name"):
        CDISpec("v.com", "gpu", (CDIDevice("a"), CDIDevice("a"))).to_json()


# ---------------------------------------------------------------------------- prepare
def claim(name, results, reserved=(POD_UID,), uid=None):
    return parse_resource_claim({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
        "status": {"allocation": {"devices": {"results": [
            {"request": req, "driver": drv, "pool": "pool-1", "device": dev} for req, drv, dev in results]}},
            "reservedFor": [{"resource": "pods", "name": "p", "uid": u} for u in reserved]}})


def pod(containers):
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": "p", "namespace": "default", "uid": POD_UID},
                          "spec": {"containers": [{"name": n, "resources": {"claims": refs}} for n, refs in containers],
                                   "resourceClaims": [{"name": "a", "resourceClaimName": "claim-a"},
                                                      {"name": "b", "resourceClaimName": "claim-b"}]}})


A = claim("claim-a", [("gpu", "gpu.example.com", "gpu-0"), ("nic", "nic.example.com", "nic-0"),
                      ("gpu", "gpu.example.com", "gpu-1")])
B = claim("claim-b", [("gpu/small", "gpu.example.com", "gpu-2")])


def test_prepare_records_every_claim_with_its_drivers_devices_and_the_pod():
    prepared = prepare_pod(pod([("c", [{"name": "a"}])]), [A, B])
    a = prepared.claims[0]
    assert a.claim_uid == "uid-claim-a" and a.pod_uids == {POD_UID}
    assert [d.device_name for d in a.driver_state["gpu.example.com"]] == ["gpu-0", "gpu-1"]
    assert [d.device_name for d in a.driver_state["nic.example.com"]] == ["nic-0"]


def test_driver_reports_the_base_request_of_a_subrequest():
    prepared = prepare_pod(pod([("c", [{"name": "b", "request": "gpu"}])]), [A, B])
    assert prepared.claims[1].driver_state["gpu.example.com"][0].request_names == ("gpu",)
    assert prepared.containers[0].cdi_devices == ("gpu.example.com/device=uid-claim-b-gpu-2",)


def test_container_gets_only_the_devices_of_the_request_it_names():
    prepared = prepare_pod(pod([("c", [{"name": "a", "request": "nic"}])]), [A, B])
    assert prepared.containers[0].cdi_devices == ("nic.example.com/device=uid-claim-a-nic-0",)


def test_container_without_claims_gets_no_cdi_devices():
    prepared = prepare_pod(pod([("c", [])]), [A, B])
    assert prepared.containers[0].cdi_devices == () and prepared.containers[0].dynamic_resources == ()


def test_pod_resources_list_every_device_of_a_referenced_claim_with_the_upstream_cumulative_cdi_list():
    prepared = prepare_pod(pod([("c", [{"name": "a", "request": "nic"}])]), [A, B])
    (dyn,) = prepared.containers[0].dynamic_resources
    assert dyn["claimName"] == "claim-a" and dyn["claimNamespace"] == "default"
    gpu0, gpu1, nic0 = dyn["claimResources"]
    assert (gpu0["driverName"], gpu0["deviceName"], gpu1["deviceName"]) == ("gpu.example.com", "gpu-0", "gpu-1")
    assert [c["name"] for c in gpu1["cdiDevices"]] == ["gpu.example.com/device=uid-claim-a-gpu-0",
                                                       "gpu.example.com/device=uid-claim-a-gpu-1"]
    assert nic0["cdiDevices"] == [{"name": "nic.example.com/device=uid-claim-a-nic-0"}]


def test_a_claim_prepared_for_another_pod_only_gains_this_pod():
    other = ClaimInfoState("uid-claim-a", "claim-a", "default", frozenset({"other"}), {})
    prepared = prepare_pod(pod([("c", [{"name": "a"}])]), [A, B], state=[other])
    assert prepared.state[0].pod_uids == {"other", POD_UID}
    assert prepared.state[0].driver_state == {}       # the driver is not called again
    assert "gpu.example.com-device_uid-claim-a.json" not in prepared.cdi_specs


def test_one_cdi_spec_per_claim_and_driver():
    prepared = prepare_pod(pod([("c", [])]), [A, B])
    assert sorted(prepared.cdi_specs) == ["gpu.example.com-device_uid-claim-a.json",
                                          "gpu.example.com-device_uid-claim-b.json",
                                          "nic.example.com-device_uid-claim-a.json"]


def test_a_claim_not_reserved_for_the_pod_fails_admission():
    with pytest.raises(PrepareError, match="is not allowed to use resource claim claim-a"):
        prepare_pod(pod([("c", [])]), [claim("claim-a", [("gpu", "gpu.example.com", "gpu-0")], reserved=()), B])


def test_an_unallocated_claim_fails_admission():
    raw = dict(A.raw)
    raw["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": POD_UID}]}
    with pytest.raises(PrepareError, match="not allocated"):
        prepare_pod(pod([("c", [])]), [parse_resource_claim(raw), B])


def test_a_claim_allocated_for_another_node_fails():
    raw = json.loads(json.dumps(A.raw))
    raw["status"]["allocation"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}]}
    with pytest.raises(PrepareError, match="allocated for other nodes"):
        prepare_pod(pod([("c", [])]), [parse_resource_claim(raw), B], Node("node-1"))


def test_a_template_entry_without_a_generated_claim_is_not_created_yet():
    p = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": POD_UID},
                       "spec": {"containers": [{"name": "c"}],
                                "resourceClaims": [{"name": "a", "resourceClaimTemplateName": "t"}]}})
    with pytest.raises(PrepareError, match="ResourceClaim not created yet"):
        prepare_pod(p, [])


# ---------------------------------------------------------------------------- CLI
def _files(tmp_path: Path, claims=(A, B)):
    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all([dict(c.raw) for c in claims]))
    (tmp_path / "node.yaml").write_text(yaml.safe_dump(NODE))
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": POD_UID},
        "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "a"}]}}],
                 "resourceClaims": [{"name": "a", "resourceClaimName": "claim-a"}]}}))


def _run(tmp_path, *args):
    return subprocess.run(KUBETWIN + ["dra", "prepare", "-f", "objects.yaml", "--node", "node.yaml", *args,
                                      "pod.yaml"], cwd=tmp_path, capture_output=True, text=True)


def test_cli_prepare_writes_checkpoint_and_cdi_specs(tmp_path: Path):
    _files(tmp_path)
    (tmp_path / "state").mkdir()
    (tmp_path / "cdi").mkdir()
    out = _run(tmp_path, "--state-dir", "state", "--cdi-dir", "cdi", "-o", "json")
    assert out.returncode == 0, out.stderr
    entries = decode_checkpoint((tmp_path / "state" / "dra_manager_state").read_bytes())
    assert [e.claim_name for e in entries] == ["claim-a"]
    spec = json.loads((tmp_path / "cdi" / "gpu.example.com-device_uid-claim-a.json").read_text())
    assert [d["name"] for d in spec["devices"]] == ["uid-claim-a-gpu-0", "uid-claim-a-gpu-1"]
    assert json.loads(out.stdout)["containers"][0]["cdiDevices"][0] == "gpu.example.com/device=uid-claim-a-gpu-0"


def test_cli_prepare_with_a_corrupt_checkpoint_writes_nothing(tmp_path: Path):
    _files(tmp_path)
    (tmp_path / "state").mkdir()
    (tmp_path / "cdi").mkdir()
    (tmp_path / "state" / "dra_manager_state").write_text('{"Data":"{}","Checksum":1}')
    out = _run(tmp_path, "--state-dir", "state", "--cdi-dir", "cdi")
    assert out.returncode == 1 and "dra_manager_state" in out.stderr and "corrupted" in out.stderr
    assert list((tmp_path / "cdi").iterdir()) == []


def test_cli_prepare_of_a_pod_without_reservation_exits_1(tmp_path: Path):
    _files(tmp_path, claims=(claim("claim-a", [("gpu", "gpu.example.com", "gpu-0")], reserved=()),))
    out = _run(tmp_path)
    assert out.returncode == 1 and "not allowed to use resource claim claim-a" in out.stderr


def test_a_null_node_selector_term_is_the_empty_term_and_matches_no_node():
    """json.Unmarshal turns a null element of nodeSelectorTerms into the zero NodeSelectorTerm,
    which matches nothing (was a traceback: found by the fuzz campaign, seed 52 case 3594)."""
    from kubetwin.dra.nodeselector import selector_matches

    node = Node("node-1", {"kubernetes.io/hostname": "node-1"})
    by_name = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
    assert not selector_matches({"nodeSelectorTerms": [None]}, node)
    assert selector_matches({"nodeSelectorTerms": [None, by_name]}, node)


def test_prepare_claims_keeps_what_prepare_pod_keeps_without_the_containers_views():
    from kubetwin.dra.prepare import prepare_claims

    p = pod([("c", [{"name": "a"}])])
    whole, claims_only = prepare_pod(p, [A, B]), prepare_claims(p, [A, B])
    assert claims_only.state == whole.state and claims_only.cdi_specs == whole.cdi_specs
    assert tuple(claims_only.entries[pc.name] for pc in claims_only.pod_claims.claims) == whole.claims
    # the env key of a second device of one driver is DRA_DEVICE_1, as before
    gpu_spec = next(s for s in whole.cdi_specs.values() if s.vendor == "gpu.example.com")
    assert [d.edits.env for d in gpu_spec.devices] == [("DRA_DEVICE_0=pool-1/gpu-0",), ("DRA_DEVICE_1=pool-1/gpu-1",)]
