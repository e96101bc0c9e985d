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
        sys.stdout.write(json_text(data) + "\n")
    elif output == "yaml":
        sys.stdout.write(yaml_text(data))
    else:  # pragma: no cover - callers render tables themselves
        raise ValueError(output)


def yaml_text(data: Any) -> str:
    """YAML as ``yaml.safe_dump`` writes it, with libyaml's emitter (fast on big machines) and
    never an anchor: an object that appears twice is written out twice, as kubectl does."""
    import yaml

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class Dumper(base):  # type: ignore[misc, valid-type]
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return yaml.dump(data, Dumper=Dumper, sort_keys=False, default_flow_style=False, allow_unicode=False)


def json_text(data: Any) -> str:
    """``json.dumps(data, indent=2, default=str)``, fast and always valid JSON.

    The standard library's encoder is pure Python as soon as it indents (a 65,536-CPU
    MachineInfo took 20 s): the compact C encoder writes the text and msgspec re-indents it.
    A NaN or infinite float, which JSON cannot carry, is written as null."""
    import msgspec

    try:
        compact = json.dumps(data, default=str, allow_nan=False)
    except ValueError:
        compact = json.dumps(_finite(data), default=str, allow_nan=False)
    return msgspec.json.format(compact, indent=2)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


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
