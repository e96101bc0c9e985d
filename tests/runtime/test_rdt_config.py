"""goresctrl's RDT configurations on goresctrl's mock machines: the schemata of every class, or the refusal.

Cases: ``data/goresctrl_rdt_config.yaml``, translated from ``TestConfig`` in intel/goresctrl
v0.12.0 ``pkg/rdt/rdt_test.go`` (46 cases; unchanged since v0.9.0). Each configuration is parsed
as goresctrl parses it, resolved on the case's resctrl filesystem, and every class's schemata compared line for line;
refused configurations must fail with goresctrl's message (a regex of the upstream test).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from kubetwin.errors import InputError
from kubetwin.runtime.rdt import ROOT_CLASS_NAME, parse_rdt_config

from .resctrl_fixtures import fixture

CASES = yaml.safe_load((Path(__file__).parent / "data" / "goresctrl_rdt_config.yaml").read_text())["cases"]


def _configure(case: dict) -> dict[str, dict[str, str]]:
    """Parse, resolve, and read back every class (root included) as goresctrl's test does."""
    info = fixture(case["fs"])
    config = parse_rdt_config(yaml.safe_load(case["config"]) or {}, "rdt.yaml")
    config.resolve(info)
    return {name: config.schemata(name, info) for name in config.class_names()}


@pytest.mark.parametrize("case", [c for c in CASES if "schemata" in c], ids=lambda c: c["name"])
def test_goresctrl_config_gives_each_class_its_schemata(case: dict) -> None:
    assert _configure(case) == case["schemata"]


@pytest.mark.parametrize("case", [c for c in CASES if "error" in c], ids=lambda c: c["name"])
def test_goresctrl_refuses_the_configuration(case: dict) -> None:
    with pytest.raises(InputError) as err:
        _configure(case)
    assert re.search(case["error"], str(err.value)), str(err.value)


def test_every_case_of_the_upstream_table_is_translated() -> None:
    assert len(CASES) == 46


def test_refusal_names_the_file_and_the_field() -> None:
    text = "partitions:\n  part-1:\n    l3Allocation:\n      a: 100%\n"
    with pytest.raises(InputError) as err:
        parse_rdt_config(yaml.safe_load(text), "rdt.yaml")
    assert err.value.file == "rdt.yaml"
    assert err.value.path == "partitions.part-1.l3Allocation.a"


def test_unknown_field_suggests_the_real_name() -> None:
    with pytest.raises(InputError) as err:
        parse_rdt_config({"partitions": {"p": {"l3Alocation": "50%"}}}, "rdt.yaml")
    assert 'did you mean "partitions.p.l3Allocation"' in str(err.value)


def test_field_names_match_case_insensitively_as_encoding_json_does() -> None:
    config = parse_rdt_config({"Partitions": {"p": {"L3Allocation": "100%",
                                                    "Classes": {"c": {"l3allocation": "50%"}}}}})
    assert config.schemata("c", fixture("resctrl.nomb")) == {"L3": "0=3ff;1=3ff;2=3ff;3=3ff"}


def test_yaml_numbers_in_string_fields_become_strings_as_in_go() -> None:
    # [50, "1GBps", "500MBps"]: 50 becomes "50", an unrecognised unit goresctrl skips
    config = parse_rdt_config(yaml.safe_load("partitions:\n  p:\n    mbAllocation: [50, '500MBps']\n"
                                             "    classes:\n      c:\n"))
    assert config.schemata("c", fixture("resctrl.nol3.mbps")) == {"MB": "0=500;1=500;2=500;3=500"}


def test_unconfigured_root_class_keeps_the_machines_root_schemata() -> None:
    config = parse_rdt_config({})
    assert config.class_names() == [ROOT_CLASS_NAME]
    assert config.schemata("", fixture("resctrl.nomb.cdp")) == {"L3DATA": "0=001ff;1=001ff;2=001ff;3=001ff",
                                                                 "L3CODE": "0=001ff;1=001ff;2=001ff;3=001ff"}


def test_resolved_text_is_the_schemata_file() -> None:
    config = parse_rdt_config(yaml.safe_load("partitions:\n  p:\n    l3Allocation: 100%\n    mbAllocation: [100%]\n"
                                             "    classes:\n      gold:\n        mbAllocation: [50%]\n"))
    assert config.resolve(fixture("resctrl.full")).text("gold") == ("L3:0=fffff;1=fffff;2=fffff;3=fffff\n"
                                                                     "MB:0=50;1=50;2=50;3=50\n")
