"""A misspelt field is refused in every input kind kubetwin reads, through that kind's own reader,
naming the file, the field path and the nearest valid name — never silently dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from kubetwin.errors import InputError

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4"}}}


def typo(obj: dict[str, Any], path: str, wrong: str) -> dict[str, Any]:
    """A deep copy of ``obj`` with a field ``wrong`` added under the dotted ``path`` (numbers index
    lists: ``spec.containers.0``)."""
    out = json.loads(json.dumps(obj))
    node: Any = out
    for part in path.split("."):
        node = node[int(part)] if part.isdigit() else node[part]
    node[wrong] = 1
    return out


def write(tmp: Path, name: str, *docs: Any) -> Path:
    p = tmp / name
    p.write_text(yaml.safe_dump_all(list(docs)))
    return p


# --- the readers -----------------------------------------------------------------------------------


def pods(tmp: Path, obj: dict) -> None:
    from kubetwin.model.objects import load_pods

    load_pods(write(tmp, "in.yaml", obj))


def nodes(tmp: Path, obj: dict) -> None:
    from kubetwin.model.objects import load_nodes

    load_nodes(write(tmp, "in.yaml", obj))


def objects(tmp: Path, obj: dict) -> None:
    from kubetwin.model.objects import load_objects

    load_objects(write(tmp, "in.yaml", obj))


def schedulers_objects(tmp: Path, obj: dict) -> None:
    from kubetwin.scheduler.inputs import load_cluster

    load_cluster([write(tmp, "nodes.yaml", NODE)], objects=[write(tmp, "in.yaml", obj)])


def scenario_objects(tmp: Path, obj: dict) -> None:
    from kubetwin.sim import load_scenario

    sim = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "t"},
           "spec": {"nodeGroups": [{"name": "n", "capacity": {"cpu": "4", "memory": "8Gi"}}]}}
    load_scenario(write(tmp, "in.yaml", sim, obj))


def dra_objects(tmp: Path, obj: dict) -> None:
    from kubetwin.dra.objects import collect
    from kubetwin.model.loader import load_documents

    collect(load_documents(write(tmp, "in.yaml", obj)))


def timeline(tmp: Path, obj: dict) -> None:
    from kubetwin.kubelet.eviction.timeline import load_timeline

    load_timeline(write(tmp, "in.yaml", obj))


def summary(tmp: Path, obj: dict) -> None:
    from kubetwin.model.summary import load_summary

    (tmp / "in.json").write_text(json.dumps(obj))
    load_summary(tmp / "in.json")


def inventory(tmp: Path, obj: dict) -> None:
    from kubetwin.kubelet.devices.inventory import load_device_inventory

    load_device_inventory(str(write(tmp, "in.yaml", obj)))


# --- the inputs ------------------------------------------------------------------------------------

DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                       "template": {"metadata": {"labels": {"app": "d"}}, "spec": POD["spec"]}}}
JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": POD["spec"]}}}
CLAIM_SPEC = {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}
SUMMARY = {"node": {"nodeName": "n", "memory": {"availableBytes": 1}}, "pods": []}

CASES: list[tuple[str, Callable[[Path, dict], None], dict, str]] = [
    # (input kind, its reader, an object with a misspelt field, what the error says)
    ("Pod", pods, typo(POD, "spec.containers.0", "resorces"),
     'unknown field "spec.containers[0].resorces" (fix: did you mean "spec.containers[0].resources"?)'),
    ("Node", nodes, typo(NODE, "status", "capacty"), 'did you mean "status.capacity"?'),
    ("PriorityClass", objects, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                "metadata": {"name": "high"}, "value": 10, "globalDefualt": True},
     'unknown field "globalDefualt" (fix: did you mean "globalDefault"?)'),
    ("LimitRange", objects, {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l"},
                             "spec": {"limits": [{"type": "Container", "defualt": {"cpu": "1"}}]}},
     'unknown field "spec.limits[0].defualt" (fix: did you mean "spec.limits[0].default"?)'),
    ("ResourceQuota", objects, {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                                "spec": {"hrad": {"cpu": "1"}}}, 'did you mean "spec.hard"?'),
    ("PodDisruptionBudget", schedulers_objects,
     {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
      "spec": {"minAvailble": 1}}, 'did you mean "spec.minAvailable"?'),
    ("Namespace", schedulers_objects, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "lables": {}}},
     'did you mean "metadata.labels"?'),
    ("Service", schedulers_objects, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                                     "spec": {"selecter": {"app": "a"}}}, 'did you mean "spec.selector"?'),
    ("NodeResourceTopology", schedulers_objects,
     {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology", "metadata": {"name": "n"},
      "zones": [{"name": "node-0", "type": "Node", "resoures": []}]}, 'did you mean "zones[0].resources"?'),
    ("Deployment", scenario_objects, typo(DEPLOYMENT, "spec", "replica"), 'did you mean "spec.replicas"?'),
    ("Deployment pod template", scenario_objects, typo(DEPLOYMENT, "spec.template.spec.containers.0", "resorces"),
     'unknown field "spec.template.spec.containers[0].resorces"'),
    ("ReplicaSet", scenario_objects, {**typo(DEPLOYMENT, "spec", "replica"), "kind": "ReplicaSet"},
     'did you mean "spec.replicas"?'),
    ("Job", scenario_objects, typo(JOB, "spec", "paralelism"), 'did you mean "spec.parallelism"?'),
    ("StatefulSet", scenario_objects, {**typo(DEPLOYMENT, "spec", "serviceNmae"), "kind": "StatefulSet"},
     'did you mean "spec.serviceName"?'),
    ("Pod in a scenario", scenario_objects, typo(POD, "spec", "nodeSelecter"), 'did you mean "spec.nodeSelector"?'),
    ("DeviceClass", dra_objects, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                  "metadata": {"name": "gpu"}, "spec": {"selector": []}},
     'did you mean "spec.selectors"?'),
    ("ResourceSlice", dra_objects, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                    "metadata": {"name": "s"}, "spec": {"driver": "d", "nodeName": "n",
                                                                         "pool": {"name": "p", "generation": 1,
                                                                                  "resourceSliceCount": 1},
                                                                         "devices": [{"name": "d0", "atributes": {}}]}},
     'did you mean "spec.devices[0].attributes"?'),
    ("ResourceClaim", dra_objects, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                    "metadata": {"name": "c"}, "spec": typo(CLAIM_SPEC, "devices.requests.0.exactly",
                                                                              "cont")},
     'unknown field "spec.devices.requests[0].exactly.cont"'),
    ("ResourceClaim v1beta1", dra_objects,
     {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c"},
      "spec": {"devices": {"requests": [{"name": "r", "deviceClassName": "gpu", "alocationMode": "All"}]}}},
     'did you mean "spec.devices.requests[0].allocationMode"?'),
    ("ResourceClaimTemplate", dra_objects, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                            "metadata": {"name": "t"}, "spec": {"spce": CLAIM_SPEC}},
     'did you mean "spec.spec"?'),
    ("eviction timeline step", timeline, {"steps": [{"afer": "1m"}]}, 'unknown field "afer"'),
    ("Pod in an eviction timeline", timeline, {"steps": [{"admit": [typo(POD, "spec", "prority")]}]},
     'unknown field "steps[0].admit[0].spec.prority" (fix: did you mean "steps[0].admit[0].spec.priority"?)'),
    ("Summary API", summary, typo(SUMMARY, "node.memory", "workingSetByte"),
     'unknown field "node.memory.workingSetByte" (fix: did you mean "node.memory.workingSetBytes"?)'),
    ("device inventory", inventory, {"resources": {"example.com/gpu": [{"id": "g0", "helth": "Healthy"}]}},
     'unknown field "helth" (fix: did you mean "health"?)'),
]


@pytest.mark.parametrize("reader,obj,message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_misspelt_field_is_refused_naming_file_and_field(tmp_path, reader, obj, message):
    with pytest.raises(InputError) as err:
        reader(tmp_path, obj)
    text = str(err.value)
    assert message in text
    assert "in.yaml" in text or "in.json" in text


# --- kubetwin's own row and curve formats ------------------------------------------------------------


def test_a_misspelt_pod_table_column_is_refused(tmp_path):
    from kubetwin.sim.traces import read_pod_table

    (tmp_path / "pods.csv").write_text("name,cpu,memroy\na,1,1Gi\n")
    with pytest.raises(InputError, match='pods.csv: line 1: unknown column "memroy" .fix: did you mean "memory"'):
        read_pod_table(tmp_path / "pods.csv")


def test_a_misspelt_ndjson_record_column_is_refused_with_its_line(tmp_path):
    from kubetwin.sim.traces import read_pod_table

    (tmp_path / "pods.ndjson").write_text('{"name": "a", "cpu": "1"}\n{"name": "b", "cpus": "1"}\n')
    with pytest.raises(InputError, match='pods.ndjson: line 2: unknown column "cpus" .fix: did you mean "cpu"'):
        read_pod_table(tmp_path / "pods.ndjson")


def test_a_misspelt_alibaba_trace_column_is_refused(tmp_path):
    from kubetwin.sim.traces import read_alibaba_gpu

    (tmp_path / "openb_node_list_all_node.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,0,\n")
    (tmp_path / "openb_pod_list_default.csv").write_text("name,cpu_mili,memory_mib,num_gpu,gpu_milli\np,1,1,0,0\n")
    with pytest.raises(InputError, match='unknown column "cpu_mili" .fix: did you mean "cpu_milli"'):
        read_alibaba_gpu(tmp_path)


def test_a_misspelt_usage_curve_field_is_refused():
    from kubetwin.sim.usage import parse_usage

    with pytest.raises(InputError, match='unknown field "memroy" .fix: did you mean "memory"'):
        parse_usage('{"memroy": "1Gi"}', "metadata.annotations[kubetwin.io/usage]")


def test_a_key_given_twice_in_an_ndjson_record_is_refused(tmp_path):
    from kubetwin.sim.traces import read_pod_table

    (tmp_path / "pods.ndjson").write_text('{"name": "a", "cpu": "1", "cpu": "2"}\n')
    with pytest.raises(InputError, match='pods.ndjson: line 1: strict decoding error: duplicate field "cpu"'):
        read_pod_table(tmp_path / "pods.ndjson")


def test_a_nested_value_in_a_flat_record_is_refused(tmp_path):
    from kubetwin.sim.traces import read_pod_table

    (tmp_path / "pods.ndjson").write_text('{"name": "a", "cpu": {"requests": 1}}\n')
    with pytest.raises(InputError, match='line 1: cpu: invalid type for column "cpu": expected a string or a number'):
        read_pod_table(tmp_path / "pods.ndjson")


def test_a_usage_annotation_with_a_key_twice_is_refused():
    from kubetwin.sim.usage import parse_usage

    with pytest.raises(InputError, match="duplicate field"):
        parse_usage("{memory: 1Gi, memory: 2Gi}", "usage")


def test_a_device_given_one_and_many_numa_nodes_is_refused(tmp_path):
    with pytest.raises(InputError, match="give numaNode or numaNodes, not both"):
        inventory(tmp_path, {"resources": {"example.com/gpu": [{"id": "g0", "numaNode": 0, "numaNodes": [1]}]}})


def test_a_misspelt_top_level_inventory_field_is_refused(tmp_path):
    with pytest.raises(InputError, match='unknown field "resource" .fix: did you mean "resources"'):
        inventory(tmp_path, {"resource": {}})


def test_a_device_class_selector_that_does_not_compile_is_refused_when_read(tmp_path):
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": "dev.driver == 1"}}]}}
    with pytest.raises(InputError) as err:
        dra_objects(tmp_path, cls)
    assert "in.yaml: document 1 (DeviceClass gpu): spec.selectors[0].cel.expression: Invalid value: " \
           '"dev.driver == 1": compilation failed' in str(err.value) and "undeclared reference to 'dev.driver'" in str(err.value)


def test_a_non_dra_object_among_dra_objects_is_reported_as_ignored(tmp_path):
    from kubetwin.diagnostics import collecting

    with collecting() as warnings:
        dra_objects(tmp_path, POD)
    (warning,) = warnings
    assert warning.endswith("in.yaml: document 1 (Pod p): kind: Pod objects are not read by kubetwin dra; this one is "
                            "ignored")


def test_a_node_given_by_its_metadata_alone_is_decoded_strictly(tmp_path):
    from kubetwin.dra.objects import load_node
    from kubetwin.model.loader import load_one

    with pytest.raises(InputError, match='unknown field "metadata.lables"'):
        load_node(load_one(write(tmp_path, "in.yaml", {"metadata": {"name": "n", "lables": {}}})))


def test_an_unknown_kind_in_an_eviction_timeline_is_refused(tmp_path):
    with pytest.raises(InputError, match='steps\\[0\\].admit\\[0\\].kind: kind "Pdo" is not supported here .fix: did you mean "Pod"'):
        timeline(tmp_path, {"steps": [{"admit": [{**POD, "kind": "Pdo"}]}]})


def test_a_misspelt_field_of_a_pod_row_in_a_pod_table_is_refused_with_its_line(tmp_path):
    from kubetwin.sim.traces import read_pod_table

    (tmp_path / "pods.ndjson").write_text(json.dumps(typo(POD, "spec.containers.0", "resorces")) + "\n")
    with pytest.raises(InputError, match='pods.ndjson: line 1: strict decoding error: unknown field "spec.containers'):
        read_pod_table(tmp_path / "pods.ndjson")


def test_a_misspelt_field_of_a_pod_in_a_manifest_folder_is_refused(tmp_path):
    from kubetwin.sim.traces import read_manifest_folder

    write(tmp_path, "a.yaml", typo(POD, "metadata", "anotations"))
    with pytest.raises(InputError, match='a.yaml: document 1 .Pod p.: strict decoding error: unknown field '
                                         '"metadata.anotations" .fix: did you mean "metadata.annotations"'):
        read_manifest_folder(tmp_path)
