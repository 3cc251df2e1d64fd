"""`biotok train` / `biotok count` through click: summaries, and one line + exit 2 on bad input."""

from __future__ import annotations

import gzip

import pytest

from tests._contract import assert_contract
from click.testing import CliRunner

from biotok.cli import main


@pytest.fixture()
def corpus(tmp_path, sample_lines):
    p = tmp_path / "c.txt"
    p.write_text("\n".join(sample_lines[:200]) + "\n", encoding="utf-8")
    return p


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_train_prints_a_summary_line(tmp_path, corpus):
    out = tmp_path / "tok"
    r = run("train", corpus, "--algo", "unigram", "--lower", "--vocab-size", 900, "--out", out, "-q")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("trained unigram (sentencepiece): 900 pieces from 200 lines") and str(out) in r.output
    assert (out / "tokenizer.json").is_file()


def test_missing_file(tmp_path):
    assert_contract(run("train", tmp_path / "nope.txt", "--out", tmp_path / "o"), "biotok", "not found")


def test_empty_corpus(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_text("\n\n  \n", encoding="utf-8")
    assert_contract(run("train", p, "--out", tmp_path / "o"), "biotok", "empty")


def test_binary_corpus(tmp_path):
    p = tmp_path / "x.bin"
    p.write_bytes(bytes(range(256)))
    assert_contract(run("train", p, "--out", tmp_path / "o"), "biotok", "binary")


def test_invalid_utf8_with_line_number(tmp_path, corpus):
    p = tmp_path / "bad.txt"
    p.write_bytes(corpus.read_bytes() + b"caf\xe9\n")
    assert_contract(run("train", p, "--out", tmp_path / "o", "-q", "--vocab-size", 500), "biotok", "bad.txt:201", "UTF-8")
    assert not (tmp_path / "o").exists()


def test_broken_gzip(tmp_path, corpus):
    p = tmp_path / "c.txt.gz"
    p.write_bytes(gzip.compress(corpus.read_bytes())[:3000])
    assert_contract(run("train", p, "--out", tmp_path / "o", "-q"), "biotok", "broken compressed stream")


@pytest.mark.parametrize("algo", ["bpe", "spm-bpe"])
def test_vocab_too_small(tmp_path, corpus, algo):
    r = run("train", corpus, "--algo", algo, "--vocab-size", 20, "--out", tmp_path / "o", "-q")
    assert_contract(r, "biotok", "vocab")


@pytest.mark.parametrize("algo", ["unigram", "wordpiece", "spm-unigram"])
def test_vocab_too_large(tmp_path, corpus, algo):
    r = run("train", corpus, "--algo", algo, "--vocab-size", 500000, "--out", tmp_path / "o", "-q")
    assert_contract(r, "biotok", "500000")
    assert not (tmp_path / "o").exists()


def test_existing_out_needs_force(tmp_path, corpus):
    out = tmp_path / "tok"
    out.mkdir()
    (out / "keep.txt").write_text("precious", encoding="utf-8")
    assert_contract(run("train", corpus, "--out", out, "-q"), "biotok", "already exists", "--force")
    assert (out / "keep.txt").read_text(encoding="utf-8") == "precious"
    # --force replaces only a biotok output (a folder holding biotok.json, or an empty one)
    assert_contract(run("train", corpus, "--out", out, "-q", "--force"), "biotok", "not a biotok output")
    assert (out / "keep.txt").read_text(encoding="utf-8") == "precious"
    (out / "biotok.json").write_text("{}", encoding="utf-8")  # an older tokenizer there
    r = run("train", corpus, "--out", out, "-q", "--vocab-size", 700, "--force")
    assert r.exit_code == 0 and not (out / "keep.txt").exists()


def test_count_writes_sorted_tsv(tmp_path, corpus):
    out = tmp_path / "counts.tsv"
    r = run("count", corpus, "--lower", "--out", out, "-q")
    assert r.exit_code == 0, r.output
    rows = [l.split("\t") for l in out.read_text(encoding="utf-8").splitlines()]
    counts = [int(c) for _, c in rows]
    assert counts == sorted(counts, reverse=True) and rows[0][0] in {"de", ",", "."}
    assert all(w == w.lower() for w, _ in rows)
    assert_contract(run("count", corpus, "--out", out), "biotok", "already exists")


def test_count_records_its_normalization_and_trains_from_counts(tmp_path, corpus):
    import json

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    lines = corpus.read_text(encoding="utf-8").splitlines()
    a.write_text("\n".join(lines[:120]) + "\n", encoding="utf-8")
    b.write_text("\n".join(lines[120:]) + "\n", encoding="utf-8")
    for src, workers in ((a, 1), (b, 2)):
        r = run("count", src, "--lower", "--workers", workers, "--out", src.with_suffix(".tsv"), "-q")
        assert r.exit_code == 0, r.output
    meta = json.loads((tmp_path / "a.tsv.json").read_text(encoding="utf-8"))
    assert meta["normalize"]["lowercase"] is True and meta["corpus"]["lines"] == 120
    r = run("train", "--from-counts", tmp_path / "a.tsv", tmp_path / "b.tsv", "--lower", "--vocab-size", 800,
            "--out", tmp_path / "fc", "-q")
    assert r.exit_code == 0, r.output
    r = run("train", corpus, "--lower", "--vocab-size", 800, "--out", tmp_path / "direct", "-q")
    assert (tmp_path / "fc" / "tokenizer.json").read_bytes() == (tmp_path / "direct" / "tokenizer.json").read_bytes()
    assert_contract(run("train", "--from-counts", tmp_path / "a.tsv", "--vocab-size", 800, "--out", tmp_path / "x"), "biotok",
                    "was counted with normalization lowercase=True")
    assert_contract(run("train", "--from-counts", a, "--lower", "--out", tmp_path / "y"), "biotok", "expected word<TAB>count")


def test_backend_choice_and_the_warning_of_the_non_reproducible_one(tmp_path, corpus):
    r = CliRunner().invoke(main, ["train", str(corpus), "--backend", "tokenizers", "--vocab-size", "800",
                                  "--out", str(tmp_path / "hf"), "-q"])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("trained unigram (tokenizers)")
    assert r.stderr.count("not reproducible") == 1
    assert_contract(run("train", corpus, "--algo", "wordpiece", "--backend", "sentencepiece", "--out", tmp_path / "w"), "biotok",
                    "wordpiece is trained only by tokenizers")
    assert_contract(run("train", corpus, "--algo", "bpe", "--byte-fallback", "--out", tmp_path / "b"), "biotok",
                    "--byte-fallback needs --backend sentencepiece")


def test_help_teaches():
    r = run("train", "--help")
    assert r.exit_code == 0 and "Unigram_N_N" in r.output and "--vocab-size" in r.output
