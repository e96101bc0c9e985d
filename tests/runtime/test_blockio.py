"""goresctrl's Block I/O classes, their OCI form, and the ``io.*`` lines runc writes on cgroup v2.

Facts from intel/goresctrl v0.12.0 (as containerd v2.3 vendors it) ``pkg/blockio/blockio_test.go`` (``TestSetConfig``,
``TestClassNames``, ``TestConfigurableBlockDevices``, ``TestDevicesParametersToCgBlockIO``),
``pkg/blockio/oci_test.go`` (``TestOciLinuxBlockIO``), opencontainers/cgroups ``fs2/io.go`` and
``utils_test.go`` (``TestConvertBlkIOToIOWeightValue``), containerd v2.3
``internal/cri/server/blockio_linux.go``.
"""

from __future__ import annotations

import pytest
import yaml

from kubetwin.diagnostics import collecting
from kubetwin.errors import InputError
from kubetwin.runtime.blockio import (
    BLOCKIO_POD_ANNOTATION,
    BLOCKIO_POD_ANNOTATION_CONTAINER_PREFIX,
    BlockDevice,
    BlockIOClassError,
    block_devices,
    blockio_class_from_annotations,
    container_blockio_class,
    convert_blkio_to_io_weight,
    glob_regex,
    io_files,
    load_blockio_config,
    match_devices,
    parse_blockio_config,
)

# goresctrl's mock platform: /dev/sda 11:12, /dev/sdb 21:22, /dev/sdc 31:32
MOCK = (BlockDevice("sda", 11, 12, "bfq"), BlockDevice("sdb", 21, 22, "bfq"), BlockDevice("sdc", 31, 32, "cfq"))


def config(classes: dict) -> object:
    return parse_blockio_config({"Classes": classes}, "blockio.yaml")


def test_all_oci_fields() -> None:
    c = config({"c": [{"Weight": "144"}, {"Devices": ["/dev/sda"], "ThrottleReadBps": "1G", "ThrottleWriteBps": "2M",
                                          "ThrottleReadIOPS": "3k", "ThrottleWriteIOPS": "4", "Weight": "50"}]})
    assert c.oci("c", MOCK) == {
        "weight": 144, "weightDevice": [{"major": 11, "minor": 12, "weight": 50}],
        "throttleReadBpsDevice": [{"major": 11, "minor": 12, "rate": 1000000000}],
        "throttleWriteBpsDevice": [{"major": 11, "minor": 12, "rate": 2000000}],
        "throttleReadIOPSDevice": [{"major": 11, "minor": 12, "rate": 3000}],
        "throttleWriteIOPSDevice": [{"major": 11, "minor": 12, "rate": 4}]}


def test_later_match_overrides_value() -> None:
    c = config({"c": [{"Devices": ["/dev/sda", "/dev/sdb", "/dev/sdc"], "ThrottleReadBps": "100", "Weight": "110"},
                      {"Devices": ["/dev/sdb", "/dev/sdc"], "ThrottleReadBps": "300", "Weight": "330"},
                      {"Devices": ["/dev/sdb"], "ThrottleReadBps": "200", "Weight": "220"}]})
    params = c.parameters("c", MOCK)
    assert params.weight == -1
    assert params.weight_device == ((11, 12, 110), (21, 22, 220), (31, 32, 330))
    assert params.throttle_read_bps_device == ((11, 12, 100), (21, 22, 200), (31, 32, 300))


def test_invalid_weights_are_all_reported() -> None:
    with pytest.raises(InputError) as err:
        config({"c": [{"Weight": "99999"}, {"Devices": ["/dev/sda"], "Weight": "1"},
                      {"Devices": ["/dev/sdb"], "Weight": "-2"}]})
    text = str(err.value)
    for part in ("(99999) bigger than maximum", "(1) smaller than minimum", "(-2) smaller than minimum"):
        assert part in text


def test_throttling_without_devices_is_refused() -> None:
    with pytest.raises(InputError) as err:
        config({"c": [{"ThrottleReadBps": "100M", "ThrottleWriteIOPS": "20k"}]})
    assert "Devices not listed" in str(err.value) and '"100M"' in str(err.value) and '"20k"' in str(err.value)
    assert err.value.path == "Classes.c[0]"


def test_syntax_error_in_a_quantity_is_refused_with_its_path() -> None:
    with pytest.raises(InputError) as err:
        config({"c": [{"Weight": "lots"}]})
    assert err.value.path == "Classes.c[0].Weight" and 'syntax error in "Weight"' in err.value.message


def test_bad_config_text_is_refused(tmp_path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("bad config contents.\n")
    with pytest.raises(InputError):
        load_blockio_config(p)


@pytest.mark.parametrize("text", ["", "Classes:\n"])
def test_empty_configuration_has_no_classes(tmp_path, text: str) -> None:
    p = tmp_path / "empty.yaml"
    p.write_text(text)
    assert load_blockio_config(p).class_names() == []


def test_class_without_parameters_is_a_class() -> None:
    c = parse_blockio_config(yaml.safe_load("Classes:\n  goodclass:\n"))
    assert c.class_names() == ["goodclass"] and c.oci("goodclass", MOCK) == {}


def test_class_names_are_sorted() -> None:
    assert config({k: [] for k in "azbxcd"}).class_names() == ["a", "b", "c", "d", "x", "z"]


def test_unknown_field_is_refused() -> None:
    with pytest.raises(InputError, match='unknown field "Classes.c\\[0\\].Wieght"'):
        config({"c": [{"Wieght": "10"}]})


def test_field_names_match_case_insensitively_and_numbers_become_strings() -> None:
    c = parse_blockio_config(yaml.safe_load("classes:\n  c:\n  - weight: 80\n"))
    assert c.oci("c", MOCK) == {"weight": 80}


def test_bad_wildcard_is_refused() -> None:
    with pytest.raises(InputError, match="syntax error in pattern"):
        config({"c": [{"Devices": ["/dev/[-verybadwildcard]"], "Weight": "10"}]})


def test_wildcard_matching_no_device_is_ignored_with_a_warning() -> None:
    with collecting() as warnings:
        assert match_devices(["/dev/path that should not exist/*", "/dev/nvme*"], MOCK) == []
    assert any("does not match any device nodes" in w for w in warnings)


def test_glob_follows_go_filepath_match() -> None:
    assert glob_regex("sd[a-z]").fullmatch("sdb") and not glob_regex("sd[a-z]").fullmatch("sdb1")
    assert glob_regex("sd[^a]").fullmatch("sdb") and not glob_regex("sd[^a]").fullmatch("sda")
    assert glob_regex("nvme*n?").fullmatch("nvme0n1")


def test_links_that_the_machine_cannot_tell_are_reported() -> None:
    with collecting() as warnings:
        assert match_devices(["/dev/disk/by-id/*SSD*"], MOCK) == []
    assert any("cannot be resolved" in w for w in warnings)


def test_links_the_machine_lists_are_matched() -> None:
    ssd = BlockDevice("sdd", 8, 48, "none", links=("/dev/disk/by-id/ata-VendorX_SSD_1",))
    assert match_devices(["/dev/disk/by-id/*SSD*"], (*MOCK, ssd)) == [ssd]


def test_oci_of_an_unknown_class_is_refused() -> None:
    with pytest.raises(BlockIOClassError, match='no OCI BlockIO parameters for class "foobar"'):
        config({}).oci("foobar", MOCK)


@pytest.mark.parametrize("weight,io_weight", [(0, 0), (10, 1), (1000, 10000), (80, 708)])
def test_blkio_weight_converts_to_io_weight(weight: int, io_weight: int) -> None:
    assert convert_blkio_to_io_weight(weight) == io_weight


def test_with_bfq_weights_go_to_io_bfq_weight() -> None:
    files = io_files({"weight": 80, "weightDevice": [{"major": 8, "minor": 0, "weight": 50}]}, bfq=True)
    assert files.files == {"io.bfq.weight": "default 80\n8:0 50"} and files.notes == ()


def test_without_bfq_the_weight_is_converted_and_device_weights_dropped() -> None:
    files = io_files({"weight": 80, "weightDevice": [{"major": 8, "minor": 0, "weight": 50}]}, bfq=False)
    assert files.files == {"io.weight": "default 708"}
    assert files.notes and "not applied" in files.notes[0]


def test_throttling_is_one_io_max_line_per_device() -> None:
    files = io_files({"throttleReadBpsDevice": [{"major": 8, "minor": 0, "rate": 50000000}],
                      "throttleWriteIOPSDevice": [{"major": 8, "minor": 0, "rate": 5000},
                                                  {"major": 8, "minor": 16, "rate": 100}]}, bfq=False)
    assert files.files == {"io.max": "8:0 rbps=50000000 wbps=max riops=max wiops=5000\n"
                                     "8:16 rbps=max wbps=max riops=max wiops=100"}


def test_cgroup_v2_lines_of_a_class_on_a_machine() -> None:
    c = config({"slow": [{"Weight": "80"}, {"Devices": ["/dev/sd[a-z]"], "ThrottleReadBps": "50M"}]})
    assert c.cgroup_v2("slow", MOCK) == {"io.bfq.weight": "default 80",
                                         "io.max": "11:12 rbps=50000000 wbps=max riops=max wiops=max\n"
                                                   "21:22 rbps=50000000 wbps=max riops=max wiops=max\n"
                                                   "31:32 rbps=50000000 wbps=max riops=max wiops=max"}


def test_block_devices_come_from_machineinfo_disk_map() -> None:
    class M:
        extra = {"disk_map": {"8:0": {"name": "sda", "major": 8, "minor": 0, "size": 1000, "scheduler": "bfq"}}}
    assert block_devices(M()) == (BlockDevice("sda", 8, 0, "bfq", 1000),)


def test_class_from_annotations_per_container_first() -> None:
    ann = {BLOCKIO_POD_ANNOTATION: "slow", BLOCKIO_POD_ANNOTATION_CONTAINER_PREFIX + "db": "fast"}
    assert blockio_class_from_annotations(ann, "db") == "fast"
    assert blockio_class_from_annotations(ann, "web") == "slow"


def test_unknown_class_fails_the_container() -> None:
    with pytest.raises(BlockIOClassError) as err:
        container_blockio_class(config({"slow": []}), "c", {BLOCKIO_POD_ANNOTATION: "fast"})
    assert err.value.path == f'metadata.annotations["{BLOCKIO_POD_ANNOTATION}"]'


def test_class_while_blockio_is_not_enabled_fails_the_container() -> None:
    with pytest.raises(BlockIOClassError, match="blockio disabled, refusing to set blockio class"):
        container_blockio_class(None, "c", {BLOCKIO_POD_ANNOTATION: "slow"})


def test_ignore_blockio_not_enabled_errors_drops_the_class() -> None:
    assert container_blockio_class(None, "c", {BLOCKIO_POD_ANNOTATION: "slow"}, ignore_not_enabled=True) is None


def test_empty_class_name_is_no_class() -> None:
    assert container_blockio_class(None, "c", {BLOCKIO_POD_ANNOTATION: ""}) is None
