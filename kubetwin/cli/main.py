"""Entry point. Commands are imported only when run, so ``kubetwin --help`` and a one-pod
``kubetwin explain`` start fast (the conformance runner starts the CLI once per case)."""

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
    "gates": ("kubetwin.cli.gates", "gates", "Feature gates of a Kubernetes version: default, maturity, lock."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(n for n, spec in COMMANDS.items() if _available(spec[0]))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = COMMANDS.get(name)
        if spec is None or not _available(spec[0]):
            return None
        module = importlib.import_module(spec[0])
        return getattr(module, spec[1])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, COMMANDS[n][2]) for n in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="kubetwin")
@click.option("--kubernetes-version", "kubernetes_version", default=None, metavar="1.NN",
              help="Kubernetes minor version whose defaults and feature gates apply (default: the newest known).")
@click.option("--strict", "strict", is_flag=True, default=False,
              help="Treat warnings (inputs Kubernetes accepts but kubetwin cannot model exactly) as errors.")
@click.pass_context
def cli(ctx: click.Context, kubernetes_version: str | None, strict: bool) -> None:
    """kubetwin: what Kubernetes would do with these pods on these nodes, exactly and fast."""
    from kubetwin.diagnostics import set_strict
    from kubetwin.model.apischema import set_schema_version

    ctx.ensure_object(dict)
    ctx.obj["kubernetes_version"] = kubernetes_version
    ctx.obj["strict"] = strict
    set_strict(strict)
    set_schema_version(kubernetes_version)  # also refuses a malformed version before any work


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI; any kubetwin error becomes one line on stderr and exit status 1."""
    from kubetwin.errors import KubetwinError

    try:
        return cli.main(args=argv, prog_name="kubetwin", standalone_mode=False)
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
