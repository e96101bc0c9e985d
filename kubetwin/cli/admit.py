"""``kubetwin admit``: the kubelet's admission and allocation of pods on one node.

Not an upstream module: kubetwin's own command; the decisions it prints are made in
:mod:`kubetwin.kubelet` (``pkg/kubelet/cm``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..kubelet.report import explain_record as _explain_record
from ..kubelet.report import numa_map, pod_report
from .common import OUTPUT_FORMATS, emit_data, filename_option, kubernetes_version, main_input, output_option, rejected

if TYPE_CHECKING:
    from ..errors import InputError


@click.command("admit")
@click.option("--machine", "machine_source", default=None, metavar="SOURCE",
              help="The node's hardware: MachineInfo JSON, sysfs (dir or tarball), hwloc XML or a spec like 2s2n8c2t "
                   "(default: a snapshot node folder's machine.json or machine.xml).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="KubeletConfiguration (kubelet.config.k8s.io/v1beta1) YAML/JSON.")
@click.option("--state-dir", "state_dir", type=click.Path(file_okay=False), default=None,
              help="Directory with the kubelet's checkpoints (cpu_manager_state, memory_manager_state, "
                   "allocated_pods_state, actuated_pods_state, ...) to start from.")
@click.option("--write-state", "write_state", type=click.Path(file_okay=False), default=None,
              help="Write the checkpoints after admission into this directory (atomically).")
@click.option("--metrics", "metrics_path", type=click.Path(dir_okay=False), default=None,
              help="Write the resource-manager metrics in Prometheus text format to FILE.")
@click.option("--devices", "devices_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Device inventory (docs/device-inventory.md): what the device plugins advertise, with NUMA nodes.")
@click.option("--devices-from-machine", is_flag=True,
              help="Advertise the machine's PCI GPUs as their vendors' device plugins do (nvidia.com/gpu, ...).")
@click.option("--explain", is_flag=True, help="Show each provider's topology hints and the merged hint.")
@click.option("--resize", "resizes", multiple=True, metavar="POD=FILE",
              help="After admission, resize admitted pod POD (name or namespace/name) in place with the resize "
                   "patch in FILE ({spec: {containers: [{name, resources}]}}); repeatable, applied in order.")
@click.option("--podresources", "podresources_call", default=None, metavar="list|allocatable|get=NS/POD",
              help="With -o podresources: the PodResources API call to answer (default: list).")
@output_option(choices=OUTPUT_FORMATS + ("cri", "podresources"))
@filename_option("PODS.yaml", "The pods to admit, in order")
@click.argument("pods_path", metavar="[PODS.yaml]", required=False)
@click.pass_context
def admit(ctx: click.Context, machine_source: str | None, config_path: str | None, state_dir: str | None,
          write_state: str | None, metrics_path: str | None, devices_path: str | None, devices_from_machine: bool,
          explain: bool, resizes: tuple[str, ...], podresources_call: str | None, output: str,
          filename: str | None, pods_path: str | None) -> None:
    """Admit PODS.yaml in order on one node: Topology, CPU, Memory and Device Managers, then node allocatable.

    PODS.yaml may be a snapshot's node folder (nodes/NAME): its pods.json, its kubelet.json (unless
    --config) and its machine.json or machine.xml (unless --machine).

    ``-o cri`` prints the CRI calls the kubelet makes for the admitted pods (JSON) and what each
    container ends up with in its cgroup (docs/runtime.md).

    ``--resize POD=FILE`` then resizes admitted pods in place, in order: the API server's checks
    (Refused), the kubelet's (Infeasible, Deferred, or allocated and actuated), deferred resizes
    retried as upstream orders them.

    A rejected pod shows the kubelet's reason and message (and, for a TopologyAffinityError, what
    was asked and what each NUMA node could give); a rejection is an answer: exit status 0, or 3
    with --fail-on-reject.

    ``-o podresources`` answers the kubelet's PodResources API v1 after admission, as protojson:
    ``List`` (default), ``GetAllocatableResources`` (``--podresources allocatable``) or ``Get``
    (``--podresources get=NS/POD``); DRA claims come from ``dra_manager_state`` in --state-dir.
    """
    from .admit_resize import parse_resize_options

    pods_path = main_input(pods_path, filename, "PODS.yaml")
    if Path(pods_path).is_dir():  # a snapshot's node folder: its pods, kubelet.json and machine
        from .admit_folder import node_folder_inputs

        machine_source, config_path, pods_path = node_folder_inputs(pods_path, machine_source, config_path)
    elif machine_source is None:
        raise click.UsageError("missing --machine SOURCE (the node's hardware), or give a snapshot's node "
                               "folder that holds it (nodes/NAME with machine.json)", ctx=ctx)
    if podresources_call is not None and output != "podresources":
        raise click.UsageError("--podresources is only valid with -o podresources", ctx=ctx)
    call = None
    if output == "podresources":
        from ..kubelet.podresources import parse_call

        call = parse_call(podresources_call or "list")
    data = run_admit(machine_source, config_path, state_dir, pods_path, kubernetes_version(ctx),
                     explain=explain, write_state=write_state, metrics_path=metrics_path,
                     devices_path=devices_path, devices_from_machine=devices_from_machine, cri=output == "cri",
                     resizes=parse_resize_options(resizes),
                     podresources=call)
    if output == "cri":
        emit_data(data["cri"], "json")
    elif output == "podresources":
        emit_data(data["podresources"], "json")
    elif output == "table":
        render_table(data, explain=explain)
        if "resizes" in data or "restoredResizes" in data or "actuatedResizes" in data:
            from .admit_resize import render_resizes

            render_resizes(data.get("actuatedResizes", []) + data.get("restoredResizes", []) + data.get("resizes", []))
    else:
        emit_data(data, output)
    rejected(f"pod {p['namespace']}/{p['name']}: {p['reason']}" for p in data["pods"] if not p["admitted"])
    rejected(f"resize of pod {r['namespace']}/{r['pod']}: {r['status']}" for r in data.get("resizes", ())
             if r["status"] != "Completed")


def _load_state(state_dir: str | None, name: str):
    if state_dir is None:
        return None
    p = Path(state_dir) / name
    if name == "kubelet_internal_checkpoint":
        from ..diagnostics import warn
        from ..kubelet.checkpoint.device_manager_state import read_device_manager_state

        if not p.exists():
            p = Path(state_dir) / "device-plugins" / name  # the kubelet root's layout
        if not p.exists():
            return None
        return read_device_manager_state(p, warn=warn)
    if not p.exists():
        return None
    if name == "cpu_manager_state":
        from ..kubelet.checkpoint.cpu_manager_state import read_cpu_manager_state

        return read_cpu_manager_state(p)
    from ..kubelet.checkpoint.memory_manager_state import read_memory_manager_state

    return read_memory_manager_state(p)


def _culprit(exc: InputError, config_path: str | None, state_dir: str | None) -> str:
    """The file an error found when the managers start is about: a checkpoint that does not match
    the machine and configuration (the path names it, and loses that name: it is the file's),
    otherwise the configuration."""
    for name in ("cpu_manager_state", "memory_manager_state"):
        if state_dir and exc.path.split(".")[0] == name:
            exc.path = exc.path[len(name) + 1:]
            return str(Path(state_dir) / name)
    return config_path or "kubelet configuration"


def run_admit(machine_source: str, config_path: str | None, state_dir: str | None, pods_path: str,
              version: str | None, *, explain: bool = False, write_state: str | None = None,
              metrics_path: str | None = None, devices_path: str | None = None,
              devices_from_machine: bool = False, cri: bool = False,
              resizes: list[tuple[str, str]] | None = None,
              podresources: tuple[str, str, str] | None = None) -> dict[str, Any]:
    from ..errors import InputError
    from ..kubelet.admission import NodeAdmission
    from ..machine import load_machine
    from ..model.kubelet_config import load_kubelet_config
    from ..model.objects import load_pods
    from ..outputs import check_output

    if metrics_path:
        check_output(metrics_path, "--metrics")
    machine = load_machine(machine_source)
    cfg = load_kubelet_config(config_path, version)
    pods = load_pods(pods_path, warn=lambda e: None, reader="kubelet")
    cpu_state = _load_state(state_dir, "cpu_manager_state")
    mem_state = _load_state(state_dir, "memory_manager_state")
    dev_state = _load_state(state_dir, "kubelet_internal_checkpoint")
    inventory = _inventory(machine, devices_path, devices_from_machine)
    try:
        node = NodeAdmission(machine, cfg, cpu_state, mem_state, explain=explain, devices=inventory,
                             device_state=dev_state, explain_rejections=True)
    except InputError as exc:
        if not exc.file:
            exc.file = _culprit(exc, config_path, state_dir)
        raise
    dra_state = _load_dra_state(state_dir) if podresources is not None else []
    from .admit_actuation import load_actuation_state, sync_restored
    from .admit_allocation import load_allocation_state

    allocation = load_allocation_state(state_dir, node.gates)  # allocated_pods_state
    actuation = load_actuation_state(state_dir, node.gates)  # actuated_pods_state
    pods = [allocation.admit_view(p, node.gates) for p in pods]  # AddPod: admitted as allocated
    decisions = []
    verdicts = []
    # resizes (and pending resizes restored from allocated_pods_state, and pods running with other
    # resources than allocated) are actuated through it
    resizing = actuation.resizing(pods)
    sequence = _cri_sequence(node, machine) if cri or resizes or allocation.pending or resizing else None
    for pod in pods:
        n_explain = len(node.topology.explain) if node.topology.explain is not None else 0
        d = node.admit(pod)
        verdicts.append(d)
        running = d.admitted and actuation.restored_entry(d.pod.uid) is not None  # started before the restart
        if sequence is not None:
            if running:
                sequence.start_pod(actuation.running_view(d.pod, node.gates))
            else:
                sequence.admitted(d)
        if d.admitted and not running:
            actuation.started(d.pod, node.gates)
        entry = pod_report(node, d)
        if explain and node.topology.explain is not None:
            entry["explain"] = [_explain_record(r) for r in node.topology.explain[n_explain:]]
        decisions.append(entry)
    actuated_records = sync_restored(node, actuation, sequence)  # each running pod's first SyncPod
    resize_records = resize_manager = restored_records = None
    if allocation.pending or resizes:
        from ..kubelet.resize import ResizeManager

        resize_manager = ResizeManager(node, actuated_state=actuation.state)
    if allocation.pending:
        from .admit_resize import retry_restored

        restored_records = retry_restored(node, sequence, list(allocation.pending.values()), resize_manager)
    if resizes:
        from .admit_resize import run_resizes

        resize_records, resize_manager = run_resizes(node, sequence, resizes, version, resize_manager)
    if write_state:
        write_checkpoints(node, Path(write_state), allocation, actuation)
    if metrics_path:
        from ..kubelet.metrics import render_metrics, render_resize_metrics
        from ..outputs import write_atomic

        text = render_metrics(node) + (render_resize_metrics(resize_manager) if resize_manager is not None else "")
        write_atomic(metrics_path, text, "--metrics")
    data: dict[str, Any] = {"pods": decisions, "node": numa_map(node)}
    if resize_records is not None:
        data["resizes"] = resize_records
    if restored_records:
        data["restoredResizes"] = restored_records
    if actuated_records:
        data["actuatedResizes"] = actuated_records
    if podresources is not None:
        from ..kubelet.podresources import PodResourcesServer, answer, known_pods

        data["podresources"] = answer(PodResourcesServer(node, known_pods(verdicts), dra_state), podresources)
    if sequence is not None and cri:
        sequence.reconcile()
        data["cri"] = sequence.report()
    return data


def _load_dra_state(state_dir: str | None) -> list:
    """The DRA manager's prepared claims (``dra_manager_state``) in the state folder, if any."""
    if state_dir is None:
        return []
    from ..dra.checkpoint import CHECKPOINT_NAME, decode_checkpoint

    p = Path(state_dir) / CHECKPOINT_NAME
    return decode_checkpoint(p.read_bytes(), file=str(p)) if p.exists() else []


def _cri_sequence(node, machine):
    """The kubelet's CRI calls and the runtime below it (containerd + runc, the kubelet's cgroup driver)."""
    from ..runtime.containerd import RuntimeConfig
    from ..runtime.kubelet_sequence import KubeletSequence
    from ..runtime.runtime_state import RuntimeState

    runtime = RuntimeState(machine, RuntimeConfig(cgroup_driver=node.config.cgroup_driver))
    return KubeletSequence(node, runtime)


def _inventory(machine, devices_path: str | None, from_machine: bool):
    from ..kubelet.devices import EMPTY_INVENTORY, devices_from_machine, load_device_inventory, merge_inventories

    inv = devices_from_machine(machine) if from_machine else EMPTY_INVENTORY
    if devices_path:
        inv = merge_inventories(inv, load_device_inventory(devices_path, machine))
    return inv


def write_checkpoints(node, out: Path, allocation=None, actuation=None) -> None:
    """The kubelet's state files after admission, in the formats this Kubernetes version writes
    (``allocated_pods_state`` too when ``allocation``, the run's allocation state, is given, and
    ``actuated_pods_state`` when ``actuation``, the runtime manager's store, is)."""
    from ..kubelet.checkpoint.cpu_manager_state import write_cpu_manager_state
    from ..kubelet.checkpoint.device_manager_state import write_device_manager_state
    from ..model.features import default_for

    version = node.config.kubernetes_version or None
    pod_level = node.gates.enabled("PodLevelResourceManagers")
    suffix = "PodLevel" if pod_level else ""
    out.mkdir(parents=True, exist_ok=True)
    write_cpu_manager_state(out / "cpu_manager_state", node.cpu.state,
                            default_for(f"cpuManagerCheckpointVersion{suffix}", version))
    if node.memory.static is not None:
        from ..kubelet.checkpoint.memory_manager_state import write_memory_manager_state

        write_memory_manager_state(out / "memory_manager_state", node.memory.static.state,
                                   default_for(f"memoryManagerCheckpointVersion{suffix}", version))
    (out / "device-plugins").mkdir(exist_ok=True)
    write_device_manager_state(out / "device-plugins" / "kubelet_internal_checkpoint",
                               node.device_manager.checkpoint_data())
    if allocation is not None:
        from .admit_allocation import write_allocation_state

        write_allocation_state(allocation, node, out)
    if actuation is not None:
        from .admit_actuation import write_actuation_state

        write_actuation_state(actuation, node.gates, out)


def _size(b: int) -> str:
    for unit, mul in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if b >= mul and b % mul == 0:
            return f"{b // mul}{unit}"
    return str(b)


def _hints(lst) -> str:
    if lst is None:
        return "any"
    if not lst:
        return "none possible"
    return " ".join(("{" + ",".join(str(x) for x in (h["numaNodeAffinity"] or [])) + "}"
                     + ("*" if h["preferred"] else "")) for h in lst)


def render_table(data: dict[str, Any], explain: bool = False) -> None:
    """Decisions per pod and container, the merged hints (``--explain``), then the NUMA map."""
    from rich.table import Table

    from .common import console

    con = console()
    t = Table(title="admission", show_lines=False)
    for col in ("pod", "decision", "container", "qos", "cpuset", "mems", "devices", "cfs quota"):
        t.add_column(col)
    for p in data["pods"]:
        decision = "admitted" if p["admitted"] else f"{p['reason']}: {p['message']}"
        if p.get("hang"):
            decision = f"HANG — no verdict: {p['message']}"
        for note in p.get("knownUpstreamBugs") or []:
            decision += f"\n⚠ {note}"
        first = True
        for c in p["containers"] or [{}]:
            res = c.get("resources") or {}
            devs = " ".join(f"{d['resourceName']}={','.join(d['deviceIds'])}" for d in c.get("devices") or [])
            t.add_row(p["name"] if first else "", decision if first else "", c.get("name", ""), c.get("qosClass", ""),
                      str(res.get("cpusetCpus", "")), str(res.get("cpusetMems", "")), devs,
                      str(res.get("cpuQuota", "")))
            first = False
    con.print(t)
    for p in data["pods"]:
        if p.get("explanation"):
            con.print(f"why {p['namespace']}/{p['name']} was rejected: {p['explanation']}", soft_wrap=True,
                      markup=False)
    if explain:
        h = Table(title="topology hints ({NUMA nodes}, * = preferred)")
        for col in ("pod", "container", "provider", "resource", "hints", "merged", "admit"):
            h.add_column(col)
        for p in data["pods"]:
            for rec in p.get("explain") or []:
                merged = rec["merged"]
                mtext = ("any" if merged["numaNodeAffinity"] is None else
                         "{" + ",".join(str(x) for x in merged["numaNodeAffinity"]) + "}") + \
                    ("*" if merged["preferred"] else "")
                rows = [(prov, res, _hints(lst)) for prov, hints in rec["providers"].items()
                        for res, lst in (hints or {"-": None}).items()]
                for i, (prov, res, text) in enumerate(rows):
                    last = i == len(rows) - 1
                    h.add_row(p["name"] if i == 0 else "", (rec["container"] or "(pod)") if i == 0 else "",
                              prov, res, text, mtext if last else "", ("yes" if rec["admit"] else "no") if last else "")
        con.print(h)
    n = data["node"]
    title = (f"NUMA map after admission — cpu {n.get('cpuManagerPolicy')}, memory {n.get('memoryManagerPolicy')}, "
             f"topology {n.get('topologyManagerPolicy')}/{n.get('topologyManagerScope')}")
    m = Table(title=title, show_lines=True)
    for col in ("NUMA", "CPUs", "reserved", "shared pool", "pinned CPUs", "memory", "devices"):
        m.add_column(col)
    for row in n.get("numaNodes", []):
        excl = "\n".join([f"{o}: {cs}" for o, cs in (row.get("exclusive") or {}).items()]
                         + [f"{o}: {cs} (pod shared pool)" for o, cs in (row.get("podSharedPool") or {}).items()])
        mem_lines = []
        for r, tbl in (row.get("memory") or {}).items():
            mem_lines.append(f"{r}: {_size(tbl['free'])} free of {_size(tbl['allocatable'])}")
        mem_lines += [f"  {o}: {_size(b)}" for o, b in (row.get("memoryOwners") or {}).items()]
        devs = "\n".join(f"{d['resource']} {d['id']}: {d['owner'] or ('free' if d['health'] == 'Healthy' else 'unhealthy')}"
                         for d in row.get("devices") or [])
        m.add_row(str(row["id"]), row["cpus"], row.get("reserved", ""), row.get("sharedPool", ""), excl,
                  "\n".join(mem_lines), devs)
    con.print(m)
    for uid, cs in (n.get("podBubbles") or {}).items():
        con.print(f"pod-level CPU bubble {uid}: {cs}")
