"""The trivial baseline: the best constant answer chosen on train with the task's own metric."""

from __future__ import annotations

from pathlib import Path

import pytest

from biotok.datasets.bio import Sentence
from biotok.errors import DataError
from biotok_train.tasks import TaskSpec, plain_spec
from biotok_train.tasks.baseline import trivial_baseline
from biotok_train.tasks.examples import ClassifyExample, MCQExample, MultiLabelExample, PairExample, TaskData


def _data(kind: str, labels: tuple, train: list, dev: list, test: list) -> TaskData:
    return TaskData(f"toy-{kind}", kind, labels, tuple(train), tuple(dev), tuple(test))


def test_classification_takes_the_majority_class_for_accuracy_and_the_best_label_for_its_metric():
    c = lambda i, y: ClassifyExample(f"c{i}", "t", y)  # noqa: E731
    data = _data("classify", ("a", "b"), [c(0, "a"), c(1, "a"), c(2, "b")], [c(3, "b"), c(4, "a")],
                 [c(5, "a"), c(6, "a"), c(7, "a"), c(8, "b")])
    acc = TaskSpec("t", None, "classify", "accuracy", lambda c, k: data, ("a", "b"), "classification")
    b = trivial_baseline(data, acc)
    assert b.prediction == "a" and "majority class" in b.rule
    assert (b.train, b.dev, b.test) == (pytest.approx(2 / 3), 0.5, 0.75)
    # positive-class F1 of "1" when "0" is the majority: the constant that scores is the positive one
    pos = TaskSpec("g", None, "classify", "positive_f1", lambda c, k: data, ("a", "b"), "classification",
                   (("positive", "b"),))
    assert trivial_baseline(data, pos).prediction == "b"


def test_multilabel_grows_the_label_set_while_the_metric_rises():
    m = lambda i, labs: MultiLabelExample(f"m{i}", "t", labs)  # noqa: E731
    train = [m(0, ("x",)), m(1, ("x",)), m(2, ("x", "y")), m(3, ("z",))]
    data = _data("multilabel", ("x", "y", "z"), train, train[:2], train)
    b = trivial_baseline(data, plain_spec(data))  # weighted F1: each label present adds its share
    assert b.prediction == ["x", "y", "z"]  # most frequent first, then by name
    assert b.rule == "always all 3 train labels (each raises the metric on train)"
    from biotok_train.scores import weighted_f1_multilabel

    want = weighted_f1_multilabel([e.labels for e in train], [("x", "y", "z")] * 4, ("x", "y", "z")).value
    assert b.test == pytest.approx(want) and b.test > weighted_f1_multilabel(
        [e.labels for e in train], [("x",)] * 4, ("x", "y", "z")).value


def test_mcq_tries_every_answer_set_and_scores_hamming_and_emr():
    q = lambda i, a: MCQExample(f"q{i}", "?", ("o1", "o2", "o3"), a)  # noqa: E731
    train = [q(0, (0,)), q(1, (0,)), q(2, (0, 1)), q(3, (1, 2))]
    data = _data("mcq", (), train, [q(4, (0,))], [q(5, (0,)), q(6, (0, 1))])
    b = trivial_baseline(data, plain_spec(data))
    # Hamming per question of {a}: 1, 1, 1/2, 0 -> 0.625; of {a,b}: 1/2, 1/2, 1, 1/3 -> 0.583
    assert b.prediction == [0] and b.train == pytest.approx(0.625) and "{a}" in b.rule
    assert b.test == pytest.approx(0.75) and b.details["test"]["exact_match_ratio"] == 0.5


def test_ner_is_all_o_and_regression_a_constant():
    s = Sentence(("le", "rein"), ("O", "B-X"), "s")
    ner = _data("ner", ("X",), [s], [s], [s])
    b = trivial_baseline(ner, plain_spec(ner))
    assert b.prediction == "O" and b.test == 0.0
    p = lambda i, y: PairExample(f"p{i}", "a", "b", y)  # noqa: E731
    reg = _data("pair-regression", (), [p(0, 1.0), p(1, 3.0)], [p(2, 0.0), p(3, 1.0)], [p(4, 2.0), p(5, 4.0)])
    b = trivial_baseline(reg, plain_spec(reg))
    assert b.prediction == 2.0 and b.test == 0.0 and b.details["test"]["constant_input"] == 1.0


def test_an_empty_split_is_refused():
    c = ClassifyExample("c", "t", "a")
    with pytest.raises(DataError, match="non-empty"):
        trivial_baseline(_data("classify", ("a",), [c], [], [c]))


def test_french_baselines_from_the_shared_data(shared_data: Path):
    """FrenchMedMCQA's best constant answer (all five options) scores above the 0.36-0.38 Hamming
    the first GPU run measured for both arms; MORFITT's label prior is weighted F1 0.25."""
    from biotok_train.tasks import load

    mcq = trivial_baseline(load("frenchmedmcqa", shared_data / "corpora"))
    assert mcq.prediction == [0, 1, 2, 3, 4] and mcq.test == pytest.approx(0.3849, abs=1e-4)
    morfitt = trivial_baseline(load("morfitt", shared_data / "corpora"))
    assert len(morfitt.prediction) == 12 and morfitt.test == pytest.approx(0.2538, abs=1e-4)
