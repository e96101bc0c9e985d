"""NRI event spans (``kubetwin runtime --trace``): one span per event relayed to the plugins, with the
pod, the container, the plugins subscribed and each plugin's reply as a span event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubetwin.tracing.file_exporter import read_trace_file
from tests.tracing.test_kubelet import _attrs
from tests.tracing.test_provider import EX, run


@pytest.fixture
def spans(tmp_path: Path, capsys) -> list[dict[str, Any]]:
    out = tmp_path / "trace.json"
    status, _, err = run(capsys, "runtime", "--machine", "2s1n8c2t", "--policy", "topology-aware",
                         str(EX / "runtime/two-pods.yaml"), "--trace", f"file:{out}")
    assert status == 0, err
    return [s for r in read_trace_file(out) for rs in r["resourceSpans"] for ss in rs["scopeSpans"]
            for s in ss["spans"]]


def test_each_lifecycle_event_is_a_span(spans):
    names = [s["name"] for s in spans]
    for event in ("RUN_POD_SANDBOX", "CREATE_CONTAINER", "START_CONTAINER"):
        assert f"NRI {event}" in names


def test_create_container_carries_the_policys_reply(spans):
    create = next(s for s in spans if s["name"] == "NRI CREATE_CONTAINER")
    a = _attrs(create)
    assert a["kubetwin.nri.plugins"] == ["90-resource-manager"]
    assert a["k8s.container.name"]
    reply = json.loads(_attrs(create["events"][0])["kubetwin.nri.reply"])
    assert reply["adjust"]["linux"]["resources"]["cpu"]["cpus"]
