"""Helpers shared by the commands: output formats, loading inputs with file-named errors."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

import click

OUTPUT_FORMATS = ("table", "json", "yaml")


def output_option(default: str = "table", choices: tuple[str, ...] = OUTPUT_FORMATS) -> Callable:
    return click.option("-o", "--output", "output", type=click.Choice(choices), default=default, show_default=True,
                        help="Output format.")


def kubernetes_version(ctx: click.Context) -> str | None:
    """The ``--kubernetes-version`` given to the top-level command, if any."""
    root = ctx.find_root()
    return (root.obj or {}).get("kubernetes_version")


def emit_data(data: Any, output: str) -> None:
    """Write machine-readable output (JSON or YAML) to stdout."""
    if output == "json":
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
    elif output == "yaml":
        import yaml

        sys.stdout.write(yaml.safe_dump(data, sort_keys=False, default_flow_style=False))
    else:  # pragma: no cover - callers render tables themselves
        raise ValueError(output)


def console() -> Any:
    """A rich Console (imported lazily: rich costs ~50 ms to import).

    Piped or redirected output (no terminal to measure, no ``COLUMNS``) is laid out 120 columns
    wide rather than rich's 80, so tables of CPU sets and pod names stay readable in files and CI logs.
    """
    import os
    import sys

    from rich.console import Console

    width = None
    if not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        width = 120
    return Console(highlight=False, soft_wrap=False, width=width)
