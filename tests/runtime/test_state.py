"""The runtime state folder is read as strictly as any JSON input: duplicate keys, deep nesting
and unknown fields are refused naming ``node.json``, and a snapshot that is not what the history
replays to is refused instead of being silently ignored (inputs the fuzzer found accepted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubetwin.errors import InputError
from kubetwin.runtime.run import RuntimeInputs, run_runtime
from kubetwin.runtime.state import load_state

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "memory": "1Gi"},
                                                           "limits": {"cpu": "2", "memory": "1Gi"}}}]}}


@pytest.fixture
def state(tmp_path: Path) -> Path:
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump(POD))
    run_runtime(RuntimeInputs(machine="2s1n8c2t", policy="topology-aware", pods=[str(pods)],
                              write_state=str(tmp_path / "st")))
    return tmp_path / "st"


def _again(state: Path) -> dict:
    return run_runtime(RuntimeInputs(machine="2s1n8c2t", policy="topology-aware", state_dir=str(state)))


def test_a_state_folder_written_by_a_call_is_read_back(state):
    assert [c["pod"] for c in _again(state)["containers"]] == ["a"]


def test_a_duplicate_key_in_the_state_file_is_refused_naming_it(state):
    f = state / "node.json"
    f.write_text(f.read_text().replace('"kind": "KubetwinRuntimeNode",', '"kind": "KubetwinRuntimeNode", "kind": "x",'))
    with pytest.raises(InputError, match="duplicate field") as err:
        load_state(state)
    assert err.value.file == str(f)


def test_a_state_file_nested_too_deeply_is_refused_naming_it(state):
    f = state / "node.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError) as err:
        load_state(state)
    assert err.value.file == str(f)


def test_an_unknown_field_of_the_state_file_is_refused(state):
    f = state / "node.json"
    doc = json.loads(f.read_text())
    doc["histroy"] = doc["history"]
    f.write_text(json.dumps(doc))
    with pytest.raises(InputError, match='"histroy"') as err:
        load_state(state)
    assert err.value.path == "histroy"


def test_an_unknown_field_of_a_history_step_is_refused(state):
    f = state / "node.json"
    doc = json.loads(f.read_text())
    doc["history"][0]["deleet"] = []
    f.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        load_state(state)
    assert err.value.path == "history[0].deleet"


def test_a_delete_that_is_not_a_pod_name_is_refused(state):
    f = state / "node.json"
    doc = json.loads(f.read_text())
    doc["history"][0]["delete"] = [7]
    f.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        load_state(state)
    assert err.value.path == "history[0].delete"


def test_an_edited_snapshot_is_refused_as_not_what_the_history_gives(state):
    f = state / "node.json"
    doc = json.loads(f.read_text())
    doc["snapshot"]["containers"][0]["tye"] = doc["snapshot"]["containers"][0].pop("type", "x")
    f.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="not what its history gives") as err:
        _again(state)
    assert err.value.path == "snapshot"
