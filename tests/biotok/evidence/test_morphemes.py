"""Morpheme alignment: the shipped lexicon, the deterministic analysis, boundary precision/recall."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biotok.errors import CorpusError
from biotok.evidence.morphemes import (
    TYPES,
    AlignmentCounts,
    MorphemeAlignment,
    analyse,
    french_lexicon,
    morpheme_alignment,
    parse_lexicon,
    split_at,
    terminology_words,
    word_alignment,
)
from biotok.segment import Segmentation


def test_shipped_lexicon():
    lex = french_lexicon()
    assert len(lex) >= 150
    assert {m.type for m in lex.entries} == set(TYPES)
    assert {"ectomie", "ite", "algie"} <= set(lex.suffixes) and {"hépato", "cardio"} <= set(lex.prefixes)
    assert all(len(a) >= len(b) for a, b in zip(lex.suffixes, lex.suffixes[1:]))  # longest first


@pytest.mark.parametrize("word, gold", [
    ("hépatosplénomégalie", "hépato|spléno|mégalie"),
    ("appendicite", "appendic|ite"),
    ("cholécystectomie", "cholé|cyst|ectomie"),
    ("cardiomyopathie", "cardio|myo|pathie"),
    ("arthroses", "arthr|oses"),  # the plural stays with the suffix
    ("lymphangiome", "lymph|angi|ome"),
    ("algoneurodystrophie", "algo|neuro|dys|trophie"),  # a long prefix after an unlisted start
    ("limite", "limite"),  # an everyday word on the exclusion list
    ("isolement", "isolement"),  # excluded by 'isol*'
    ("planeur", "planeur"),  # a root never ends a word
    ("site", "site"),  # a suffix leaves a stem of 3+ letters
])
def test_analysis(word, gold):
    a = analyse(word)
    assert split_at(word, a.boundaries) == gold


def test_analysis_is_case_insensitive_and_skips_non_words():
    assert analyse("Appendicite").boundaries == analyse("appendicite").boundaries
    assert analyse("anti-inflammatoire").boundaries == ()


def test_parse_lexicon_errors_and_exclusions():
    lex = parse_lexicon(["# c", "ite\tsuffix\tinflammation", "hépato\tprefix", "petite\texclude", "isol*\texclude"])
    assert lex.suffixes == ("ite",) and lex.excluded("petites") and lex.excluded("isolé")
    with pytest.raises(CorpusError, match="type must be"):
        parse_lexicon(["ite\tending"])
    with pytest.raises(CorpusError, match="expected"):
        parse_lexicon(["ite"])


def seg_of(word: str, cuts: list[int], unk: bool = False) -> Segmentation:
    bounds = [0, *sorted(set(cuts)), len(word)]
    spans = [(a, b) for a, b in zip(bounds, bounds[1:])]
    return Segmentation.from_offsets(word, [word[a:b] for a, b in spans], spans, [unk] * len(spans))


def test_word_alignment_by_hand():
    a = analyse("hépatosplénomégalie")  # gold 6, 12
    c = word_alignment(seg_of(a.word, [4, 6, 9]), a)  # hépa|to|spl|énomégalie
    assert (c.cuts, c.gold, c.hits, c.whole) == (3, 2, 1, 0)
    assert c.morphemes == 3 and c.intact == 1  # only 'mégalie' is not cut inside
    # 12 ends 'spléno' and starts 'mégalie': a suffix boundary (a suffix's start wins)
    assert (c.gold_prefix, c.hits_prefix, c.gold_suffix, c.hits_suffix) == (1, 1, 1, 0)
    whole = word_alignment(seg_of(a.word, []), a)
    assert (whole.whole, whole.cuts, whole.intact) == (1, 0, 3)
    unk = word_alignment(seg_of(a.word, [], unk=True), a)
    assert unk.whole == 0


@given(st.sampled_from(["hépatosplénomégalie", "cholécystectomie", "cardiomyopathie", "lymphangiome"]),
       st.lists(st.integers(1, 15), max_size=8))
def test_alignment_properties(word, cuts):
    a = analyse(word)
    c = word_alignment(seg_of(word, [x for x in cuts if x < len(word)]), a)
    assert 0 <= c.hits <= min(c.cuts, c.gold)
    assert 0 <= c.intact <= c.morphemes
    m = MorphemeAlignment.from_counts("t", c)
    for v in (m.precision, m.recall, m.f1):
        assert math.isnan(v) or 0 <= v <= 1


def test_a_tokenizer_cutting_on_the_gold_scores_one():
    a = analyse("cholécystectomie")
    m = MorphemeAlignment.from_counts("t", word_alignment(seg_of(a.word, list(a.boundaries)), a))
    assert (m.precision, m.recall, m.f1, m.intact_share) == (1.0, 1.0, 1.0, 1.0)
    none = MorphemeAlignment.from_counts("t", AlignmentCounts())
    assert math.isnan(none.precision) and math.isnan(none.recall)


def test_terminology_words_and_alignment(tiny_unigram):
    import biotok

    words = terminology_words(["Appendicite aiguë", "Cholécystectomie", "DOLIPRANE", "Hépatosplénomégalie"])
    assert [w.word for w in words] == ["appendicite", "cholécystectomie", "hépatosplénomégalie"]
    rep = morpheme_alignment([biotok.load(str(tiny_unigram))], words, source="test")
    a = rep.tokenizers[0]
    assert rep.words == 3 and a.words == 3
    assert {e[0] for e in a.examples} == {w.word for w in words}
    assert all(e[2].replace("|", "") == e[0] for e in a.examples)  # the cut display spells the word
    with pytest.raises(CorpusError):
        morpheme_alignment([biotok.load(str(tiny_unigram))], [], source="nothing")
