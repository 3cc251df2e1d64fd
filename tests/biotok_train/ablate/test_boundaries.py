"""One place for each idea, read from the source: no code outside ``ablate.keys`` parses a job key
(``Key.parse`` does), and no code outside ``ablate.store`` opens an archive (``tarfile``: the store's
bounded reader is the only one of an archive from another machine); and the modules import one another
without a cycle (the plan needs the jobs, the jobs need the store's Layout: never the plan)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
# the engine, its command and the recipes over it
SCOPE = [*sorted((REPO / "biotok_train" / "ablate").glob("*.py")), REPO / "biotok_train" / "cli" / "ablate.py",
         *sorted((REPO / "benchmarks" / "experiments").glob("*.py"))]
# a job key taken apart by hand: split on "/", a regex of a seed or step part, a record's name cut out of jobs/
PARSING = re.compile(r"""split\(\s*["']/["']|/[pfk]\(\\d|/[pfk]\\d|len\(\s*["']jobs/["']\s*\)""")
NOT_KEYS = {  # what these split is not a job key
    "time_to_verdict.py": "timings.json's ARM/seedN of the probe and SIZE/ARM/... of ablations before costs.json",
}
OTHER_ARCHIVES = {"table9_minilm.py": "the WMT corpus's own tarball, an input, not records"}


def _rel(p: Path) -> str:
    return p.relative_to(REPO).as_posix()


def test_the_scope_is_what_it_says():
    names = {p.name for p in SCOPE}
    assert {"keys.py", "store.py", "slots.py", "estimate.py", "ablation_gpu_fr.py", "transfer_cpu.py"} <= names


@pytest.mark.parametrize("path", [p for p in SCOPE if p.name != "keys.py"], ids=_rel)
def test_no_code_outside_keys_parses_a_job_key(path):
    if path.name in NOT_KEYS:
        return
    hits = [f"{_rel(path)}:{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
            if PARSING.search(line)]
    assert not hits, "a job key parsed outside ablate.keys (use Key.parse):\n" + "\n".join(hits)


@pytest.mark.parametrize("path", [p for p in SCOPE if p.name != "store.py"], ids=_rel)
def test_no_code_outside_store_opens_an_archive(path):
    if path.name in OTHER_ARCHIVES:
        return
    hits = [f"{_rel(path)}:{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
            if re.search(r"\btarfile\b", line)]
    assert not hits, "an archive opened outside ablate.store (use store.read_archive):\n" + "\n".join(hits)


def test_the_check_finds_what_it_forbids():
    for line in ('kind, *rest = key.split("/")', r'm = re.search(r"/p(\d+)(?:/|$)", key)',
                 'key = m.name[len("jobs/"):]', r're.split(r"/p\d+(?:/|$)", u.name)'):
        assert PARSING.search(line), line



def _imports_of(path: Path) -> set[str]:
    """The ablate modules ``path`` imports when it is imported (module level: TYPE_CHECKING and lazy ones aside)."""
    import ast

    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("biotok_train.ablate"):
            parts = node.module.split(".")
            found |= {parts[2]} if len(parts) > 2 else {a.name for a in node.names if (path.parent / f"{a.name}.py").is_file()}
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` (module -> the modules it imports), or None."""
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> list[str] | None:
        if m in path:
            return path[path.index(m):] + [m]
        if m in done:
            return None
        found = next((c for n in sorted(graph.get(m, ())) if (c := visit(n, path + [m]))), None)
        done.add(m)
        return found

    return next((c for m in sorted(graph) if (c := visit(m, []))), None)


def test_the_engines_modules_import_one_another_without_a_cycle():
    graph = {p.stem: _imports_of(p) for p in (REPO / "biotok_train" / "ablate").glob("*.py") if p.stem != "__init__"}
    assert {"plan", "jobs", "keys", "store", "engines"} <= set(graph) and "jobs" in graph["plan"]
    cycle = _cycle(graph)
    assert cycle is None, "an import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_check_finds_one(tmp_path):
    (tmp_path / "a.py").write_text("from biotok_train.ablate.b import x\nif TYPE_CHECKING:\n    from biotok_train.ablate import c\n")
    (tmp_path / "b.py").write_text("from biotok_train.ablate import a\n")
    graph = {"a": _imports_of(tmp_path / "a.py"), "b": _imports_of(tmp_path / "b.py"), "c": {"a"}}
    assert graph == {"a": {"b"}, "b": {"a"}, "c": {"a"}} and _cycle(graph) == ["a", "b", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
