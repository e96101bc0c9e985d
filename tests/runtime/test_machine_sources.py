"""Block devices and the resctrl filesystem, read from a sysfs dump the way cAdvisor and goresctrl read them.

cAdvisor ``utils/sysinfo`` ``GetBlockDeviceInfo``: ``/sys/block/*`` without loop, ram and sr
devices, ``dev`` = MAJ:MIN, ``size`` in 512-byte sectors, the bracketed scheduler (else ``none``).
goresctrl ``pkg/rdt/info.go``: ``info/<resource>/*`` and the root ``schemata``.
"""

from __future__ import annotations

from pathlib import Path

from kubetwin.machine import load_machine
from kubetwin.machine.machineinfo import to_machineinfo
from kubetwin.runtime.blockio import BlockDevice, block_devices
from kubetwin.runtime.resctrl import machine_resctrl


def tree(root: Path, files: dict[str, str]) -> Path:
    base = {"sys/devices/system/cpu/online": "0-1\n", "proc/meminfo": "MemTotal: 2048 kB\n",
            "sys/devices/system/node/node0/distance": "10\n"}
    for cpu in (0, 1):
        base[f"sys/devices/system/cpu/cpu{cpu}/topology/core_id"] = "0\n"
        base[f"sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id"] = "0\n"
        base[f"sys/devices/system/node/node0/cpu{cpu}/.keep"] = ""
    for rel, text in {**base, **files}.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


DISKS = {"sys/block/sda/dev": "8:0\n", "sys/block/sda/size": "2048\n",
         "sys/block/sda/queue/scheduler": "mq-deadline kyber [bfq] none\n",
         "sys/block/nvme0n1/dev": "259:0\n", "sys/block/nvme0n1/size": "4096\n",
         "sys/block/nvme0n1/queue/scheduler": "[none] mq-deadline\n",
         "sys/block/loop0/dev": "7:0\n", "sys/block/sr0/dev": "11:0\n"}
RESCTRL = {"sys/fs/resctrl/info/L3/cbm_mask": "7ff\n", "sys/fs/resctrl/info/L3/min_cbm_bits": "1\n",
           "sys/fs/resctrl/info/L3/num_closids": "16\n", "sys/fs/resctrl/info/L3/shareable_bits": "0\n",
           "sys/fs/resctrl/info/L3/bit_usage": "0=SSSSSSSSSSS\n",
           "sys/fs/resctrl/info/L3_MON/num_rmids": "224\n",
           "sys/fs/resctrl/info/MB/bandwidth_gran": "10\n", "sys/fs/resctrl/info/MB/delay_linear": "1\n",
           "sys/fs/resctrl/info/MB/min_bandwidth": "10\n", "sys/fs/resctrl/info/MB/num_closids": "8\n",
           "sys/fs/resctrl/schemata": "    MB:0=100\n    L3:0=7ff\n"}


def test_block_devices_are_read_from_sys_block(tmp_path):
    m = load_machine(str(tree(tmp_path, DISKS)))
    assert block_devices(m) == (BlockDevice("sda", 8, 0, "bfq", 2048 * 512), BlockDevice("nvme0n1", 259, 0, "none",
                                                                                          4096 * 512))


def test_block_devices_travel_in_machineinfo_disk_map(tmp_path):
    info = to_machineinfo(load_machine(str(tree(tmp_path, DISKS))))
    assert info["disk_map"]["8:0"] == {"name": "sda", "major": 8, "minor": 0, "size": 1048576, "scheduler": "bfq"}


def test_resctrl_is_read_when_the_dump_has_it(tmp_path):
    info = machine_resctrl(load_machine(str(tree(tmp_path, RESCTRL))))
    assert info is not None
    assert info.cat_level("L3").cbm_mask() == 0x7FF and info.cat_level("L3").cache_ids == (0,)
    assert info.mb.supported and info.num_closids == 8


def test_no_resctrl_in_the_dump_means_no_rdt(tmp_path):
    assert machine_resctrl(load_machine(str(tree(tmp_path, {})))) is None
