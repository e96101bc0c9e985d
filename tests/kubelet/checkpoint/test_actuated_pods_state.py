"""``actuated_pods_state`` (``pkg/kubelet/allocation/allocation_manager.go`` v1.36):
``SetActuatedResources``, ``isPodResizeInProgress`` (after ``TestIsPodResizeInProgress``: only
running resizable containers, only cpu and memory requests and limits), and the file, which
has the allocated store's format."""

from __future__ import annotations

from kubetwin.kubelet.checkpoint.actuated_pods_state import (
    FILE_NAME,
    is_pod_resize_in_progress,
    read_actuated_pods_state,
    set_actuated_resources,
    write_actuated_pods_state,
)
from kubetwin.kubelet.checkpoint.allocated_pods_state import allocation_from_pod, fields_for
from kubetwin.kubelet.checkpoint.allocation_state import StateCheckpoint
from kubetwin.model.features import gates_for
from kubetwin.model.pod import pod_from_dict

GATES = gates_for("1.36")


def pod(cpu="1", mem="1Gi", storage=None, sidecar_cpu=None):
    r = {"cpu": cpu, "memory": mem}
    if storage:
        r["ephemeral-storage"] = storage
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": r, "limits": dict(r)}}]}
    if sidecar_cpu:
        spec["initContainers"] = [{"name": "s", "image": "x", "restartPolicy": "Always",
                                   "resources": {"requests": {"cpu": sidecar_cpu}}},
                                  {"name": "i", "image": "x", "resources": {"requests": {"cpu": "9"}}}]
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "uid": "p"},
                          "spec": spec})


def actuated(p):
    s = StateCheckpoint()
    set_actuated_resources(s, p, GATES)
    return s


def test_a_pod_actuated_as_allocated_is_not_resizing():
    assert not is_pod_resize_in_progress(pod(), actuated(pod()))


def test_a_cpu_change_not_yet_actuated_is_in_progress():
    assert is_pod_resize_in_progress(pod(cpu="2"), actuated(pod()))


def test_equal_quantities_written_differently_are_the_same():
    assert not is_pod_resize_in_progress(pod(cpu="1000m"), actuated(pod(cpu="1")))


def test_resources_other_than_cpu_and_memory_do_not_count():
    assert not is_pod_resize_in_progress(pod(storage="2Gi"), actuated(pod(storage="1Gi")))


def test_a_container_that_is_not_running_does_not_count():
    assert not is_pod_resize_in_progress(pod(cpu="2"), actuated(pod()), running=lambda name: name != "c")


def test_a_running_container_without_an_entry_is_in_progress():
    assert is_pod_resize_in_progress(pod(), StateCheckpoint())


def test_a_sidecar_counts_and_a_plain_init_container_does_not():
    s = actuated(pod(sidecar_cpu="1"))
    assert is_pod_resize_in_progress(pod(sidecar_cpu="2"), s)
    assert not is_pod_resize_in_progress(pod(sidecar_cpu="1"), s)


def test_setting_one_container_records_its_resources():
    p = pod(cpu="2")
    s = actuated(pod())
    set_actuated_resources(s, p, GATES, p.spec.containers[0])
    assert not is_pod_resize_in_progress(p, s)


def test_the_file_reads_back_what_was_written(tmp_path):
    path = tmp_path / FILE_NAME
    entries = {"p": allocation_from_pod(pod(), GATES)}
    write_actuated_pods_state(path, entries, fields_for("1.36"))
    assert read_actuated_pods_state(path, "1.36") == entries


#: Test_stateCheckpoint_formatUpgraded's checkpoint (state_checkpoint_test.go): the actuated store has
#: the allocated store's format, so the same bytes with the same checksum
UPSTREAM_FILE = (b'{"data":"{\\"entries\\":{\\"pod1\\":{\\"ContainerResources\\":{\\"container1\\":{\\"requests\\":'
                 b'{\\"cpu\\":\\"1Ki\\",\\"memory\\":\\"1Ki\\"}}}}}}","checksum":1178570812}')


def test_an_upstream_checkpoint_is_read_back_and_written_byte_for_byte(tmp_path):
    (tmp_path / FILE_NAME).write_bytes(UPSTREAM_FILE)
    entries = read_actuated_pods_state(tmp_path / FILE_NAME, "1.36")
    write_actuated_pods_state(tmp_path / "again", entries, ("ContainerResources",))
    assert (tmp_path / "again").read_bytes() == UPSTREAM_FILE


def test_the_file_exists_from_v1_33_on():
    from kubetwin.kubelet.checkpoint.actuated_pods_state import kept_by
    from kubetwin.model.features import KNOWN_VERSIONS, VERSIONED_DEFAULTS

    assert VERSIONED_DEFAULTS["actuatedPodsStateFile"] == (("1.22", False), ("1.33", True))
    assert all(kept_by(v) for v in KNOWN_VERSIONS)


def test_a_release_whose_format_is_not_modelled_is_refused_naming_the_actuated_file(tmp_path):
    import pytest

    from kubetwin.errors import InputError

    (tmp_path / FILE_NAME).write_bytes(UPSTREAM_FILE)
    with pytest.raises(InputError, match="actuated_pods_state format of Kubernetes v1.34"):
        read_actuated_pods_state(tmp_path / FILE_NAME, "1.34")
