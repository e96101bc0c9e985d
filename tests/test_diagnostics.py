"""Warnings: once each, collected or printed, and errors under --strict."""

from __future__ import annotations

import pytest

from kubetwin.diagnostics import collecting, set_strict, strict_mode, warn
from kubetwin.errors import InputError


def test_a_warning_is_reported_once():
    with collecting() as out:
        warn("field x is not modelled")
        warn("field x is not modelled")
    assert out == ["field x is not modelled"]


def test_strict_mode_turns_a_warning_into_an_error():
    with strict_mode(), pytest.raises(InputError, match="made an error by --strict"):
        warn(InputError("not modelled", path="spec.x", file="pod.yaml"))


def test_the_cli_refuses_a_warning_under_strict(tmp_path):
    from click.testing import CliRunner

    from kubetwin.cli.main import cli

    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: []\n")
    node = tmp_path / "node.yaml"
    node.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '4', memory: 8Gi}, "
                    "capacity: {cpu: '4', memory: 8Gi}}\n")
    lenient = CliRunner().invoke(cli, ["explain", str(pod), "--node", str(node), "-o", "json"])
    try:
        strict = CliRunner().invoke(cli, ["--strict", "explain", str(pod), "--node", str(node), "-o", "json"])
    finally:
        set_strict(False)  # the CLI sets it for the whole process; later tests run lenient
    assert lenient.exit_code == 0
    assert strict.exit_code != 0
