"""benchmarks/extend_measure.py: the held-out split, pieces/word, the naive domain WordPiece at its best,
the ceiling of any added vocabulary and the glued strings, on a tiny WordPiece of the sample."""

from __future__ import annotations

import json

import pytest

from benchmarks import extend_measure as M
from biotok.formats import load


@pytest.fixture(scope="module")
def split(sample_lines, tmp_path_factory):
    return M.split(sample_lines[:600], tmp_path_factory.mktemp("extend"))


def test_every_tenth_non_blank_line_is_held_out(tmp_path):
    lines = [f"line {i}" if i != 20 else " " for i in range(1, 26)]
    held, train = M.split(lines, tmp_path)
    assert held == ["line 10"]  # the 20th is blank
    assert train.read_text(encoding="utf-8").splitlines() == [l for i, l in enumerate(lines, 1) if i % 10]
    assert M.words(["a b", " c "]) == 3


def test_pieces_per_word_counts_every_piece(tiny_wordpiece, split):
    held, _ = split
    n = sum(len(e) for e in load(tiny_wordpiece).encode_batch(held))
    assert M.pieces_per_word(tiny_wordpiece, held) == round(n / M.words(held), 4)


def test_the_domain_wordpiece_is_the_best_of_its_sizes(tiny_wordpiece, split):
    held, train = split
    rows = [M.domain_wordpiece(tiny_wordpiece, train, held, 50, sizes=(s,)) for s in (2200, 2600)]
    best = M.domain_wordpiece(tiny_wordpiece, train, held, 50, sizes=(2200, 2600))
    assert best == min(rows, key=lambda r: r["ppw"]) and 0 < best["added"] <= 50
    base = load(tiny_wordpiece).backend.encode_batch(held, add_special_tokens=False)
    assert best["ppw"] <= round(sum(len(e.ids) for e in base) / M.words(held), 4)  # more pieces: never fewer cut


def test_the_ceiling_counts_only_words_of_more_than_one_piece(tiny_wordpiece, split, tmp_path):
    held, train = split
    c = M.ceiling(tiny_wordpiece, train, held)
    assert 0 < c["seen_words"] <= c["every_word"] < 1
    (same := tmp_path / "held.txt").write_text("\n".join(held) + "\n", encoding="utf-8")
    assert M.ceiling(tiny_wordpiece, same, held)["seen_words"] == c["every_word"]  # every word seen


def test_glued_strings_are_seeded_and_a_tokenizer_never_lengthens_itself(tiny_wordpiece, split):
    held, _ = split
    texts = M.glued(held, n=200)
    assert texts == M.glued(held, n=200) != M.glued(held, n=200, seed=1)
    assert len(texts) == 200 and all(1 <= len(t) <= 24 for t in texts)
    assert M.longer(tiny_wordpiece, tiny_wordpiece, texts) == 0


def test_longer_counts_the_texts_an_extension_lengthens(tiny_wordpiece, tmp_path):
    j = json.loads((tiny_wordpiece / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = j["model"]["vocab"]
    worse = {p: i for p, i in vocab.items() if p != "patient"}  # one word now in more pieces
    assert len(worse) < len(vocab)
    j["model"]["vocab"] = worse
    (tmp_path / "tokenizer.json").write_text(json.dumps(j), encoding="utf-8")
    assert M.longer(tiny_wordpiece, tmp_path / "tokenizer.json", ["le patient", "la"]) == 1
