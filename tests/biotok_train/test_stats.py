"""biotok_train.stats: paired bootstrap, verdicts, seed summaries and rank agreement."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biotok_train import stats as S


def _correct(p: float, n: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < p).astype(float)


def test_known_difference_is_better_and_swapped_is_worse():
    ref, cand = _correct(0.5, 400, 1), _correct(0.8, 400, 2)
    r = S.paired_bootstrap(ref, cand, seed=0)
    assert r.difference == pytest.approx(cand.mean() - ref.mean())
    assert r.low > 0 and r.verdict == S.BETTER
    swapped = S.paired_bootstrap(cand, ref, seed=0)
    assert swapped.verdict == S.WORSE
    # a metric where lower is better (an error rate) turns the same interval into "worse"
    assert S.paired_bootstrap(ref, cand, higher_is_better=False).verdict == S.WORSE


def test_no_difference_is_indistinguishable():
    same = _correct(0.6, 300, 3)
    r = S.paired_bootstrap(same, same.copy())
    assert (r.difference, r.low, r.high, r.verdict) == (0.0, 0.0, 0.0, S.INDISTINGUISHABLE)
    # equally accurate systems that err on different examples: the interval straddles 0
    ref, cand = np.zeros(300), np.zeros(300)
    ref[:180], cand[30:210] = 1, 1
    r = S.paired_bootstrap(ref, cand)
    assert r.difference == 0 and r.low < 0 < r.high and r.verdict == S.INDISTINGUISHABLE


def test_fixed_seed_is_deterministic_and_seed_matters():
    ref, cand = _correct(0.5, 200, 6), _correct(0.55, 200, 7)
    a = S.paired_bootstrap(ref, cand, seed=11)
    assert a == S.paired_bootstrap(ref, cand, seed=11)
    assert (a.low, a.high) != (S.paired_bootstrap(ref, cand, seed=12).low, S.paired_bootstrap(ref, cand, seed=12).high)


def test_mean_difference_matches_scipy_bootstrap():
    from scipy.stats import bootstrap

    rng = np.random.default_rng(8)
    ref = rng.normal(0.0, 1.0, 250)
    cand = ref + rng.normal(0.1, 0.5, 250)
    ours = S.paired_bootstrap(ref, cand, n_resamples=5000, seed=0)
    theirs = bootstrap((ref, cand), lambda x, y, axis=-1: y.mean(axis) - x.mean(axis), paired=True,
                       method="percentile", n_resamples=5000, rng=np.random.default_rng(0)).confidence_interval
    width = theirs.high - theirs.low
    assert ours.low == pytest.approx(theirs.low, abs=0.05 * width)
    assert ours.high == pytest.approx(theirs.high, abs=0.05 * width)


def test_sum_statistic_and_plain_callable_draw_the_same_resamples():
    ref, cand = _correct(0.4, 120, 9), _correct(0.5, 120, 10)
    fast = S.paired_bootstrap(S.accuracy_stats(ref), S.accuracy_stats(cand), S.MEAN, n_resamples=300, seed=3)
    slow = S.paired_bootstrap(ref, cand, lambda x: float(np.mean(x)), n_resamples=300, seed=3)
    assert fast.low == pytest.approx(slow.low, abs=1e-12) and fast.high == pytest.approx(slow.high, abs=1e-12)


def test_entity_stats_reproduce_seqeval_micro_f1():
    from seqeval.metrics import f1_score
    from seqeval.scheme import IOB2

    gold = [["B-X", "I-X", "O", "B-Y"], ["O", "B-X"], ["I-X", "O"], ["O", "O"]]
    pred = [["B-X", "I-X", "O", "O"], ["B-X", "B-X"], ["I-X", "O"], ["B-Y", "O"]]
    assert S.MICRO_F1(S.entity_stats(gold, pred)) == pytest.approx(f1_score(gold, pred, mode="strict", scheme=IOB2))
    assert S.MICRO_F1(S.entity_stats(gold, pred, strict=False)) == pytest.approx(f1_score(gold, pred))


def test_corpus_level_metrics_match_sklearn_and_scipy():
    from scipy.stats import pearsonr
    from sklearn.metrics import f1_score

    gold, pred = [0, 1, 2, 2, 1, 0, 3, 3], [0, 2, 2, 2, 1, 1, 0, 4]
    assert S.MACRO_F1(S.class_stats(gold, pred)) == pytest.approx(f1_score(gold, pred, average="macro"))
    rng = np.random.default_rng(0)
    x = rng.random(60)
    y = x + rng.random(60)
    assert S.PEARSON(S.pearson_stats(x, y)) == pytest.approx(pearsonr(x, y).statistic)


def test_entity_f1_bootstrap_finds_a_better_tagger():
    gold = [["B-X", "I-X", "O"], ["O", "B-Y", "O"]] * 60
    good = [list(s) for s in gold]
    bad = [["B-X", "O", "O"], ["O", "O", "O"]] * 60  # half the entities cut, the other half missed
    r = S.paired_bootstrap(S.entity_stats(gold, bad), S.entity_stats(gold, good), S.MICRO_F1)
    assert r.metric == "micro_f1" and r.candidate == 1.0 and r.reference == 0.0 and r.verdict == S.BETTER


def test_pooled_seeds_are_resampled_by_example():
    one = _correct(0.5, 80, 12), _correct(0.6, 80, 13)
    # three seeds that predicted exactly alike: drawing whole examples gives the one-seed interval
    ref, cand, clusters = S.pool_seeds({s: one[0] for s in (0, 1, 2)}, {s: one[1] for s in (0, 1, 2)})
    assert len(ref) == 240 and list(clusters[:3]) == [0, 1, 2]
    single = S.paired_bootstrap(*one, seed=5)
    pooled = S.paired_bootstrap(ref, cand, clusters=clusters, seed=5)
    assert (pooled.low, pooled.high) == pytest.approx((single.low, single.high), abs=1e-12)
    assert pooled.n_clusters == 80 and pooled.n_examples == 240
    # treating the copies as independent examples would shrink the interval: the reason for clusters
    naive = S.paired_bootstrap(ref, cand, seed=5)
    assert naive.high - naive.low < 0.8 * (pooled.high - pooled.low)


def test_pool_seeds_and_bootstrap_reject_unpaired_input():
    with pytest.raises(ValueError, match="different seeds"):
        S.pool_seeds({0: [1.0]}, {1: [1.0]})
    with pytest.raises(ValueError, match="different numbers"):
        S.pool_seeds({0: [1.0], 1: [1.0, 0.0]}, {0: [1.0], 1: [0.0, 1.0]})
    with pytest.raises(ValueError, match="paired"):
        S.paired_bootstrap([1.0, 0.0], [1.0])


@pytest.mark.parametrize(("low", "high", "higher", "word"), [
    (0.01, 0.2, True, "better"), (-0.2, -0.01, True, "worse"), (-0.1, 0.1, True, "indistinguishable"),
    (0.0, 0.1, True, "indistinguishable"), (0.01, 0.2, False, "worse"), (-0.2, -0.01, False, "better"),
])
def test_verdict(low, high, higher, word):
    assert S.verdict(low, high, higher) == word


pairs = st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=5, max_size=40)


@settings(max_examples=40, deadline=None)
@given(pairs, st.integers(0, 2**31))
def test_interval_contains_the_point_estimate(data, seed):
    ref, cand = np.array([a for a, _ in data]), np.array([b for _, b in data])
    r = S.paired_bootstrap(ref, cand, n_resamples=300, seed=seed)
    assert r.low - 1e-9 <= r.difference <= r.high + 1e-9


@settings(max_examples=40, deadline=None)
@given(pairs, st.integers(0, 2**31))
def test_swapping_the_systems_negates_the_interval(data, seed):
    ref, cand = np.array([a for a, _ in data]), np.array([b for _, b in data])
    ab = S.paired_bootstrap(ref, cand, n_resamples=300, seed=seed)
    ba = S.paired_bootstrap(cand, ref, n_resamples=300, seed=seed)
    assert ba.difference == pytest.approx(-ab.difference, abs=1e-12)
    assert (ba.low, ba.high) == pytest.approx((-ab.high, -ab.low), abs=1e-12)
    assert {ab.verdict, ba.verdict} in ({"indistinguishable"}, {"better", "worse"})


def test_summarize_seeds():
    s = S.summarize_seeds([0.5, 0.6, 0.7])
    assert s.mean == pytest.approx(0.6) and s.std == pytest.approx(statistics.stdev([0.5, 0.6, 0.7]))
    assert s.format(2) == "0.60 ± 0.10" and s.n == 3
    one = S.summarize_seeds([0.25])
    assert one.std is None and one.format(3) == "0.250"
    with pytest.raises(ValueError):
        S.summarize_seeds([])


def test_rank_agreement_matches_kendalltau_and_says_so():
    from scipy.stats import kendalltau

    tiny = {"a": 0.1, "b": 0.3, "c": 0.2, "d": 0.5}
    small = {"a": 0.2, "b": 0.1, "c": 0.4, "d": 0.6}
    (r,) = S.rank_agreement({"tiny": tiny, "small": small}, metric="NER F1")
    ref = kendalltau(list(tiny.values()), list(small.values()))
    assert r.tau == pytest.approx(ref.statistic) and r.p_value == pytest.approx(ref.pvalue)
    assert r.rankings["tiny"] == ["d", "b", "c", "a"] and "agree only in part" in r.sentence
    (same,) = S.rank_agreement({"tiny": tiny, "small": {k: v + 1 for k, v in tiny.items()}})
    assert same.tau == pytest.approx(1.0) and "is the same at tiny and small" in same.sentence
    (rev,) = S.rank_agreement({"tiny": {"a": 1, "b": 2}, "small": {"a": 2, "b": 1}})
    assert rev.tau == pytest.approx(-1.0) and "reversed" in rev.sentence and "by construction" in rev.sentence
    (loss,) = S.rank_agreement({"tiny": {"a": 1, "b": 2}, "small": {"a": 1, "b": 3}}, higher_is_better=False)
    assert loss.rankings["tiny"] == ["a", "b"]
    (tied,) = S.rank_agreement({"tiny": {"a": 1, "b": 1}, "small": {"a": 1, "b": 3}})
    assert tied.tau is None and "undefined" in tied.sentence
    assert len(S.rank_agreement({"tiny": tiny, "small": small, "base": tiny})) == 3


def test_weighted_f1_from_class_stats_is_sklearns():
    from sklearn.metrics import f1_score

    gold = [("a",), ("a", "b"), ("c",), (), ("b",), ("a", "c")]
    pred = [("a",), ("b",), ("a", "c"), ("c",), (), ("a", "c")]
    labels = ["a", "b", "c", "d"]
    from biotok_train.scores import _binarize

    want = f1_score(_binarize(gold, labels, "t"), _binarize(pred, labels, "t"), average="weighted", zero_division=0)
    assert S.WEIGHTED_F1(S.class_stats(gold, pred, labels)) == pytest.approx(want)
    single_g, single_p = ["x", "y", "y", "z", "x"], ["x", "y", "x", "x", "w"]
    assert S.WEIGHTED_F1(S.class_stats(single_g, single_p)) == pytest.approx(
        f1_score(single_g, single_p, average="weighted", zero_division=0))
    assert S.WEIGHTED_F1(S.class_stats([()], [("a",)], ["a"])) == 0.0  # no gold label: 0, as sklearn


def test_seed_interval_is_students_t_over_the_seeds():
    lo, hi = S.seed_interval([0.30, 0.34, 0.32])
    assert (lo + hi) / 2 == pytest.approx(0.32) and hi - lo == pytest.approx(2 * 4.302653 * 0.02 / 3 ** 0.5, rel=1e-5)
    assert S.seed_interval([0.3]) is None


def test_weighted_f1_bootstrap_gives_the_slow_paths_interval():
    """The report's fast path (per-label counts, one matrix product per resample) draws the same
    resamples as scoring every resample with sklearn: the same interval."""
    import random

    from sklearn.metrics import f1_score

    labels = ["a", "b", "c"]
    rng = random.Random(0)
    gold = [tuple(sorted(rng.sample(labels, rng.randint(1, 2)))) for _ in range(60)]
    ref = [g if rng.random() < 0.5 else (rng.choice(labels),) for g in gold]
    cand = [g if rng.random() < 0.7 else (rng.choice(labels),) for g in gold]
    from biotok_train.scores import _binarize

    def slow(items):
        return f1_score(_binarize([g for g, _ in items], labels, "t"), _binarize([p for _, p in items], labels, "t"),
                        average="weighted", zero_division=0)

    a = S.paired_bootstrap(list(zip(gold, ref)), list(zip(gold, cand)), slow, n_resamples=300, seed=0)
    b = S.paired_bootstrap(S.class_stats(gold, ref, labels), S.class_stats(gold, cand, labels), S.WEIGHTED_F1,
                           n_resamples=300, seed=0)
    assert (a.low, a.high, a.verdict) == pytest.approx((b.low, b.high, b.verdict), abs=1e-12)
    assert a.difference == pytest.approx(b.difference, abs=1e-12)
