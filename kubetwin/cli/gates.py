"""``kubetwin gates``: the feature gates of one Kubernetes version, with default, maturity and lock.

Not an upstream module: kubetwin's own command over the version table
(``pkg/features/kube_features.go`` per release)."""

from __future__ import annotations

from typing import Any

import click

from .common import emit_data, kubernetes_version, output_option


@click.command("gates")
@click.option("--feature-gates", "feature_gates", default=None, metavar="A=true,B=false",
              help="Settings to apply on top of the defaults (shown in the 'value' column).")
@click.option("--changed", is_flag=True, help="Only gates whose default or maturity changed in this version.")
@output_option()
@click.argument("names", nargs=-1, metavar="[GATE...]")
@click.pass_context
def gates(ctx: click.Context, feature_gates: str | None, changed: bool, output: str, names: tuple[str, ...]) -> None:
    """List the feature gates kubetwin models at --kubernetes-version (default: the newest stable one)."""
    from ..errors import InputError
    from ..model.features import FEATURE_GATES, gates_for, known_gates, normalize_version, parse_feature_gates_flag

    version = normalize_version(kubernetes_version(ctx))
    overrides = parse_feature_gates_flag(feature_gates) if feature_gates else None
    effective = gates_for(version, overrides, path="--feature-gates")
    rows: list[dict[str, Any]] = []
    for name, spec in known_gates(version):
        if names and name not in names:
            continue
        if changed and spec.version != version:
            continue
        since = FEATURE_GATES[name][0].version
        rows.append({"name": name, "default": spec.default, "value": effective.enabled(name),
                     "prerelease": spec.prerelease, "locked": spec.locked, "since": since, "stageSince": spec.version})
    unknown = [n for n in names if n not in {r["name"] for r in rows}]
    if unknown and not changed:
        from ..model.strict import suggest

        near = suggest(unknown[0], [n for n, _ in known_gates(version)])
        raise InputError(f"unknown feature gate {unknown[0]} at Kubernetes {version}", path="GATE",
                         fix=f'did you mean "{near}"?' if near else
                         "run `kubetwin gates` to list the gates known at this version")
    if output != "table":
        emit_data({"kubernetesVersion": version, "gates": rows}, output)
        return
    from rich.table import Table

    from .common import console

    table = Table(title=f"Feature gates at Kubernetes {version}", title_justify="left")
    for col in ("gate", "default", "value", "stage", "since", "locked"):
        table.add_column(col)
    for r in rows:
        value = str(r["value"]).lower()
        if r["value"] != r["default"]:
            value = f"[bold]{value}[/bold]"
        table.add_row(r["name"], str(r["default"]).lower(), value, r["prerelease"], r["stageSince"],
                      "locked" if r["locked"] else "")
    console().print(table)
