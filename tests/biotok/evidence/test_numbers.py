"""Numbers and units: the built-in cases, the counts, and a real tokenizer."""

from __future__ import annotations

import pytest

from biotok.errors import CorpusError
from biotok.evidence.numbers import NumberCase, builtin_cases, case_counts, number_segmentation, parse_cases
from biotok.segment import Segmentation


def test_builtin_cases_cover_the_issue_examples():
    cases = builtin_cases()
    assert len(cases) >= 50
    by_text = {c.text: c for c in cases}
    for text in ("2,5 mg/kg", "10^9/L", "37,5 °C"):
        assert text in by_text
    c = by_text["2,5 mg/kg"]
    assert [c.text[a:b] for a, b in c.numbers] == ["2,5"] and [c.text[a:b] for a, b in c.units] == ["mg/kg"]
    assert {c.category for c in cases} == {"dose", "lab", "vital", "time", "size"}


def test_parse_cases_finds_parts_left_to_right_and_reports_mistakes():
    [c] = parse_cases(["lab\tDFG 60 mL/min/1,73 m²\t60 | 1,73\tDFG | mL/min | m²"])
    assert [c.text[a:b] for a, b in c.units] == ["DFG", "mL/min", "m²"]
    assert c.units[2][0] > c.numbers[1][0]  # the 'm²' after 1,73, not the 'm' of 'mL'
    with pytest.raises(CorpusError, match="is not in"):
        parse_cases(["dose\t5 mg\t6\tmg"])
    with pytest.raises(CorpusError, match="4 TAB-separated"):
        parse_cases(["dose\t5 mg"])


def seg(text: str, cuts: list[int]) -> Segmentation:
    bounds = [0, *cuts, len(text)]
    spans = [(a, b) for a, b in zip(bounds, bounds[1:]) if text[a:b].strip()]
    return Segmentation.from_offsets(text, [text[a:b] for a, b in spans], spans)


def test_case_counts():
    [c] = parse_cases(["dose\t2,5 mg/kg\t2,5\tmg/kg"])
    good = case_counts(seg(c.text, [3]), c)  # '2,5' 'mg/kg'
    assert (good.pieces, good.numbers_whole, good.units_whole, good.glued) == (2, 1, 1, 0)
    bad = case_counts(seg(c.text, [1, 2, 6]), c)  # '2' ',' '5 mg' '/kg'
    assert (bad.numbers_whole, bad.units_whole, bad.glued) == (0, 0, 1)


def test_with_a_trained_tokenizer(tiny_unigram):
    import biotok

    tok = biotok.load(str(tiny_unigram))
    cases = [NumberCase("dose", "500 mg", ((0, 3),), ((4, 6),))]
    rep = number_segmentation([tok], cases)
    t = rep.tokenizers[0]
    assert t.overall.cases == 1
    assert "".join(t.segmentations[0]).replace(" ", "") == "500mg"
    assert t.overall.mean_pieces == len(tok.encode("500 mg").ids)
    assert rep.as_dict()["cases"][0] == {"category": "dose", "text": "500 mg", "numbers": ["500"], "units": ["mg"]}
    full = number_segmentation([tok])
    assert [s.category for s in full.tokenizers[0].by_category] == ["dose", "lab", "vital", "time", "size"]
