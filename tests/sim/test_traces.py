"""Trace readers: Alibaba GPU v2023, CSV/NDJSON pod tables, manifest folders; malformed rows name the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubetwin.errors import InputError
from kubetwin.sim.traces import read_alibaba_gpu, read_manifest_folder, read_pod_table

TRACE = Path("/work/shared/data/traces/alibaba-gpu-v2023")
NODES = "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,262144,2,T4\nn1,16000,65536,0,\n"
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
        "p0,4000,8192,1,500,T4,LS,Running,0,100,0\np1,1000,1024,0,0,,BE,Running,10,20,10\n")


def alibaba(tmp_path: Path, nodes: str = NODES, pods: str = PODS) -> Path:
    (tmp_path / "openb_node_list_all_node.csv").write_text(nodes)
    (tmp_path / "openb_pod_list_default.csv").write_text(pods)
    return tmp_path


def test_alibaba_nodes_carry_cpu_memory_and_gpus(tmp_path):
    tr = read_alibaba_gpu(alibaba(tmp_path))
    n0 = tr.nodes[0]
    assert n0.gpus == 2 and n0.gpu_model == "T4"
    assert n0.node.status.allocatable["cpu"].milli_value() == 32000


def test_alibaba_gpu_share_pods_become_open_gpu_share_annotations(tmp_path):
    tr = read_alibaba_gpu(alibaba(tmp_path))
    ann = tr.arrivals[0].pod.metadata.annotations
    assert ann == {"alibabacloud.com/gpu-count": "1", "alibabacloud.com/gpu-milli": "500",
                   "alibabacloud.com/gpu-card-model": "T4"}


def test_alibaba_deletions_are_replayed_only_when_asked(tmp_path):
    folder = alibaba(tmp_path)
    assert read_alibaba_gpu(folder).arrivals[1].duration is None
    assert read_alibaba_gpu(folder, deletions=True).arrivals[1].duration == 10.0


def test_alibaba_pods_of_one_shape_keep_their_own_names_uids_and_maps(tmp_path):
    twin = PODS + "p2,4000,8192,1,500,T4,LS,Running,30,40,30\n"
    a, _, b = (x.pod for x in read_alibaba_gpu(alibaba(tmp_path, pods=twin)).arrivals)
    assert (a.metadata.name, a.uid) == ("p0", "default/p0") and (b.metadata.name, b.uid) == ("p2", "default/p2")
    assert a.spec == b.spec and a.metadata.annotations == b.metadata.annotations
    assert a.metadata.labels is not b.metadata.labels and a.metadata.annotations is not b.metadata.annotations


def test_alibaba_malformed_row_names_the_line_and_column(tmp_path):
    bad = PODS.replace("p1,1000,", "p1,lots,")
    with pytest.raises(InputError) as e:
        read_alibaba_gpu(alibaba(tmp_path, pods=bad))
    assert "openb_pod_list_default.csv: line 3: cpu_milli: Invalid value: 'lots'" in str(e.value)


def test_alibaba_row_with_too_many_fields_names_the_line(tmp_path):
    with pytest.raises(InputError) as e:
        read_alibaba_gpu(alibaba(tmp_path, nodes=NODES + "n2,1,2,3,T4,extra\n"))
    assert "openb_node_list_all_node.csv: line 4" in str(e.value)


@pytest.mark.skipif(not TRACE.exists(), reason="shared trace data not present")
def test_the_real_alibaba_trace_has_1523_nodes_and_8152_pods():
    tr = read_alibaba_gpu(TRACE)
    assert len(tr.nodes) == 1523 and len(tr.arrivals) == 8152


def test_csv_pod_table(tmp_path):
    p = tmp_path / "pods.csv"
    p.write_text("name,cpu,memory,arrival,duration\na,500m,1Gi,0,60\nb,1,2Gi,30s,\n")
    a, b = read_pod_table(p)
    assert (a.time, a.duration, b.time, b.duration) == (0.0, 60.0, 30.0, None)
    assert b.pod.spec.containers[0].resources.requests["memory"].value() == 2 << 30


def test_csv_bad_quantity_names_file_line_and_column(tmp_path):
    p = tmp_path / "pods.csv"
    p.write_text("name,cpu,memory\na,1,1Gi\nb,one,1Gi\n")
    with pytest.raises(InputError) as e:
        read_pod_table(p)
    assert str(e.value).startswith(f"{p}: line 3: cpu:")


def test_csv_unknown_column_is_refused(tmp_path):
    p = tmp_path / "pods.csv"
    p.write_text("name,cpus\na,1\n")
    with pytest.raises(InputError, match='line 1: unknown column "cpus" .fix: did you mean "cpu"'):
        read_pod_table(p)


def test_ndjson_records_and_whole_pods(tmp_path):
    p = tmp_path / "pods.ndjson"
    p.write_text('{"name": "a", "cpu": "1", "arrival": 5}\n'
                 '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "annotations": '
                 '{"kubetwin.io/arrival": "1m", "kubetwin.io/duration": "2m"}}, "spec": {"containers": [{"name": "c"}]}}\n')
    a, b = read_pod_table(p)
    assert (a.time, b.time, b.duration) == (5.0, 60.0, 120.0)


def test_ndjson_invalid_json_names_the_line(tmp_path):
    p = tmp_path / "pods.ndjson"
    p.write_text('{"name": "a", "cpu": "1"}\n{"name": \n')
    with pytest.raises(InputError, match=r"pods.ndjson: line 2: invalid JSON"):
        read_pod_table(p)


def test_manifest_folder_orders_pods_by_arrival(tmp_path):
    for name, t in (("late", "2m"), ("early", "1s")):
        (tmp_path / f"{name}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: {{kubetwin.io/arrival: {t}}}}}\n"
            "spec: {containers: [{name: c}]}\n")
    assert [a.pod.name for a in read_manifest_folder(tmp_path)] == ["early", "late"]


def test_manifest_folder_bad_arrival_names_file_and_field(tmp_path):
    (tmp_path / "p.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: "
                                     "{kubetwin.io/arrival: soon}}\nspec: {containers: [{name: c}]}\n")
    with pytest.raises(InputError) as e:
        read_manifest_folder(tmp_path)
    assert "p.yaml" in str(e.value) and "metadata.annotations[kubetwin.io/arrival]" in str(e.value)
