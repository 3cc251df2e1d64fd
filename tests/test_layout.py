"""The package layout stays a table of contents: no import cycle in biotok/ nor biotok_train/,
biotok/ never imports biotok_train/, and an import inside a function says why it is there.

Imports inside functions count too: a lazy import that closes a loop is still a loop a reader
has to untangle (the old ``load`` facade was one).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: str) -> dict[str, set[str]]:
    """Module -> modules of the same package it imports (a child importing its parent excluded)."""
    mods = {module_name(p): p for p in (REPO / package).rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            graph[m] |= {n for n in names if n in mods and n != m and not m.startswith(n + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", ["biotok", "biotok_train"])
def test_no_import_cycle(package: str) -> None:
    graph = import_graph(package)
    assert graph, f"{package}/ holds no module"
    assert cycles(graph) == []


def package_graph(graph: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """Sub-package (or top-level module) -> the others it imports, from a module graph
    (:func:`import_graph`): a package is one floor, so two packages that import each other through
    any of their modules, lazy imports included, are a cycle even when no two modules are."""
    unit = lambda m: ".".join(m.split(".")[:2])  # noqa: E731
    units: dict[str, set[str]] = {}
    for m, names in graph.items():
        if m == package:  # the package's facade re-exports everything: it is the roof, not a floor
            continue
        units.setdefault(unit(m), set()).update(unit(n) for n in names if n != package and unit(n) != unit(m))
    return {k: v & set(units) for k, v in units.items()}


def test_package_graph_sees_a_cycle_through_different_modules() -> None:
    modules = {"p": {"p.a.x"}, "p.a.x": {"p.b.y"}, "p.b.z": {"p.a.w"}, "p.a.w": set(), "p.b.y": set(), "p.c": {"p.a.x"}}
    assert cycles(modules) == []  # no two modules import each other...
    assert cycles(package_graph(modules, "p")) == [["p.a", "p.b"]]  # ...but the packages a and b do


@pytest.mark.parametrize("package", ["biotok", "biotok_train"])
def test_no_import_cycle_between_packages(package: str) -> None:
    """evaluate <-> pretrain, evaluate <-> finetune and evaluate <-> tasks once imported each other
    through different modules, which the module test above does not see."""
    assert cycles(package_graph(import_graph(package), package)) == []


# --- imports across packages and inside functions ------------------------------------------------
def imports(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, imported module) of every import in ``source`` (the text of ``module``): top level,
    inside functions and classes, relative ones resolved, and ``import_module("...")`` calls with
    a literal name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append((node.lineno, str(node.module)))
        elif isinstance(node, ast.ImportFrom):
            parts = module.split(".")
            base = parts[: len(parts) - node.level + is_package]
            found.append((node.lineno, ".".join(base + ([node.module] if node.module else []))))
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"):
            found.append((node.lineno, node.args[0].value))
    return found


def imports_of(package: str, target: str) -> list[str]:
    """'file:line: imports X' for every import of ``target`` (or a submodule) in ``package``."""
    out = []
    for p in sorted((REPO / package).rglob("*.py")):
        for line, name in imports(p.read_text(encoding="utf-8"), module_name(p), p.name == "__init__.py"):
            if name == target or name.startswith(target + "."):
                out.append(f"{p.relative_to(REPO)}:{line}: imports {name}")
    return out


def test_import_walk_sees_lazy_relative_and_dynamic_imports() -> None:
    src = ("import os\n"
           "def f():\n    from biotok_train.tasks import load\n"
           "class C:\n    def g(self):\n        from ..x import y\n"
           "def h():\n    import importlib\n    return importlib.import_module('biotok_train.cli')\n")
    got = imports(src, "pkg.sub.mod")
    assert sorted(got) == [(1, "os"), (3, "biotok_train.tasks"), (6, "pkg.x"), (8, "importlib"), (9, "biotok_train.cli")]


def test_biotok_never_imports_biotok_train() -> None:
    """The core stands alone: no import of the companion anywhere in biotok/, lazy ones included."""
    assert imports_of("biotok", "biotok_train") == []


def unmarked_lazy_imports(source: str) -> list[int]:
    """Lines of imports inside a function without a ``# lazy: <why>`` comment: on the import's
    own line(s), or the comment line above the block of imports (blank lines between) it is in."""
    lines = source.splitlines()
    tree = ast.parse(source)
    in_functions = {n for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                    for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
    import_lines = {i for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                    for i in range(n.lineno, n.end_lineno + 1)}
    bad = []
    for n in sorted(in_functions, key=lambda n: n.lineno):
        if any("# lazy:" in lines[i - 1] for i in range(n.lineno, n.end_lineno + 1)):
            continue
        i = n.lineno - 1
        while i >= 1 and (i in import_lines or not lines[i - 1].strip()):
            i -= 1
        if not (i >= 1 and lines[i - 1].strip().startswith("# lazy:")):
            bad.append(n.lineno)
    return bad


def test_lazy_import_check_wants_a_reason() -> None:
    src = ("def f():\n    import json\n"
           "def g():\n    # lazy: numpy stays out of import time\n    import numpy\n\n    import regex\n"
           "def h():\n    import torch  # lazy: keeps torch out\n")
    assert unmarked_lazy_imports(src) == [2]


#: packages whose in-function imports are all marked; biotok_train joins once its move settles
LAZY_CHECKED = ("biotok",)


@pytest.mark.parametrize("package", LAZY_CHECKED)
def test_every_lazy_import_says_why(package: str) -> None:
    """An import inside a function is there to keep something heavy (torch, matplotlib, numpy...)
    out of import time, or an optional library out of the default install; a comment says which."""
    bad = [f"{p.relative_to(REPO)}:{line}" for p in sorted((REPO / package).rglob("*.py"))
           for line in unmarked_lazy_imports(p.read_text(encoding="utf-8"))]
    assert bad == []
