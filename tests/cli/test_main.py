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
    from kubetwin.model.features import normalize_version
    import pytest
    from kubetwin.errors import InputError
    with pytest.raises(InputError, match="not modelled"):
        normalize_version("1.20")
