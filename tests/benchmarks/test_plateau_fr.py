"""benchmarks/experiments/plateau_fr.py: where a vocabulary leaves the plateau, and the README's verdict, from the points."""

from __future__ import annotations

from benchmarks.experiments import plateau_fr as P
from biotok_train.pretrain.heldout import HeldoutMLM


def _pt(step, gap, spread=0.05):
    """A point as plateau_fr.search records it: the library's summary of held-out rows whose loss sits
    ``gap`` nats above the unigram floor (each sequence ±``spread``), so ``left_plateau`` and the
    interval are the library's own (its bootstrap and margin), never recomputed here."""
    rows = [[10 * (6.0 + gap) + (10 * spread if i % 2 else -10 * spread), 60.0, 1, 0, 10] for i in range(40)]
    held = HeldoutMLM(sequences=40, positions=400, loss=6.0 + gap, top1=0.1, floor_loss=6.0, floor_top1=0.05,
                      most_frequent=5, rows=rows)
    s = held.summary(n_resamples=500)
    return {"step": step, "positions": step * 1024, "train_cpu_s": 60.0,
            **{k: s[k] for k in ("loss", "floor_loss", "gap", "gap_low", "gap_high", "left_plateau", "top1", "floor_top1")}}


def test_a_gap_inside_the_margin_is_float_rounding_not_learning():
    """The library's margin decides: an interval wholly below 0 but above -PLATEAU_MARGIN stays on the plateau."""
    assert _pt(1000, -0.0005, spread=0.0)["gap_high"] < 0
    assert P.first_left([_pt(1000, -0.0005, spread=0.0)]) is None
    assert P.first_left([_pt(1000, -0.01, spread=0.0)])["step"] == 1000


def test_the_first_point_below_the_floor_is_where_the_plateau_is_left():
    pts = [_pt(1000, 0.5), _pt(2000, 0.01), _pt(3000, -0.05), _pt(4000, -0.2)]
    assert P.first_left(pts)["step"] == 3000
    assert P.first_left(pts[:2]) is None


def test_readme_verdicts_and_the_budget_they_give():
    result = {"max_steps": 4000, "every": 1000, "vocabularies": {
        "a": [_pt(1000, 0.5), _pt(2000, -0.1)], "b": [_pt(1000, 0.5), _pt(2000, 0.2), _pt(3000, -0.3)]}}
    text = P.readme(result, "python -m benchmarks.experiments.plateau_fr")
    assert "- a leaves the plateau by step 2,000 (2,048,000 token positions, 2 CPU-minutes" in text
    assert "- b leaves the plateau by step 3,000" in text
    assert "needs at least 3,000 steps of this recipe: `python -m benchmarks.experiments.ablation_cpu --budget 3000`" in text
    result["vocabularies"]["b"] = [_pt(1000, 0.5)]
    text = P.readme(result, "python -m benchmarks.experiments.plateau_fr")
    assert "b has not left the plateau within 4,000 steps (at 1,024,000 positions its gap is +0.500" in text
    assert "--budget" not in text


def test_readme_says_when_top1_never_beats_the_most_frequent_piece():
    flat = [{**_pt(1000, 0.01), "top1": 0.05}, {**_pt(2000, -0.05), "top1": 0.049}]
    text = P.readme({"max_steps": 2000, "every": 1000, "vocabularies": {"a": flat, "b": [_pt(1000, -0.1)]}}, "cmd")
    assert "- a's top-1 on [MASK] positions never beats always answering the most frequent piece (0.050)" in text
    assert "b's top-1" not in text
    assert "below -0.001 nats" in text
