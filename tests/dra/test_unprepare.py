"""Kubelet side of DRA at pod termination: ``UnprepareResources`` (pkg/kubelet/cm/dra/manager.go)
and ``kubetwin dra unprepare``. Cases after manager_test.go ``TestUnprepareResources``: a claim
not in the cache is skipped, a claim other pods use only loses the pod, a prepared claim is
unprepared by each of its drivers and leaves the checkpoint; the CDI spec files go with it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from kubetwin.dra.checkpoint import ClaimInfoState, decode_checkpoint
from kubetwin.dra.prepare import prepare_pod
from kubetwin.dra.unprepare import UnprepareError, release_claims, unprepare_pod
from kubetwin.model.pod import pod_from_dict

from .conftest import KUBETWIN, NODE
from .test_prepare import POD_UID, A, B, pod


def test_a_prepared_claim_leaves_the_checkpoint_after_its_only_pod_terminates():
    p = pod([("c", [{"name": "a"}])])
    prepared = prepare_pod(p, [A, B])
    done = unprepare_pod(p, prepared.state)
    assert done.state == ()
    assert [e.claim_name for e in done.unprepared] == ["claim-a", "claim-b"]


def test_each_driver_of_a_claim_is_asked_to_unprepare_it():
    p = pod([("c", [])])
    done = unprepare_pod(p, prepare_pod(p, [A, B]).state)
    assert done.driver_calls == {"gpu.example.com": (("default/claim-a", "uid-claim-a"),
                                                     ("default/claim-b", "uid-claim-b")),
                                 "nic.example.com": (("default/claim-a", "uid-claim-a"),)}


def test_the_cdi_spec_files_prepare_wrote_are_the_ones_removed():
    p = pod([("c", [])])
    prepared = prepare_pod(p, [A, B])
    done = unprepare_pod(p, prepared.state)
    assert sorted(done.cdi_specs_removed) == sorted(prepared.cdi_specs)


def test_a_claim_other_pods_still_use_only_loses_this_pod():
    p = pod([("c", [])])
    shared = prepare_pod(p, [A, B]).state[0].with_pod("other-pod")
    done = unprepare_pod(p, [shared])
    assert done.state[0].pod_uids == {"other-pod"} and done.unprepared == ()
    assert done.driver_calls == {} and done.cdi_specs_removed == ()


def test_a_claim_not_in_the_checkpoint_is_skipped():
    done = unprepare_pod(pod([("c", [])]), [])
    assert done.not_prepared == ("claim-a", "claim-b") and done.state == ()


def test_entries_of_other_claims_stay_in_their_order():
    p = pod([("c", [])])
    other = ClaimInfoState("uid-x", "x", "default", frozenset({"someone"}), {})
    done = unprepare_pod(p, [other, *prepare_pod(p, [A, B]).state])
    assert done.state == (other,)


def test_the_last_pod_uid_is_unprepared_even_when_it_is_not_this_pods_upstream_quirk():
    p = pod([("c", [])])
    foreign = ClaimInfoState("uid-claim-a", "claim-a", "default", frozenset({"someone-else"}), {})
    done = unprepare_pod(p, [foreign])
    assert done.unprepared == (foreign,)


def test_a_template_claim_never_generated_is_an_unprepare_error():
    p = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": POD_UID},
                       "spec": {"containers": [{"name": "c"}],
                                "resourceClaims": [{"name": "a", "resourceClaimTemplateName": "t"}]}})
    with pytest.raises(UnprepareError, match="unprepare resource claims: .*ResourceClaim not created yet"):
        unprepare_pod(p, [])


def test_a_template_entry_the_controller_decided_not_to_generate_is_skipped():
    p = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": POD_UID},
                       "spec": {"containers": [{"name": "c"}],
                                "resourceClaims": [{"name": "a", "resourceClaimTemplateName": "t"}]},
                       "status": {"resourceClaimStatuses": [{"name": "a"}]}})
    done = unprepare_pod(p, [])
    assert done.not_prepared == () and done.unprepared == ()


def test_the_claim_controller_deallocates_a_claim_without_consumers_so_its_devices_are_free():
    p = pod([("c", [])])
    ((before, after), _) = release_claims(p, [A, B])
    assert before.allocated is not None and after is not None and after.allocated is None


# ---------------------------------------------------------------------------- CLI
def _files(tmp_path: Path) -> None:
    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all([dict(c.raw) for c in (A, B)]))
    (tmp_path / "node.yaml").write_text(yaml.safe_dump(NODE))
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": POD_UID},
        "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "a"}]}}],
                 "resourceClaims": [{"name": "a", "resourceClaimName": "claim-a"}]}}))
    (tmp_path / "state").mkdir()
    (tmp_path / "cdi").mkdir()


def _kubetwin(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(KUBETWIN + list(args), cwd=tmp_path, capture_output=True, text=True)


def test_cli_unprepare_after_prepare_removes_checkpoint_entries_and_cdi_specs(tmp_path: Path):
    _files(tmp_path)
    out = _kubetwin(tmp_path, "dra", "prepare", "-f", "objects.yaml", "--node", "node.yaml", "--state-dir", "state",
                    "--cdi-dir", "cdi", "pod.yaml")
    assert out.returncode == 0, out.stderr
    assert list((tmp_path / "cdi").iterdir())
    out = _kubetwin(tmp_path, "dra", "unprepare", "--state-dir", "state", "--cdi-dir", "cdi", "-f", "objects.yaml",
                    "pod.yaml", "-o", "json")
    assert out.returncode == 0, out.stderr
    assert decode_checkpoint((tmp_path / "state" / "dra_manager_state").read_bytes()) == []
    assert list((tmp_path / "cdi").iterdir()) == []
    data = json.loads(out.stdout)
    assert data["claims"] == [{"claim": "default/claim-a", "after": "deallocated (no consumer left)",
                               "devicesFreed": ["gpu.example.com/pool-1/gpu-0", "nic.example.com/pool-1/nic-0",
                                                "gpu.example.com/pool-1/gpu-1"]}]


def test_cli_unprepare_with_a_corrupt_checkpoint_removes_nothing(tmp_path: Path):
    _files(tmp_path)
    (tmp_path / "cdi" / "gpu.example.com-device_uid-claim-a.json").write_text("{}")
    (tmp_path / "state" / "dra_manager_state").write_text('{"Data":"{}","Checksum":1}')
    out = _kubetwin(tmp_path, "dra", "unprepare", "--state-dir", "state", "--cdi-dir", "cdi", "pod.yaml")
    assert out.returncode == 1 and "dra_manager_state" in out.stderr and "corrupted" in out.stderr
    assert [p.name for p in (tmp_path / "cdi").iterdir()] == ["gpu.example.com-device_uid-claim-a.json"]


def test_cli_unprepare_without_a_state_directory_is_exit_1(tmp_path: Path):
    _files(tmp_path)
    out = _kubetwin(tmp_path, "dra", "unprepare", "--state-dir", "missing", "pod.yaml")
    assert out.returncode == 1 and "state directory does not exist" in out.stderr
