"""``kubetwin admit SNAPSHOT/nodes/NAME``: a snapshot's node folder as admit's inputs — its
``pods.json`` (written by ``kubetwin snapshot --per-node``), its ``kubelet.json`` (the node's
``/configz``) unless ``--config`` is given, and its machine (``machine.json``: cAdvisor
MachineInfo, or ``machine.xml``: hwloc) unless ``--machine`` is given. A Node object does not
describe sockets, NUMA nodes and cores, so a folder without a machine file needs ``--machine``;
the error says so.

Not an upstream module: kubetwin's own reading of the folder ``kubetwin snapshot`` writes
(docs/snapshot.md).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError

#: the machine files a node folder may hold, in the order they are looked for
MACHINE_FILES = ("machine.json", "machine.xml")


def node_folder_inputs(folder: str, machine: str | None, config: str | None) -> tuple[str, str | None, str]:
    """(machine source, kubelet configuration, pods file) of a snapshot node folder, the flags given first."""
    root = Path(folder)
    pods = root / "pods.json"
    if not pods.is_file():
        raise InputError("a folder without pods.json (not a snapshot's node folder)", file=folder,
                         fix="give a snapshot's nodes/NAME folder (kubetwin snapshot --per-node), or a pods file")
    if config is None and (root / "kubelet.json").is_file():
        config = str(root / "kubelet.json")
    if machine is None:
        found = next((root / f for f in MACHINE_FILES if (root / f).is_file()), None)
        if found is None:
            raise InputError("the node folder holds no machine (a Node object does not describe its sockets, "
                             "NUMA nodes and cores)", file=folder, path="--machine",
                             fix="give --machine SOURCE (MachineInfo JSON, sysfs dump, hwloc XML or a spec like "
                                 f"2s2n16c2t), or put the node's MachineInfo at {root / MACHINE_FILES[0]}")
        machine = str(found)
    return machine, config, str(pods)
