"""biotok.vocab: marker-free forms, duplicates, and the vocabulary diff."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biotok.vocab import as_vocab, diff_vocab, duplicate_pairs, duplicates, piece_lengths, split_marker


@pytest.mark.parametrize("piece,marker,expected", [
    ("▁mot", "▁", ("mot", True)), ("mot", "▁", ("mot", False)),
    ("mot", "##", ("mot", True)), ("##mot", "##", ("mot", False)), ("##", "##", ("##", True)),
    ("Ġmot", "Ġ", ("mot", True)), ("mot", "Ġ", ("mot", False)), ("ĠcafÃ©", "Ġ", ("café", True)),
    ("mot</w>", "</w>", ("mot", True)), ("mo", "</w>", ("mo", False)),
])
def test_split_marker(piece: str, marker: str, expected: tuple[str, bool]) -> None:
    assert split_marker(piece, marker) == expected


def test_duplicates_unigram_style() -> None:
    vocab = {"<unk>": 0, "▁": 1, "▁mot": 2, "mot": 3, "▁le": 4, "s": 5, "▁s": 6, "tion": 7}
    assert duplicates(vocab) == 2
    assert duplicate_pairs(vocab) == [("▁mot", "mot"), ("▁s", "s")]


def test_duplicates_other_conventions() -> None:
    assert duplicates({"[UNK]": 0, "mot": 1, "##mot": 2, "##s": 3}) == 1
    assert duplicates({"<unk>": 0, "mot</w>": 1, "mot": 2, "s</w>": 3}) == 1
    assert duplicates({"Ġmot": 0, "mot": 1, "Ġle": 2}) == 1


def test_specials_are_left_out() -> None:
    v = as_vocab({"[PAD]": 0, "[UNK]": 1, "[unused3]": 2, "<s>": 3, "<0x0A>": 4, "a": 5, "##b": 6})
    assert [p.piece for p in v.pieces] == ["a", "##b"]
    assert v.size == 7


def test_diff_counts_and_examples() -> None:
    a = {"[UNK]": 0, "cardio": 1, "##logie": 2, "le": 3, "##s": 4}
    b = {"<unk>": 0, "▁cardio": 1, "logie": 2, "▁la": 3}
    d = diff_vocab(a, b)
    assert (d.forms_a, d.forms_b, d.shared, d.only_a, d.only_b) == (4, 3, 2, 2, 1)
    assert d.jaccard == pytest.approx(2 / 5)
    assert d.examples_shared == ("cardio", "logie")
    assert d.examples_only_b == ("la",)
    assert (d.marker_a, d.marker_b) == ("##", "▁")


pieces = st.text(alphabet="abcdé", min_size=1, max_size=4)
sp_vocab = st.lists(st.tuples(st.booleans(), pieces), min_size=1, max_size=40).map(
    lambda xs: {("▁" if b else "") + p: i for i, (b, p) in enumerate(dict.fromkeys(xs))} | {"▁": 10_000}
)


@settings(max_examples=60, deadline=None)
@given(sp_vocab)
def test_diff_with_itself(v: dict[str, int]) -> None:
    d = diff_vocab(v, v)
    assert d.jaccard == 1.0 and d.only_a == d.only_b == 0 and d.shared == d.forms_a == d.forms_b
    assert d.duplicates_a == d.duplicates_b == duplicates(v) == len(duplicate_pairs(v))
    forms = {p.lstrip("▁") for p in v if p != "▁"}
    assert duplicates(v) == len({p[1:] for p in v if p.startswith("▁") and len(p) > 1} & {p for p in v if not p.startswith("▁")})
    assert d.forms_a == len(forms)


@settings(max_examples=60, deadline=None)
@given(sp_vocab, sp_vocab)
def test_diff_symmetry(a: dict[str, int], b: dict[str, int]) -> None:
    ab, ba = diff_vocab(a, b), diff_vocab(b, a)
    assert ab.swapped() == ba
    assert ab.shared + ab.only_a == ab.forms_a and ab.shared + ab.only_b == ab.forms_b
    assert 0.0 <= ab.jaccard <= 1.0


def test_piece_lengths() -> None:
    assert piece_lengths({"▁ab": 0, "abc": 1, "d": 2, "<unk>": 3}) == {1: 1, 2: 1, 3: 1}


def test_real_vocabularies(shared_data: Path) -> None:
    from biotok.formats import load as load_any

    toks = shared_data / "tokenizers"
    camemberta = load_any(toks / "camemberta-base" / "spm.model")
    bert = load_any(toks / "bert-base-uncased" / "vocab.txt")
    pairs = duplicate_pairs(camemberta)
    assert ("▁de", "de") in pairs and len(pairs) == duplicates(camemberta) > 1000
    d = diff_vocab(camemberta, bert)
    assert d.size_a == 32001 and d.size_b == 30522
    assert "tion" in as_vocab(camemberta).forms and "tion" in as_vocab(bert).forms
    assert 0 < d.shared < min(d.forms_a, d.forms_b)


def test_duplicates_of_a_path(shared_data: Path) -> None:
    model = shared_data / "tokenizers" / "camemberta-base" / "spm.model"
    assert duplicates(model) == duplicates(str(model)) > 1000
