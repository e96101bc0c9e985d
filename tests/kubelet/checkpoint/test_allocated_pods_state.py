"""``allocated_pods_state``: the allocation manager's checkpoint, as v1.36's kubelet writes and reads it.

Cases follow upstream's ``pkg/kubelet/allocation/state/state_checkpoint_test.go``
(``Test_stateCheckpoint_storeState``, ``Test_stateCheckpoint_formatUpgraded``) and
``allocation_manager.go``'s ``allocationFromPod`` / ``UpdatePodFromAllocation``.
"""

from __future__ import annotations

import json

import pytest

from kubetwin.errors import InputError
from kubetwin.kubelet.checkpoint.allocated_pods_state import (
    PodResourceInfo,
    allocation_from_pod,
    checkpoint_bytes,
    decode_checkpoint,
    fields_for,
    read_allocated_pods_state,
    update_pod_from_allocation,
    write_allocated_pods_state,
)
from kubetwin.model.features import gates_for
from kubetwin.model.pod import ResourceRequirements, pod_from_dict
from kubetwin.model.quantity import parse_quantity

V136 = fields_for("1.36")
#: Test_stateCheckpoint_formatUpgraded's checkpoint, written by an older kubelet (no PodLevelResources)
UPSTREAM_FILE = (b'{"data":"{\\"entries\\":{\\"pod1\\":{\\"ContainerResources\\":{\\"container1\\":{\\"requests\\":'
                 b'{\\"cpu\\":\\"1Ki\\",\\"memory\\":\\"1Ki\\"}}}}}}","checksum":1178570812}')


def _req(**requests: str) -> ResourceRequirements:
    return ResourceRequirements(requests={k: parse_quantity(v) for k, v in requests.items()})


def test_state_checkpoint_format_upgraded_file_is_read_with_its_checksum():
    entries = decode_checkpoint(UPSTREAM_FILE, "allocated_pods_state", "1.36")
    assert entries == {"pod1": PodResourceInfo({"container1": _req(cpu="1Ki", memory="1Ki")}, None)}


def test_the_checksum_is_checksum_new_of_the_data_string_as_upstream_computes_it():
    entries = {"pod1": PodResourceInfo({"container1": _req(cpu="1Ki", memory="1Ki")})}
    assert checkpoint_bytes(entries, ("ContainerResources",)) == UPSTREAM_FILE


def test_v136_writes_pod_level_resources_as_null_when_unset():
    data = json.loads(json.loads(checkpoint_bytes({"p": PodResourceInfo({"c": _req(cpu="1")})}, V136))["data"])
    assert data == {"entries": {"p": {"ContainerResources": {"c": {"requests": {"cpu": "1"}}},
                                      "PodLevelResources": None}}}


@pytest.mark.parametrize("quantity", ["1Ki", "0.1", "0.03", "512Mi", "1000m", "1024", "700k", "10000n", "1.5Gi"])
def test_state_checkpoint_store_state_restores_what_was_stored(tmp_path, quantity):
    entries = {"pod1": PodResourceInfo({"container1": _req(cpu=quantity, memory=quantity)},
                                       _req(cpu=quantity, memory=quantity))}
    write_allocated_pods_state(tmp_path / "allocated_pods_state", entries, V136)
    assert read_allocated_pods_state(tmp_path / "allocated_pods_state", "1.36") == entries


def test_quantities_are_written_in_canonical_form():
    data = json.loads(checkpoint_bytes({"p": PodResourceInfo({"c": _req(cpu="1000m", memory="1024Ki")})}, V136))
    assert '"cpu\\":\\"1\\"' in json.dumps(data["data"]) and "1Mi" in data["data"]


def test_a_checksum_mismatch_stops_the_kubelet_naming_the_file():
    bad = UPSTREAM_FILE.replace(b"1178570812", b"1178570813")
    with pytest.raises(InputError) as e:
        decode_checkpoint(bad, "/var/lib/kubelet/allocated_pods_state", "1.36")
    assert e.value.message == ("could not restore state from checkpoint: checkpoint is corrupted, please drain this "
                               'node and delete pod resource information checkpoint file '
                               '"/var/lib/kubelet/allocated_pods_state" before restarting Kubelet')
    assert e.value.file == "/var/lib/kubelet/allocated_pods_state"


def test_a_file_without_checksum_is_corrupt():
    with pytest.raises(InputError, match="checkpoint is corrupted"):
        decode_checkpoint(b'{"data":"{}"}', "f", "1.36")


def test_a_file_that_is_not_json_stops_the_kubelet(tmp_path):
    p = tmp_path / "allocated_pods_state"
    p.write_bytes(b'{"data": ')
    with pytest.raises(InputError, match="could not restore state from checkpoint: .*please drain this node"):
        read_allocated_pods_state(p, "1.36")


def test_an_unknown_field_is_refused_with_the_nearest_name():
    data = '{"entries":{"p":{"ContainerResource":{}}}}'
    from kubetwin.kubelet.checkpoint.gohash import string_checksum

    blob = json.dumps({"data": data, "checksum": string_checksum(data)}).encode()
    with pytest.raises(InputError, match='ContainerResources'):
        decode_checkpoint(blob, "f", "1.36")


def test_a_bad_quantity_in_a_valid_file_stops_the_kubelet():
    data = '{"entries":{"p":{"ContainerResources":{"c":{"requests":{"cpu":"lots"}}}}}}'
    from kubetwin.kubelet.checkpoint.gohash import string_checksum

    blob = json.dumps({"data": data, "checksum": string_checksum(data)}).encode()
    with pytest.raises(InputError, match="failed to get pod resource information"):
        decode_checkpoint(blob, "f", "1.36")


def test_releases_before_v135_are_not_modelled():
    with pytest.raises(InputError, match="not modelled"):
        decode_checkpoint(UPSTREAM_FILE, "f", "1.34")


POD = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u1"}, "spec": {
    "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "1"}}},
                       {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "200m"}}}],
    "containers": [{"name": "app", "resources": {"requests": {"cpu": "500m"}}}]}})


def test_allocation_from_pod_holds_app_containers_and_sidecars_only():
    info = allocation_from_pod(POD, gates_for("1.36"))
    assert sorted(info.container_resources) == ["app", "side"]
    assert info.pod_level_resources is None


def test_update_pod_from_allocation_overlays_the_allocated_resources():
    info = PodResourceInfo({"app": _req(cpu="250m"), "side": POD.spec.init_containers[1].resources})
    allocated, updated = update_pod_from_allocation(POD, info, gates_for("1.36"))
    assert updated
    assert allocated.spec.containers[0].resources.requests["cpu"] == parse_quantity("250m")
    assert allocated.spec.init_containers[0].resources == POD.spec.init_containers[0].resources


def test_update_pod_from_allocation_without_a_difference_is_no_pending_resize():
    allocated, updated = update_pod_from_allocation(POD, allocation_from_pod(POD, gates_for("1.36")),
                                                    gates_for("1.36"))
    assert (allocated, updated) == (POD, False)


def test_a_pod_without_an_entry_is_admitted_as_its_spec():
    assert update_pod_from_allocation(POD, None, gates_for("1.36")) == (POD, False)


def test_a_value_of_the_wrong_type_stops_the_kubelet_as_json_unmarshal_fails():
    data = '{"entries":{"p":{"ContainerResources":{"c":{"requests":[1]}}}}}'
    from kubetwin.kubelet.checkpoint.gohash import string_checksum

    blob = json.dumps({"data": data, "checksum": string_checksum(data)}).encode()
    with pytest.raises(InputError, match="failed to get pod resource information: json: cannot unmarshal "
                                         "data.entries.p.ContainerResources.c.requests"):
        decode_checkpoint(blob, "f", "1.36")


def test_a_checksum_that_is_not_a_number_stops_the_kubelet():
    with pytest.raises(InputError, match="could not restore state from checkpoint: json: cannot unmarshal checksum"):
        decode_checkpoint(b'{"data":"{}","checksum":"1"}', "f", "1.36")
