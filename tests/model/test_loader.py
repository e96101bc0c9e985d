"""Reading objects: YAML (1.1, multi-document), JSON, NDJSON, List kinds, stdin; bad input is refused clearly."""

import io
import json
import sys

import pytest

from kubetwin.errors import InputError
from kubetwin.model.loader import load_documents, parse_documents
from kubetwin.model.objects import load_pods

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}}


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_multi_document_yaml_keeps_order(tmp_path):
    p = write(tmp_path, "pods.yaml", "kind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: b}\n---\n")
    assert [d.obj["metadata"]["name"] for d in load_documents(p)] == ["a", "b"]


def test_yaml_is_read_with_yaml_1_1_booleans():
    assert parse_documents("a: yes\nb: on\nc: 'yes'\n")[0] == {"a": True, "b": True, "c": "yes"}


def test_list_objects_are_flattened(tmp_path):
    p = write(tmp_path, "list.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [POD, POD]}))
    assert len(load_documents(p)) == 2


def test_ndjson_reads_one_object_per_line(tmp_path):
    p = write(tmp_path, "pods.ndjson", json.dumps(POD) + "\n" + json.dumps(POD) + "\n")
    assert len(load_documents(p)) == 2


def test_stdin_is_read_for_dash(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(POD).encode())))
    assert load_documents("-")[0].file == "<stdin>"


def test_malformed_yaml_names_file_and_line(tmp_path):
    p = write(tmp_path, "bad.yaml", "kind: Pod\nmetadata: {name: [\n")
    with pytest.raises(InputError) as err:
        load_documents(p)
    assert str(err.value).startswith(str(p)) and "line" in str(err.value)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_documents(tmp_path / "nope.yaml")


def test_alias_bomb_is_refused_without_expanding_it(tmp_path):
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i-1}"] * 10) + "]")
    p = write(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    with pytest.raises(InputError, match="alias"):
        load_documents(p)


def test_small_anchors_are_fine(tmp_path):
    p = write(tmp_path, "anchors.yaml", "base: &b {cpu: '1'}\nuse: *b\n")
    assert load_documents(p)[0].obj["use"] == {"cpu": "1"}


def test_oversized_input_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBETWIN_MAX_INPUT_BYTES", "10")
    p = write(tmp_path, "big.yaml", "kind: Pod\n" * 5)
    with pytest.raises(InputError, match="more than"):
        load_documents(p)


def test_a_scalar_document_is_not_an_object(tmp_path):
    p = write(tmp_path, "s.yaml", "just text\n")
    with pytest.raises(InputError, match="expected a Kubernetes object"):
        load_documents(p)


def test_bad_quantity_error_names_file_document_and_field(tmp_path):
    p = write(tmp_path, "pods.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
              "  - name: a\n  - name: b\n    resources: {limits: {cpu: 2x}}\n")
    with pytest.raises(InputError) as err:
        load_pods(p)
    text = str(err.value)
    assert text.startswith(f"{p}: document 1 (Pod p): spec.containers[1].resources.limits.cpu:")
    assert '"2x"' in text


def test_wrong_kind_is_refused(tmp_path):
    p = write(tmp_path, "n.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n")
    with pytest.raises(InputError, match="expected Pod"):
        load_pods(p)


def test_json_fast_path_gives_the_same_pods_as_the_general_path(tmp_path):
    pods = [dict(POD, metadata={"name": f"p{i}"}) for i in range(3)]
    j = write(tmp_path, "pods.json", json.dumps({"kind": "List", "apiVersion": "v1", "items": pods}))
    y = write(tmp_path, "pods.yaml", "\n---\n".join(json.dumps(p) for p in pods))
    assert load_pods(j) == load_pods(y)


def test_json_errors_still_name_the_field(tmp_path):
    bad = dict(POD, spec={"containers": [{"name": "a", "resources": {"requests": {"memory": "1Q"}}}]})
    p = write(tmp_path, "pods.json", json.dumps(bad))
    with pytest.raises(InputError, match=r"spec.containers\[0\].resources.requests.memory"):
        load_pods(p)


def test_policy_kinds_load_without_importing_their_module_first(tmp_path):
    from kubetwin.model.objects import load_objects
    p = write(tmp_path, "pc.yaml", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
              "metadata: {name: high}\nvalue: 1000\n")
    assert load_objects(p)[0].value == 1000


def test_a_node_needs_a_name(tmp_path):
    from kubetwin.model.objects import load_nodes
    p = write(tmp_path, "n.yaml", "apiVersion: v1\nkind: Node\n")
    with pytest.raises(InputError, match="metadata.name"):
        load_nodes(p)


def test_a_manifest_is_not_a_summary():
    from kubetwin.model.summary import summary_from_dict
    with pytest.raises(InputError, match="not a kubelet Summary API document"):
        summary_from_dict({"apiVersion": "v1", "kind": "Pod"}, file="summary.json")


def test_a_key_given_twice_in_yaml_is_refused_with_its_line(tmp_path):
    from kubetwin.errors import InputError
    from kubetwin.model.loader import load_documents

    f = tmp_path / "pod.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nkind: Pod\n")
    with pytest.raises(InputError, match='duplicate field "kind"') as err:
        load_documents(f)
    assert "line 4" in str(err.value)


def test_a_yaml_merge_key_may_still_be_overridden(tmp_path):
    from kubetwin.model.loader import load_documents

    f = tmp_path / "x.yaml"
    f.write_text("base: &b {a: 1}\nitem:\n  <<: *b\n  a: 2\n")
    assert load_documents(f)[0].obj["item"] == {"a": 2}


def test_a_key_given_twice_in_json_is_refused(tmp_path):
    from kubetwin.errors import InputError
    from kubetwin.model.loader import load_documents

    f = tmp_path / "pod.json"
    f.write_text('{"kind": "Pod", "kind": "Pod"}')
    with pytest.raises(InputError, match='duplicate field "kind"'):
        load_documents(f)


def test_json_with_a_trailing_comma_is_refused(tmp_path):
    from kubetwin.errors import InputError
    from kubetwin.model.loader import load_documents

    f = tmp_path / "pod.json"
    f.write_text('{"apiVersion": "v1", "kind": "Pod",}')
    with pytest.raises(InputError, match="invalid JSON at line 1"):
        load_documents(f)


def test_a_wide_list_of_aliases_is_refused_quickly(tmp_path):
    # 810,000 aliases of one small mapping: each alias is short to write but expands to three nodes
    # the commands would then walk; refused before anything is built.
    import time
    p = write(tmp_path, "wide.yaml", "x: &b {a: 1}\nitems: [" + ", ".join(["*b"] * 810_000) + "]\n")
    began = time.monotonic()
    with pytest.raises(InputError, match="alias"):
        load_documents(p)
    assert time.monotonic() - began < 30  # not a timing target: only "not minutes"


def test_aliases_that_only_share_blocks_are_fine(tmp_path):
    pods = "\n---\n".join(f"kind: Pod\nmetadata: {{name: p{i}}}\nres: &r{i} {{cpu: '1'}}\nlim: *r{i}" for i in range(50))
    p = write(tmp_path, "pods.yaml", pods + "\n")
    assert len(load_documents(p)) == 50


def test_aliases_multiplying_a_small_document_tenfold_past_100000_nodes_are_refused(tmp_path):
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 5):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i-1}"] * 10) + "]")
    p = write(tmp_path, "laughs.yaml", "\n".join(lines) + "\n")
    with pytest.raises(InputError, match="times as many"):
        load_documents(p)


def test_a_document_placed_by_its_where_text_is_not_placed_twice():
    from kubetwin.model.loader import Document

    pod = {"kind": "Pod", "metadata": {"name": "web"}}
    placed = Document(pod, "pods.yaml", 1).where
    assert placed == "pods.yaml: document 2 (Pod web)"
    assert Document(pod, placed, 0).where == placed   # a scenario's origins carried into another reader
