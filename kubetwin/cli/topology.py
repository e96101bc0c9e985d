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
        from kubetwin.cli.machine_picture import render

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
def _live_options(f):
    """``--config``, ``--state-dir``, ``--devices``: the live NodeResourceTopology (with ``-o nrt``)."""
    f = click.option("--devices", "devices_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                     help="With -o nrt and --config: the device plugins' inventory (docs/device-inventory.md).")(f)
    f = click.option("--state-dir", "state_dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
                     help="With -o nrt: the kubelet's checkpoints (cpu_manager_state, memory_manager_state, "
                          "device-plugins/kubelet_internal_checkpoint) the exporter reads through PodResources.")(f)
    return click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
                        metavar="kubelet.yaml",
                        help="With -o nrt: the node's KubeletConfiguration; publish the live NodeResourceTopology "
                             "as nfd-topology-updater does from the kubelet's state.")(f)


def _check_live(ctx: click.Context, output: str, *given: object) -> bool:
    live = any(g is not None for g in given)
    if live and output != "nrt":
        raise click.UsageError("--config, --state-dir and --devices are only valid with -o nrt", ctx=ctx)
    return live


_NODE = click.option("--node-name", default="", help="metadata.name of the NodeResourceTopology (default: the machine's name).")


@click.command("discover")
@_OUTPUT
@_NODE
@_live_options
@click.pass_context
def discover(ctx: click.Context, output: str, node_name: str, config_path: str | None, state_dir: str | None,
             devices_path: str | None) -> None:
    """Describe this machine's hardware topology from /sys and /proc, as cAdvisor sees it.

    ``-o nrt --config /var/lib/kubelet/config.yaml --state-dir /var/lib/kubelet`` publishes this
    node's live NodeResourceTopology from its kubelet's checkpoint files (see ``topology``).
    """
    from kubetwin.machine.source import load_live

    live = _check_live(ctx, output, config_path, state_dir, devices_path)
    machine = load_live()
    if not node_name:
        import socket

        node_name = socket.gethostname()
    if live:
        from .common import kubernetes_version

        _write(_live_nrt(machine, config_path, state_dir, devices_path, node_name, kubernetes_version(ctx)), "yaml")
        return
    _emit(machine, output, node_name)


@click.command("topology")
@click.argument("source", metavar="[SOURCE]", required=False)
@filename_option("SOURCE", "The machine description")
@_OUTPUT
@_NODE
@_live_options
@click.pass_context
def topology(ctx: click.Context, source: str | None, filename: str | None, output: str, node_name: str,
             config_path: str | None, state_dir: str | None, devices_path: str | None) -> None:
    """Read a machine description and show or convert it.

    SOURCE is a cAdvisor MachineInfo JSON file, an hwloc XML file, a sysfs dump (a folder
    holding sys/, or a .tar.bz2 of one), "/" for this machine, "-" for stdin, or a compact
    spec such as 2s2n16c2t:mem=256Gi:hugepages-1Gi=8:l3=per-numa:gpus=4 (docs/machine-spec.md).

    ``-o nrt --config kubelet.yaml [--state-dir DIR]`` writes the NodeResourceTopology a node agent
    (nfd-topology-updater) publishes for that kubelet: allocatable after reservations, available
    after the exclusive allocations recorded in the checkpoints, the topology manager policy and
    scope as attributes.
    """
    from kubetwin.machine.source import load_machine

    source = main_input(source, filename, "SOURCE")
    live = _check_live(ctx, output, config_path, state_dir, devices_path)
    machine = load_machine(source)
    if live:
        from .common import kubernetes_version

        _write(_live_nrt(machine, config_path, state_dir, devices_path, node_name, kubernetes_version(ctx)), "yaml")
        return
    _emit(machine, output, node_name)


def _live_nrt(machine, config_path: str | None, state_dir: str | None, devices_path: str | None, node_name: str,
              version: str | None) -> dict:
    """The kubelet started from its checkpoints, seen through PodResources by the topology-updater."""
    from kubetwin.errors import InputError
    from kubetwin.kubelet.admission import NodeAdmission
    from kubetwin.kubelet.podresources import PodResourcesServer, list_from_state
    from kubetwin.kubelet.topology_updater import export
    from kubetwin.model.kubelet_config import load_kubelet_config

    from .admit import _culprit, _inventory, _load_state

    if state_dir is not None:
        from pathlib import Path

        if not Path(state_dir).is_dir():
            raise InputError("state directory does not exist", file=state_dir)
    cfg = load_kubelet_config(config_path, version)
    try:
        node = NodeAdmission(machine, cfg, _load_state(state_dir, "cpu_manager_state"),
                             _load_state(state_dir, "memory_manager_state"),
                             devices=_inventory(machine, devices_path, False),
                             device_state=_load_state(state_dir, "kubelet_internal_checkpoint"))
    except InputError as exc:
        if not exc.file:
            exc.file = _culprit(exc, config_path, state_dir)
        raise
    allocatable = PodResourcesServer(node, ()).get_allocatable_resources()
    # no pod objects in a state folder: no names, so no pod-set fingerprint
    return export(node, list_from_state(node), allocatable, node_name or machine.name or "node",
                  lambda ns, name: None, fingerprint=False)
