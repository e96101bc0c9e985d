"""The apps validation of a controller's selector, shared by plan and simulate."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.model.controller_selector import check_controller_selector


def _rs(match: dict[str, str], labels: dict[str, str]) -> dict:
    return {"kind": "ReplicaSet", "spec": {"selector": {"matchLabels": match}, "template": {"metadata": {"labels": labels}}}}


def test_a_selector_matching_the_template_is_accepted() -> None:
    check_controller_selector(_rs({"app": "a"}, {"app": "a", "tier": "x"}), "rs.yaml")


def test_an_invalid_label_key_names_the_file_and_the_selector() -> None:
    with pytest.raises(InputError) as e:
        check_controller_selector(_rs({"bad key": "a"}, {"bad key": "a"}), "rs.yaml")
    assert e.value.file == "rs.yaml" and "spec.selector.matchLabels" in str(e.value)


def test_a_selector_the_template_labels_do_not_match_is_refused() -> None:
    with pytest.raises(InputError, match="does not match template"):
        check_controller_selector(_rs({"app": "a"}, {"app": "b"}), "rs.yaml")
