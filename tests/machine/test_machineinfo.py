"""cAdvisor MachineInfo: every conformance machine loads and round-trips; bad input is rejected."""

import json

import pytest

from kubetwin.errors import InputError
from kubetwin.machine import load_machine, machine_from_machineinfo, read_machineinfo, to_machineinfo

from .conftest import MACHINEINFO_FILES, MACHINES


@pytest.mark.parametrize("path", MACHINEINFO_FILES, ids=lambda p: p.stem)
def test_machineinfo_round_trips(path):
    m = load_machine(str(path))
    again = machine_from_machineinfo(json.loads(json.dumps(to_machineinfo(m))))
    assert again == m


@pytest.mark.parametrize("path", MACHINEINFO_FILES, ids=lambda p: p.stem)
def test_machineinfo_keeps_what_the_kubelet_reads(path):
    doc = json.loads(path.read_text())
    out = to_machineinfo(load_machine(str(path)))
    for key in ("num_cores", "num_sockets", "memory_capacity"):
        assert out[key] == doc[key]
    for n_in, n_out in zip(doc["topology"], out["topology"]):
        assert n_out["node_id"] == n_in["node_id"]
        assert [c["thread_ids"] for c in n_out["cores"]] == [c["thread_ids"] for c in n_in["cores"]]
        assert [(c.get("uncore_caches") or []) for c in n_out["cores"] or []] == \
               [(c.get("uncore_caches") or []) for c in n_in["cores"]]
        assert (n_out["distances"] or []) == (n_in.get("distances") or [])


def test_unmodelled_fields_pass_through():
    out = to_machineinfo(load_machine(str(MACHINES / "mem-1numa-16gi-8x1gi-hugepages.json")))
    assert out["cloud_provider"] == "Unknown"
    assert out["instance_id"] == "None"


def test_writer_emits_keys_in_cadvisor_order():
    out = to_machineinfo(load_machine("1s1n1c1t"))
    assert list(out)[:5] == ["timestamp", "vendor_id", "num_cores", "num_physical_cores", "num_sockets"]


def test_malformed_json_names_the_file():
    with pytest.raises(InputError, match=r"^m\.json: invalid JSON"):
        read_machineinfo("{", file="m.json")


def test_missing_topology_names_the_field():
    with pytest.raises(InputError) as e:
        read_machineinfo('{"num_cores": 2}', file="m.json")
    assert str(e.value).startswith("m.json: topology: required field is missing")


def test_bad_thread_id_names_its_path():
    doc = {"num_cores": 1, "topology": [{"node_id": 0, "cores": [{"core_id": 0, "thread_ids": ["x"]}]}]}
    with pytest.raises(InputError, match=r"topology\[0\]\.cores\[0\]\.thread_ids\[0\]"):
        machine_from_machineinfo(doc, file="m.json")


def test_duplicate_thread_ids_are_rejected():
    doc = {"num_cores": 2, "topology": [{"node_id": 0, "cores": [{"core_id": 0, "thread_ids": [1, 1]}]}]}
    with pytest.raises(InputError, match="not unique"):
        machine_from_machineinfo(doc, file="m.json")


def test_duplicate_numa_node_ids_are_rejected():
    doc = {"num_cores": 1, "topology": [{"node_id": 0}, {"node_id": 0}]}
    with pytest.raises(InputError, match="listed twice"):
        machine_from_machineinfo(doc, file="m.json")


def test_negative_memory_is_rejected():
    with pytest.raises(InputError, match=r"topology\[0\]\.memory: must not be negative"):
        machine_from_machineinfo({"num_cores": 1, "topology": [{"node_id": 0, "memory": -1}]}, file="m.json")


# --- strict decoding and documents no cAdvisor writes ---------------------------------------------------
def _doc(**over):
    doc = {"num_cores": 4, "num_sockets": 1, "memory_capacity": 8 << 30,
           "topology": [{"node_id": 0, "memory": 8 << 30,
                         "cores": [{"core_id": 0, "socket_id": 0, "thread_ids": [0, 2]},
                                   {"core_id": 1, "socket_id": 0, "thread_ids": [1, 3]}]}]}
    doc.update(over)
    return doc


def _refusal(doc) -> str:
    with pytest.raises(InputError) as e:
        machine_from_machineinfo(doc, file="m.json")
    return str(e.value)


def test_unknown_field_is_refused_with_the_nearest_name():
    msg = _refusal(_doc(num_core=4))
    assert 'm.json: strict decoding error: unknown field "num_core"' in msg and 'did you mean "num_cores"?' in msg


def test_unknown_field_of_a_core_is_refused_with_its_path():
    doc = _doc()
    doc["topology"][0]["cores"][0]["threads"] = [0, 2]
    assert 'unknown field "topology[0].cores[0].threads"' in _refusal(doc)


def test_fields_of_newer_cadvisors_are_known():
    doc = _doc(num_books=0, num_drawers=0)
    doc["topology"][0]["cores"][0]["book_id"] = ""
    assert machine_from_machineinfo(doc).num_cores == 4


def test_a_cpu_in_two_cores_is_refused():
    doc = _doc()
    doc["topology"][0]["cores"][1]["thread_ids"] = [1, 2]
    msg = _refusal(doc)
    assert "topology[0].cores[1].thread_ids[1]: CPU 2 is listed in two cores (topology[0].cores[0]" in msg


def test_a_cpu_in_two_numa_nodes_and_sockets_is_refused():
    doc = _doc(num_sockets=2)
    doc["topology"].append({"node_id": 1, "cores": [{"core_id": 0, "socket_id": 1, "thread_ids": [3]}]})
    assert "CPU 3 is listed in two cores" in _refusal(doc)


def test_num_cores_other_than_the_cpus_listed_is_refused():
    assert "num_cores: num_cores is 8 but the topology lists 4 CPUs" in _refusal(_doc(num_cores=8))


def test_num_sockets_other_than_the_sockets_listed_is_refused():
    assert "num_sockets: num_sockets is 2 but the topology's cores name 1 sockets" in _refusal(_doc(num_sockets=2))


def test_a_cpu_id_past_the_largest_is_refused():
    doc = _doc()
    doc["topology"][0]["cores"][0]["thread_ids"] = [0, 10**12]
    assert "thread_ids[1]: a CPU id is 1000000000000, more than kubetwin's limit" in _refusal(doc)


def test_a_numa_node_id_past_linuxs_largest_is_refused():
    doc = _doc()
    doc["topology"][0]["node_id"] = 4096
    assert "topology[0].node_id: NUMA node id 4096 is beyond Linux's largest" in _refusal(doc)


def test_a_distance_row_of_the_wrong_length_is_refused():
    doc = _doc()
    doc["topology"][0]["distances"] = [10, 21]
    assert "topology[0].distances: 2 distances for 1 NUMA nodes" in _refusal(doc)


def test_a_value_of_the_wrong_type_is_refused_naming_it():
    assert 'invalid type for field "memory_capacity"' in _refusal(_doc(memory_capacity="8Gi"))
