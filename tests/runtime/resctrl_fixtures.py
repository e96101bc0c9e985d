"""The resctrl filesystems of goresctrl's own tests (``test/data/resctrl.*``), as machine descriptions.

The numbers are those of the fixture files (``info/*/cbm_mask``, ``min_cbm_bits``, ``num_closids``,
``shareable_bits``, ``info/MB/*`` and the root ``schemata``); ``mountOptions`` stands for the
mock ``/proc/mounts`` line the tests write.
"""

from __future__ import annotations

from typing import Any

from kubetwin.runtime.resctrl import ResctrlInfo, parse_resctrl


def _cat(mask: str, min_bits: int, closids: int, shareable: str) -> dict[str, Any]:
    return {"cbm_mask": mask, "min_cbm_bits": min_bits, "num_closids": closids, "shareable_bits": shareable}


_MB = {"bandwidth_gran": 10, "delay_linear": 1, "min_bandwidth": 10, "num_closids": 8}

FIXTURES: dict[str, dict[str, Any]] = {
    "resctrl.full": {"info": {"L3": _cat("fffff", 1, 16, "c0000"), "MB": _MB},
                     "schemata": "L3:0=fffff;1=fffff;2=fffff;3=fffff\nMB:0=100;1=100;2=100;3=100"},
    "resctrl.nomb": {"info": {"L3": _cat("fffff", 2, 16, "c0000")},
                     "schemata": "L3:0=fffff;1=fffff;2=fffff;3=fffff"},
    "resctrl.nomb.cdp": {"info": {"L3CODE": _cat("fffff", 1, 8, "c0000"), "L3DATA": _cat("fffff", 1, 8, "c0000")},
                         "schemata": "L3DATA:0=001ff;1=001ff;2=001ff;3=001ff\nL3CODE:0=001ff;1=001ff;2=001ff;3=001ff"},
    "resctrl.nol3": {"info": {"MB": _MB}, "schemata": "MB:0=100;1=100;2=100;3=100"},
    "resctrl.nol3.mbps": {"info": {"MB": _MB}, "mountOptions": ["mba_MBps"],
                          "schemata": "MB:0=4294967295;1=4294967295;2=4294967295;3=4294967295"},
    "resctrl.l2": {"info": {"L2": _cat("ff", 1, 4, "0")}, "schemata": "L2:0=ff;1=ff"},
    "resctrl.l2cdp": {"info": {"L2CODE": _cat("fffff", 1, 4, "0"), "L2DATA": _cat("fffff", 1, 4, "0"),
                               "L3": _cat("fff", 1, 4, "400")},
                      "schemata": "    L3:0=00fff\nL2DATA:0=fffff;1=fffff;2=fffff;3=fffff\n"
                                  "L2CODE:0=fffff;1=fffff;2=fffff;3=fffff"},
}


def fixture(name: str) -> ResctrlInfo:
    return parse_resctrl(FIXTURES[name])
