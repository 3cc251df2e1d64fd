"""FrenchMedMCQA, read once (:func:`read_frenchmedmcqa`, every item checked) for its two tasks:
multiple choice (``frenchmedmcqa``: a question, five options a-e and the set of right ones, 1 to
5, scored by Hamming score and exact match ratio as the FrenchMedMCQA paper does), and
DrBenchmark's classification of the number of right answers (``frenchmedmcqa-nbr``: the question
and its options as one text, labelled 1-5). No torch, no transformers.
"""

from __future__ import annotations

import json
import os
from typing import Iterator

from biotok.errors import CorpusError
from biotok.io import open_text
from biotok_train.tasks.common import corpus_file
from biotok_train.tasks.examples import ClassifyExample, MCQExample, TaskData

PathLike = str | os.PathLike[str]
LETTERS = ("a", "b", "c", "d", "e")


def read_frenchmedmcqa(path: PathLike) -> Iterator[MCQExample]:
    """Stream FrenchMedMCQA questions (a JSON array of {id, question, answers{a..e},
    correct_answers[...]}) as :class:`MCQExample`, every item checked."""
    with open_text(path) as f:
        try:
            items = json.load(f)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{path}:{e.lineno}: invalid JSON ({e.msg})") from None
    if not isinstance(items, list):
        raise CorpusError(f"{path}: expected a JSON array of questions")
    for i, q in enumerate(items):
        where = f"{path}#{i}"
        try:
            answers, correct, question = q["answers"], q["correct_answers"], q["question"]
        except (KeyError, TypeError):
            raise CorpusError(f"{where}: item needs 'question', 'answers' and 'correct_answers'") from None
        if not isinstance(answers, dict) or sorted(answers) != list(LETTERS):
            raise CorpusError(f"{where}: 'answers' must map the letters a to e to option texts")
        if not correct or any(c not in LETTERS for c in correct):
            raise CorpusError(f"{where}: correct_answers {correct!r} must be 1 to 5 of the letters a to e")
        options = tuple(str(answers[k]).strip() for k in LETTERS)
        idx = tuple(sorted({LETTERS.index(c) for c in correct}))
        yield MCQExample(str(q.get("id", i)), str(question).strip(), options, idx, where)


def load_frenchmedmcqa(corpora: PathLike | None) -> TaskData:
    """FrenchMedMCQA multiple choice: 2,171 / 312 / 622 questions."""
    tr, dv, te = (
        tuple(read_frenchmedmcqa(corpus_file(corpora, f"frenchmedmcqa/{s}.json.gz", "frenchmedmcqa")))
        for s in ("train", "dev", "test")
    )
    return TaskData("frenchmedmcqa", "mcq", (), tr, dv, te)


def as_text(q: MCQExample) -> str:
    """A question and its options as one text: 'question (a) option (b) option ...'."""
    return q.question + " " + " ".join(f"({k}) {o}" for k, o in zip(LETTERS, q.options))


def load_frenchmedmcqa_nbr(corpora: PathLike | None) -> TaskData:
    """DrBenchmark's FrenchMedMCQA classification task: the number of right answers (1-5) of a
    question (:func:`as_text`); an example's id is its index in the file."""
    splits = []
    for s in ("train", "dev", "test"):
        path = corpus_file(corpora, f"frenchmedmcqa/{s}.json.gz", "frenchmedmcqa-nbr")
        splits.append(tuple(ClassifyExample(q.source.rsplit("#", 1)[-1], as_text(q), str(len(q.answers)), q.source)
                            for q in read_frenchmedmcqa(path)))
    return TaskData("frenchmedmcqa-nbr", "classify", ("1", "2", "3", "4", "5"), *splits)


__all__ = ["LETTERS", "as_text", "load_frenchmedmcqa", "load_frenchmedmcqa_nbr", "read_frenchmedmcqa"]
