"""The habits docs/architecture.md promises, checked on the code: layers, plugin names, upstream
references in module docstrings, no import cycles, every module importable on its own."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "kubetwin"


def _modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def _name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, *, top_level_only: bool = False) -> set[str]:
    """Modules ``path`` imports (relative imports resolved); ``top_level_only``: those a plain
    ``import`` of the module runs (not inside functions, not under ``TYPE_CHECKING``)."""
    tree = ast.parse(path.read_text())
    mod = _name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                out.add(target)
                for a in node.names:   # ``from . import x`` may import submodule x
                    out.add(f"{target}.{a.name}")
            elif top_level_only:
                if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                    continue
                if isinstance(node, (ast.If, ast.Try)):
                    visit(node.body)
                    visit(getattr(node, "orelse", []))
            else:
                visit([n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt)])

    visit(tree.body)
    return out


def test_no_module_below_the_cli_imports_it():
    offenders = [str(p.relative_to(ROOT)) for p in _modules()
                 if "cli" not in p.relative_to(PKG).parts[:1] and p.name != "__main__.py"
                 and any(m == "kubetwin.cli" or m.startswith("kubetwin.cli.") for m in _imports(p))]
    assert offenders == []


def test_no_module_imports_a_module_that_imports_it_back():
    mods = {_name(p): p for p in _modules()}
    graph = {m: {i for i in _imports(p, top_level_only=True) if i in mods and i != m} for m, p in mods.items()}
    cycles = []
    for start in graph:
        stack = [(start, [start])]
        seen: set[str] = set()
        while stack:
            node, path = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    cycles.append(" -> ".join(path + [start]))
                elif nxt not in seen and not nxt.startswith(start + "."):
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
    # a package importing its own submodules is not a cycle (``__init__`` re-exports)
    real = [c for c in cycles if not all(b.startswith(a.rpartition(".")[0]) for a, b in zip(c.split(" -> "),
                                                                                          c.split(" -> ")[1:]))]
    assert real == []


#: run in a fresh interpreter: import each module with no kubetwin module loaded before it
ISOLATED_IMPORTS = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "kubetwin" or m.startswith("kubetwin.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {exc!r}")
print("\\n".join(failed))
"""


def test_every_module_imports_on_its_own():
    names = [_name(p) for p in _modules() if p.name != "__main__.py"]
    out = subprocess.run([sys.executable, "-c", ISOLATED_IMPORTS, *names], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == ""


PLUGIN_FOLDERS = {
    "NodeResourcesFit": "noderesources", "NodeResourcesBalancedAllocation": "noderesources",
    "TaintToleration": "tainttoleration", "NodeAffinity": "nodeaffinity", "NodeName": "nodename",
    "NodePorts": "nodeports", "NodeUnschedulable": "nodeunschedulable", "PodTopologySpread": "podtopologyspread",
    "InterPodAffinity": "interpodaffinity", "DynamicResources": "dynamicresources",
    "NodeResourceTopologyMatch": "noderesourcetopology", "DefaultPreemption": "defaultpreemption",
    "PrioritySort": "queuesort", "SchedulingGates": "schedulinggates", "DefaultBinder": "defaultbinder",
}


def test_a_plugin_is_named_in_code_only_in_its_folder_and_the_registry():
    registry = PKG / "scheduler" / "plugins" / "registry.py"
    offenders = []
    for path in _modules():
        if path == registry:
            continue
        text = path.read_text()
        for name, folder in PLUGIN_FOLDERS.items():
            if (PKG / "scheduler" / "plugins" / folder) in path.parents:
                continue
            if re.search(rf"[\"']{name}[\"']", text):
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []


def test_every_in_tree_plugin_has_its_folder_in_the_registry():
    from kubetwin.scheduler.plugins.registry import IN_TREE

    assert set(IN_TREE) == set(PLUGIN_FOLDERS)
    for name, entry in IN_TREE.items():
        assert f".plugins.{PLUGIN_FOLDERS[name]}." in entry.cls


#: what a module docstring says to name the upstream file it models, or that it models none
UPSTREAM = re.compile(r"\.go\b|pkg/|plugin/pkg/|k8s\.io/|kubernetes-sigs|scheduler-plugins|containers/nri|"
                      r"kernel/sched/|Not an upstream module|kubetwin's own", re.I)


def _says_upstream(path: Path) -> bool:
    return bool(UPSTREAM.search(ast.get_docstring(ast.parse(path.read_text())) or ""))


def test_modules_name_the_upstream_file_they_model():
    missing = sorted(str(p.relative_to(ROOT)) for p in _modules() if not _says_upstream(p))
    assert missing == [], "modules whose docstring names no upstream file (nor says it models none)"
