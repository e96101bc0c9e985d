"""The kubelet Summary API document is checked field by field: negative or too large figures and
unparsable times are refused with their path, and a Summary of 100,000 containers is checked in
seconds (the fuzzer found the check building every field's path text as a hang)."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.model.summary import summary_from_dict

T = "2026-01-02T15:04:05Z"


def _summary(containers: list[dict]) -> dict:
    return {"node": {"nodeName": "n", "memory": {"time": T, "availableBytes": 1}},
            "pods": [{"podRef": {"name": "p", "namespace": "default", "uid": "u"}, "startTime": T,
                      "containers": containers}]}


def test_a_negative_figure_is_refused_with_its_path():
    with pytest.raises(InputError, match="must not be negative") as err:
        summary_from_dict(_summary([{"name": "c", "memory": {"time": T, "workingSetBytes": -1}}]), "s.json")
    assert err.value.path == "pods[0].containers[0].memory.workingSetBytes"
    assert err.value.file == "s.json"


def test_a_figure_past_int64_is_refused_naming_it():
    with pytest.raises(InputError, match=r"pods\[0\]\.containers\[0\]\.memory\.rssBytes.*out of range"):
        summary_from_dict(_summary([{"name": "c", "memory": {"time": T, "rssBytes": 2 ** 64}}]))


def test_an_unparsable_time_is_refused_with_its_path():
    with pytest.raises(InputError, match="invalid time") as err:
        summary_from_dict(_summary([{"name": "c", "memory": {"time": "yesterday"}}]))
    assert err.value.path == "pods[0].containers[0].memory.time"


def test_the_path_starts_from_the_documents_own():
    with pytest.raises(InputError) as err:
        summary_from_dict(_summary([{"name": "c", "memory": {"time": T, "rssBytes": -2}}]), path="summary")
    assert err.value.path == "summary.pods[0].containers[0].memory.rssBytes"


def test_a_summary_of_100000_containers_is_checked():
    containers = [{"name": f"c{i}", "startTime": T, "memory": {"time": T, "workingSetBytes": 1},
                   "rootfs": {"time": T, "usedBytes": 1, "inodesUsed": 1}} for i in range(100_000)]
    s = summary_from_dict(_summary(containers))
    assert len(s.pods[0].containers) == 100_000
