"""The docs keep up with the code: every CLI command and option is documented, README snippets run.

Commands and options are read from the click groups of ``biotok`` and ``biotok-train``: the
generated reference docs/cli.md must equal every command's ``--help`` now, each command has its
section there holding its own options, and each command is named in a guide (README, docs/*.md).
README ```python blocks run in a scratch folder holding the sample corpus and the tokenizer the
README's first command trains; a line ``expr  # "value"`` also checks the value. A block
preceded by ``<!-- test: skip REASON -->`` (e.g. it needs the network) is skipped with REASON.
"""

from __future__ import annotations

import ast
import re
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


# --- README snippets ----------------------------------------------------------------------------
def readme_snippets() -> list[tuple[int, str, str | None]]:
    """(line number, code, skip reason) of each ```python block of README.md."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start = i + 1
            prev = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            skip = _SKIP.search(prev)
            j = start
            while lines[j].strip() != "```":
                j += 1
            out.append((start + 1, "\n".join(lines[start:j]), skip.group(1) if skip else None))
            i = j
        i += 1
    return out


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


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """A folder as after the README's first command: the sample corpus and sample-unigram-lower."""
    from biotok.cli import main

    d = tmp_path_factory.mktemp("readme")
    (d / "corpora" / "sample").mkdir(parents=True)
    (d / "corpora" / "sample" / "e3c_pamj_fr.txt").symlink_to(REPO / "corpora" / "sample" / "e3c_pamj_fr.txt")
    args = ["train", "corpora/sample/e3c_pamj_fr.txt", "--algo", "unigram", "--lower", "--vocab-size", "8000",
            "--out", str(d / "sample-unigram-lower"), "--force", "-q"]
    r = CliRunner().invoke(main, [a if not a.startswith("corpora/") else str(d / a) for a in args])
    assert r.exit_code == 0, r.output
    return d


def test_readme_has_python_snippets() -> None:
    assert len(readme_snippets()) >= 3


@pytest.mark.parametrize("line,code,skip", readme_snippets(), ids=lambda x: str(x) if isinstance(x, int) else "")
def test_readme_python_snippet_runs(line: int, code: str, skip: str | None, scratch: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    if skip:
        pytest.skip(skip)
    if "transformers" in code:
        pytest.importorskip("transformers")
    monkeypatch.chdir(scratch)
    exec(compile(_checked(code), f"README.md:{line}", "exec"), {"__name__": "__readme__"})
