"""Strict decoding: the walker over specs, suggestions, and the API-server wording."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.model.strict import (
    ANY,
    INTEGER,
    STRING,
    STRING_OR_NUMBER,
    check,
    find_problems,
    list_of,
    map_of,
    obj,
    suggest,
    unknown_key_error,
)

SPEC = obj(
    name=STRING,
    replicas=INTEGER,
    containers=list_of(obj(name=STRING, resources=obj(requests=map_of(STRING_OR_NUMBER)))),
    labels=map_of(STRING),
    raw=ANY,
)


def test_a_valid_object_has_no_problems():
    assert find_problems({"name": "a", "replicas": 2, "containers": [{"name": "c", "resources": {"requests": {"cpu": 1}}}],
                          "labels": {"x": "y"}, "raw": {"anything": [1, {"goes": True}]}}, SPEC) == []


def test_null_is_accepted_for_every_field():
    assert find_problems({"name": None, "containers": [{"resources": None}]}, SPEC) == []


def test_an_unknown_field_is_named_with_its_full_path():
    with pytest.raises(InputError) as err:
        check({"containers": [{"name": "c", "resorces": {}}]}, SPEC, file="pod.yaml")
    assert 'strict decoding error: unknown field "containers[0].resorces"' in str(err.value)
    assert str(err.value).startswith("pod.yaml: ")


def test_a_misspelt_field_gets_the_nearest_valid_name():
    with pytest.raises(InputError) as err:
        check({"containers": [{"resorces": {}}]}, SPEC)
    assert err.value.fix == 'did you mean "containers[0].resources"?'


def test_every_unknown_field_is_listed():
    problems = find_problems({"nmae": "a", "replicaz": 1}, SPEC)
    assert [p.path for p in problems] == ["nmae", "replicaz"]


def test_a_mistyped_value_is_refused():
    with pytest.raises(InputError) as err:
        check({"replicas": "two"}, SPEC)
    assert 'invalid type for field "replicas": expected an integer, got string' in str(err.value)


def test_map_values_are_checked_but_keys_are_free():
    assert find_problems({"labels": {"any-key": "v"}}, SPEC) == []
    assert find_problems({"labels": {"k": 1}}, SPEC)[0].path == "labels.k"


def test_a_prefix_is_prepended_to_paths():
    with pytest.raises(InputError) as err:
        check({"nmae": 1}, SPEC, prefix="spec.template")
    assert '"spec.template.nmae"' in str(err.value)


def test_suggest_finds_wrong_case_and_typos():
    assert suggest("CPUManagerPolicy", ["cpuManagerPolicy", "memoryManagerPolicy"]) == "cpuManagerPolicy"
    assert suggest("cpuManagerPolcy", ["cpuManagerPolicy", "memoryManagerPolicy"]) == "cpuManagerPolicy"
    assert suggest("zzz", ["cpuManagerPolicy"]) is None


def test_unknown_key_error_offers_the_nearest_name():
    err = unknown_key_error("topologyManagerPolcy", ["topologyManagerPolicy", "cpuManagerPolicy"],
                            path="--variant", what="kubelet setting")
    assert str(err) == ('--variant: unknown kubelet setting "topologyManagerPolcy" '
                        '(fix: did you mean "topologyManagerPolicy"?)')


def test_a_huge_number_of_problems_is_cut_short():
    problems = find_problems({f"f{i}": 1 for i in range(1000)}, SPEC)
    assert len(problems) == 11


def test_a_mistyped_field_says_what_to_write_instead():
    with pytest.raises(InputError) as info:
        check({"replicas": "three", "name": 7}, obj(replicas=INTEGER, name=STRING), file="f.yaml")
    assert info.value.fix == 'write "replicas" as an integer; write "name" as a string (quote it)'
