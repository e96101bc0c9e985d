"""Small scenario builders for the simulation tests."""

from __future__ import annotations

from pathlib import Path

import yaml

from kubetwin.sim import load_scenario


def scenario(tmp_path: Path, spec: dict, *extra: dict):
    docs = [{"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "t"}, "spec": spec},
            *extra]
    p = tmp_path / "scenario.yaml"
    p.write_text(yaml.safe_dump_all(docs))
    return load_scenario(p)


def group(name="n", count=1, cpu="4", memory="8Gi", pods="110", **kw):
    return {"name": name, "count": count, "capacity": {"cpu": cpu, "memory": memory, "pods": pods}, **kw}


def workload(name="w", count=1, cpu="1", memory="1Gi", limits=False, **kw):
    res = {"requests": {"cpu": cpu, "memory": memory}}
    if limits:
        res["limits"] = dict(res["requests"])
    return {"name": name, "count": count,
            "template": {"spec": {"containers": [{"name": "c", "resources": res}]}}, **kw}


import types

import pytest


@pytest.fixture
def kit():
    """The builders above, as a fixture (tests are imported in importlib mode)."""
    return types.SimpleNamespace(scenario=scenario, group=group, workload=workload)
