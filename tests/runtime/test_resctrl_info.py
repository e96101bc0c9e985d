"""The machine's resctrl filesystem as goresctrl reads it (``pkg/rdt/info.go``, ``getRdtInfo``)."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.runtime.resctrl import MAX_UINT64, parse_resctrl

from .resctrl_fixtures import FIXTURES, fixture


def test_cache_ids_come_from_the_root_schemata() -> None:
    assert fixture("resctrl.full").cat_level("L3").cache_ids == (0, 1, 2, 3)
    assert fixture("resctrl.full").mb.cache_ids == (0, 1, 2, 3)


def test_code_and_data_resources_mean_cdp() -> None:
    l3 = fixture("resctrl.nomb.cdp").cat_level("L3")
    assert l3.cdp and not l3.unified.supported and l3.cbm_mask() == 0xFFFFF


def test_missing_level_reads_as_a_full_64_bit_mask_with_no_ids() -> None:
    l2 = fixture("resctrl.full").cat_level("L2")
    assert not l2.supported and l2.cbm_mask() == MAX_UINT64 and l2.cache_ids == ()


def test_mba_mbps_mode_comes_from_the_mount_options() -> None:
    assert fixture("resctrl.nol3.mbps").mb.mbps_enabled
    assert not fixture("resctrl.nol3").mb.mbps_enabled


def test_min_cbm_bits_of_the_level() -> None:
    assert fixture("resctrl.nomb").cat_level("L3").min_cbm_bits() == 2


def test_a_level_missing_from_the_root_schemata_is_refused() -> None:
    with pytest.raises(InputError, match="no L3 resources in root schemata"):
        parse_resctrl({"info": FIXTURES["resctrl.full"]["info"], "schemata": "MB:0=100"}, file="m.json")


def test_a_missing_info_file_is_refused_with_its_path() -> None:
    doc = {"info": {"L3": {"cbm_mask": "ff", "min_cbm_bits": 1, "num_closids": 4}}, "schemata": "L3:0=ff"}
    with pytest.raises(InputError) as err:
        parse_resctrl(doc, file="m.json")
    assert err.value.path == "resctrl.info.L3.shareable_bits" and err.value.file == "m.json"


def test_a_bad_mask_is_refused() -> None:
    doc = {"info": {"L3": {"cbm_mask": "xyz", "min_cbm_bits": 1, "num_closids": 4, "shareable_bits": "0"}},
           "schemata": "L3:0=ff"}
    with pytest.raises(InputError, match="invalid hex number"):
        parse_resctrl(doc)


def test_an_unknown_info_directory_is_refused() -> None:
    with pytest.raises(InputError, match='unknown field "resctrl.info.L4"'):
        parse_resctrl({"info": {"L4": {}}})


def test_summary_names_what_can_be_allocated() -> None:
    assert fixture("resctrl.full").summary == ("L3 CAT: 20 ways on caches 0,1,2,3; MBA in percent on domains 0,1,2,3; "
                                               "8 classes of service")


L2L3MB = {"info": {"L2": {"cbm_mask": "ffff", "min_cbm_bits": 1, "num_closids": 8, "shareable_bits": "0"},
                   "L3": {"cbm_mask": "fffff", "min_cbm_bits": 1, "num_closids": 15, "shareable_bits": "c0001"},
                   "MB": {"bandwidth_gran": 10, "delay_linear": 1, "min_bandwidth": 10, "num_closids": 15}},
          "schemata": "MB:0=  100;1=  100\nL2:" + ";".join(f"{i}=0ffff" for i in range(40)) + "\nL3:0=fffff;1=fffff"}


def test_info_of_a_machine_with_l2_l3_and_mba() -> None:
    # goresctrl v0.12.0 pkg/rdt/rdt_test.go TestInfo "resctrl.l2l3mb"
    info = parse_resctrl(L2L3MB)
    assert info.cat_level("L2").cache_ids == tuple(range(40)) and info.cat_level("L3").cache_ids == (0, 1)
    assert info.cat_level("L3").unified.shareable_bits == 0xC0001 and info.cat_level("L3").unified.num_closids == 15
    assert info.mb.cache_ids == (0, 1) and info.mb.num_closids == 15


@pytest.mark.parametrize("doc,closids", [(L2L3MB, 8), (FIXTURES["resctrl.full"], 8), (FIXTURES["resctrl.nol3"], 8)])
def test_number_of_classes_is_the_smallest_of_the_resources(doc: dict, closids: int) -> None:
    # goresctrl v0.12.0 TestInfo: numClosids is the minimum across cache levels and MBA
    assert parse_resctrl(doc).num_closids == closids
