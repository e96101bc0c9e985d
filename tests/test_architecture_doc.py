"""docs/architecture.md is true to the tree: every path and module it names exists, and every module
of the package can be found from it (named itself, or a folder that holds it is named).

Paths are read from the page's code spans (``kubetwin/sim/loop.py``, ``kubetwin/runtime/{node,run}.py``,
``cli/admit.py``; a bare ``convert.py`` beside ``kubetwin/dra/api.py`` in one table row or paragraph is
its sibling),
dotted names from its diagrams and tables (``kubetwin.kubelet``, ``sim.sweep.run_all``: the module
must exist and define the name), and the files of the scheduler's tree from that indented block.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "kubetwin"
DOC = ROOT / "docs" / "architecture.md"

#: roots a path the page writes without ``kubetwin/`` is looked up under, in order
BASES = (ROOT, PKG, PKG / "scheduler", PKG / "scheduler" / "plugins")
PATH_SPAN = re.compile(r"^(?:\.\./)?[\w.{},<>/-]*(?:/|\.py|\.md|\.ya?ml|\.js|\.css|\.html)$")
TOP = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def _expand(span: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", span)
    if not m:
        return [span]
    return [x for part in m.group(1).split(",") for x in _expand(span[:m.start()] + part + span[m.end():])]


def _resolve(name: str, near: Path | None) -> Path | None:
    bases = ([near] if near is not None else []) + list(BASES)
    for base in bases:
        p = base / name
        if p.exists():
            return p
    return None


def _is_path(span: str) -> bool:
    """A file name (``loop.py``, ``fastpath/``) or a path from a folder of the tree (``tests/kubelet``);
    not an API group (``resource.k8s.io/v1``), a URL path or a placeholder (``<plugin>/``)."""
    if span.startswith(("../", "/")) or "<" in span or " " in span or not re.fullmatch(r"[\w.{},/-]+", span):
        return False
    first = span.split("/")[0]
    return bool(PATH_SPAN.match(span)) or ("/" in span and any((b / first).is_dir() for b in BASES))


def _spans(line: str) -> list[str]:
    return re.findall(r"`([^`]+)`", line)


def _paragraphs(lines: list[str]) -> list[list[int]]:
    """Line indexes grouped as the page reads them: each table row alone, other text by paragraph."""
    groups: list[list[int]] = []
    for i, line in enumerate(lines):
        joins = bool(groups) and line.strip() and not line.startswith("|") and lines[i - 1].strip() \
            and not lines[i - 1].startswith("|")
        if joins:
            groups[-1].append(i)
        elif line.strip():
            groups.append([i])
    return groups


def named_paths() -> list[tuple[int, str, Path | None]]:
    """(line, as written, the path it names or None) for every path in the page's code spans; a
    relative name is looked up beside the folders and files its line or paragraph names first."""
    lines = DOC.read_text().splitlines()
    out = []
    for group in _paragraphs(lines):
        names = [(i, name) for i in group for span in _spans(lines[i])
                 if _is_path(span)
                 for name in _expand(span)]
        near = {p if p.is_dir() else p.parent
                for _, name in names if "/" in name
                for p in [_resolve(name, None)] if p is not None}
        for i, name in names:
            found = next((p for p in (_resolve(name, d) for d in sorted(near)) if p is not None), None)
            out.append((i + 1, name, found or _resolve(name, None)))
    return out


@cache
def _defined(module: Path) -> frozenset[str]:
    tree = ast.parse(module.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


def _module_file(parts: list[str]) -> Path | None:
    p = PKG.joinpath(*parts)
    if (p / "__init__.py").exists():
        return p / "__init__.py"
    if p.with_suffix(".py").exists():
        return p.with_suffix(".py")
    return None


def resolve_dotted(name: str) -> bool:
    """``kubetwin.sim``, ``sim.sweep.run_all``, ``runtime.node.RuntimeNode``: the longest prefix is a
    module of the package and the next part is defined in it (a submodule counts)."""
    parts = name.split(".")
    if parts[0] == "kubetwin":
        parts = parts[1:]
    for k in range(len(parts), 0, -1):
        module = _module_file(parts[:k])
        if module is None:
            continue
        return k == len(parts) or parts[k] in _defined(module)
    return False


def named_modules() -> list[tuple[int, str]]:
    """(line, name) for the dotted names of the package the page writes: the diagram's
    ``kubetwin.X`` and the code spans that start with a subpackage (``sim.loop``)."""
    out = []
    for n, line in enumerate(DOC.read_text().splitlines(), 1):
        for name in re.findall(r"\bkubetwin(?:\.\w+)+(?![\w/])", line):
            out.append((n, name))
        for span in _spans(line):
            for m in re.finditer(r"\b(\w+(?:\.\w+)+)", span):
                if m.group(1).split(".")[0] in TOP and not re.search(r"\.(py|md|ya?ml)$", m.group(1)):
                    out.append((n, m.group(1)))
    return out


def scheduler_tree() -> list[tuple[int, str, Path | None]]:
    """The folders and ``.py`` files of the indented ``scheduler/`` tree, each looked up under its folder."""
    lines = DOC.read_text().splitlines()
    start = lines.index("    scheduler/")
    out = []
    folder = PKG / "scheduler"
    for n in range(start + 1, len(lines)):
        line = lines[n]
        if line.strip() and not line.startswith("    "):
            break
        head = re.match(r"^ {6,8}([\w<>]+/|\w+\.py)", line)
        if head and head.group(1).endswith("/") and "<" not in head.group(1):
            base = PKG / "scheduler" / ("plugins" if line.startswith("        ") else "")
            folder = base / head.group(1)
            out.append((n + 1, head.group(1), folder if folder.is_dir() else None))
        for word in re.findall(r"\b(\w+\.py)\b", line):
            hits = [p for p in folder.rglob(word)] or [p for p in (PKG / "scheduler").rglob(word)]
            out.append((n + 1, word, hits[0] if hits else None))
    return out


def test_the_page_names_paths_to_check():
    assert len(named_paths()) > 150 and len(named_modules()) > 40 and len(scheduler_tree()) > 30


def test_every_path_the_page_names_exists():
    missing = [f"docs/architecture.md:{n}: {name}" for n, name, found in named_paths() if found is None]
    assert missing == []


def test_every_module_the_page_names_exists():
    missing = [f"docs/architecture.md:{n}: {name}" for n, name in named_modules() if not resolve_dotted(name)]
    assert missing == []


def test_every_file_of_the_scheduler_tree_exists():
    missing = [f"docs/architecture.md:{n}: {name}" for n, name, found in scheduler_tree() if found is None]
    assert missing == []


def test_every_module_of_the_package_is_findable_from_the_page():
    named = {p.resolve() for _, _, p in named_paths() + scheduler_tree() if p is not None}
    for _, name in named_modules():
        parts = name.split(".")[1:] if name.startswith("kubetwin.") else name.split(".")
        for k in range(len(parts), 0, -1):
            module = _module_file(parts[:k])
            if module is not None:
                if module.name != "__init__.py":  # a package's dotted name (``kubetwin.sim``) finds no module
                    named.add(module.resolve())
                break
    named.discard(PKG.resolve())  # the package itself finds nothing
    lost = []
    for path in sorted(PKG.rglob("*.py")):
        if "__pycache__" in path.parts or path.name in ("__init__.py", "__main__.py"):
            continue
        chain = [path.resolve()] + [p.resolve() for p in path.parents if PKG in p.parents]
        if not any(c in named for c in chain):
            lost.append(str(path.relative_to(ROOT)))
    assert lost == [], "modules neither named in docs/architecture.md nor under a folder it names"
