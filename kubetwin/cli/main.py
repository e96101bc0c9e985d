"""Entry point. Commands are imported only when run, so ``kubetwin --help`` and a one-pod
``kubetwin explain`` start fast (the conformance runner starts the CLI once per case).

The global options (``--kubernetes-version``, ``--strict``, ``--fail-on-reject``, ``--trace``) are accepted
before or after the command name; every error becomes one line on stderr with the exit statuses
of :mod:`kubetwin.cli.common` (0 answer, 1 bad input, 2 usage, 3 rejection with --fail-on-reject).

Not an upstream module: kubetwin's own command line.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import click

# command name -> (module, attribute, one-line help shown by --help without importing it)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "explain": ("kubetwin.cli.explain", "explain", "QoS class, cgroup values and OOM scores of a pod, with the rules that gave them."),
    "discover": ("kubetwin.cli.topology", "discover", "Describe this machine's hardware topology (MachineInfo, NRT, YAML or a picture)."),
    "topology": ("kubetwin.cli.topology", "topology", "Read a machine description (MachineInfo, sysfs, hwloc XML, spec) and show or convert it."),
    "admit": ("kubetwin.cli.admit", "admit", "Kubelet admission and allocation of pods on one node (CPU, memory, devices)."),
    "dra": ("kubetwin.cli.dra", "dra", "Dynamic Resource Allocation: allocate claims, explain, publish ResourceSlices."),
    "schedule": ("kubetwin.cli.schedule", "schedule", "One kube-scheduler cycle for a pod, explained per node and plugin."),
    "evict": ("kubetwin.cli.evict", "evict", "The kubelet's eviction ranking and eviction manager over time."),
    "simulate": ("kubetwin.cli.simulate", "simulate", "Replay a workload on a cluster over time: scheduler + every kubelet, HTML report."),
    "snapshot": ("kubetwin.cli.snapshot", "snapshot", "Merge kubectl dumps into one cluster, written as a scenario folder."),
    "plan": ("kubetwin.cli.plan", "plan", "Size a cluster: the fewest (or cheapest) nodes of given types that run a workload, "
             "kubelet admission included."),
    "serve": ("kubetwin.cli.serve", "serve", "Serve a cluster over HTTP: what-if API, kubelet-aware scheduler extender, metrics."),
    "gates": ("kubetwin.cli.gates", "gates", "Feature gates of a Kubernetes version: default, maturity, lock."),
    "runtime": ("kubetwin.cli.runtime", "runtime", "One node below the kubelet: NRI plugins and resource policies "
                "(topology-aware, balloons) placing containers."),
}


class LazyGroup(click.Group):
    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        if parent is None:  # a fresh run (also the second of two in one process): no state carried over
            from .common import reset_outcome

            reset_outcome()
            if "kubetwin.diagnostics" in sys.modules:  # (not imported yet: nothing to reset, nothing to pay)
                sys.modules["kubetwin.diagnostics"].set_strict(False)
            if "kubetwin.model.apischema" in sys.modules:
                sys.modules["kubetwin.model.apischema"].set_schema_version(None)
            if "kubetwin.model.defaulting" in sys.modules:
                sys.modules["kubetwin.model.defaulting"].set_api_defaulting(True)
            if "kubetwin.tracing" in sys.modules:
                sys.modules["kubetwin.tracing"].stop(ok=False)
        return super().make_context(info_name, args, parent=parent, **extra)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(n for n, spec in COMMANDS.items() if _available(spec[0]))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = COMMANDS.get(name)
        if spec is None or not _available(spec[0]):
            return None
        module = importlib.import_module(spec[0])
        from .common import add_global_options

        tracing = sys.modules.get("kubetwin.tracing")
        if tracing is not None and tracing.ACTIVE is not None and not tracing.ACTIVE.command:
            tracing.ACTIVE.command = name   # --trace given before the command name

        return add_global_options(getattr(module, spec[1]))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, COMMANDS[n][2]) for n in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


_EPILOG = ("Global options may also come after the command name (kubetwin explain ... --kubernetes-version 1.35). "
           "-f FILE names input files as kubectl's -f does: the main input of explain, admit, evict, topology and "
           "simulate (also accepted as an argument), the cluster's objects for schedule and dra. Every command "
           "writes -o table|json|yaml.\n\n"
           "Exit status: 0 an answer was given (a rejection, an unschedulable pod or an unsatisfiable claim is "
           "an answer); 1 bad input (the message names the file and field); 2 usage error; 3 the answer contains a "
           "rejection and --fail-on-reject was given.")


def _global_options(f: Any) -> Any:
    from .common import global_option_decorators

    for deco in reversed(global_option_decorators(eager=False)):
        f = deco(f)
    return f


@click.group(cls=LazyGroup, epilog=_EPILOG,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(package_name="kubetwin")
@_global_options
@click.pass_context
def cli(ctx: click.Context) -> None:
    """kubetwin: what Kubernetes would do with these pods on these nodes, exactly and fast."""
    ctx.ensure_object(dict)


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI; any kubetwin error becomes one line on stderr and exit status 1."""
    from kubetwin.errors import KubetwinError

    from . import common

    try:
        result = cli.main(args=argv, prog_name="kubetwin", standalone_mode=False)
        outcome = common.OUTCOME
        if outcome.fail_on_reject and outcome.rejections:
            shown = "; ".join(outcome.rejections[:3]) + (f"; ... {len(outcome.rejections) - 3} more"
                                                         if len(outcome.rejections) > 3 else "")
            click.echo(f"rejected (--fail-on-reject, exit status {common.EXIT_REJECTED}): {shown}", err=True)
            sys.stdout.flush()
            sys.exit(common.EXIT_REJECTED)
        return result
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.exceptions.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KubetwinError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except BrokenPipeError:
        sys.exit(1)
    except OSError as exc:  # a file we were told to read or write: never a traceback
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        click.echo(f"error: {where}{exc.strerror or exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except RecursionError:
        click.echo("error: input is nested too deeply", err=True)
        sys.exit(1)
    except MemoryError:
        click.echo("error: out of memory: the input is too large", err=True)
        sys.exit(1)
    except OverflowError as exc:  # a quantity past int64 reached the vectorised scheduler (its amounts are int64)
        click.echo(f"error: a number in the input is too large to compute with ({exc}); Kubernetes computes "
                   "requests and capacities as 64-bit milli-units", err=True)
        sys.exit(1)
