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
