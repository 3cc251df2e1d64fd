"""Vocabulary-size sweep: Kneedle, the config, and a real sweep on the sample corpus."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biotok.config import TrainConfig
from biotok.errors import ConfigError, OutputExistsError
from biotok.config import SweepConfig
from biotok.sweep import kneedle, sweep


def test_kneedle_on_known_curves():
    xs = [1, 2, 3, 4, 5, 6, 7, 8]
    # a sharp elbow at x = 3: steep before, flat after
    assert kneedle(xs, [10, 5, 2, 1.8, 1.6, 1.4, 1.2, 1.0]) == 2
    # 1/x: the point farthest below the chord joining (1, 1) and (8, 1/8)
    ys = [1 / x for x in xs]
    assert kneedle(xs, ys) == 2
    # a straight line has no knee, nor a flat one, nor fewer than 3 points
    assert kneedle(xs, [8 - x for x in xs]) is None
    assert kneedle(xs, [1.0] * 8) is None
    assert kneedle([1, 2], [2, 1]) is None
    # concave increasing: above the chord
    assert kneedle(xs, [1 - 1 / x for x in xs], curve="concave") == 2
    with pytest.raises(ConfigError):
        kneedle(xs, ys, curve="wavy")


@given(st.lists(st.floats(0.5, 10), min_size=3, max_size=12))
def test_kneedle_properties(ys):
    xs = list(range(len(ys)))
    k = kneedle(xs, sorted(ys, reverse=True))
    # never an end point: the ends lie on the chord
    assert k is None or 0 < k < len(ys) - 1


def test_config_validation():
    assert SweepConfig(sizes=(4000, 1000, 4000)).sizes == (1000, 4000)
    for bad in ({"sizes": ()}, {"sizes": (50,)}, {"hidden_size": 0}, {"heldout_fraction": 1.0}, {"max_eval_lines": 0}):
        with pytest.raises(ConfigError):
            SweepConfig(**bad)


def test_sweep_on_the_sample(tmp_path, sample_corpus):
    cfg = SweepConfig(sizes=(600, 1200, 2400, 400000), hidden_size=256)
    r = sweep([sample_corpus], tmp_path / "a", cfg, TrainConfig(algo="unigram"))
    assert [p.vocab_size for p in r.points] == [600, 1200, 2400]
    assert r.skipped and r.skipped[0][0] == 400000 and "lower --vocab-size" in r.skipped[0][1]
    fert = [p.fertility for p in r.points]
    assert fert[0] > fert[1] > fert[2]  # more pieces, fewer cuts
    assert [p.embedding_params for p in r.points] == [600 * 256, 1200 * 256, 2400 * 256]
    assert r.eval_lines > 0 and r.eval_words > 0
    out = tmp_path / "a"
    for name in ("sweep.json", "sweep.md", "sweep.png", f"{r.points[0].path}/tokenizer.json"):
        assert (out / name).is_file()
    assert r.points[0].path == f"tokenizers/{r.algo}-600"
    data = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert data["knee"] == r.knee and len(data["points"]) == 3
    # the Zipf criterion beside the knee: a fit per size, the best one named, agreement computed
    assert all(0 < p.zipf_r2 <= 1 and p.zipf_exponent > 0 for p in r.points)
    assert r.zipf_best == max(r.points, key=lambda p: (p.zipf_r2, -p.vocab_size)).vocab_size
    assert data["zipf_best"] == r.zipf_best
    md = (out / "sweep.md").read_text(encoding="utf-8")
    assert "◀ best Zipf fit" in md and ("criteria agree" in md) == (r.knee == r.zipf_best)
    with pytest.raises(OutputExistsError):
        sweep([sample_corpus], out, cfg)
    # same corpus, config and seed: the same bytes
    sweep([sample_corpus], tmp_path / "b", SweepConfig(sizes=(600, 1200, 2400, 400000), hidden_size=256),
          TrainConfig(algo="unigram"))
    for name in ("sweep.json", "sweep.md", "sweep.png"):
        assert (out / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_the_criteria_sentence_says_when_they_disagree():
    from biotok.sweep import SweepPoint, SweepResult, criteria_sentence

    pts = tuple(SweepPoint(n, 1.5, 0.3, 20.0, 100, n * 8, f"t/{n}", 1.0, 0.9) for n in (1000, 2000, 4000))
    both = SweepResult("unigram", 8, 10, 100, pts, knee=2000, zipf_best=2000)
    assert both.criteria_agree and "agree" in criteria_sentence(both)
    split = SweepResult("unigram", 8, 10, 100, pts, knee=2000, zipf_best=4000)
    assert split.criteria_agree is False and "disagree" in criteria_sentence(split)
    none = SweepResult("unigram", 8, 10, 100, pts, knee=None, zipf_best=4000)
    assert none.criteria_agree is None and "no knee" in criteria_sentence(none).lower()


def test_the_best_zipf_fit_comes_with_its_interval_or_says_indistinguishable():
    from biotok.sweep import SweepPoint, SweepResult, criteria_sentence, sweep_markdown
    from biotok.zipf import ZipfChoice

    pts = tuple(SweepPoint(n, 1.5, 0.3, 20.0, 100, n * 8, f"t/{n}", 1.0, 0.9) for n in (1000, 2000, 4000))
    tied = ZipfChoice(best=4000, runner_up=2000, margin=0.0003, low=-0.001, high=0.0016, tied=(4000, 2000),
                      r2_intervals=((1000, 0.8, 0.85), (2000, 0.89, 0.91), (4000, 0.895, 0.91)), resamples=200)
    r = SweepResult("unigram", 8, 10, 100, pts, knee=2000, zipf_best=4000, zipf_choice=tied)
    text = criteria_sentence(r)
    assert "cannot tell 4,000 from 2,000: indistinguishable" in text and "[-0.0010, +0.0016]" in text
    assert r.criteria_agree and "among the sizes the Zipf fit cannot tell apart" in text
    md = sweep_markdown(r)
    assert "◀ best Zipf fit (indistinguishable)" in md and "2,000 ◀ knee ◀ indistinguishable Zipf fit" in md
    assert "[0.8950, 0.9100]" in md
    clear = SweepResult("unigram", 8, 10, 100, pts, knee=2000, zipf_best=4000,
                        zipf_choice=ZipfChoice(4000, 2000, 0.003, 0.001, 0.005, (4000,), (), 200))
    assert "most closely at **4,000** (R² +0.0030 over 2,000, 95% interval [+0.0010, +0.0050]" in criteria_sentence(clear)
    assert clear.criteria_agree is False
