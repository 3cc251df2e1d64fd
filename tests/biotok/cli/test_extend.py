"""`biotok extend` through click: a summary line, and one line + exit 2, nothing written, on bad input."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from biotok.cli import main
from tests._contract import assert_contract


@pytest.fixture()
def corpus(tmp_path, sample_lines):
    p = tmp_path / "c.txt"
    p.write_text("\n".join(sample_lines[:300]) + "\n", encoding="utf-8")
    return p


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def bad(tmp_path, *args, fragments=()):
    out = tmp_path / "out"
    line = assert_contract(run("extend", *args, "--out", out, "-q", "--workers", 1), "biotok", *fragments)
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]
    return line


def test_extend_prints_a_summary_and_writes_a_loadable_folder(tmp_path, corpus, tiny_wordpiece):
    out = tmp_path / "ext"
    r = run("extend", tiny_wordpiece, corpus, "--add", 50, "--out", out, "-q", "--workers", 1)
    assert r.exit_code == 0, r.output
    assert r.output.startswith(f"extended {tiny_wordpiece} (WordPiece, 2,000 tokens) by 50 pieces") and str(out) in r.output
    meta = json.loads((out / "biotok.json").read_text(encoding="utf-8"))
    assert meta["added"] == 50 and meta["selection"] == "50 pieces"
    assert meta["pieces"]["extended"] < meta["pieces"]["base"]


def test_wordpiece_is_proven_by_default_and_no_strict_is_only_checked(tmp_path, corpus, tiny_wordpiece):
    """The default (read from ExtendConfig) keeps only proven pieces; --no-strict records that it is
    checked on the corpus only, and its card says so."""
    metas = {}
    for flag in ((), ("--no-strict",), ("--strict",)):
        out = tmp_path / ("ext" + "".join(flag))
        r = run("extend", tiny_wordpiece, corpus, "--add", 50, *flag, "--out", out, "-q", "--workers", 1)
        assert r.exit_code == 0, r.output
        metas[flag] = json.loads((out / "biotok.json").read_text(encoding="utf-8")), (out / "README.md").read_text("utf-8")
    assert metas[()][0]["config"]["extend"]["strict"] is True
    assert metas[()][0]["added_pieces"] == metas[("--strict",)][0]["added_pieces"]
    assert metas[("--no-strict",)][0]["config"]["extend"]["strict"] is False
    assert "no text is segmented" in metas[()][1] and "no word of the corpus is" in metas[("--no-strict",)][1]
    assert "--no-strict" in run("extend", "--help").output


def test_target_takes_a_percentage(tmp_path, corpus, tiny_wordpiece):
    out = tmp_path / "ext"
    r = run("extend", tiny_wordpiece, corpus, "--target", "5%", "--out", out, "-q", "--workers", 1)
    assert r.exit_code == 0, r.output
    meta = json.loads((out / "biotok.json").read_text(encoding="utf-8"))
    assert meta["selection"] == "target 5% fewer pieces" and meta["pieces"]["reduction"] >= 0.05


def test_base_that_cannot_be_read(tmp_path, corpus):
    bad(tmp_path, tmp_path / "nope", corpus, "--add", 10, fragments=["not found"])
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    bad(tmp_path, broken, corpus, "--add", 10)


@pytest.mark.parametrize("k", ["0", "-5", "lots"])
def test_k_not_a_positive_number(tmp_path, corpus, tiny_wordpiece, k):
    bad(tmp_path, tiny_wordpiece, corpus, f"--add={k}", fragments=["--add"])


def test_k_larger_than_the_candidates(tmp_path, corpus, tiny_wordpiece):
    bad(tmp_path, tiny_wordpiece, corpus, "--add", 1_000_000, fragments=["--add 1,000,000", "candidate"])


def test_bad_target(tmp_path, corpus, tiny_wordpiece):
    bad(tmp_path, tiny_wordpiece, corpus, "--target", "120%", fragments=["--target"])


def test_empty_corpus(tmp_path, tiny_wordpiece):
    p = tmp_path / "empty.txt"
    p.write_text("\n \n", encoding="utf-8")
    bad(tmp_path, tiny_wordpiece, p, "--add", 10, fragments=["empty"])


def test_binary_corpus(tmp_path, tiny_wordpiece):
    p = tmp_path / "blob.bin"
    p.write_bytes(bytes(range(256)) * 64)
    bad(tmp_path, tiny_wordpiece, p, "--add", 10)


def test_corpus_in_a_script_the_base_cannot_encode(tmp_path, tiny_wordpiece):
    p = tmp_path / "thai.txt"
    p.write_text("ผู้ป่วยมีอาการไข้สูง และปวดศีรษะ\n" * 50, encoding="utf-8")
    bad(tmp_path, tiny_wordpiece, p, "--add", 10, fragments=["cannot encode"])


def test_existing_output_without_force(tmp_path, corpus, tiny_wordpiece):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    assert_contract(run("extend", tiny_wordpiece, corpus, "--add", 10, "--out", out, "-q"), "biotok", "--force")
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_force_replaces_a_previous_extension(tmp_path, corpus, tiny_wordpiece):
    out = tmp_path / "out"
    for k in (10, 20):
        r = run("extend", tiny_wordpiece, corpus, "--add", k, "--out", out, "-q", "--force", "--workers", 1)
        assert r.exit_code == 0, r.output
    assert json.loads((out / "biotok.json").read_text(encoding="utf-8"))["added"] == 20


def test_compare_takes_base_extended_and_fresh_side_by_side(tmp_path, corpus, tiny_wordpiece, tiny_unigram):
    out = tmp_path / "ext"
    assert run("extend", tiny_wordpiece, corpus, "--add", 100, "--out", out, "-q", "--workers", 1).exit_code == 0
    r = run("compare", tiny_wordpiece, out, tiny_unigram, "--corpus", corpus, "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["corpus"]["tokenizers"]
    assert [t["name"] for t in rows] == [tiny_wordpiece.name, "ext", tiny_unigram.name]
    base, ext, _ = rows
    assert ext["vocab_size"] == base["vocab_size"] + 100
    assert ext["pieces"] < base["pieces"] and ext["relative_length"] < 1.0
