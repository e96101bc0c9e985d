"""Specifications of the web UI's files: shipped with the package (``pyproject.toml``'s package
data, not ignored by git), every ES module import resolving to one of them, no address of
another host in any (no CDN: the UI works without a network)."""

from __future__ import annotations

import re
import subprocess
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

from kubetwin.serve.app import STATIC

ROOT = Path(__file__).resolve().parents[2]
ASSETS = sorted(p for p in STATIC.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
IMPORT = re.compile(r"""^\s*import\s[^'"]*?from\s+["']([^"']+)["']|^\s*import\s+["']([^"']+)["']""", re.M)


def test_the_static_folder_is_the_installed_packages():
    installed = Path(str(files("kubetwin.serve") / "static"))
    assert installed.resolve() == STATIC.resolve() and (installed / "index.html").is_file()


def test_the_shell_the_router_and_a_module_per_view_are_there():
    names = {p.relative_to(STATIC).as_posix() for p in ASSETS}
    assert {"index.html", "app.js", "style.css", "lib/table.js", "lib/api.js"} <= names
    assert {f"views/{v}.js" for v in ("overview", "node", "pod", "pending", "simulations")} <= names


def test_every_asset_is_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["kubetwin"]
    package = ROOT / "kubetwin"
    covered = {p.resolve() for pattern in data for p in package.glob(pattern)}
    assert [p for p in ASSETS if p.resolve() not in covered] == []


def test_no_asset_is_ignored_by_git():
    try:
        out = subprocess.run(["git", "check-ignore", *map(str, ASSETS)], cwd=ROOT, capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("git is not installed")
    if out.returncode == 128:
        pytest.skip("not a git work tree")
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("module", [p for p in ASSETS if p.suffix == ".js"], ids=lambda p: p.relative_to(STATIC).as_posix())
def test_every_import_of_a_module_is_a_shipped_file(module):
    for m in IMPORT.finditer(module.read_text()):
        target = (module.parent / (m.group(1) or m.group(2))).resolve()
        assert target in {p.resolve() for p in ASSETS}, f"{module.name} imports {m.group(0).strip()}"


def test_no_asset_loads_anything_from_another_host():
    for p in ASSETS:
        text = p.read_text()
        hosts = [u for u in re.findall(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^\s\"'`)]*", text)
                 if u != "http://www.w3.org/2000/svg"]   # the SVG namespace, a name, never fetched
        assert hosts == [], f"{p.name}: {hosts}"
