"""biotok.metrics: metric invariants, and equality with a direct computation on raw libraries."""

from __future__ import annotations

import gzip
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from biotok.config import NormalizeConfig
from biotok.metrics import (
    Counts, assign_pieces, count, fragmentation, fragmentation_from_counts, renyi_efficiency, renyi_entropy,
)
from biotok.normalize import build_normalizer, words
from biotok.terminology import read_terms, segment_terms
from biotok.tokenizer import BiotokTokenizer

ALPHABET = "abcdeéèàçuoiAEÉ0123456789 .,;:!?()'-/%"
texts = st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=80), min_size=1, max_size=8)


# --- pure maths ------------------------------------------------------------------------------
def test_renyi() -> None:
    assert renyi_efficiency([5] * 100, 100) == pytest.approx(1.0)
    assert renyi_efficiency([7], 100) == pytest.approx(0.0)
    assert renyi_entropy([1, 1], alpha=1.0) == pytest.approx(math.log(2))
    assert 0 < renyi_efficiency([100, 10, 1], 3) < 1
    assert math.isnan(renyi_efficiency([], 10))


def test_fragmentation_from_counts_arithmetic() -> None:
    c = Counts(name="t", vocab_size=10, lines=2, words=4, chars=20, pieces=7, pieces_in_words=6,
               split_words=1, pieces_in_split_words=3, unk=1, pieces_per_word={1: 3, 3: 1},
               sequence_lengths={3: 1, 4: 1}, piece_freqs={1: 4, 2: 3})
    f = fragmentation_from_counts(c)
    assert (f.fertility, f.split_share, f.pieces_per_split_word) == (1.5, 0.25, 3.0)
    assert (f.unk_rate, f.chars_per_piece, f.utilization, f.mean_sequence_length) == (1 / 7, 20 / 6, 0.2, 3.5)
    empty = fragmentation_from_counts(Counts("e", 10, 0, 0, 0, 0, 0, 0, 0, 0, {}, {}, {}))
    assert math.isnan(empty.fertility) and math.isnan(empty.unk_rate)


def test_assign_pieces() -> None:
    # line 0: words [0,3) [4,6); line 1 (base 10): no word; line 2 (base 12): word [0,2)
    word_spans = np.array([[0, 3], [4, 6], [0, 2]])
    word_lines = np.array([0, 0, 2])
    base = np.array([0, 10, 12])
    starts = np.array([0, 1, 3, 4, 7, 0, 0, 5])  # 3: a space -> next word; 7: after last -> last
    lines = np.array([0, 0, 0, 0, 0, 1, 2, 2])
    assert assign_pieces(starts, lines, word_spans, word_lines, base).tolist() == [0, 0, 1, 1, 1, -1, 2, 2]


# --- invariants on generated text ------------------------------------------------------------
def _wrap(backend: Tokenizer, name: str = "t") -> BiotokTokenizer:
    return BiotokTokenizer(backend, name=name)


def _one_piece_per_word(lines: list[str]) -> BiotokTokenizer:
    vocab = {"[UNK]": 0}
    for line in lines:
        for w in words(line):
            vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = build_normalizer(NormalizeConfig())
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return _wrap(tok, "words")


def _char_level() -> BiotokTokenizer:
    chars = sorted(set(ALPHABET) - {" "})
    vocab = {"[UNK]": 0, **{c: i + 1 for i, c in enumerate(chars)}}
    vocab.update({"##" + c: len(vocab) + i for i, c in enumerate(chars)})
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return _wrap(tok, "chars")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_one_piece_per_word_scores_exactly_one(lines: list[str]) -> None:
    f = fragmentation(_one_piece_per_word(lines), lines, batch_size=3)
    n_words = sum(len(words(l)) for l in lines)
    assert f.words == n_words
    if n_words:
        assert f.fertility == 1.0 and f.split_share == 0.0 and f.unk_rate == 0.0 and f.pieces == n_words


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_fertility_at_least_one_without_unk(lines: list[str]) -> None:
    tok = _char_level()
    (c,) = count([tok], lines, batch_size=2)
    f = fragmentation_from_counts(c)
    if c.words:
        assert c.unk == 0
        assert f.fertility >= 1.0
        assert c.pieces_in_words == c.pieces  # every piece lies in a biotok word
        # char-level: one piece per non-space character
        assert c.pieces == sum(len(l.replace(" ", "")) for l in lines)
    # the histograms add up
    assert sum(c.pieces_per_word.values()) == c.words
    assert sum(k * n for k, n in c.pieces_per_word.items()) == c.pieces_in_words
    assert sum(c.sequence_lengths.values()) == c.lines == len(lines)
    assert sum(k * n for k, n in c.sequence_lengths.items()) == c.pieces
    assert sum(c.piece_freqs.values()) == c.pieces


def test_pipeline_and_batches_do_not_change_counts(sample_lines: list[str]) -> None:
    tok = _char_level()
    lines = sample_lines[:30]
    a = count([tok], lines, batch_size=7, pipeline=True)
    b = count([tok], lines, batch_size=1000, pipeline=False)
    assert a == b


# --- direct computation with the raw libraries -----------------------------------------------------
def _raw(path: Path) -> Tokenizer:
    return Tokenizer.from_str(gzip.decompress(path.read_bytes()).decode("utf-8"))


def _naive_counts(tok: Tokenizer, lines: list[str], unk: str) -> dict:
    """Per-line, per-piece Python loop: the reference the vectorized counter must equal."""
    from tokenizers import Tokenizer as T

    splitter = T(models.WordLevel({"[W]": 0}, unk_token="[W]"))
    splitter.normalizer = build_normalizer(NormalizeConfig())
    splitter.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    per_word: Counter[int] = Counter()
    pieces = unk_n = chars = n_words = 0
    freqs: Counter[int] = Counter()
    for line in lines:
        spans = splitter.encode(line).offsets
        enc = tok.encode(line, add_special_tokens=False)
        n_words += len(spans)
        chars += sum(b - a for a, b in spans)
        got = [0] * len(spans)
        for piece, pid, (start, _) in zip(enc.tokens, enc.ids, enc.offsets):
            pieces += 1
            freqs[pid] += 1
            unk_n += piece == unk
            idx = next((i for i, (_, b) in enumerate(spans) if b > start), len(spans) - 1)
            if spans:
                got[idx] += 1
        per_word.update(got)
    return {"words": n_words, "pieces": pieces, "unk": unk_n, "chars": chars, "per_word": per_word,
            "split": sum(n for k, n in per_word.items() if k >= 2), "seen": len(freqs)}


def test_compare_equals_direct_computation(shared_data: Path, sample_corpus: Path, sample_lines: list[str]) -> None:
    """`biotok compare camemberta camembertv2 barthez --corpus <E3C text> --json` against a
    per-piece Python loop over the raw `tokenizers` files and the `sentencepiece` library."""
    import json

    import sentencepiece as spm
    from click.testing import CliRunner

    from biotok.cli import main

    toks_dir = shared_data / "tokenizers"
    n_lines = 80
    r = CliRunner().invoke(main, ["compare", "camemberta", "camembertv2", "barthez", "--corpus", str(sample_corpus),
                                  "--max-lines", str(n_lines), "--batch-size", "25",
                                  "--tokenizers-dir", str(toks_dir), "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)["corpus"]["tokenizers"]
    lines = sample_lines[:n_lines]
    raw = {
        "camemberta": (_raw(toks_dir / "camemberta-base" / "tokenizer.json.gz"), "[UNK]"),
        "camembertv2": (_raw(toks_dir / "camembertv2-base" / "tokenizer.json.gz"), "[UNK]"),
        "barthez": (_raw(toks_dir / "barthez" / "tokenizer.json.gz"), "<unk>"),
    }
    n_words = sum(len(words(l)) for l in lines)  # biotok's pure-Python reference definition
    for t in got:
        backend, unk = raw[t["name"]]
        ref = _naive_counts(backend, lines, unk)
        assert t["words"] == ref["words"] == n_words and t["lines"] == n_lines
        assert t["pieces"] == ref["pieces"]
        assert {int(k): v for k, v in t["pieces_per_word_hist"].items()} == {k: v for k, v in ref["per_word"].items() if v}
        assert t["split_share"] * n_words == pytest.approx(ref["split"])
        assert t["unk_rate"] * t["pieces"] == pytest.approx(ref["unk"])
        assert t["fertility"] == pytest.approx(sum(k * v for k, v in ref["per_word"].items()) / n_words)
        assert t["chars_per_piece"] == pytest.approx(ref["chars"] / sum(k * v for k, v in ref["per_word"].items()))
        assert t["utilization"] == pytest.approx(ref["seen"] / t["vocab_size"])
    # sequence length against the sentencepiece library itself
    sp_a = spm.SentencePieceProcessor(model_file=str(toks_dir / "camemberta-base" / "spm.model"))
    sp_b = spm.SentencePieceProcessor(model_file=str(toks_dir / "barthez" / "sentencepiece.bpe.model"))
    total_a = sum(len(sp_a.encode(l)) for l in lines)
    total_b = sum(len(sp_b.encode(l)) for l in lines)
    assert got[0]["pieces"] == total_a and got[2]["pieces"] == total_b
    assert got[0]["relative_length"] == 1.0
    assert got[2]["relative_length"] == pytest.approx(total_b / total_a)
    assert got[1]["unk_rate"] > 0  # CamemBERTv2's 16-character limit shows up


# --- terms -------------------------------------------------------------------------------------
def test_read_terms() -> None:
    assert read_terms(["# comment", "", "naloxone\tdrug", "DNA", "  x y \t gene \n"]) == [
        ("naloxone", "drug"), ("DNA", ""), ("x y", "gene")]


def test_segment_terms_cells(sample_lines: list[str]) -> None:
    tok = _one_piece_per_word(["acide oxo"])
    table = segment_terms([tok, _char_level()], [("acide", "drug"), ("(a)", ""), ("oxyde", "")])
    assert table.rows[0].cell(0) == "✓"
    assert table.rows[0].cell(1) == "a-c-i-d-e"  # surface spelling, '##' removed
    assert table.rows[1].cell(0) == "[UNK]-[UNK]-[UNK]"  # WordLevel: '(' 'a' ')' are unknown words
    assert table.rows[2].cell(0) == "[UNK]" and not table.rows[2].whole(0)  # one piece, but UNK
    assert table.one_piece_share(0) == pytest.approx(1 / 3)
    assert table.as_dict()["terms"][0]["segmentations"]["chars"]["pieces"][:2] == ["a", "##c"]


# --- biotok words on raw text -----------------------------------------------------------------
TRICKY = "ab é'’«»“”–—-.,;:!?()/%+=×10²³⁹ \u00a0\u202f\u200b\u00ad\x07ﬁＡ（）"


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet=TRICKY, min_size=1, max_size=40), min_size=1, max_size=5))
def test_word_spans_equal_biotok_words(lines: list[str]) -> None:
    """The fast splitter (light and full pipelines) gives biotok.normalize.words, span by span."""
    from biotok.metrics import WordSplitter

    for line, spans in zip(lines, WordSplitter().spans(lines)):
        assert len(spans) == len(words(line)), line
        assert all(0 <= a < b <= len(line) for a, b in spans)


def test_word_spans_on_sample(sample_lines: list[str]) -> None:
    from biotok.metrics import WordSplitter

    lines = sample_lines[:300]
    spans = WordSplitter().spans(lines)
    assert [len(s) for s in spans] == [len(words(l)) for l in lines]


@pytest.mark.parametrize("cfg", [NormalizeConfig(), NormalizeConfig(lowercase=True), NormalizeConfig.raw()],
                         ids=["default", "lower", "raw"])
@settings(max_examples=120, deadline=None)
@given(lines=st.lists(st.text(alphabet=TRICKY, min_size=0, max_size=40), min_size=1, max_size=6))
def test_word_arrays_without_offsets_equal_the_offsets_route(cfg, lines: list[str]) -> None:
    """The numpy route for light lines gives the very spans of the tokenizers pipelines."""
    from biotok.metrics import WordSplitter, word_arrays

    sp = WordSplitter(cfg)
    fast = sp.arrays(lines)
    slow = word_arrays(sp.spans(lines), lines)
    for x, y in zip(fast, slow):
        assert np.array_equal(x, y)


def test_word_arrays_on_sample(sample_lines: list[str]) -> None:
    from biotok.metrics import WordSplitter, word_arrays

    sp = WordSplitter()
    lines = sample_lines[:500]
    for x, y in zip(sp.arrays(lines), word_arrays(sp.spans(lines), lines)):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("cfg", [NormalizeConfig(), NormalizeConfig(strip_control=False),
                                 NormalizeConfig(whitespace=False)], ids=["default", "controls-kept", "no-whitespace"])
@settings(max_examples=120, deadline=None)
@given(lines=st.lists(st.text(alphabet=TRICKY + "\t\x0b\x0c\x1c\x1f\x85\u3000\u2009  ..,'’-/", min_size=0,
                              max_size=40), min_size=1, max_size=6))
def test_word_arrays_without_the_whitespace_steps(cfg, lines: list[str]) -> None:
    """The numpy route skips the whitespace steps (they only turn spaces, and U+001C-U+001F, into
    ' '): the spans are still those of the full pipelines, whatever spaces sit next to punctuation."""
    from biotok.metrics import WordSplitter, word_arrays

    sp = WordSplitter(cfg)
    for x, y in zip(sp.arrays(lines), word_arrays(sp.spans(lines), lines)):
        assert np.array_equal(x, y)


def test_a_bare_word_start_marker_is_no_marker_in_the_term_table() -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = [("<unk>", 0.0), ("▁", -1.0), ("ibu", -2.0), ("prof", -2.0), ("ène", -2.0)]
    vocab += [(c, -9.0) for c in "ibuprofèn"]
    backend = Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=False))
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok = BiotokTokenizer(backend, name="spm", specials={"unk": "<unk>"})
    row = segment_terms([tok], [("ibuprofène", "drug")]).rows[0]
    assert row.pieces[0] == ("▁", "ibu", "prof", "ène")
    assert row.cell(0) == "∅-ibu-prof-ène"  # the piece is counted, the marker never shown
