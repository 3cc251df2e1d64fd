"""Benchmark metrics checked against scikit-learn / scipy / seqeval on small hand-made cases."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import pearsonr
from seqeval.metrics import f1_score as seq_f1
from seqeval.scheme import IOB2
from sklearn.metrics import accuracy_score, f1_score, jaccard_score
from sklearn.preprocessing import MultiLabelBinarizer

from biotok.errors import BiotokError, DataError
from biotok_train import scores as S


# --- NER ---------------------------------------------------------------------------------

def test_entity_f1_is_strict_iob2():
    gold = [["B-X", "I-X", "O", "B-Y"]]
    pred = [["B-X", "I-X", "O", "I-Y"]]  # I-Y after O: no entity in strict mode
    s = S.entity_f1(gold, pred)
    assert s.value == pytest.approx(seq_f1(gold, pred, mode="strict", scheme=IOB2))
    assert s.value == pytest.approx(2 / 3)
    assert s.details["precision"] == 1.0 and s.details["recall"] == 0.5
    assert seq_f1(gold, pred) == 1.0  # the lenient (conlleval) mode would count it: strict differs


def test_entity_f1_type_and_boundary_must_match():
    gold = [["B-X", "I-X", "O"], ["B-Y", "O", "O"]]
    pred = [["B-X", "O", "O"], ["B-X", "O", "O"]]
    assert S.entity_f1(gold, pred).value == 0.0


def test_entity_f1_bioul_scheme():
    gold = [["U-X", "O", "B-Y", "L-Y"]]
    pred = [["U-X", "O", "B-Y", "I-Y"]]  # Y never closed: not an entity under BILOU
    s = S.entity_f1(gold, pred, scheme="bioul")
    assert s.value == pytest.approx(2 / 3)
    assert S.entity_f1(gold, gold, scheme="bioul").value == 1.0


def test_entity_f1_io_scheme():
    gold = [["I-X", "I-X", "O", "I-Y"]]
    assert S.io_to_bio(gold[0]) == ["B-X", "I-X", "O", "B-Y"]
    assert S.entity_f1(gold, gold, scheme="io").value == 1.0
    s = S.entity_f1(gold, [["I-X", "O", "O", "I-Y"]], scheme="io")
    assert (s.details["precision"], s.details["recall"]) == (0.5, 0.5)


def test_entity_f1_rejects_bad_input():
    with pytest.raises(DataError, match="unknown tagging scheme"):
        S.entity_f1([["O"]], [["O"]], scheme="bilou2")
    with pytest.raises(DataError, match="1 predicted tags for 2 words"):
        S.entity_f1([["O", "O"]], [["O"]])
    with pytest.raises(DataError, match="2 predictions for 1 gold"):
        S.entity_f1([["O"]], [["O"], ["O"]])
    assert issubclass(DataError, BiotokError)


# --- classification ----------------------------------------------------------------------

def test_positive_micro_f1_excludes_the_negative_class():
    gold = ["false", "CPR:3", "CPR:4", "CPR:4", "false"]
    pred = ["CPR:3", "CPR:3", "false", "CPR:4", "false"]
    s = S.positive_micro_f1(gold, pred, negative=("false",))
    ref = f1_score(gold, pred, labels=["CPR:3", "CPR:4"], average="micro")
    assert s.value == pytest.approx(ref) == pytest.approx(2 / 3)
    # counting the negative class too would be plain accuracy here: a different number
    assert accuracy_score(gold, pred) != pytest.approx(s.value)


def test_positive_micro_f1_all_negative_is_zero():
    assert S.positive_micro_f1(["false", "false"], ["false", "false"]).value == 0.0


@given(st.lists(st.tuples(st.sampled_from("NABC"), st.sampled_from("NABC")), min_size=1, max_size=40))
@settings(max_examples=60, deadline=None)
def test_positive_micro_f1_matches_counts(pairs):
    gold, pred = [g for g, _ in pairs], [p for _, p in pairs]
    tp = sum(g == p != "N" for g, p in pairs)
    npred = sum(p != "N" for p in pred)
    ngold = sum(g != "N" for g in gold)
    expect = 2 * tp / (npred + ngold) if npred + ngold else 0.0
    assert S.positive_micro_f1(gold, pred, negative=("N",)).value == pytest.approx(expect)


def test_positive_f1_is_sklearn_binary_f1():
    gold = ["1", "0", "1", "1", "0", "0"]
    pred = ["1", "1", "0", "1", "0", "1"]
    s = S.positive_f1(gold, pred, positive="1")
    assert s.value == pytest.approx(f1_score(gold, pred, pos_label="1"))
    assert s.value == pytest.approx(S.positive_micro_f1(gold, pred, negative=("0",)).value)


def test_accuracy_and_macro_f1():
    gold = ["yes", "no", "maybe", "yes", "no"]
    pred = ["yes", "no", "yes", "yes", "maybe"]
    s = S.accuracy(gold, pred)
    assert s.value == pytest.approx(accuracy_score(gold, pred)) == pytest.approx(0.6)
    assert s.details["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro"))


def test_weighted_f1_single_label():
    gold = ["1", "1", "2", "3", "3", "3"]
    pred = ["1", "2", "2", "3", "1", "3"]
    s = S.weighted_f1(gold, pred)
    assert s.value == pytest.approx(f1_score(gold, pred, average="weighted"))
    assert s.details["accuracy"] == pytest.approx(4 / 6)


# --- regression --------------------------------------------------------------------------

def test_pearson_matches_scipy():
    gold = [0.0, 1.2, 2.5, 3.1, 4.0, 2.2]
    pred = [0.3, 1.0, 2.0, 3.5, 3.0, 2.9]
    s = S.pearson(gold, pred)
    assert s.value == pytest.approx(pearsonr(gold, pred)[0])
    assert s.value == pytest.approx(np.corrcoef(gold, pred)[0, 1])


def test_pearson_constant_prediction_is_reported():
    s = S.pearson([1.0, 2.0, 3.0], [2.0, 2.0, 2.0])
    assert s.value == 0.0 and s.details["constant_input"] == 1.0
    with pytest.raises(DataError, match="at least 2"):
        S.pearson([1.0], [1.0])


# --- multi-label -------------------------------------------------------------------------

LABS = ("a", "b", "c")


def test_weighted_f1_multilabel_matches_sklearn():
    gold = [("a",), ("a", "b"), ("c",), ("b", "c"), ()]
    pred = [("a",), ("b",), ("a", "c"), ("b", "c"), ("c",)]
    mlb = MultiLabelBinarizer(classes=LABS)
    y, yhat = mlb.fit_transform(gold), mlb.transform(pred)
    s = S.weighted_f1_multilabel(gold, pred, LABS)
    assert s.value == pytest.approx(f1_score(y, yhat, average="weighted"))
    assert s.details["micro_f1"] == pytest.approx(f1_score(y, yhat, average="micro"))
    assert s.details["subset_accuracy"] == pytest.approx(accuracy_score(y, yhat))
    with pytest.raises(DataError, match="'z' is not one of the task's labels"):
        S.weighted_f1_multilabel([("z",)], [()], LABS)


def test_hoc_f1_is_abstract_level():
    # abstract 1 has two sentences: its labels are the union {a, b}
    gold = [("a",), ("b",), (), ("c",)]
    groups = ["1", "1", "2", "3"]
    pred = [("b",), ("a",), ("b",), ("c",)]  # abstract 1 -> {a, b}; 2 -> {b}; 3 -> {c}
    s = S.hoc_f1(gold, pred, groups, LABS)
    mlb = MultiLabelBinarizer(classes=LABS)
    y = mlb.fit_transform([{"a", "b"}, set(), {"c"}])
    yhat = mlb.transform([{"a", "b"}, {"b"}, {"c"}])
    assert s.n == 3
    assert s.value == pytest.approx(f1_score(y, yhat, average="macro", zero_division=0))
    assert s.value == pytest.approx((1 + 2 / 3 + 1) / 3)
    assert s.details["micro_f1"] == pytest.approx(f1_score(y, yhat, average="micro"))
    # sentence-level scoring would be a different number
    sent = f1_score(mlb.transform(gold), mlb.transform(pred), average="macro", zero_division=0)
    assert sent != pytest.approx(s.value)


# --- multiple choice ---------------------------------------------------------------------

def test_hamming_score_and_emr_by_hand():
    gold = [{0}, {1, 3}, {2, 4}]
    pred = [{0}, {1}, {0, 2, 4}]
    s = S.hamming_score(gold, pred)
    assert s.value == pytest.approx((1 + 1 / 2 + 2 / 3) / 3)
    assert s.details["exact_match_ratio"] == pytest.approx(1 / 3)
    assert S.exact_match_ratio(gold, pred).value == pytest.approx(1 / 3)


@given(st.lists(st.tuples(st.sets(st.integers(0, 4), min_size=1), st.sets(st.integers(0, 4))), min_size=1, max_size=30))
@settings(max_examples=60, deadline=None)
def test_hamming_score_is_sample_jaccard(pairs):
    gold, pred = [g for g, _ in pairs], [p for _, p in pairs]
    mlb = MultiLabelBinarizer(classes=range(5))
    y, yhat = mlb.fit_transform(gold), mlb.transform(pred)
    assert S.hamming_score(gold, pred).value == pytest.approx(jaccard_score(y, yhat, average="samples"))
    assert S.exact_match_ratio(gold, pred).value == pytest.approx(accuracy_score(y, yhat))


# --- registry and aggregation ------------------------------------------------------------

def test_compute_dispatches_and_rejects_unknown():
    assert S.compute("accuracy", ["a"], ["a"]).value == 1.0
    with pytest.raises(DataError, match="unknown metric 'f2'"):
        S.compute("f2", ["a"], ["a"])


def test_suite_score_macro_within_then_across_families():
    res = [("bc5-chem", "ner", 0.8), ("ncbi", "ner", 0.9), ("chemprot", "relation", 0.7)]
    s = S.suite_score(res)
    assert s.by_family == {"ner": pytest.approx(0.85), "relation": pytest.approx(0.7)}
    assert s.value == pytest.approx(0.775)
    assert s.value != pytest.approx(statistics.mean(v for _, _, v in res))  # not a flat mean
    with pytest.raises(DataError, match="given twice"):
        S.suite_score(res + [("ncbi", "ner", 0.5)])
    with pytest.raises(DataError, match="no finite score"):
        S.suite_score([("x", "ner", math.nan)])


@given(st.lists(st.floats(0, 1), min_size=1, max_size=8), st.randoms())
@settings(max_examples=40, deadline=None)
def test_suite_score_ignores_task_order(values, rnd):
    res = [(f"t{i}", "ner" if i % 2 else "qa", v) for i, v in enumerate(values)]
    shuffled = res[:]
    rnd.shuffle(shuffled)
    assert S.suite_score(shuffled).value == pytest.approx(S.suite_score(res).value)


def test_mean_std_over_seeds_is_sample_std_and_none_for_one_seed():
    from biotok_train.stats import summarize_seeds

    s = summarize_seeds([0.5, 0.7, 0.9])
    assert (s.mean, s.std) == (pytest.approx(0.7), pytest.approx(statistics.stdev([0.5, 0.7, 0.9])))
    one = summarize_seeds([0.4])
    assert (one.mean, one.std, one.format()) == (0.4, None, "0.400")  # one seed: no spread to report
    assert not hasattr(S, "mean_std")  # one function, in biotok_train.stats


def test_scores_import_no_torch():
    import subprocess
    import sys

    code = "import sys, biotok_train.scores, biotok_train.tasks; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
