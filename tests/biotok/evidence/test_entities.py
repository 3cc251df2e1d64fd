"""Entity-aware fragmentation: counts on hand-made segmentations, readers, named datasets."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biotok.evidence.entities import (
    EntityCounts,
    EntityDoc,
    EntityStats,
    Mention,
    docs_from_sentences,
    entities_markdown,
    entities_section,
    entity_fragmentation,
    load_entity_docs,
    mention_counts,
)
from biotok.errors import CorpusError
from biotok.segment import Segmentation, word_spans


def seg(text: str, cuts: list[int], unk: set[int] = frozenset()) -> Segmentation:
    """Pieces between consecutive cut positions (spaces are trimmed by Segmentation)."""
    bounds = [0, *cuts, len(text)]
    spans = [(a, b) for a, b in zip(bounds, bounds[1:]) if text[a:b].strip()]
    return Segmentation.from_offsets(text, [text[a:b] for a, b in spans], spans, [i in unk for i in range(len(spans))])


TEXT = "une hépatite virale aiguë"
#       0123456789012345678901234


def test_mention_in_one_piece():
    s = seg(TEXT, [4, 12, 19])
    c, n = mention_counts(s, word_spans([TEXT])[0], Mention(4, 12, "DISO"))
    assert n == 1
    assert (c.one_piece, c.words_whole, c.boundaries_crossed, c.words, c.word_pieces) == (1, 1, 0, 1, 1)


def test_mention_cut_inside_and_across_its_edge():
    text = "hépatiteB"
    s = seg(text, [5])  # 'hépat' + 'iteB': the mention 'hépatite' (0, 8) ends inside 'iteB'
    c, n = mention_counts(s, word_spans([text])[0], Mention(0, 8, "DISO"))
    assert n == 2 and c.one_piece == 0
    assert c.boundaries_crossed == 1 and c.entities_crossed == 1


def test_words_whole_but_not_one_piece():
    s = seg(TEXT, [4, 12, 19])
    c, n = mention_counts(s, word_spans([TEXT])[0], Mention(4, 19, "DISO"))  # 'hépatite virale'
    assert n == 2 and c.one_piece == 0 and c.words_whole == 1 and c.words == 2


def test_unknown_piece_is_never_whole():
    s = seg(TEXT, [4, 12, 19], unk={1})
    c, _ = mention_counts(s, word_spans([TEXT])[0], Mention(4, 12, "DISO"))
    assert c.one_piece == 0 and c.words_whole == 0


def test_stats_from_counts_and_undefined_ratios():
    st_ = EntityStats.from_counts("X", EntityCounts(entities=4, words=6, pieces=10, word_pieces=9, one_piece=1,
                                                    words_whole=2, boundaries_crossed=2, entities_crossed=1))
    assert st_.mean_pieces == 2.5 and st_.one_piece_share == 0.25 and st_.boundary_crossing_rate == 0.25
    assert math.isnan(EntityStats.from_counts("none", EntityCounts()).mean_pieces)


@given(st.lists(st.integers(1, 24), max_size=10, unique=True),
       st.integers(0, 23), st.integers(1, 12))
def test_properties_of_one_mention(cuts, start, length):
    """One piece implies whole words; crossings are at most 2; pieces >= 1 on non-space text."""
    end = min(len(TEXT), start + length)
    if not TEXT[start:end].strip():
        return
    s = seg(TEXT, sorted(cuts))
    c, n = mention_counts(s, word_spans([TEXT])[0], Mention(start, end, "T"))
    assert n >= 1
    assert c.one_piece <= c.words_whole
    assert 0 <= c.boundaries_crossed <= 2
    assert c.word_pieces >= c.words


def test_mentions_are_checked_against_the_text():
    with pytest.raises(CorpusError, match="outside the text"):
        EntityDoc("abc", (Mention(1, 9, "X"),))


def test_docs_from_bio_sentences():
    from biotok.datasets.bio import Sentence

    [d] = docs_from_sentences([Sentence(("Le", "cancer", "du", "sein", "."), ("O", "B-DISO", "I-DISO", "I-DISO", "O"))])
    assert d.text == "Le cancer du sein ."
    assert [d.text[m.start : m.end] for m in d.mentions] == ["cancer du sein"]


def test_fragmentation_on_a_bio_file_and_a_brat_folder(tmp_path, tiny_unigram):
    import biotok

    tok = biotok.load(str(tiny_unigram))
    bio = tmp_path / "ner.txt"
    bio.write_text("Une O\nhépatite B-DISO\nvirale I-DISO\n\nLe O\nparacétamol B-CHEM\n\nRien O\n", encoding="utf-8")
    name, docs = load_entity_docs(bio)
    assert name == "ner.txt" and len(docs) == 3
    rep = entity_fragmentation([tok], docs, dataset=name)
    assert rep.types == ("CHEM", "DISO") and rep.type_counts == (1, 1)
    # CoNLL sentences are called sentences, and counted once: the measured ones, the rest said left out
    assert (rep.unit, rep.documents, rep.left_out) == ("sentences", 2, 1)
    assert "2 gold mentions in 2 sentences (1 without a mention left out)." in entities_markdown(rep)
    assert "documents" not in entities_section(rep, [tok.name]).lead
    f = rep.tokenizers[0]
    assert f.overall.entities == 2
    # the same numbers, recomputed by hand from the tokenizer's own pieces
    text = docs[0].text
    pieces = [p for p in tok.encode(text).offsets if text[p[0]:p[1]].strip()]
    inside = [p for p in pieces if p[0] < 20 and p[1] > 4]
    assert f.by_type[1].mean_pieces == len(inside)

    brat = tmp_path / "brat"
    brat.mkdir()
    (brat / "d1.txt").write_text("Cancer du sein traité par tamoxifène.", encoding="utf-8")
    (brat / "d1.ann").write_text("T1\tDISO 0 14\tCancer du sein\nT2\tCHEM 26 36\ttamoxifène\n", encoding="utf-8")
    name, docs = load_entity_docs(brat)
    assert name == "brat" and [m.type for m in docs[0].mentions] == ["DISO", "CHEM"]
    rep = entity_fragmentation([tok], docs)
    assert rep.tokenizers[0].overall.entities == 2 and (rep.unit, rep.documents) == ("documents", 1)


def test_unknown_dataset_is_one_clear_error(tmp_path):
    with pytest.raises(CorpusError, match="unknown entity dataset"):
        load_entity_docs(str(tmp_path / "nope"))


@pytest.mark.shared
def test_quaero_mentions(shared_data, tiny_unigram):
    import biotok

    name, docs = load_entity_docs("quaero", data_dir=shared_data / "corpora")
    assert name == "quaero"
    # MANIFEST: entity (T) lines, train MEDLINE 2,994 + EMEA 2,695, dev 2,977 + 2,260, test 3,103 + 2,204
    assert sum(len(d.mentions) for d in docs) == 16233
    rep = entity_fragmentation([biotok.load(str(tiny_unigram))], docs[:200], dataset=name)
    assert {"DISO", "CHEM", "ANAT"} <= set(rep.types)
    assert rep.tokenizers[0].overall.mean_pieces >= 1
