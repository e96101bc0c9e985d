"""Fields Kubernetes acts on that kubetwin does not model are reported, never dropped."""

from __future__ import annotations

import pytest

from kubetwin.diagnostics import collecting, strict_mode
from kubetwin.errors import InputError
from kubetwin.model.unmodelled import KUBELET, SCHEDULER, SIMULATION, not_modelled_object, not_modelled_pod


def pod(**spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "x"}], **spec}}


def pod_warnings(obj, reader=None):
    with collecting() as out:
        not_modelled_pod(obj, "pod.yaml", reader=reader)
    return out


def object_warnings(obj, reader=None):
    with collecting() as out:
        not_modelled_object(obj, "f.yaml", reader=reader)
    return out


def test_a_runtime_class_without_overhead_is_reported_to_every_reader():
    for reader in (KUBELET, SCHEDULER, SIMULATION):
        (w,) = pod_warnings(pod(runtimeClassName="kata"), reader)
        assert w.startswith("pod.yaml: spec.runtimeClassName: field is not modelled by kubetwin: kubetwin reads "
                            "no RuntimeClass")


def test_a_runtime_class_with_its_overhead_given_is_silent():
    assert pod_warnings(pod(runtimeClassName="kata", overhead={"cpu": "250m"})) == []


def test_a_windows_pod_is_reported_to_the_kubelet():
    (w,) = pod_warnings(pod(os={"name": "windows"}), KUBELET)
    assert "spec.os.name: field is not modelled by kubetwin" in w


def test_a_windows_pod_is_silent_to_the_scheduler():
    assert pod_warnings(pod(os={"name": "windows"}), SCHEDULER) == []


def test_a_linux_pod_is_silent():
    assert pod_warnings(pod(os={"name": "linux"})) == []


def test_a_host_network_port_without_host_port_is_reported_to_the_scheduler():
    obj = pod(hostNetwork=True)
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": 8080}]
    (w,) = pod_warnings(obj, SCHEDULER)
    assert "spec.containers[0].ports[0].hostPort: field is not modelled by kubetwin" in w and "give hostPort" in w


def test_a_host_network_port_with_its_host_port_is_silent():
    obj = pod(hostNetwork=True)
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080}]
    assert pod_warnings(obj, SCHEDULER) == []


@pytest.mark.parametrize("field", ["schedulingGroup", "workloadRef"])
def test_gang_scheduling_is_reported_to_the_scheduler(field):
    (w,) = pod_warnings(pod(**{field: {"name": "g"}}), SCHEDULER)
    assert f"spec.{field}: field is not modelled by kubetwin: gang scheduling" in w


def test_resource_claims_are_reported_to_the_kubelet_only():
    obj = pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "c"}])
    (w,) = pod_warnings(obj, KUBELET)
    assert "spec.resourceClaims: field is not modelled by kubetwin: the kubelet's DRA manager" in w
    assert pod_warnings(obj, SCHEDULER) == [] and pod_warnings(obj, SIMULATION) == []


def test_the_simulation_hears_what_matters_to_its_scheduler_and_kubelets():
    assert pod_warnings(pod(os={"name": "windows"}), SIMULATION)
    assert pod_warnings(pod(schedulingGroup={"name": "g"}), SIMULATION)


def test_an_active_deadline_is_reported_to_the_simulation_only():
    assert pod_warnings(pod(activeDeadlineSeconds=60), KUBELET) == []
    (w,) = pod_warnings(pod(activeDeadlineSeconds=60), SIMULATION)
    assert "spec.activeDeadlineSeconds" in w


def test_fields_outside_resource_management_are_silent():
    obj = pod(dnsPolicy="ClusterFirst", hostPID=True, serviceAccountName="sa", securityContext={"runAsUser": 1})
    obj["spec"]["containers"][0].update(env=[{"name": "A", "value": "1"}], livenessProbe={"exec": {"command": ["x"]}})
    assert pod_warnings(obj) == []


def test_a_paused_deployment_is_reported_to_the_simulation():
    (w,) = object_warnings({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"paused": True}}, SIMULATION)
    assert "f.yaml: spec.paused: field is not modelled by kubetwin" in w


def test_a_suspended_job_is_reported():
    (w,) = object_warnings({"apiVersion": "batch/v1", "kind": "Job", "spec": {"suspend": True}}, SIMULATION)
    assert "spec.suspend" in w


@pytest.mark.parametrize("field,value", [("podFailurePolicy", {"rules": []}), ("activeDeadlineSeconds", 60),
                                         ("successPolicy", {"rules": []}), ("managedBy", "x"),
                                         ("backoffLimitPerIndex", 1), ("podReplacementPolicy", "Failed")])
def test_job_controller_fields_that_are_not_modelled_are_reported(field, value):
    (w,) = object_warnings({"apiVersion": "batch/v1", "kind": "Job", "spec": {field: value}}, SIMULATION)
    assert f"spec.{field}: field is not modelled by kubetwin" in w


def test_a_replication_controller_is_reported_as_getting_no_pods_in_the_simulation():
    kind = "ReplicationController"
    (w,) = object_warnings({"apiVersion": "v1", "kind": kind, "spec": {}}, SIMULATION)
    assert f"the simulation creates no pods for a {kind}" in w
    assert object_warnings({"apiVersion": "v1", "kind": kind, "spec": {}}, SCHEDULER) == []


def test_a_statefulset_without_claims_or_an_update_under_way_is_silent():
    assert object_warnings({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {}}, SIMULATION) == []


@pytest.mark.parametrize("field,value", [("volumeClaimTemplates", [{"metadata": {"name": "data"}}]),
                                         ("persistentVolumeClaimRetentionPolicy", {"whenScaled": "Delete"})])
def test_statefulset_claim_fields_are_reported_as_not_modelled(field, value):
    (w,) = object_warnings({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {field: value}}, SIMULATION)
    assert f"spec.{field}: field is not modelled by kubetwin" in w
    assert object_warnings({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {field: value}}, SCHEDULER) == []


def test_a_statefulset_rolling_update_under_way_is_reported_as_not_modelled():
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {},
           "status": {"currentRevision": "db-1", "updateRevision": "db-2"}}
    (w,) = object_warnings(sts, SIMULATION)
    assert "status.updateRevision: field is not modelled by kubetwin" in w and "db-1 to db-2" in w


def test_a_disruption_budget_without_status_is_reported_to_the_scheduler():
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "spec": {"minAvailable": 1}}
    (w,) = object_warnings(pdb, SCHEDULER)
    assert "status.disruptionsAllowed: field is not modelled by kubetwin" in w
    assert object_warnings({**pdb, "status": {"disruptionsAllowed": 1}}, SCHEDULER) == []


def test_strict_makes_a_not_modelled_field_an_error():
    with strict_mode(), pytest.raises(InputError, match="spec.runtimeClassName.*--strict"):
        not_modelled_pod(pod(runtimeClassName="kata"), "pod.yaml")


def test_the_same_field_of_many_replicas_is_reported_once():
    with collecting() as out:
        for _ in range(3):
            not_modelled_pod(pod(runtimeClassName="kata"), "pod.yaml")
    assert len(out) == 1
