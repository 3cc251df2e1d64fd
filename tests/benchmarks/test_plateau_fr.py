"""benchmarks/experiments/plateau_fr.py: where a vocabulary leaves the plateau, and the README's verdict, from the points."""

from __future__ import annotations

from benchmarks.experiments import plateau_fr as P


def _pt(step, gap, half=0.02):
    return {"step": step, "positions": step * 1024, "train_cpu_s": 60.0, "loss": 6.0 + gap, "floor_loss": 6.0,
            "gap": gap, "gap_low": gap - half, "gap_high": gap + half, "left_plateau": gap + half < -1e-3,
            "top1": 0.1, "floor_top1": 0.05}


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
