"""Helpers shared by the commands: output formats, the main input (``-f`` or an argument), global
options accepted after the command name, the outcome that ``--fail-on-reject`` turns into exit
status 3, and help text that is never cut.

Exit statuses (the same for every command, documented in ``kubetwin --help`` and the README):

* 0 — an answer was given; a rejection, an unschedulable pod or an unsatisfiable claim is an answer;
* 1 — bad input (a file, a field, an option's value): one ``error:`` line naming the file and field;
* 2 — usage error (unknown command or option, missing argument);
* 3 — with ``--fail-on-reject`` only: the answer contains a rejection (see :func:`rejected`).

Not an upstream module: kubetwin's own command-line plumbing.
"""

from __future__ import annotations

import json
import sys
import weakref
from typing import Any, Callable, Iterable, Literal, overload

import click

OUTPUT_FORMATS = ("table", "json", "yaml")

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_REJECTED = 0, 1, 2, 3

EXIT_STATUS_HELP = ("Exit status: 0 an answer was given (a rejection is an answer), 1 bad input, 2 usage error, "
                    "3 a rejection with --fail-on-reject.")


def output_option(default: str = "table", choices: tuple[str, ...] = OUTPUT_FORMATS) -> Callable:
    return click.option("-o", "--output", "output", type=click.Choice(choices), default=default, show_default=True,
                        help="Output format.")


def kubernetes_version(ctx: click.Context) -> str | None:
    """The ``--kubernetes-version`` given to the top-level command or after the command name."""
    root = ctx.find_root()
    return (root.obj or {}).get("kubernetes_version")


# --- the outcome of a run: rejections for --fail-on-reject ---------------------------------------------------------
class Outcome:
    """What the command answered, beyond its output: the rejections it reported."""

    def __init__(self) -> None:
        self.fail_on_reject = False
        self.rejections: list[str] = []


OUTCOME = Outcome()


def reset_outcome() -> Outcome:
    global OUTCOME
    OUTCOME = Outcome()
    return OUTCOME


def rejected(what: str | Iterable[str]) -> None:
    """Record that the answer contains a rejection (a pod the kubelet refused, an unschedulable pod,
    an unsatisfiable claim): still exit status 0, unless ``--fail-on-reject`` asks for 3."""
    if isinstance(what, str):
        OUTCOME.rejections.append(what)
    else:
        OUTCOME.rejections.extend(what)


# --- global options, also accepted after the command name ----------------------------------------------------------
def _set_root(ctx: click.Context, key: str, value: Any, flag: str) -> None:
    obj = ctx.find_root().ensure_object(dict)
    previous = obj.get(key)
    if previous not in (None, False) and previous != value:
        raise click.UsageError(f"{flag} given twice with different values ({previous} and {value})", ctx=ctx)
    obj[key] = value


def _version_callback(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is None:
        return
    from kubetwin.model.apischema import set_schema_version

    _set_root(ctx, "kubernetes_version", value, "--kubernetes-version")
    set_schema_version(value)  # refuses a malformed or unknown version before any work


def _strict_callback(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value:
        return
    from kubetwin.diagnostics import set_strict

    _set_root(ctx, "strict", True, "--strict")
    set_strict(True)


def _no_defaulting_callback(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        from kubetwin.model.defaulting import set_api_defaulting

        _set_root(ctx, "no_api_defaulting", True, "--no-api-defaulting")
        set_api_defaulting(False)


def _fail_callback(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        _set_root(ctx, "fail_on_reject", True, "--fail-on-reject")
        OUTCOME.fail_on_reject = True


def _trace_callback(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is None:
        return
    from kubetwin import tracing

    _set_root(ctx, "trace", value, "--trace")
    if tracing.ACTIVE is not None and ctx.find_root().obj.get("trace_started"):
        return
    session = tracing.start(value, (ctx.info_name or "") if ctx.parent is not None else "")
    ctx.find_root().obj["trace_started"] = True
    ctx.find_root().call_on_close(lambda: tracing.stop(ok=sys.exc_info()[0] is None))
    del session


VERSION_HELP = "Kubernetes minor version whose defaults, feature gates and API apply (default: the newest known)."
STRICT_HELP = "Treat warnings (inputs Kubernetes accepts but kubetwin cannot model exactly) as errors (exit status 1)."
NO_DEFAULTING_HELP = "Take pods exactly as written, without the API server's defaulting (requests from limits, " \
                     "pod-level requests), as the upstream unit tests pass them to kubelet functions."
TRACE_HELP = ("Export OpenTelemetry traces of each decision (scheduling cycles, kubelet admissions, DRA, "
              "eviction) to file:PATH (OTLP JSON) or an OTLP/HTTP collector: otlp://HOST:PORT or "
              "http(s)://HOST:PORT[/v1/traces]. In simulate, span times are the scenario's clock.")
FAIL_HELP = "Exit with status 3 when the answer contains a rejection (kubelet or admission rejection, " \
            "unschedulable pod, unsatisfiable claim); the output is written as usual."


def global_option_decorators(eager: bool = True) -> list[Callable]:
    """``--kubernetes-version``, ``--strict``, ``--fail-on-reject``: given before or after the command."""
    return [
        click.option("--kubernetes-version", metavar="1.NN", default=None, expose_value=False, is_eager=eager,
                     callback=_version_callback, help=VERSION_HELP),
        click.option("--strict", is_flag=True, default=False, expose_value=False, is_eager=eager,
                     callback=_strict_callback, help=STRICT_HELP),
        click.option("--fail-on-reject", is_flag=True, default=False, expose_value=False, is_eager=eager,
                     callback=_fail_callback, help=FAIL_HELP),
        click.option("--no-api-defaulting", is_flag=True, default=False, expose_value=False, is_eager=eager,
                     callback=_no_defaulting_callback, help=NO_DEFAULTING_HELP),
        click.option("--trace", metavar="TARGET", default=None, expose_value=False, is_eager=eager,
                     callback=_trace_callback, help=TRACE_HELP),
    ]


#: commands already given the global options
_WITH_GLOBALS: weakref.WeakSet[click.Command] = weakref.WeakSet()


def add_global_options(cmd: click.Command) -> click.Command:
    """Give ``cmd`` (and a group's subcommands) the global options, once."""
    if cmd in _WITH_GLOBALS:
        return cmd
    names = {o for p in cmd.params for o in getattr(p, "opts", ())}
    for deco in global_option_decorators():
        probe = deco(lambda: None)
        param = probe.__click_params__[0]
        if not names & set(param.opts):
            cmd.params.append(param)
    _WITH_GLOBALS.add(cmd)
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            add_global_options(sub)
    return cmd


# --- the main input: -f FILE or an argument --------------------------------------------------------------------------
def filename_option(metavar: str, help: str, multiple: bool = False) -> Callable:
    """``-f/--filename``, as kubectl takes its input; the positional argument stays accepted."""
    return click.option("-f", "--filename", "filename", multiple=multiple, default=None, metavar=metavar,
                        help=help + " (or as the argument)")


@overload
def main_input(positional: str | None, option: str | None, metavar: str, *,
               required: Literal[True] = True) -> str: ...


@overload
def main_input(positional: str | None, option: str | None, metavar: str, *, required: bool) -> str | None: ...


def main_input(positional: str | None, option: str | None, metavar: str, *, required: bool = True) -> str | None:
    """The one main input file, given as ``-f FILE`` or as the argument (not both, at least one)."""
    if positional is not None and option is not None:
        raise click.UsageError(f"{metavar} given twice: as -f {option} and as the argument {positional}")
    value = positional if positional is not None else option
    if value is None and required:
        raise click.UsageError(f"missing {metavar}: give it as -f {metavar} or as the argument")
    return value


# --- help that is never cut -------------------------------------------------------------------------------------------
def short_help(cmd: click.Command) -> str:
    """The first sentence of a command's help, whole (click cuts it at 45 characters)."""
    if cmd.short_help:
        return cmd.short_help
    text = (cmd.help or "").strip().split("\n\n")[0]
    return " ".join(text.split())


class FullHelpGroup(click.Group):
    """A command group whose command list shows each summary whole."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, short_help(cmd)) for name in self.list_commands(ctx)
                if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


# --- output ------------------------------------------------------------------------------------------------------------
def plain(value: Any) -> Any:
    """Plain JSON/YAML data: mappings and sequences of any kind become dicts and lists (no Python
    objects, no repeated objects that YAML would write as ``&id001`` anchors)."""
    if isinstance(value, dict) or hasattr(value, "items") and callable(value.items):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return [plain(v) for v in items]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


class _NoAliasDumper:  # built lazily (yaml is imported only when YAML is written)
    cls: Any = None


def _dumper() -> Any:
    if _NoAliasDumper.cls is None:
        import yaml

        class Dumper(yaml.SafeDumper):
            def ignore_aliases(self, data: Any) -> bool:  # never &id001 / *id001
                return True

        _NoAliasDumper.cls = Dumper
    return _NoAliasDumper.cls


def to_yaml(data: Any, *, all_documents: bool = False) -> str:
    """YAML without anchors and aliases, keys in the order given."""
    import yaml

    if all_documents:
        return yaml.dump_all([plain(d) for d in data], Dumper=_dumper(), sort_keys=False, default_flow_style=False,
                             allow_unicode=True)
    return yaml.dump(plain(data), Dumper=_dumper(), sort_keys=False, default_flow_style=False, allow_unicode=True)


def inline(value: Any) -> str:
    """A value for one table cell or text line: compact JSON for structures, never a Python repr."""
    if isinstance(value, str):
        return value
    return json.dumps(plain(value), separators=(", ", ": "), ensure_ascii=False)


def emit_data(data: Any, output: str) -> None:
    """Write machine-readable output (JSON or YAML) to stdout."""
    if output == "json":
        sys.stdout.write(json_text(plain(data)) + "\n")
    elif output == "yaml":
        sys.stdout.write(yaml_text(plain(data)))
    else:  # pragma: no cover - callers render tables themselves
        raise ValueError(output)


def _no_aliases(_dumper: Any, _data: Any) -> bool:
    """``Dumper.ignore_aliases``: never an anchor."""
    return True


def yaml_text(data: Any) -> str:
    """YAML as ``yaml.safe_dump`` writes it, with libyaml's emitter (fast on big machines) and
    never an anchor: an object that appears twice is written out twice, as kubectl does."""
    import yaml

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    dumper = type("Dumper", (base,), {"ignore_aliases": _no_aliases})
    return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=False)


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
    No emoji codes: a name like ``default:x:`` is text, not ❌.
    """
    import os
    import sys

    from rich.console import Console

    width = None
    if not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        width = 120
    return Console(highlight=False, soft_wrap=False, width=width, emoji=False)


API_DEFAULTING_HELP = ("Read pods as the API server stores them (requests defaulted from limits, pod-level "
                       "requests). Without it this command takes pods as written, as the kubelet functions it "
                       "models are given them in upstream's unit tests; a pod the defaulting would change is "
                       "named on stderr.")


def api_defaulting_option() -> Callable:
    """``--api-defaulting`` for the commands that model kubelet functions on a pod file (``explain``,
    ``evict``): their contract (the conformance FORMAT.md) evaluates pods exactly as written."""
    return click.option("--api-defaulting", "api_defaulting", is_flag=True, default=False, help=API_DEFAULTING_HELP)


def pods_as_written(api_defaulting: bool) -> None:
    """Before the command reads its pods: take them as written unless ``--api-defaulting``."""
    if not api_defaulting:
        from ..model.defaulting import set_api_defaulting

        set_api_defaulting(False)


def warn_if_defaulting_changes(pods: Iterable[Any], api_defaulting: bool) -> None:
    """Name each pod the API server would store differently (a container with limits and no requests
    is Guaranteed once stored, Burstable as written) — never a silent difference."""
    if api_defaulting:
        return
    from ..diagnostics import warn
    from ..model.apischema import schema_version
    from ..model.defaulting import default_pod
    from ..model.features import gates_for

    pod_level = gates_for(schema_version()).enabled("PodLevelResources")
    for p in pods:
        if default_pod(p, pod_level=pod_level) != p:
            warn(f"pod {p.metadata.namespace or 'default'}/{p.metadata.name}: evaluated as written; the API server "
                 "would store it with requests defaulted from limits (pass --api-defaulting to evaluate it as "
                 "stored)")
