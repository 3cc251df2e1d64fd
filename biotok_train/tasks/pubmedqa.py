"""PubMedQA PQA-L (1,000 expert-labelled yes/no/maybe questions) in BLURB's split.

test = the 500 PMIDs of ``test_ground_truth.json``; train / dev = fold 0 of the 10-fold cross-
validation split the PubMedQA repository builds (``preprocess/split_dataset.py pqal``): 450 / 50.
That split is rebuilt here by the same procedure, re-implemented: with Python's Mersenne
Twister seeded with 0, per label (yes, no, maybe, in order) shuffle the PMIDs and cut them into
``n`` parts of ``ceil(len / n)``; part i of the whole is the union of the labels' parts i; when
the last part is smaller, one PMID chosen at random from each other part moves to it. The
1,000 items are first cut into 2 (part 0 = cross-validation set, part 1 = test), then the
cross-validation set into 10 folds; fold 0 is dev, the other nine are train. The rebuilt test
set is checked against the ground-truth file (a mismatch raises a CorpusError).

The model's input is the question and the abstract without its conclusion (``CONTEXTS``
joined by spaces): BLURB's reasoning-required setting. No torch, no transformers.
"""

from __future__ import annotations

import json
import math
import os
import random
from typing import Mapping

from biotok.errors import CorpusError
from biotok.io import open_text
from biotok_train.tasks.common import corpus_file
from biotok_train.tasks.examples import TaskData, YesNoExample

PathLike = str | os.PathLike[str]
LABELS = ("yes", "no", "maybe")


def _load_json(path: PathLike) -> object:
    with open_text(path) as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{path}:{e.lineno}: invalid JSON ({e.msg})") from None


def _split_label(pmids: list[str], parts: int, rng: random.Random) -> list[list[str]]:
    rng.shuffle(pmids)
    size = math.ceil(len(pmids) / parts)
    return [pmids[i * size:(i + 1) * size] if i < parts - 1 else pmids[i * size:] for i in range(parts)]


def _split(items: Mapping[str, str], parts: int, rng: random.Random) -> list[list[str]]:
    """PMIDs (in their mapping order, each with its label) cut into ``parts`` label-balanced parts."""
    by_label: dict[str, list[str]] = {lab: [] for lab in LABELS}
    for pmid, lab in items.items():
        by_label[lab].append(pmid)
    cut = {lab: _split_label(p, parts, rng) for lab, p in by_label.items()}
    out = [[p for lab in LABELS for p in cut[lab][i]] for i in range(parts)]
    if len(out[-1]) != len(out[0]):
        for i in range(parts - 1):
            picked = rng.choice(out[i])
            out[i].remove(picked)
            out[-1].append(picked)
    return out


def pqal_split(labels: Mapping[str, str], fold: int = 0) -> tuple[list[str], list[str], list[str]]:
    """(train, dev, test) PMIDs of ``labels`` (PMID -> final_decision, in ori_pqal.json order)."""
    rng = random.Random(0)
    cv, test = _split(labels, 2, rng)
    cv_labels = {p: labels[p] for p in cv}
    folds = _split(cv_labels, 10, rng)
    train = [p for i, f in enumerate(folds) if i != fold for p in f]
    return train, folds[fold], test


def read_pqal(path: PathLike) -> dict[str, YesNoExample]:
    """PQA-L items (PMID -> example) in file order, each checked for question, contexts, label."""
    data = _load_json(path)
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: expected a JSON object keyed by PMID")
    out: dict[str, YesNoExample] = {}
    for pmid, item in data.items():
        where = f"{path}#{pmid}"
        try:
            question, contexts, label = item["QUESTION"], item["CONTEXTS"], item["final_decision"]
        except (KeyError, TypeError):
            raise CorpusError(f"{where}: item needs QUESTION, CONTEXTS and final_decision") from None
        if label not in LABELS:
            raise CorpusError(f"{where}: final_decision {label!r} not in the label set (yes, no, maybe)")
        if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts) or not contexts:
            raise CorpusError(f"{where}: CONTEXTS must be a non-empty list of strings")
        out[pmid] = YesNoExample(pmid, question.strip(), " ".join(c.strip() for c in contexts), label, where)
    return out


def load_pubmedqa(corpora: PathLike | None) -> TaskData:
    """BLURB's PubMedQA: 450 train / 50 dev (fold 0) / 500 test."""
    ori = corpus_file(corpora, "pubmedqa/ori_pqal.json.gz", "pubmedqa")
    gt_path = corpus_file(corpora, "pubmedqa/test_ground_truth.json.gz", "pubmedqa")
    items = read_pqal(ori)
    truth = _load_json(gt_path)
    if not isinstance(truth, dict):
        raise CorpusError(f"{gt_path}: expected a JSON object PMID -> label")
    train, dev, test = pqal_split({p: e.label for p, e in items.items()})
    if set(test) != set(truth):
        raise CorpusError(
            f"{gt_path}: the rebuilt test split differs from the ground truth in "
            f"{len(set(test) ^ set(truth))} PMIDs (is {ori} the original ori_pqal.json?)"
        )
    for p, lab in truth.items():
        if items[p].label != lab:
            raise CorpusError(f"{gt_path}#{p}: label {lab!r} differs from ori_pqal's {items[p].label!r}")
    ordered_test = [p for p in truth]  # the ground truth's order
    return TaskData(
        "pubmedqa", "yesno-qa", LABELS,
        tuple(items[p] for p in train), tuple(items[p] for p in dev), tuple(items[p] for p in ordered_test),
    )


__all__ = ["LABELS", "load_pubmedqa", "pqal_split", "read_pqal"]
