"""Terminology coverage: readers, CIM-10 chapters, per-term counts, the shipped terminologies."""

from __future__ import annotations

import io
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biotok.errors import CorpusError
from biotok.segment import Segmentation, word_spans
from biotok.terminology import (
    Term,
    TermCounts,
    TermStats,
    cim10_chapter,
    load_terminology,
    read_atc,
    read_cim10,
    term_counts,
    terminology_coverage,
)


@pytest.mark.parametrize("code, chapter", [
    ("A000", "I"), ("B99", "I"), ("C509", "II"), ("D489", "II"), ("D50", "III"), ("H549", "VII"), ("H60", "VIII"),
    ("K359", "XI"), ("S000", "XIX"), ("T983", "XIX"), ("U049", "XXII"), ("V010", "XX"), ("Y98", "XX"), ("Z999", "XXI"),
])
def test_cim10_chapters(code, chapter):
    assert cim10_chapter(code) == chapter


def test_read_cim10_and_atc():
    csv_text = 'code,type,ssr,psy,short,long\nK35,3,N,3,APPENDICITE,Appendicite aiguë\nA000,0,N,0,"C, X","Choléra, sans précision"\n'
    terms = read_cim10(io.StringIO(csv_text))
    assert terms == [Term("Appendicite aiguë", "XI", "K35"), Term("Choléra, sans précision", "I", "A000")]
    with pytest.raises(CorpusError, match="'code' and 'long'"):
        read_cim10(io.StringIO("a,b\n1,2\n"))
    atc = read_atc({"N02BE01": ["DOLIPRANE", "paracetamol"], "N02BE51": ["paracetamol"], "A01A": ["X"]})
    assert [(t.text, t.category) for t in atc] == [("X", "A"), ("DOLIPRANE", "N"), ("paracetamol", "N")]


def seg(text: str, cuts: list[int], unk: frozenset[int] = frozenset()) -> Segmentation:
    bounds = [0, *cuts, len(text)]
    spans = [(a, b) for a, b in zip(bounds, bounds[1:]) if text[a:b].strip()]
    return Segmentation.from_offsets(text, [text[a:b] for a, b in spans], spans, [i in unk for i in range(len(spans))])


def test_term_counts_by_hand():
    text = "Hépatite virale, aiguë"
    ws = word_spans([text])[0]  # Hépatite | virale | , | aiguë: the comma is not a word
    c, wp = term_counts(seg(text, [5, 8, 15, 16]), ws)  # Hépat|ite|virale|,|aiguë
    assert (c.words, c.words_whole, c.terms_whole, c.one_piece, c.pieces, wp) == (3, 2, 0, 0, 5, 4)
    c, _ = term_counts(seg(text, [8, 15, 16]), ws)
    assert (c.words_whole, c.terms_whole) == (3, 1)
    c, _ = term_counts(seg("Choléra", []), word_spans(["Choléra"])[0])
    assert c.one_piece == 1 and c.terms_whole == 1
    c, _ = term_counts(seg("Choléra", [], frozenset({0})), word_spans(["Choléra"])[0])
    assert c.one_piece == 0 and c.unk_terms == 1


@given(st.lists(st.integers(1, 21), max_size=12, unique=True))
def test_term_properties(cuts):
    text = "Hépatite virale, aiguë"
    c, wp = term_counts(seg(text, sorted(cuts)), word_spans([text])[0])
    assert c.one_piece <= c.terms_whole
    assert c.words_whole <= c.words <= wp
    assert c.terms_whole == int(c.words_whole == c.words)


def test_stats_from_counts():
    s = TermStats.from_counts("I", "infections", TermCounts(terms=4, words=10, pieces=20, word_pieces=16,
                                                             words_whole=6, terms_whole=1, one_piece=0, unk_terms=0))
    assert (s.words_whole_share, s.terms_whole_share, s.mean_pieces, s.pieces_per_word) == (0.6, 0.25, 5.0, 1.6)
    assert math.isnan(TermStats.from_counts("x", "x", TermCounts()).words_whole_share)


def test_coverage_with_a_trained_tokenizer(tmp_path, tiny_unigram):
    import biotok

    tok = biotok.load(str(tiny_unigram))
    f = tmp_path / "terms.tsv"
    f.write_text("# my terms\nhépatite\tdisease\ncholécystectomie\tprocedure\n\nparacétamol 500 mg\tdrug\n", encoding="utf-8")
    term = load_terminology(f)
    assert term.name == "terms" and len(term.terms) == 3
    rep = terminology_coverage([tok], term, worst=2)
    cov = rep.tokenizers[0]
    assert cov.overall.terms == 3 and [c.category for c in cov.by_category] == ["disease", "procedure", "drug"]
    assert len(cov.worst) == 2
    assert cov.worst[0].pieces_per_word >= cov.worst[1].pieces_per_word
    # the term the tokenizer cuts most is "cholécystectomie" or "hépatite", never a 1-piece term
    assert all(len(w.pieces) > 1 for w in cov.worst)


def test_bad_terminology_inputs(tmp_path):
    with pytest.raises(CorpusError, match="unknown terminology"):
        load_terminology(tmp_path / "missing.tsv")
    empty = tmp_path / "empty.tsv"
    empty.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="has no term"):
        load_terminology(empty)
    with pytest.raises(CorpusError, match="shared corpora folder"):
        load_terminology("cim10", data_dir=tmp_path)


@pytest.mark.shared
def test_shipped_terminologies(shared_data):
    cim = load_terminology("cim10", data_dir=shared_data / "corpora")
    assert len(cim.terms) == 42886
    assert {t.category for t in cim.terms} == {n for _, n, _ in __import__("biotok.terminology").terminology.CIM10_CHAPTERS}
    atc = load_terminology("atc", data_dir=shared_data / "corpora")
    # 5,789 names under 1,968 codes; one term per distinct (name, anatomical group)
    assert len(atc.terms) == 5680
    assert {t.category for t in atc.terms} <= set("ABCDGHJLMNPRSV")
