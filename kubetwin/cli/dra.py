"""``kubetwin dra``: allocate claims like kube-scheduler, explain the verdicts, publish slices.

Not an upstream module: kubetwin's own command; the allocation is :mod:`kubetwin.dra`'s
(``k8s.io/dynamic-resource-allocation/structured``)."""

from __future__ import annotations

from typing import Any

import click

from .common import FullHelpGroup, emit_data, inline, kubernetes_version, output_option, rejected


def _features(ctx: click.Context, gates_flag: str | None):
    from ..dra.run import allocator_features

    return allocator_features(kubernetes_version(ctx), gates_flag)


def _load(objects: tuple[str, ...], node_file: str, claim_files: tuple[str, ...]):
    from ..dra.objects import collect, load_node
    from ..errors import InputError
    from ..model.loader import load_documents, load_one

    docs = [d for f in objects for d in load_documents(f)]
    cluster = collect(docs)
    node = load_node(load_one(node_file, "Node"))
    claim_docs = [d for f in claim_files for d in load_documents(f)]
    wanted = collect(claim_docs, strict=True)
    if wanted.classes or wanted.slices or wanted.templates:
        raise InputError("the claims file may only contain ResourceClaims", file=claim_files[0],
                         fix="put DeviceClasses and ResourceSlices into the -f objects file")
    return cluster, node, wanted.claims


@click.group("dra", cls=FullHelpGroup)
def dra() -> None:
    """Dynamic Resource Allocation (resource.k8s.io/v1): allocate, explain, publish ResourceSlices."""


@dra.command("allocate")
@click.option("-f", "--filename", "objects", multiple=True, required=True, metavar="OBJECTS.yaml",
              help="DeviceClasses, ResourceSlices, ResourceClaimTemplates and existing ResourceClaims "
                   "(any resource.k8s.io version).")
@click.option("--node", "node_file", required=True, metavar="NODE.yaml", help="The node to allocate on.")
@click.option("--pod", "pod_file", default=None, metavar="POD.yaml",
              help="Allocate this pod's spec.resourceClaims (templates instantiated, claims reserved for it).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed for the random suffix of claims generated from templates.")
@click.option("--feature-gates", "gates", default=None, metavar="A=true,B=false", help="Feature gates.")
@click.option("--timeout", type=float, default=None, metavar="SECONDS",
              help="Give up like the scheduler's filter timeout (default: no limit).")
@output_option()
@click.argument("claim_files", nargs=-1, required=False, metavar="[CLAIMS.yaml]...")
@click.pass_context
def allocate(ctx: click.Context, objects: tuple[str, ...], node_file: str, pod_file: str | None, seed: int,
             gates: str | None, timeout: float | None, output: str, claim_files: tuple[str, ...]) -> None:
    """Allocate the CLAIMS of one pod together on NODE, as kube-scheduler's allocator would.

    With --pod, the pod's own claims are allocated instead: claims named by
    resourceClaimName come from the objects, template entries get a generated claim.
    """
    from ..dra.run import allocate_claims

    if not claim_files and not pod_file:
        raise click.UsageError("give CLAIMS.yaml files or --pod POD.yaml")
    features = _features(ctx, gates)
    cluster, node, claims = _load(objects, node_file, claim_files)
    if pod_file:
        _allocate_pod(features, cluster, node, claims, pod_file, seed, timeout, output)
        return
    result = allocate_claims(features, cluster, node, claims, timeout=timeout, file=", ".join(claim_files))
    rejected(result.rejections)
    if output != "table":
        emit_data(result.data, output)
        return
    _print_allocation(result)


def _load_pod(pod_file: str):
    from ..model.loader import load_one
    from ..model.pod import pod_from_dict

    doc = load_one(pod_file, "Pod")
    return pod_from_dict(doc.obj, file=doc.where)


def _allocate_pod(features, cluster, node, extra_claims, pod_file: str, seed: int, timeout: float | None,
                  output: str) -> None:
    from ..dra.run import allocate_pod

    pod = _load_pod(pod_file)
    result = allocate_pod(features, cluster, node, pod, extra_claims, seed=seed, timeout=timeout, file=pod_file)
    rejected(result.rejections)
    if output != "table":
        emit_data(result.data, output)
        return
    if result.allocator is None:  # the pod's claims do not resolve: nothing was allocated
        click.echo(f"node {node.name}: unsatisfiable ({result.data['reason']})")
        return
    for name, ref, generated in result.pod_claims:
        click.echo(f"pod claim {name}: ResourceClaim {ref}" + (" (generated)" if generated else ""))
    _print_allocation(result)


def _selector_text(selector: dict[str, Any]) -> str:
    """A node selector as kubectl users read one: ``metadata.name in (node-1)``, terms joined by ``or``."""
    terms = []
    for term in selector.get("nodeSelectorTerms") or ():
        reqs = []
        for field, label in (("matchFields", "field"), ("matchExpressions", "label")):
            for r in term.get(field) or ():
                values = ", ".join(str(v) for v in r.get("values") or ())
                op = str(r.get("operator", ""))
                text = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "does not exist",
                        "Gt": ">", "Lt": "<"}.get(op, op)
                reqs.append(f"{label} {r.get('key')} {text}" + (f" ({values})" if values else ""))
        terms.append(" and ".join(reqs) or "(empty term)")
    return " or ".join(terms) or "(none)"


def _print_allocation(result) -> None:
    from ..dra.run import passed_over

    data, diagnosis = result.data, result.diagnosis
    click.echo(f"node {data['node']}: {data['outcome']}" + (f" ({data['reason']})" if data["reason"] else ""))
    why = {c.claim: c for c in diagnosis.claims} if diagnosis is not None else {}
    for claim in data["claims"]:
        alloc = (claim.get("status") or {}).get("allocation")
        name = claim.get("metadata", {}).get("name")
        if not alloc:
            d = why.get(name)
            if d is None:
                click.echo(f"  claim {name}: not allocated")
            elif d.problems:
                click.echo(f"  claim {name}: cannot be allocated: " + "; ".join(d.problems))
            else:
                click.echo(f"  claim {name}: not allocated: it can be allocated alone, not together with the others")
            continue
        click.echo(f"  claim {name}:")
        for r in alloc["devices"]["results"]:
            extra = "".join(f" {k}={inline(v)}" for k, v in r.items()
                            if k not in ("request", "driver", "pool", "device"))
            click.echo(f"    {r['request']:<20} {r['driver']}/{r['pool']}/{r['device']}{extra}")
        if alloc.get("nodeSelector"):
            click.echo(f"    nodeSelector: {_selector_text(alloc['nodeSelector'])}")
        if alloc["devices"].get("config"):
            click.echo(f"    config: {inline(alloc['devices']['config'])}")
    if diagnosis is not None and diagnosis.together:
        click.echo(f"  together: {diagnosis.together}")
    click.echo("passed over:" if result.allocated else "devices:")
    for p in passed_over(result):
        click.echo(f"  {p.claim}/{p.request}: {p.device}: {p.reason}")


@dra.command("explain")
@click.option("-f", "--filename", "objects", multiple=True, required=True, metavar="OBJECTS.yaml",
              help="DeviceClasses, ResourceSlices and already-allocated ResourceClaims.")
@click.option("--node", "node_file", required=True, metavar="NODE.yaml", help="The node to allocate on.")
@click.option("--feature-gates", "gates", default=None, metavar="A=true,B=false", help="Feature gates.")
@output_option()
@click.argument("claim_files", nargs=-1, required=True, metavar="CLAIMS.yaml")
@click.pass_context
def explain_cmd(ctx: click.Context, objects: tuple[str, ...], node_file: str, gates: str | None, output: str,
                claim_files: tuple[str, ...]) -> None:
    """Whether each claim can be allocated and why not; each request, each device, each check.

    A device is *eligible* for a request when it passes every check on its own; a claim can still
    fail on its constraints, shared counters or other requests, which the claim's verdict names.
    """
    from ..dra.run import explain_claims

    features = _features(ctx, gates)
    cluster, node, claims = _load(objects, node_file, claim_files)
    result = explain_claims(features, cluster, node, claims)
    rejected(result.rejections)
    data, items, verdicts, diagnosis = result.data, result.items, result.verdicts, result.diagnosis
    if output != "table":
        emit_data(data, output)
        return
    by_claim: dict[str, list] = {}
    for e in items:
        by_claim.setdefault(e.claim, []).append(e)
    for v in verdicts:
        click.echo(f"claim {v['claim']}: " + ("can be allocated" if v["allocatable"] else
                                            "CANNOT be allocated: " + "; ".join(v["problems"])))
        for e in by_claim.get(v["claim"], []):
            n_ok = sum(1 for d in e.devices if d.eligible)
            click.echo(f"  request {e.request}: class {e.device_class}, {e.mode}"
                       + (f" x{e.count}" if e.mode == "ExactCount" else "")
                       + f": {n_ok} of {len(e.devices)} devices eligible")
            for d in e.devices:
                click.echo(f"    {'eligible' if d.eligible else 'no':<9}{d.device}")
                for c in d.checks:
                    click.echo(f"        {'pass' if c.passed else 'FAIL'}  {c.name}"
                               + (f": {c.detail}" if c.detail else ""))
    if len(verdicts) > 1:
        click.echo("all claims together: " + ("can be allocated" if result.allocated else
                                              "CANNOT be allocated" + (f": {diagnosis.together}"
                                                                       if diagnosis and diagnosis.together else "")))
    if items and items[0].pools:
        click.echo("pools: " + ", ".join(items[0].pools))


explain_cmd.name = "explain"


@dra.command("prepare")
@click.option("-f", "--filename", "objects", multiple=True, required=True, metavar="OBJECTS.yaml",
              help="The pod's ResourceClaims (allocated, reserved for the pod) and any other DRA objects.")
@click.option("--node", "node_file", required=True, metavar="NODE.yaml", help="The node the pod runs on.")
@click.option("--state-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Kubelet state directory: dra_manager_state is read from and written to it.")
@click.option("--cdi-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Write the drivers' CDI spec files here (like /var/run/cdi).")
@click.option("--cdi-class", default="device", show_default=True, metavar="CLASS",
              help="CDI device class the model driver uses in vendor/class=name.")
@output_option()
@click.argument("pod_file", metavar="POD.yaml")
def prepare(objects: tuple[str, ...], node_file: str, state_dir: str | None, cdi_dir: str | None,
            cdi_class: str, output: str, pod_file: str) -> None:
    """Prepare POD's claims on NODE as the kubelet's DRA manager does: checkpoint, CDI, PodResources."""
    import json
    from pathlib import Path

    from ..dra.checkpoint import CHECKPOINT_NAME, decode_checkpoint, encode_checkpoint
    from ..dra.objects import collect, load_node
    from ..dra.prepare import PrepareError, prepare_pod
    from ..errors import InputError
    from ..kubelet.checkpoint.files import atomic_write
    from ..model.loader import load_documents, load_one

    cluster = collect([d for f in objects for d in load_documents(f)])
    node = load_node(load_one(node_file, "Node"))
    pod = _load_pod(pod_file)
    state = []
    state_path = Path(state_dir) / CHECKPOINT_NAME if state_dir else None
    if state_path is not None:
        if not state_path.parent.is_dir():
            raise InputError("state directory does not exist", file=str(state_path.parent))
        if state_path.exists():
            state = decode_checkpoint(state_path.read_bytes(), file=str(state_path))
    if cdi_dir and not Path(cdi_dir).is_dir():
        raise InputError("CDI directory does not exist", file=cdi_dir)
    try:
        prepared = prepare_pod(pod, cluster.claims, node, state=state, cdi_class=cdi_class)
    except PrepareError as exc:  # about the pod and the claims it names
        raise InputError(f"prepare resources for pod {pod.key} (claims from {', '.join(objects)}): {exc}",
                         file=pod_file) from None
    except InputError as exc:
        raise exc.in_file(objects[0]) from None
    # Everything is computed and valid: only now touch the disk.
    writes: list[tuple[Path, bytes]] = []
    if cdi_dir:
        for name, spec in prepared.cdi_specs.items():
            writes.append((Path(cdi_dir) / name, (json.dumps(spec.to_json(), indent=2) + "\n").encode()))
    if state_path is not None:
        writes.append((state_path, encode_checkpoint(prepared.state)))
    for path, blob in writes:
        atomic_write(path, blob)
    data = prepared.to_data()
    data["node"] = node.name
    data["written"] = [str(p) for p, _ in writes]
    if output != "table":
        emit_data(data, output)
        return
    click.echo(f"pod {pod.key} on node {node.name}: {len(prepared.claims)} claim(s) prepared")
    for entry in prepared.claims:
        click.echo(f"  claim {entry.namespace}/{entry.claim_name} ({entry.claim_uid}), pods: "
                   f"{', '.join(sorted(entry.pod_uids))}")
        for driver in sorted(entry.driver_state):
            for d in entry.driver_state[driver]:
                click.echo(f"    {driver}/{d.pool_name}/{d.device_name}  requests={','.join(d.request_names or ())}"
                           f"  cdi={','.join(d.cdi_device_ids or ())}")
    for c in prepared.containers:
        click.echo(f"  container {c.name}: " + (", ".join(c.cdi_devices) if c.cdi_devices else "no CDI devices"))
    for p in data["written"]:
        click.echo(f"wrote {p}")


@dra.command("unprepare")
@click.option("--state-dir", type=click.Path(file_okay=False), required=True, metavar="DIR",
              help="Kubelet state directory: dra_manager_state is read from and written back to it.")
@click.option("--cdi-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Remove the drivers' CDI spec files of the unprepared claims from here (like /var/run/cdi).")
@click.option("--cdi-class", default="device", show_default=True, metavar="CLASS",
              help="CDI device class the model driver used in vendor/class=name (as given to prepare).")
@click.option("-f", "--filename", "objects", multiple=True, metavar="OBJECTS.yaml",
              help="The cluster's ResourceClaims: also show them as the resourceclaim controller leaves them.")
@output_option()
@click.argument("pod_file", metavar="POD.yaml")
def unprepare(state_dir: str, cdi_dir: str | None, cdi_class: str, objects: tuple[str, ...], output: str,
              pod_file: str) -> None:
    """Unprepare POD's claims when it terminates, as the kubelet's DRA manager does: checkpoint, CDI."""
    from pathlib import Path

    from ..dra.checkpoint import CHECKPOINT_NAME, decode_checkpoint, encode_checkpoint
    from ..dra.objects import collect
    from ..dra.unprepare import UnprepareError, release_claims, unprepare_pod
    from ..errors import InputError
    from ..kubelet.checkpoint.files import atomic_write
    from ..model.loader import load_documents

    pod = _load_pod(pod_file)
    cluster = collect([d for f in objects for d in load_documents(f)]) if objects else None
    state_path = Path(state_dir) / CHECKPOINT_NAME
    if not state_path.parent.is_dir():
        raise InputError("state directory does not exist", file=str(state_path.parent))
    if cdi_dir and not Path(cdi_dir).is_dir():
        raise InputError("CDI directory does not exist", file=cdi_dir)
    state = decode_checkpoint(state_path.read_bytes(), file=str(state_path)) if state_path.exists() else []
    try:
        done = unprepare_pod(pod, state, cdi_class=cdi_class)
    except UnprepareError as exc:
        raise InputError(str(exc), file=pod_file) from None
    released = release_claims(pod, cluster.claims) if cluster is not None else []
    # Everything is computed and valid: only now touch the disk (drivers first, then the checkpoint).
    removed: list[str] = []
    if cdi_dir:
        for name in done.cdi_specs_removed:
            path = Path(cdi_dir) / name
            if path.is_file():
                path.unlink()
                removed.append(str(path))
    written: list[str] = []
    if state_path.exists() or done.state:
        atomic_write(state_path, encode_checkpoint(done.state))
        written.append(str(state_path))
    data = done.to_data()
    data["removed"] = removed
    data["written"] = written
    if cluster is not None:
        data["claims"] = [_released(before, after) for before, after in released]
    if output != "table":
        emit_data(data, output)
        return
    click.echo(f"pod {pod.key}: {len(done.unprepared)} claim(s) unprepared, "
               f"{len(done.released)} still used by other pods")
    for entry in done.unprepared:
        drivers = ", ".join(sorted(entry.driver_state)) or "no drivers"
        click.echo(f"  claim {entry.namespace}/{entry.claim_name} ({entry.claim_uid}): unprepared by {drivers}")
    for entry in done.released:
        click.echo(f"  claim {entry.namespace}/{entry.claim_name} ({entry.claim_uid}): kept for pods "
                   f"{', '.join(sorted(entry.pod_uids))}")
    for name in done.not_prepared:
        click.echo(f"  claim {pod.namespace or 'default'}/{name}: not in the checkpoint (nothing to do)")
    for c in data.get("claims", ()):
        click.echo(f"  claim {c['claim']}: {c['after']}" + (f", devices free: {', '.join(c['devicesFreed'])}"
                                                            if c["devicesFreed"] else ""))
    for p in removed + written:
        click.echo(f"{'removed' if p in removed else 'wrote'} {p}")


def _released(before, after) -> dict[str, Any]:
    """One claim as the resourceclaim controller leaves it once the pod is gone."""
    if after is None:
        what = "deleted (generated for the pod)"
    elif after.allocated is None and before.allocated is not None:
        what = "deallocated (no consumer left)"
    elif before.allocated is None:
        what = "not allocated"
    else:
        what = "still reserved for other consumers"
    freed = [] if (after is not None and after.allocated is not None) else \
        [f"{r.driver}/{r.pool}/{r.device}" for r in before.allocated or ()]
    return {"claim": before.ref, "after": what, "devicesFreed": freed}


@dra.command("slices")
@click.option("--machine", "machine_source", required=True, metavar="SOURCE",
              help="Machine description: cAdvisor MachineInfo JSON, hwloc XML, sysfs dump or spec.")
@click.option("--driver", required=True, metavar="NAME", help="DRA driver name (a DNS subdomain, e.g. gpu.example.com).")
@click.option("--node-name", default="node-1", show_default=True, metavar="NODE", help="The node the slices are for.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(["gpu", "nic", "nvme"]),
              help="Device kinds to publish (repeatable; default: all).")
@click.option("--vendor-id", "vendor_ids", multiple=True, metavar="HEX",
              help="Only devices of this PCI vendor (e.g. 10de; repeatable).")
@click.option("--partitions", type=int, default=0, show_default=True,
              help="Offer each GPU whole or as N partitions sharing counters (DRAPartitionableDevices).")
@click.option("--feature-gates", "gates", default=None, metavar="A=true,B=false", help="Feature gates.")
@click.option("--cdi-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Also write the driver's CDI spec files here.")
@output_option(default="yaml")
@click.pass_context
def slices_cmd(ctx: click.Context, machine_source: str, driver: str, node_name: str, kinds: tuple[str, ...],
               vendor_ids: tuple[str, ...], partitions: int, gates: str | None, cdi_dir: str | None, output: str) -> None:
    """ResourceSlices (and CDI specs) a DRA driver would publish for a machine's PCI devices."""
    import json
    from pathlib import Path

    from ..dra.api import _driver_name
    from ..dra.hardware import KINDS, devices_for_machine
    from ..errors import InputError
    from ..kubelet.checkpoint.files import atomic_write
    from ..machine import load_machine

    _driver_name(driver, "--driver")
    features = _features(ctx, gates)
    if cdi_dir and not Path(cdi_dir).is_dir():
        raise InputError("CDI directory does not exist", file=cdi_dir)
    vendors = []
    for v in vendor_ids:
        try:
            vendors.append(int(v.lower().removeprefix("0x"), 16))
        except ValueError:
            raise InputError(f"invalid PCI vendor id {v!r}: expected 4 hex digits", path="--vendor-id") from None
    machine = load_machine(machine_source)
    published = devices_for_machine(machine, driver, node_name, kinds=kinds or KINDS, vendor_ids=tuple(vendors),
                                    partitions=partitions,
                                    partitionable_devices=features.partitionable_devices)
    if cdi_dir:
        for name, spec in published.cdi_specs.items():
            atomic_write(Path(cdi_dir) / name, (json.dumps(spec.to_json(), indent=2) + "\n").encode())
    if output != "table":
        emit_data(published.as_list(), output)
        return
    for s in published.slices:
        spec = s["spec"]
        if "sharedCounters" in spec:
            click.echo(f"{s['metadata']['name']}: {len(spec['sharedCounters'])} counter set(s)")
            continue
        click.echo(f"{s['metadata']['name']}: {len(spec['devices'])} device(s)")
        for d in spec["devices"]:
            a = d["attributes"]
            mem = (d.get("capacity") or {}).get("memory", {}).get("value", "")
            click.echo(f"  {d['name']:<14} {a['type']['string']:<5} numa={a.get('numaNode', {}).get('int', '?')} "
                       f"{a.get('resource.kubernetes.io/pciBusID', {}).get('string', ''):<13} {mem:<6} "
                       f"{a['model']['string']}")


slices_cmd.name = "slices"
