"""The docs keep up with the code: every CLI command and option is documented, every example runs.

Commands and options are read from the click groups of ``biotok`` and ``biotok-train``: the
generated reference docs/cli.md must equal every command's ``--help`` now, each command has its
section there holding its own options, and each command is named in a guide (README, docs/*.md).
Every ```bash/shell/console/python block of README.md and docs/*.md runs as typed, in order, in
one folder per guide holding the checkout's corpora/, the tokenizer the README's first command
trains and ../shared/data beside it (``biotok``, ``biotok-train`` and ``python`` there run this
checkout's code); ``--steps`` is cut to a toy size in the default run. A block preceded by
``<!-- test: skip REASON -->`` (a GPU, the Hub, a cluster) is skipped with REASON; one preceded by
``<!-- test: slow REASON -->`` runs as typed under ``-m slow``.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_SKIP = re.compile(r"<!--\s*test:\s*skip\s+(.+?)\s*-->")


def _groups() -> list[tuple[str, click.Group]]:
    from biotok.cli import main as biotok_main

    groups = [("biotok", biotok_main)]
    try:
        from biotok_train.cli import main as train_main
    except ImportError:  # the [train] extra is not installed: only biotok is checked
        return groups
    return groups + [("biotok-train", train_main)]


def walk(prog: str, group: click.Group) -> list[tuple[str, click.Command]]:
    """('PROG SUB ...', command) for the group itself and every command under it, recursively."""
    out: list[tuple[str, click.Command]] = [(prog, group)]
    for name, cmd in sorted(group.commands.items()):
        if cmd.hidden:
            continue
        if isinstance(cmd, click.Group):
            out += walk(f"{prog} {name}", cmd)
        else:
            out.append((f"{prog} {name}", cmd))
    return out


def flags(cmd: click.Command) -> list[str]:
    """The long flags a user can type for ``cmd`` (both sides of --x/--no-x), --help excluded."""
    out = []
    for p in cmd.params:
        if isinstance(p, click.Option) and not p.hidden:
            out += [f for f in (*p.opts, *p.secondary_opts) if f.startswith("--") and f != "--help"]
    return out


def _docs_text() -> str:
    """The guides (README.md, docs/*.md) without the generated reference."""
    return "\n".join(p.read_text(encoding="utf-8") for p in DOCS if p.name != "cli.md")


def reference_sections() -> dict[str, str]:
    """docs/cli.md split by command: 'PROG NAME' -> the text of its section."""
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def _inventory() -> list[tuple[str, str | None]]:
    items: list[tuple[str, str | None]] = []
    for prog, group in _groups():
        for path, cmd in walk(prog, group):
            items.append((path, None))
            items += [(path, f) for f in flags(cmd)]
    return items


def _in_section(section: str, flag: str) -> bool:
    return re.search(re.escape(flag) + r"(?![\w-])", section) is not None


def test_cli_reference_is_up_to_date() -> None:
    """docs/cli.md holds every command's --help as the code says it now (a new --seed, a changed
    default or help text fails here until `python -m biotok_train.cli.reference` is rerun)."""
    pytest.importorskip("torch")
    from biotok_train.cli.reference import render

    assert (REPO / "docs" / "cli.md").read_text(encoding="utf-8") == render(), (
        "docs/cli.md is out of date: run `python -m biotok_train.cli.reference`")


@pytest.mark.parametrize("path,flag", _inventory(), ids=lambda x: x or "command")
def test_each_option_is_in_its_own_commands_section(path: str, flag: str | None) -> None:
    """Each command has its section in docs/cli.md holding each of its own options, and every
    command is also named in a guide (README.md or docs/*.md)."""
    sections = reference_sections()
    assert path in sections, f"command `{path}` has no section in docs/cli.md"
    if flag is None:
        assert path in _docs_text(), f"command `{path}` is in no guide (README.md, docs/*.md)"
    else:
        assert _in_section(sections[path], flag), f"option {flag} is not in the section of `{path}` in docs/cli.md"


def test_the_inventory_sees_commands_and_options() -> None:
    """The walk finds what the docs tests check (else they would pass on nothing), and a flag
    named only in another command's section does not count."""
    items = dict.fromkeys(_inventory())
    assert ("biotok train", "--vocab-size") in items and ("biotok compare", "--no-progress") in items
    assert ("biotok", "--debug") in items and ("biotok train", None) in items
    assert not _in_section("biotok train --vocab-size-x", "--vocab-size")
    sections = reference_sections()
    assert _in_section(sections["biotok train"], "--seed")
    assert not _in_section(sections["biotok count"], "--vocab-size")


# --- every example runs as typed ------------------------------------------------------------
_FENCE = re.compile(r"^```(\w*)\s*$")
_MARK = re.compile(r"<!--\s*test:\s*(skip|slow)\s+(.+?)\s*-->")
RUNNABLE = ("bash", "shell", "sh", "console", "python")
SHARED = REPO.parent / "shared"  # ../shared/data as the examples name it, beside the checkout
# Toy sizes in the default run, where a flag allows (`-m slow` runs the slow blocks as typed).
TOY = ((re.compile(r"(--steps\s+)\d+"), r"\g<1>2"),)


@dataclass(frozen=True)
class Block:
    """One fenced example: where it is, its language and code, and its mark (skip/slow, reason)."""

    doc: str
    line: int
    lang: str
    code: str
    mark: str | None = None
    reason: str | None = None

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def doc_blocks(path: Path) -> list[Block]:
    """Each ```bash/shell/console/python block of a guide, with the mark on the line before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i].strip())
        if m and m.group(1):
            j = i + 1
            while lines[j].strip() != "```":
                j += 1
            if m.group(1) in RUNNABLE:
                prev = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
                mark = _MARK.search(prev)
                out.append(Block(str(path.relative_to(REPO)), i + 2, m.group(1), "\n".join(lines[i + 1:j]),
                                 mark.group(1) if mark else None, mark.group(2) if mark else None))
            i = j
        i += 1
    return out


def all_blocks() -> list[Block]:
    return [b for p in DOCS for b in doc_blocks(p)]


def _params():
    for b in all_blocks():
        marks = [pytest.mark.slow] if b.mark == "slow" else []
        yield pytest.param(b, id=b.id, marks=marks)


def _script(block: Block, toy: bool) -> tuple[str, str]:
    """(file name, text) of the block as a file: bash with errexit, or a Python script."""
    code = block.code
    if block.lang == "python":
        return "example.py", _checked(code) + "\n"
    if block.lang == "console":  # a transcript: the `$ ` lines are the commands, the rest output
        cmds, cont = [], False
        for line in code.splitlines():
            if line.startswith("$ ") or cont:
                cmds.append(line[2:] if line.startswith("$ ") and not cont else line)
                cont = line.rstrip().endswith("\\")
        code = "\n".join(cmds)
    if toy:
        for pat, sub in TOY:
            code = pat.sub(sub, code)
    # a reader's shell keeps what earlier blocks exported (BIOTOK_SHARED_DATA...)
    keep = "[ -f .exports.sh ] && source .exports.sh\ntrap 'export -p > .exports.sh' EXIT\n"
    return "example.sh", "set -euo pipefail\n" + keep + code + "\n"


def _shims(d: Path) -> Path:
    """A bin/ folder whose `biotok`, `biotok-train` and `python` run this checkout's code."""
    b = d / "bin"
    b.mkdir()
    for name, args in (("biotok", "-m biotok.cli"), ("biotok-train", "-m biotok_train"), ("python", "")):
        (b / name).write_text(f'#!/bin/sh\nexec "{sys.executable}" {args} "$@"\n', encoding="utf-8")
        (b / name).chmod(0o755)
    return b


@pytest.fixture(scope="session")
def sample_tokenizer(tmp_path_factory) -> Path:
    """sample-unigram-lower, as the README's first command trains it (in this process: a pool of 2)."""
    from biotok.cli import main

    out = tmp_path_factory.mktemp("first-command") / "sample-unigram-lower"
    r = CliRunner().invoke(main, ["train", str(REPO / "corpora" / "sample" / "e3c_pamj_fr.txt"), "--algo", "unigram",
                                  "--lower", "--vocab-size", "8000", "--workers", "2", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    return out


class Guides:
    """One folder per guide, as after the README's set-up: the checkout's corpora/, the sample
    tokenizer and ../shared/data beside it (when the checkout has it). A guide's blocks run there
    in order: before a block, the unmarked blocks above it that have not run yet (what a slow
    block needs when only `-m slow` runs)."""

    def __init__(self, tmp: pytest.TempPathFactory, tokenizer: Path) -> None:
        self.tmp, self.tokenizer = tmp, tokenizer
        self.made: dict[str, tuple[Path, dict]] = {}
        self.ran: set[str] = set()

    def folder(self, doc: str) -> tuple[Path, dict]:
        if doc not in self.made:
            base = self.tmp.mktemp(doc.replace("/", "-"))
            work = base / "checkout"
            work.mkdir()
            (work / "corpora").symlink_to(REPO / "corpora")
            shutil.copytree(self.tokenizer, work / "sample-unigram-lower")
            if SHARED.is_dir():
                (base / "shared").symlink_to(SHARED)
            env = {**os.environ, "PATH": f"{_shims(base)}{os.pathsep}{os.environ.get('PATH', '')}",
                   "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg",
                   "BIOTOK_CACHE": str(base / "cache"),
                   "BIOTOK_BENCH_RESULTS": str(base / "bench-results")}
            for var in ("BIOTOK_SHARED_DATA", "BIOTOK_TOKENIZERS_DIR"):  # only what the examples set
                env.pop(var, None)
            self.made[doc] = (work, env)
        return self.made[doc]

    @staticmethod
    def needed(block: Block) -> list[Block]:
        """The unmarked blocks above ``block`` in its guide, then the block."""
        return [b for b in doc_blocks(REPO / block.doc) if b.line < block.line and b.mark is None] + [block]

    def run(self, block: Block) -> subprocess.CompletedProcess:
        for before in self.needed(block)[:-1]:
            if before.id not in self.ran:
                r = self._run(before)
                assert r.returncode == 0, f"{before.id}, needed by {block.id}, failed:\n{r.stderr[-3000:]}"
        return self._run(block)

    def _run(self, block: Block) -> subprocess.CompletedProcess:
        self.ran.add(block.id)
        work, env = self.folder(block.doc)
        name, text = _script(block, toy=block.mark != "slow")
        (work / name).write_text(text, encoding="utf-8")
        cmd = [sys.executable, name] if block.lang == "python" else ["bash", name]
        return subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=1800)


@pytest.fixture(scope="module")
def guides(tmp_path_factory, sample_tokenizer) -> Guides:
    return Guides(tmp_path_factory, sample_tokenizer)


def test_the_guides_have_examples_and_every_mark_gives_a_reason() -> None:
    blocks = all_blocks()
    docs = {b.doc for b in blocks}
    assert {"README.md", "docs/compare.md", "docs/pretraining.md", "docs/training.md"} <= docs
    assert sum(b.lang == "python" for b in blocks) >= 3
    assert all(b.reason for b in blocks if b.mark)
    assert any(b.mark is None for b in blocks if b.doc == "README.md")


@pytest.mark.parametrize("block", list(_params()))
def test_example_runs(block: Block, guides: Guides) -> None:
    """Each example of README.md and docs/*.md runs as typed in its guide's folder, after the
    guide's earlier examples: shell blocks with errexit, Python blocks as a script
    (``python example.py``: no ``__main__`` guard, as a reader saves them), transcripts' ``$``
    lines. A Python line ``expr  # "value"`` also checks the value. Marked blocks are listed in
    docs: ``<!-- test: skip REASON -->`` (needs a GPU, the Hub, a cluster) or ``<!-- test: slow
    REASON -->`` (runs under ``-m slow``)."""
    if block.mark == "skip":
        pytest.skip(block.reason)
    code = "\n".join(b.code for b in Guides.needed(block))  # the block and the blocks it follows
    if ("shared/data" in code or "BIOTOK_SHARED_DATA" in code) and not SHARED.joinpath("data").is_dir():
        pytest.skip("needs ../shared/data beside the checkout")
    if "transformers" in code or "biotok-train" in code or "biotok_train" in code:
        pytest.importorskip("transformers")
    r = guides.run(block)
    assert r.returncode == 0, f"{block.id} failed (exit {r.returncode}):\n{block.code}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr, r.stderr[-3000:]


def test_readme_api_example_as_a_script_trains_what_the_cli_trains(tmp_path, sample_tokenizer) -> None:
    """The README's Python API example saved as a file, run with ``python file.py`` (no
    ``__main__`` guard): no traceback, and the tokenizer of the CLI's worker pool, byte for byte."""
    code = next(b.code for b in doc_blocks(REPO / "README.md") if "train_tokenizer(" in b.code)
    (tmp_path / "corpora").symlink_to(REPO / "corpora")
    (tmp_path / "snippet.py").write_text(code + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    out = tmp_path / "my-tokenizer"
    assert {"tokenizer.json", "biotok.json", "spm.model"} <= {p.name for p in out.iterdir()}
    assert (out / "tokenizer.json").read_bytes() == (sample_tokenizer / "tokenizer.json").read_bytes()


def _checked(code: str) -> str:
    """Turn ``expr  # "value"`` lines into assertions that ``expr == "value"``."""
    out = []
    for line in code.splitlines():
        expr, sep, comment = line.partition("  # ")
        try:
            expected = ast.literal_eval(comment.strip()) if sep else None
            ast.parse(expr.strip(), mode="eval")
        except (ValueError, SyntaxError):
            expected = None
        if isinstance(expected, str):
            line = f"assert ({expr.strip()}) == {expected!r}, ({expr.strip()})"
        out.append(line)
    return "\n".join(out)
