"""biotok.report: report.md + figures, written atomically, never over an existing folder by accident."""

from __future__ import annotations

from pathlib import Path

import pytest

from biotok.errors import OutputExistsError
from biotok.report import build_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def toks(shared_data: Path):
    from biotok.formats import load as load_any

    d = shared_data / "tokenizers"
    return [load_any(d / "camemberta-base" / "spm.model", name="camemberta"),
            load_any(d / "bert-base-cased" / "vocab.txt", name="bert-cased"),
            load_any(d / "camembertv2-base", name="camembertv2")]


def test_report_files(tmp_path: Path, toks, sample_lines: list[str]) -> None:
    out = tmp_path / "rep"
    rep = build_report(toks, sample_lines[:40], out, corpus_label="sample")
    assert rep.markdown == out / "report.md"
    names = sorted(p.name for p in out.iterdir())
    assert names == ["fertility.png", "piece_length.png", "pieces_per_word.png", "report.html", "report.md",
                     "sequence_length.png", "vocab_overlap.png"]
    assert rep.html == out / "report.html" and rep.evidence.numbers is not None  # numbers: always measured
    for f in rep.figures:
        data = f.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    md = rep.markdown.read_text(encoding="utf-8")
    for t in toks:
        assert f"| {t.name} |" in md
    assert "![vocab_overlap](vocab_overlap.png)" in md
    r = {x.name: x for x in rep.comparison.results}
    assert f"{r['bert-cased'].fertility:.3f}" in md
    assert [p.name for p in tmp_path.iterdir()] == ["rep"]  # no temporary folder left


def test_report_refuses_to_overwrite(tmp_path: Path, toks, sample_lines: list[str]) -> None:
    out = tmp_path / "rep"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(OutputExistsError):
        build_report(toks[:2], iter(()), out)  # refused before any work
    assert (out / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]
    # replacing with force: tests/biotok/cli/test_compare.py::test_report_command


def test_report_shows_each_part_off_a_terminal(tmp_path: Path, tiny_wordpiece, sample_corpus) -> None:
    """Issue 39: ``biotok report ... --terminology`` was silent for minutes. Off a terminal (CliRunner's
    stderr) each part prints a line as it starts and one with its seconds as it ends; --no-progress: none."""
    import re

    from click.testing import CliRunner

    from biotok.cli import main

    terms = tmp_path / "terms.txt"
    terms.write_text("hépatite\tdisease\nacétylcholinestérase\tenzyme\n", encoding="utf-8")
    args = ["report", str(tiny_wordpiece), "--corpus", str(sample_corpus), "--max-lines", "50", "--terms", str(terms)]
    r = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "r")])
    assert r.exit_code == 0, r.output
    parts = ["morphemes", "numbers", "corpus", "figures", "report.md", "report.html"]
    started = re.findall(r"^report: (\S+) \((\d)/6\)\.\.\.$", r.stderr, re.M)
    assert started == [(p, str(i)) for i, p in enumerate(parts, 1)], r.stderr
    assert all(re.search(rf"^report: {re.escape(p)} done in \d+\.\d s$", r.stderr, re.M) for p in parts)
    quiet = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "q"), "--no-progress"])
    assert quiet.exit_code == 0 and "report:" not in quiet.stderr and "measuring" not in quiet.stderr
