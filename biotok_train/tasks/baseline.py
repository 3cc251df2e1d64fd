"""The trivial baseline of a task: the best constant answer, chosen on train with the task's own
metric and scored with it on dev and test -- the number a model must beat before its score means
anything (no model, no torch).

By task type: NER every word ``O`` (no entity: entity F1 0); single-label classification, relation
and yes/no QA the label that scores best on train (the majority class for accuracy); multi-label
the label set grown on train, most frequent label first, each label kept when it raises the
metric (the label prior: for a weighted F1 every label present helps); multiple choice the
answer set (of the options' letters) that scores best on train, every non-empty set tried; pair
regression the train mean (a constant: Pearson 0). Ties keep the first candidate in that order.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from biotok.errors import DataError
from biotok_train.tasks.examples import TaskData, TaskSpec, targets

MCQ_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class TrivialBaseline:
    """A task's best constant answer (``prediction``, in words: ``rule``) and its scores."""

    task: str
    metric: str
    rule: str
    prediction: Any  # JSON-able: a label, a list of labels or answer indices, a number, "O"
    train: float
    dev: float
    test: float
    details: dict = field(default_factory=dict)  # {"dev": Score.as_dict(), "test": ...}

    def to_dict(self) -> dict:
        return {"task": self.task, "metric": self.metric, "rule": self.rule, "prediction": self.prediction,
                "train": self.train, "dev": self.dev, "test": self.test, "details": self.details}


def _score(spec: TaskSpec, examples: Sequence, one: Any) -> Any:
    """The task's metric of answering ``one`` for every example (NER: all-O tag sequences)."""
    if spec.task_type == "ner":
        pred: list = [["O"] * len(e.tags) for e in examples]
    else:
        pred = [one] * len(examples)
    return spec.score_examples(examples, pred)


def _candidates(spec: TaskSpec, data: TaskData) -> tuple[list, list[str]]:
    """The constant answers tried on train, in tie-breaking order, with their descriptions."""
    kind = spec.task_type
    gold = targets(kind, data.train)
    if kind == "ner":
        return ["O"], ["every word O (no entity)"]
    if kind in ("classify", "relation", "yesno-qa"):
        counts = Counter(gold)
        order = sorted(counts, key=lambda x: (-counts[x], str(x)))
        return order, [f"always {x!r} ({counts[x]:,} of {len(gold):,} train examples"
                       + (", the majority class)" if i == 0 else ")") for i, x in enumerate(order)]
    if kind == "pair-regression":
        mean = round(float(sum(gold) / len(gold)), 6)
        return [mean], [f"always the train mean {mean:g} (a constant: no correlation)"]
    if kind == "mcq":
        n = max(len(e.options) for e in data.train)
        counts = Counter(tuple(sorted(g)) for g in gold)
        sets = sorted((s for k in range(1, n + 1) for s in itertools.combinations(range(n), k)),
                      key=lambda s: (-counts[s], len(s), s))
        spell = lambda s: "{" + ",".join(MCQ_LETTERS[i] for i in s) + "}"  # noqa: E731
        top = sets[0]
        return sets, [f"always the answer set {spell(s)} ({counts[s]:,} of {len(gold):,} train questions; the most "
                      f"frequent set is {spell(top)})" for s in sets]
    raise DataError(f"no trivial baseline for task type {kind!r}")


def _best_label_set(spec: TaskSpec, data: TaskData) -> tuple[tuple, str, float]:
    """Multi-label: one pass over the train labels, most frequent first, each kept when it raises
    the metric on train (a label's F1 does not depend on the others: for F1 averages over labels
    this is the best constant set)."""
    counts = Counter(lab for g in targets("multilabel", data.train) for lab in g)
    order = sorted(counts, key=lambda x: (-counts[x], str(x)))
    chosen: list = []
    best = _score(spec, data.train, ()).value
    for lab in order:
        value = _score(spec, data.train, (*chosen, lab)).value
        if value > best:
            best = value
            chosen.append(lab)
    labels = tuple(chosen)
    if not labels:
        rule = "always no label"
    elif len(labels) == len(order):
        rule = f"always all {len(order)} train labels (each raises the metric on train)"
    else:
        rule = (f"always the label set {{{', '.join(labels)}}} ({len(labels)} of {len(order)} train labels, each kept "
                "when it raises the metric on train)")
    return labels, rule, best


def trivial_baseline(data: TaskData, spec: TaskSpec | None = None) -> TrivialBaseline:
    """The best constant answer of ``data`` (chosen on its train split with ``spec``'s metric,
    default the data's own spec) and its score on train, dev and test."""
    from biotok_train.tasks.registry import plain_spec  # lazy: the registry imports every reader

    spec = spec or data.spec or plain_spec(data)
    if not data.train or not data.dev or not data.test:
        raise DataError(f"{data.name}: a trivial baseline needs non-empty train, dev and test splits")
    if spec.task_type == "multilabel":
        best, rule, train = _best_label_set(spec, data)
    else:
        options, rules = _candidates(spec, data)
        values = [_score(spec, data.train, c).value for c in options]
        i = max(range(len(options)), key=lambda k: (values[k], -k))  # the first of equal ones
        best, rule, train = options[i], rules[i], values[i]
    dev, test = _score(spec, data.dev, best), _score(spec, data.test, best)
    shown = list(best) if isinstance(best, tuple) else best
    return TrivialBaseline(spec.name, spec.metric, rule, shown, float(train), float(dev.value), float(test.value),
                           {"dev": dev.as_dict(), "test": test.as_dict()})


__all__ = ["TrivialBaseline", "trivial_baseline"]
