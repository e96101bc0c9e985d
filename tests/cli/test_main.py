"""The command line: lazy commands, exit statuses, no tracebacks."""

import subprocess
import sys

from kubetwin.cli import main as cli_main


def run(*args, input=None):
    return subprocess.run([sys.executable, "-m", "kubetwin", *args], capture_output=True, text=True, input=input)


def test_help_lists_the_commands_without_importing_them():
    out = run("--help")
    assert out.returncode == 0
    assert "explain" in out.stdout or "schedule" in out.stdout


def test_help_does_not_import_heavy_modules():
    code = ("import sys; from kubetwin.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit: pass\n"
            "heavy = [m for m in ('rich', 'numpy', 'kubetwin.scheduler', 'kubetwin.dra') if m in sys.modules]\n"
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip().endswith("[]"), out.stdout


def test_unknown_command_is_a_usage_error():
    assert run("no-such-command").returncode == 2


def test_every_registered_command_module_exists_or_is_hidden():
    for name, (module, attr, _) in cli_main.COMMANDS.items():
        if cli_main._available(module):
            import importlib
            assert hasattr(importlib.import_module(module), attr), name


def test_unknown_kubernetes_version_is_refused_cleanly(tmp_path):
    import pytest

    from kubetwin.errors import InputError
    from kubetwin.model.features import normalize_version
    with pytest.raises(InputError, match="not modelled"):
        normalize_version("1.20")


# --- conventions: global options anywhere, -f, exit statuses ----------------------------------------------------------
import json  # noqa: E402
from pathlib import Path  # noqa: E402

EX = Path(__file__).resolve().parents[2] / "examples"
ADMIT_CONFLICT = ["admit", "--machine", str(EX / "pod-level/machine.json"), "--config",
                  str(EX / "pod-level/kubelet-container-scope.yaml"), "-f", str(EX / "admit/numa-conflict.yaml")]


def test_global_options_are_accepted_after_the_command_name():
    out = run("gates", "--kubernetes-version", "1.35", "-o", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["kubernetesVersion"] == "1.35"


def test_a_global_option_given_twice_with_different_values_is_a_usage_error():
    out = run("--kubernetes-version", "1.34", "gates", "--kubernetes-version", "1.35")
    assert out.returncode == 2 and "given twice" in out.stderr


def test_strict_after_the_command_turns_warnings_into_errors(tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: []\n")
    args = ("explain", str(pod), "--node", str(EX / "explain/node.yaml"), "-o", "json")
    assert run(*args).returncode == 0
    assert run(*args, "--strict").returncode == 1


def test_strict_mode_of_one_run_does_not_leak_into_the_next_in_the_same_process(tmp_path):
    from click.testing import CliRunner

    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: []\n")
    args = ["explain", str(pod), "--node", str(EX / "explain/node.yaml"), "-o", "json"]
    assert CliRunner().invoke(cli_main.cli, ["--strict", *args]).exit_code == 1
    assert CliRunner().invoke(cli_main.cli, args).exit_code == 0


def test_the_main_input_is_taken_as_f_or_as_the_argument():
    by_f = run("explain", "-f", str(EX / "explain/web.yaml"), "--node", str(EX / "explain/node.yaml"), "-o", "json")
    by_arg = run("explain", str(EX / "explain/web.yaml"), "--node", str(EX / "explain/node.yaml"), "-o", "json")
    assert by_f.returncode == 0 and by_f.stdout == by_arg.stdout


def test_the_main_input_given_twice_or_not_at_all_is_a_usage_error():
    web, node = str(EX / "explain/web.yaml"), str(EX / "explain/node.yaml")
    twice = run("explain", "-f", web, web, "--node", node)
    assert twice.returncode == 2 and "given twice" in twice.stderr
    none = run("explain", "--node", node)
    assert none.returncode == 2 and "missing POD.yaml" in none.stderr


def test_a_rejection_is_an_answer_exit_zero():
    out = run(*ADMIT_CONFLICT, "-o", "json")
    assert out.returncode == 0, out.stderr
    assert [p["admitted"] for p in json.loads(out.stdout)["pods"]] == [True, True, False]


def test_fail_on_reject_exits_3_after_writing_the_answer_and_names_the_rejection():
    out = run(*ADMIT_CONFLICT, "-o", "json", "--fail-on-reject")
    assert out.returncode == 3
    assert len(json.loads(out.stdout)["pods"]) == 3
    assert "pod shop/api: TopologyAffinityError" in out.stderr


def test_fail_on_reject_without_a_rejection_exits_0():
    out = run("--fail-on-reject", "explain", "-f", str(EX / "explain/web.yaml"), "--node", str(EX / "explain/node.yaml"))
    assert out.returncode == 0, out.stderr


def test_help_documents_the_exit_statuses():
    text = " ".join(run("--help").stdout.split())
    assert "Exit status: 0 an answer was given" in text and "3 the answer contains a rejection" in text


def test_group_help_shows_every_summary_whole():
    out = run("dra", "--help").stdout
    commands = out.split("Commands:")[1]
    assert "..." not in commands
    assert "allocator would." in " ".join(commands.split())


def test_every_command_takes_the_global_options_and_o():
    import click

    ctx = click.Context(cli_main.cli)
    for name in cli_main.cli.list_commands(ctx):
        cmd = cli_main.cli.get_command(ctx, name)
        subs = list(cmd.commands.values()) if isinstance(cmd, click.Group) else [cmd]
        for sub in subs:
            opts = {o for p in sub.params for o in getattr(p, "opts", ())}
            assert {"--kubernetes-version", "--strict", "--fail-on-reject", "-o"} <= opts, (name, sub.name)
