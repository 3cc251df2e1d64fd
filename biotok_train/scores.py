"""Downstream scores as the benchmarks define them, on plain data (numpy, scikit-learn, scipy,
seqeval; no torch), and BLURB's way of folding task scores into one suite score.

========================  ===================================================================
metric                    definition (source)
========================  ===================================================================
entity_f1                 strict entity-level micro F1 (seqeval ``mode="strict"`` for the
                          tagging scheme): an entity counts only with exact boundaries and type
                          (BLURB NER; PubMedBERT Table 13 compares BIO / BIOUL / IO)
positive_micro_f1         micro-averaged F1 over the positive classes only: true, predicted and
                          correct pairs are counted over every class but the negative one
                          (ChemProt: ``false``; DDI: ``DDI-false``) (BLURB "Micro F1")
positive_f1               F1 of the positive class (GAD: label ``1``); the same number as
                          positive_micro_f1 with ``0`` as the negative class (BLURB "Micro F1")
pearson                   Pearson correlation of predicted and gold scores (BIOSSES)
hoc_f1                    HoC at abstract level: sentence rows grouped by PMID, the labels of an
                          abstract = the union of its sentences' labels (gold and predicted),
                          then the F1 of each of the 10 hallmarks over abstracts, averaged over
                          the hallmarks (BLURB's "average micro F1"; the micro F1 over all
                          abstract-label pairs and BLUE's per-abstract F1 are given as details)
accuracy                  share of exact label matches (PubMedQA; macro F1 in the details)
weighted_f1_multilabel    per-label F1 weighted by each label's gold support (MORFITT paper:
                          "weighted average F-score"; its code: sklearn ``average='weighted'``)
weighted_f1               the same for single-label classes (DrBenchmark's FrenchMedMCQA
                          number-of-answers task)
hamming_score             per question |predicted ∩ gold| / |predicted ∪ gold|, averaged
                          (FrenchMedMCQA paper; exact match ratio in the details)
exact_match_ratio         share of questions whose predicted answer set equals the gold set
========================  ===================================================================

BLURB score (:func:`suite_score`): the average of the task scores within each task family
(NER, relation extraction, sentence similarity, document classification, question answering,
PICO), then the average over the families (PubMedBERT paper, BLURB).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Collection, Hashable, Mapping, Sequence

import numpy as np

from biotok.errors import DataError
from biotok_train.config import SCHEMES


@dataclass(frozen=True)
class Score:
    """One metric value (headline), the number of scored items and secondary numbers."""

    metric: str
    value: float
    n: int
    details: Mapping[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"metric": self.metric, "value": self.value, "n": self.n, **{k: v for k, v in self.details.items()}}


def _same_length(gold: Sequence, pred: Sequence, what: str) -> None:
    if len(gold) != len(pred):
        raise DataError(f"{what}: {len(pred)} predictions for {len(gold)} gold items")
    if not gold:
        raise DataError(f"{what}: nothing to score (no gold items)")


# --- NER -----------------------------------------------------------------------------------

def io_to_bio(tags: Sequence[str]) -> list[str]:
    """IO tags as IOB2: an I-X that does not continue an X entity starts one (B-X)."""
    out, prev = [], "O"
    for t in tags:
        if t.startswith("I-") and not (prev != "O" and prev[2:] == t[2:]):
            out.append("B-" + t[2:])
        else:
            out.append(t)
        prev = t
    return out


class StrictEntities:
    """seqeval's strict entities of tag sequences (``seqeval.scheme.Entities``, the same sets of
    (sentence, start, end, type)), built in one pass for IOB2: an entity is a B-X and the I-X
    after it; an I- that does not continue one is no entity. Other schemes: seqeval's own.
    Passed to seqeval's ``precision_recall_fscore_support`` (``entities_true``/``entities_pred``),
    which does the arithmetic as always: the scores are seqeval's, 5-10x faster."""

    def __init__(self, sequences: Sequence[Sequence[str]], scheme: str = "bio") -> None:
        if scheme != "bio":
            from seqeval.scheme import BILOU, IOB2, Entities

            ents = Entities([list(s) for s in sequences], BILOU if scheme == "bioul" else IOB2).entities
            self.entities = [[(e.sent_id, e.start, e.end, e.tag) for e in sent] for sent in ents]
        else:
            self.entities = [_iob2_entities(seq, i) for i, seq in enumerate(sequences)]

    def filter(self, tag_name: str) -> set:
        return {e for ents in self.entities for e in ents if e[3] == tag_name}

    @property
    def unique_tags(self) -> set:
        return {e[3] for ents in self.entities for e in ents}


def _iob2_entities(tags: Sequence[str], sent: int) -> list[tuple[int, int, int, str]]:
    """(sentence, start, end, type) of the strict IOB2 entities of one sentence (type as seqeval
    reads it: the tag after its prefix, '-' stripped, '_' when empty)."""
    out, i, n = [], 0, len(tags)
    while i < n:
        t = tags[i]
        if t[:1] not in ("B", "I", "O"):
            raise DataError(f"invalid IOB2 tag {t!r} (prefixes B, I, O)")
        if t[:1] != "B":
            i += 1
            continue
        typ = t[1:].strip("-") or "_"
        j = i + 1
        while j < n and tags[j][:1] == "I" and (tags[j][1:].strip("-") or "_") == typ:
            j += 1
        out.append((sent, i, j, typ))
        i = j
    return out


def entity_report(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], scheme: str = "bio") -> dict:
    """seqeval's ``classification_report(mode="strict", output_dict=True, zero_division=0)``:
    per type, then micro, macro and weighted averages, as plain floats and ints. With no entity
    at all (a test set and predictions without any), every average is 0 (``zero_division``), not
    seqeval's NaN of an empty mean."""
    from seqeval.metrics.v1 import precision_recall_fscore_support as prfs

    g, p = StrictEntities(gold, scheme), StrictEntities(pred, scheme)
    kw = dict(zero_division=0, entities_true=g, entities_pred=p)
    rep: dict = {}
    for name, pr, rc, f, sup in zip(sorted(g.unique_tags | p.unique_tags), *prfs(gold, pred, average=None, **kw)):
        rep[name] = {"precision": float(pr), "recall": float(rc), "f1-score": float(f), "support": int(sup)}
    types = len(rep)
    for avg in ("micro", "macro", "weighted"):
        if avg != "micro" and not types:  # no entity type in gold nor predictions: an average over nothing is
            rep[f"{avg} avg"] = {"precision": 0.0, "recall": 0.0, "f1-score": 0.0, "support": 0}  # 0, as micro
            continue
        pr, rc, f, sup = prfs(gold, pred, average=avg, **kw)
        rep[f"{avg} avg"] = {"precision": float(pr), "recall": float(rc), "f1-score": float(f), "support": int(sup)}
    return rep


def entity_f1(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], scheme: str = "bio") -> Score:
    """Strict entity F1 (seqeval) of tag sequences in ``scheme`` (bio = IOB2, bioul = BILOU,
    io = IO, read as IOB2 where each run of one type is one entity)."""
    from seqeval.metrics.v1 import precision_recall_fscore_support as prfs

    if scheme not in SCHEMES:
        raise DataError(f"unknown tagging scheme {scheme!r} (one of {', '.join(SCHEMES)})")
    _same_length(gold, pred, "entity_f1")
    g, p = [list(s) for s in gold], [list(s) for s in pred]
    for i, (a, b) in enumerate(zip(g, p)):
        if len(a) != len(b):
            raise DataError(f"entity_f1: sentence {i} has {len(b)} predicted tags for {len(a)} words")
    if scheme == "io":
        g, p = [io_to_bio(s) for s in g], [io_to_bio(s) for s in p]
    read = "bioul" if scheme == "bioul" else "bio"
    pr, rc, f, _ = prfs(g, p, average="micro", zero_division=0, entities_true=StrictEntities(g, read),
                        entities_pred=StrictEntities(p, read))
    return Score("entity_f1", float(f), len(g), {"precision": float(pr), "recall": float(rc)})


# --- single-label classification ----------------------------------------------------------

def positive_micro_f1(gold: Sequence[str], pred: Sequence[str], negative: Collection[str] = ("false",)) -> Score:
    """Micro F1 over every class but ``negative`` (ChemProt: false; DDI: DDI-false). Named apart
    from the plain micro F1 (seqeval's over entity types, sklearn's over labels) it is not."""
    from sklearn.metrics import precision_recall_fscore_support

    _same_length(gold, pred, "positive_micro_f1")
    positives = sorted((set(gold) | set(pred)) - set(negative))
    if not positives:
        return Score("positive_micro_f1", 0.0, len(gold), {"precision": 0.0, "recall": 0.0})
    p, r, f, _ = precision_recall_fscore_support(
        list(gold), list(pred), labels=positives, average="micro", zero_division=0
    )
    return Score("positive_micro_f1", float(f), len(gold), {"precision": float(p), "recall": float(r)})


def positive_f1(gold: Sequence[str], pred: Sequence[str], positive: str = "1") -> Score:
    """F1 of the ``positive`` class (GAD)."""
    from sklearn.metrics import precision_recall_fscore_support

    _same_length(gold, pred, "positive_f1")
    p, r, f, _ = precision_recall_fscore_support(
        list(gold), list(pred), labels=[positive], average="micro", zero_division=0
    )
    return Score("positive_f1", float(f), len(gold), {"precision": float(p), "recall": float(r)})


def accuracy(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> Score:
    """Share of exact matches (PubMedQA); macro F1 over the classes seen in gold or predictions."""
    from sklearn.metrics import f1_score

    _same_length(gold, pred, "accuracy")
    acc = sum(a == b for a, b in zip(gold, pred)) / len(gold)
    macro = f1_score([str(x) for x in gold], [str(x) for x in pred], average="macro", zero_division=0)
    return Score("accuracy", float(acc), len(gold), {"macro_f1": float(macro)})


def weighted_f1(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> Score:
    """Per-class F1 weighted by gold support (DrBenchmark's FrenchMedMCQA number of answers)."""
    from sklearn.metrics import f1_score

    _same_length(gold, pred, "weighted_f1")
    g, p = [str(x) for x in gold], [str(x) for x in pred]
    w = f1_score(g, p, average="weighted", zero_division=0)
    acc = sum(a == b for a, b in zip(g, p)) / len(g)
    return Score("weighted_f1", float(w), len(g), {"accuracy": float(acc)})


# --- regression ----------------------------------------------------------------------------

def pearson(gold: Sequence[float], pred: Sequence[float]) -> Score:
    """Pearson's r (BIOSSES). Undefined when either side is constant: reported as 0.0 with
    ``constant_input`` = 1 in the details (a constant predictor shows no linear association)."""
    from scipy.stats import pearsonr

    _same_length(gold, pred, "pearson")
    g, p = np.asarray(gold, dtype=float), np.asarray(pred, dtype=float)
    if len(g) < 2:
        raise DataError("pearson: needs at least 2 items")
    if not (np.isfinite(g).all() and np.isfinite(p).all()):
        raise DataError("pearson: scores must be finite numbers")
    if np.ptp(g) == 0 or np.ptp(p) == 0:
        return Score("pearson", 0.0, len(g), {"constant_input": 1.0})
    r = float(pearsonr(g, p)[0])
    return Score("pearson", r, len(g), {"constant_input": 0.0})


# --- multi-label ---------------------------------------------------------------------------

def _binarize(rows: Sequence[Collection[str]], labels: Sequence[str], what: str) -> np.ndarray:
    index = {lab: i for i, lab in enumerate(labels)}
    out = np.zeros((len(rows), len(labels)), dtype=int)
    for r, row in enumerate(rows):
        for lab in row:
            if lab not in index:
                raise DataError(f"{what}: label {lab!r} is not one of the task's labels")
            out[r, index[lab]] = 1
    return out


def weighted_f1_multilabel(
    gold: Sequence[Collection[str]], pred: Sequence[Collection[str]], labels: Sequence[str]
) -> Score:
    """Weighted-average F1 over ``labels`` of multi-label predictions (MORFITT)."""
    from sklearn.metrics import f1_score

    _same_length(gold, pred, "weighted_f1_multilabel")
    y, yhat = _binarize(gold, labels, "weighted_f1_multilabel"), _binarize(pred, labels, "weighted_f1_multilabel")
    w = f1_score(y, yhat, average="weighted", zero_division=0)
    micro = f1_score(y, yhat, average="micro", zero_division=0)
    macro = f1_score(y, yhat, average="macro", zero_division=0)
    subset = float((y == yhat).all(axis=1).mean())
    return Score("weighted_f1_multilabel", float(w), len(gold),
                 {"micro_f1": float(micro), "macro_f1": float(macro), "subset_accuracy": subset})


def group_labels(
    rows: Sequence[Collection[str]], groups: Sequence[str]
) -> dict[str, set[str]]:
    """Union of the labels of the rows of each group (HoC: the sentences of one abstract)."""
    out: dict[str, set[str]] = {}
    for labs, g in zip(rows, groups):
        out.setdefault(g, set()).update(labs)
    return out


def hoc_f1(
    gold: Sequence[Collection[str]],
    pred: Sequence[Collection[str]],
    groups: Sequence[str],
    labels: Sequence[str],
) -> Score:
    """BLURB's HoC score: abstract-level labels (union over each PMID's sentences), then the
    F1 of each label over abstracts averaged over the labels. Details: micro F1 over all
    (abstract, label) decisions and BLUE's example-based F1 (mean precision and mean recall
    per abstract, then their harmonic mean; an abstract with no gold label counts recall 1)."""
    from sklearn.metrics import f1_score

    _same_length(gold, pred, "hoc_f1")
    if len(groups) != len(gold):
        raise DataError(f"hoc_f1: {len(groups)} group ids for {len(gold)} rows")
    g, p = group_labels(gold, groups), group_labels(pred, groups)
    keys = sorted(g)
    y = _binarize([g[k] for k in keys], labels, "hoc_f1")
    yhat = _binarize([p[k] for k in keys], labels, "hoc_f1")
    macro = f1_score(y, yhat, average="macro", zero_division=0)
    micro = f1_score(y, yhat, average="micro", zero_division=0)
    precs, recs = [], []
    for a, b in zip(y, yhat):
        tp = int((a & b).sum())
        precs.append(tp / b.sum() if b.sum() else (1.0 if not a.sum() else 0.0))
        recs.append(tp / a.sum() if a.sum() else 1.0)
    mp, mr = float(np.mean(precs)), float(np.mean(recs))
    example = 2 * mp * mr / (mp + mr) if mp + mr else 0.0
    return Score("hoc_f1", float(macro), len(keys), {"micro_f1": float(micro), "example_f1": example})


# --- multiple choice -------------------------------------------------------------------------

def hamming_score(gold: Sequence[Collection[Hashable]], pred: Sequence[Collection[Hashable]]) -> Score:
    """FrenchMedMCQA's Hamming score: mean over questions of |pred ∩ gold| / |pred ∪ gold|
    (1 when both are empty); the exact match ratio is in the details."""
    _same_length(gold, pred, "hamming_score")
    per = []
    exact = 0
    for a, b in zip(gold, pred):
        sa, sb = set(a), set(b)
        union = sa | sb
        per.append(len(sa & sb) / len(union) if union else 1.0)
        exact += sa == sb
    return Score("hamming_score", float(np.mean(per)), len(gold), {"exact_match_ratio": exact / len(gold)})


def exact_match_ratio(gold: Sequence[Collection[Hashable]], pred: Sequence[Collection[Hashable]]) -> Score:
    """Share of questions whose predicted answer set is exactly the gold set (EMR)."""
    _same_length(gold, pred, "exact_match_ratio")
    return Score("exact_match_ratio", sum(set(a) == set(b) for a, b in zip(gold, pred)) / len(gold), len(gold))


METRICS: dict[str, Callable[..., Score]] = {
    "entity_f1": entity_f1,
    "positive_micro_f1": positive_micro_f1,
    "positive_f1": positive_f1,
    "pearson": pearson,
    "hoc_f1": hoc_f1,
    "accuracy": accuracy,
    "weighted_f1": weighted_f1,
    "weighted_f1_multilabel": weighted_f1_multilabel,
    "hamming_score": hamming_score,
    "exact_match_ratio": exact_match_ratio,
}
"""Metric name -> function(gold, pred, **options); the name a TaskSpec carries."""


def compute(metric: str, gold: Sequence, pred: Sequence, **options) -> Score:
    """``METRICS[metric](gold, pred, **options)``, with one clear error for an unknown name."""
    if metric not in METRICS:
        raise DataError(f"unknown metric {metric!r} (one of {', '.join(METRICS)})")
    return METRICS[metric](gold, pred, **options)


# --- aggregation -----------------------------------------------------------------------------

@dataclass(frozen=True)
class SuiteScore:
    """A suite's score: the mean over families of the mean task score within each family."""

    value: float
    by_family: Mapping[str, float]
    tasks: Mapping[str, float]


def suite_score(results: Sequence[tuple[str, str, float]]) -> SuiteScore:
    """BLURB's aggregation of (task, family, score) triples: macro-average within each task
    family, then across families. Every task appears once; scores must be finite."""
    if not results:
        raise DataError("suite_score: no task results")
    tasks: dict[str, float] = {}
    fam: dict[str, list[float]] = {}
    for task, family, value in results:
        if task in tasks:
            raise DataError(f"suite_score: task {task!r} given twice")
        if not math.isfinite(value):
            raise DataError(f"suite_score: task {task!r} has no finite score ({value})")
        tasks[task] = float(value)
        fam.setdefault(family, []).append(float(value))
    by_family = {f: float(np.mean(v)) for f, v in sorted(fam.items())}
    return SuiteScore(float(np.mean(list(by_family.values()))), by_family, tasks)


__all__ = [
    "METRICS", "SCHEMES", "Score", "StrictEntities", "SuiteScore", "accuracy", "compute", "entity_f1", "entity_report",
    "exact_match_ratio",
    "group_labels", "hamming_score", "hoc_f1", "io_to_bio", "pearson", "positive_f1",
    "positive_micro_f1", "suite_score", "weighted_f1", "weighted_f1_multilabel",
]
