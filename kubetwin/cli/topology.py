"""``kubetwin discover`` (this machine) and ``kubetwin topology SOURCE`` (any description):
show a machine as a picture, or convert it to MachineInfo, NodeResourceTopology or YAML.

Not an upstream module: kubetwin's own command."""

from __future__ import annotations

import click

from .common import console, filename_option, main_input

FORMATS = ("table", "machineinfo", "nrt", "yaml", "json")


def _write(doc, output: str) -> None:
    """JSON (as ``json.dumps(indent=2)`` lays it out) or block YAML, written at C speed or close:
    a 65,536-CPU MachineInfo is 42 MB of JSON (``benchmarks/bench_topology.py``)."""
    import sys

    if output == "json":
        import msgspec

        data = msgspec.json.format(msgspec.json.encode(doc, enc_hook=str), indent=2) + b"\n"
        out = getattr(sys.stdout, "buffer", None)  # a text stream without bytes (tests capture into one)
        if out is not None:
            sys.stdout.flush()
            out.write(data)
        else:
            sys.stdout.write(data.decode())
    else:
        from kubetwin.yaml_block import dump

        sys.stdout.write(dump(doc))
    sys.stdout.flush()


def _emit(machine, output: str, node_name: str) -> None:
    if output == "table":
        from kubetwin.machine.render import render

        render(machine, console())
        return
    from kubetwin.machine.machineinfo import to_machineinfo
    from kubetwin.machine.nrt import to_nrt

    if output == "machineinfo":
        _write(to_machineinfo(machine), "json")
    elif output == "nrt":
        _write(to_nrt(machine, node_name=node_name), "yaml")
    else:  # yaml / json: the MachineInfo document plus the PCI devices MachineInfo cannot hold
        doc = to_machineinfo(machine)
        doc["pci_devices"] = [
            {"address": d.address, "kind": d.kind, "class": f"0x{d.class_code:04x}",
             "vendor_id": f"0x{d.vendor_id:04x}", "device_id": f"0x{d.device_id:04x}",
             "numa_nodes": list(d.numa_nodes), **({"model": d.model} if d.model else {})}
            for d in machine.pci_devices
        ]
        _write(doc, output)


_OUTPUT = click.option("-o", "--output", "output", type=click.Choice(FORMATS), default="table", show_default=True,
                       help="table: a picture; machineinfo: cAdvisor MachineInfo JSON; nrt: NodeResourceTopology "
                            "v1alpha2 YAML; yaml/json: MachineInfo plus PCI devices.")
_NODE = click.option("--node-name", default="", help="metadata.name of the NodeResourceTopology (default: the machine's name).")


@click.command("discover")
@_OUTPUT
@_NODE
def discover(output: str, node_name: str) -> None:
    """Describe this machine's hardware topology from /sys and /proc, as cAdvisor sees it."""
    from kubetwin.machine.source import load_live

    machine = load_live()
    if not node_name:
        import socket

        node_name = socket.gethostname()
    _emit(machine, output, node_name)


@click.command("topology")
@click.argument("source", metavar="[SOURCE]", required=False)
@filename_option("SOURCE", "The machine description")
@_OUTPUT
@_NODE
def topology(source: str | None, filename: str | None, output: str, node_name: str) -> None:
    """Read a machine description and show or convert it.

    SOURCE is a cAdvisor MachineInfo JSON file, an hwloc XML file, a sysfs dump (a folder
    holding sys/, or a .tar.bz2 of one), "/" for this machine, "-" for stdin, or a compact
    spec such as 2s2n16c2t:mem=256Gi:hugepages-1Gi=8:l3=per-numa:gpus=4 (docs/machine-spec.md).
    """
    from kubetwin.machine.source import load_machine

    source = main_input(source, filename, "SOURCE")
    _emit(load_machine(source), output, node_name)
