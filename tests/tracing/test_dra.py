"""DRA allocation spans (``kubetwin dra allocate --trace``): the node, the claims, the devices
each claim got; for an unsatisfiable claim, the problems and the checks (selectors) devices failed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubetwin.tracing.file_exporter import read_trace_file
from tests.tracing.test_kubelet import _attrs
from tests.tracing.test_provider import EX, run


def _spans(tmp_path: Path, capsys, claims: str) -> list[dict[str, Any]]:
    out = tmp_path / "trace.json"
    status, _, err = run(capsys, "dra", "allocate", "-f", str(EX / "dra/objects.yaml"), "--node",
                         str(EX / "dra/node.yaml"), str(EX / claims), "--trace", f"file:{out}")
    assert status == 0, err
    return [s for r in read_trace_file(out) for rs in r["resourceSpans"] for ss in rs["scopeSpans"]
            for s in ss["spans"]]


def test_an_allocation_names_the_node_and_each_claims_devices(tmp_path, capsys):
    spans = _spans(tmp_path, capsys, "dra/claims.yaml")
    alloc = next(s for s in spans if s["name"] == "DRA allocation")
    a = _attrs(alloc)
    assert a["k8s.node.name"] == "node-1" and a["kubetwin.dra.allocated"] is True
    claims = [_attrs(s) for s in spans if s.get("parentSpanId") == alloc["spanId"]]
    assert claims and all(c["kubetwin.dra.devices"] for c in claims)
    assert all(d.count("/") == 2 for c in claims for d in c["kubetwin.dra.devices"])   # driver/pool/device


def test_an_unsatisfiable_claim_names_the_failed_selector(tmp_path, capsys):
    spans = _spans(tmp_path, capsys, "dra/claims-too-many.yaml")
    failed = [s for s in spans if s["name"] == "DRA allocation" and not _attrs(s)["kubetwin.dra.allocated"]]
    assert failed
    claim = next(_attrs(s) for s in spans if s.get("parentSpanId") == failed[0]["spanId"])
    assert claim["kubetwin.dra.problems"]
    assert any("selector" in c for c in claim["kubetwin.dra.failed_checks"])
