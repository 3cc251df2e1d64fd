"""Piece spans on the raw text: trimming, cover, whole, cuts, crossings."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from biotok.segment import Segmentation, content_words, segment, word_spans


def seg_of(text: str, parts: list[str]) -> Segmentation:
    """A segmentation cutting ``text`` (no spaces) into ``parts``."""
    spans, pos = [], 0
    for p in parts:
        spans.append((pos, pos + len(p)))
        pos += len(p)
    assert pos == len(text)
    return Segmentation.from_offsets(text, parts, spans)


def test_metaspace_offsets_are_trimmed_and_a_bare_marker_is_zero_width():
    text = "le foie"
    # '▁foie' as SentencePiece reports it: its span holds the space before the word
    s = Segmentation.from_offsets(text, ["▁le", "▁", "foie"], [(0, 2), (2, 3), (3, 7)])
    assert s.spans == ((0, 2), (3, 3), (3, 7))
    assert s.cover(3, 7) == [1, 2]  # the bare '▁' counts for the word that follows
    assert s.cuts(3, 7) == []  # ... but is no cut
    assert s.surfaces() == ("le", "∅", "foie")  # no marker in a table: the empty piece is spelled ∅


def test_a_piece_reaching_back_starts_where_the_previous_one_ends():
    # a normalizer-inserted space before '.' is aligned to the 'e' before it
    s = Segmentation.from_offsets("foie.", ["▁foie", "▁."], [(0, 4), (3, 5)])
    assert s.spans == ((0, 4), (4, 5))
    assert not s.crosses(4)


def test_whole_cuts_and_crossings():
    s = seg_of("hépatosplénique", ["hépato", "splén", "ique"])
    assert s.whole(0, 6) and not s.whole(0, 15)
    assert s.cuts(0, 15) == [6, 11]
    assert s.crosses(3) and not s.crosses(6)
    unk = Segmentation.from_offsets("xyz", ["[UNK]"], [(0, 3)], [True])
    assert not unk.whole(0, 3) and unk.surfaces() == ("[UNK]",)


def test_segment_matches_the_tokenizer(tiny_unigram):
    import biotok

    tok = biotok.load(str(tiny_unigram))
    texts = ["Une hépatosplénomégalie chez l'enfant.", "2,5 mg/kg"]
    for text, s in zip(texts, segment(tok, texts)):
        assert len(s) == len(tok.encode(text).ids)
        assert all(0 <= a <= b <= len(text) for a, b in s.spans)


def test_word_spans_are_biotok_words():
    [spans] = word_spans(["l'hôpital, 2,5 mg/kg"])
    text = "l'hôpital, 2,5 mg/kg"
    assert [text[a:b] for a, b in spans] == ["l'", "hôpital", ",", "2,5", "mg/kg"]
    assert [text[a:b] for a, b in content_words(text, spans)] == ["l'", "hôpital", "2,5", "mg/kg"]


@given(st.lists(st.text(alphabet="abcdé", min_size=1, max_size=6), min_size=1, max_size=8))
def test_cuts_of_a_partition_are_its_inner_boundaries(parts):
    text = "".join(parts)
    s = seg_of(text, parts)
    bounds, pos = set(), 0
    for p in parts[:-1]:
        pos += len(p)
        bounds.add(pos)
    assert s.cuts(0, len(text)) == sorted(bounds)
    assert len(s.cover(0, len(text))) == len(parts)
    assert not any(s.crosses(b) for b in bounds)
