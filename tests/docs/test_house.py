"""The package's shape: no import cycle, the runtime's rooms in one direction, small folders.

Imports are read from the source (every ``import`` and ``from ... import`` of a bladec
module, at module level, inside functions and under ``TYPE_CHECKING`` alike: a cycle hidden
behind a lazy import is still two concepts in each other's room). A package's implicit
import of its own ``__init__`` is not an edge; a package that imports its children is.
"""
from __future__ import annotations

import ast
import functools
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "bladec"
MAX_MODULES = 12   # modules directly in a folder (issue #36)
# The runtime's rooms, each importing only those after it (docs/architecture.md).
ROOMS = ["bladec.runtime", "bladec.runtime.planning", "bladec.runtime.backends",
         "bladec.runtime.store"]


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The bladec module ``name`` refers to: itself, or the module holding the attribute."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Each bladec module -> the bladec modules it imports anywhere in its text (read once
    a process: two tests ask; callers do not change it)."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                target = _resolve(name, modules)
                if target and target != module:
                    graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_one() -> None:
    """The check can fail: a two-module loop and a three-module loop are both found."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(cycles(graph)) == [["a", "b"], ["c", "d", "e"]]


def _room(module: str) -> str | None:
    return max((r for r in ROOMS if module == r or module.startswith(r + ".")),
               key=len, default=None)


def test_runtime_rooms_import_only_downward() -> None:
    """front -> planning -> backends -> store: a room never imports one before it."""
    wrong = []
    for module, targets in import_graph().items():
        here = _room(module)
        if here is None:
            continue
        for target in targets:
            there = _room(target)
            if there is not None and ROOMS.index(there) < ROOMS.index(here):
                wrong.append(f"{module} -> {target}")
    assert wrong == []


@pytest.mark.parametrize("folder", sorted(
    str(p.relative_to(PACKAGE.parent)) for p in [PACKAGE, *PACKAGE.rglob("*")]
    if p.is_dir() and p.name != "__pycache__"))
def test_folders_are_small(folder: str) -> None:
    here = PACKAGE.parent / folder
    modules = [p for p in here.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(modules) <= MAX_MODULES, f"{folder} holds {len(modules)} modules"


# "none over ~500 lines" (DEVELOPERS: style): a file past this is split by concept, as
# runtime/planning/segments/ and tests/batching/test_autobatch_schedule.py were
MAX_LINES = 550


def test_files_are_short() -> None:
    """Every Python file of the package, its tests and its benchmarks."""
    long = {str(p.relative_to(ROOT)): n for folder in ("bladec", "tests", "benchmarks")
            for p in (ROOT / folder).rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


# What the project's root holds (DEVELOPERS: the project's shape); anything else tracked
# there is a stray (a probe's output once sat there as a 7.8 MB pickle for ten days)
ROOT_ENTRIES = {".ci", ".gitignore", "BENCHMARKS.md", "Makefile", "README.md", "benchmarks",
                "bladec", "docs", "grammar", "samples", "setup.cfg", "setup.py", "tests"}


def test_the_root_holds_only_the_projects_own_entries() -> None:
    """Run from a git checkout, as the suite is (a clean clone on CI)."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True,
                             text=True, timeout=60)
    assert tracked.returncode == 0, tracked.stderr
    entries = {line.split("/")[0] for line in tracked.stdout.splitlines()}
    assert entries - ROOT_ENTRIES == set()


def test_every_module_says_what_it_holds() -> None:
    """A module docstring on every module (an empty package marker excepted)."""
    missing = [str(path.relative_to(PACKAGE.parent)) for path in _modules().values()
               if path.name != "__main__.py" and path.read_text().strip()
               and not ast.get_docstring(ast.parse(path.read_text()))]
    assert missing == []


def test_architecture_page_names_every_subpackage() -> None:
    """docs/architecture.md, linked from the README, names every folder of the package."""
    root = PACKAGE.parent
    page = (root / "docs" / "architecture.md").read_text()
    assert "docs/architecture.md" in (root / "README.md").read_text()
    folders = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*")
                     if p.is_dir() and p.name != "__pycache__")
    assert [f for f in folders if f"{f}/" not in page] == []
