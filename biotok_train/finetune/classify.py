"""Sentence-level (single-label) classification, e.g. FrenchMedMCQA's number of correct answers:
a :class:`ClassifyTask` for the engine. ``[CLS] text [SEP]`` cut to ``max_length`` pieces;
early stopping on dev accuracy (or the named task's benchmark metric); test accuracy and
per-label / macro precision, recall, F1. Relation extraction (:mod:`.relation`) and yes/no QA
(:mod:`.yesno`) are this head with other inputs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from biotok.tokenizer import BiotokTokenizer
from biotok_train.config import FinetuneConfig
from biotok_train.tasks.examples import ClassifyExample, TaskData
from biotok_train.finetune.common import Metric, add_benchmark, example_id
from biotok_train.finetune.batches import pad_rows
from biotok_train.finetune.engine import FinetuneResult, Scores, fit, label_kwargs
from biotok_train.hf_models import frame_ids


@dataclass(frozen=True)
class _Row:
    input_ids: list[int]
    label: int


def cls_report(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> tuple[float, dict]:
    """Accuracy and {label: P/R/F1/support} plus the unweighted 'macro avg' over ``labels``."""
    rep: dict = {}
    for l in labels:
        tp = sum(g == l and p == l for g, p in zip(gold, pred))
        n_pred, n_gold = sum(p == l for p in pred), sum(g == l for g in gold)
        pr = tp / n_pred if n_pred else 0.0
        rc = tp / n_gold if n_gold else 0.0
        rep[l] = {"precision": pr, "recall": rc, "f1-score": 2 * pr * rc / (pr + rc) if pr + rc else 0.0,
                  "support": n_gold}
    rep["macro avg"] = {m: sum(rep[l][m] for l in labels) / len(labels) for m in ("precision", "recall", "f1-score")}
    rep["macro avg"]["support"] = len(gold)
    acc = sum(g == p for g, p in zip(gold, pred)) / max(1, len(gold))
    return acc, rep


def encode_texts(tok: BiotokTokenizer, texts: Sequence[str], max_length: int) -> list[list[int]]:
    """[CLS] text [SEP], the text cut to its first ``max_length - 2`` pieces."""
    start_id, end_id, _ = frame_ids(tok)
    return [[start_id, *ids[: max_length - 2], end_id] for ids in tok.encode_batch_ids(list(texts))]


class ClassifyTask:
    """One label per text with ``AutoModelForSequenceClassification``; dev metric accuracy, or the
    benchmark ``metric`` of a named task."""

    name = "classify"
    auto_model = "AutoModelForSequenceClassification"

    def __init__(self, metric: Metric | None = None) -> None:
        self.bench = metric
        self.metric = metric.name if metric is not None else "accuracy"

    def labels(self, dataset) -> list[str]:
        return list(dataset.labels)

    def model_kwargs(self, labels: list[str]) -> dict:
        return {**label_kwargs(labels), "problem_type": "single_label_classification"}

    def texts(self, examples: Sequence) -> list[str]:
        """The model input of each example (here its text)."""
        return [e.text for e in examples]

    def encode(self, tok: BiotokTokenizer, examples: Sequence[ClassifyExample], labels: list[str], max_length: int) -> list:
        lid = {l: i for i, l in enumerate(labels)}
        rows = encode_texts(tok, self.texts(examples), max_length)
        return [_Row(r, lid[e.label]) for r, e in zip(rows, examples)]

    def collate(self, features: Sequence[_Row], pad_id: int) -> dict:
        import torch

        ids, mask = pad_rows([f.input_ids for f in features], pad_id)
        return {"input_ids": ids, "attention_mask": mask,
                "labels": torch.tensor([f.label for f in features], dtype=torch.long)}

    def decode(self, examples: Sequence[ClassifyExample], features: Sequence[_Row], logits: list,
               labels: list[str]) -> list:
        return [labels[int(row.argmax(-1))] for row in logits]

    def score(self, examples: Sequence[ClassifyExample], predictions: list, labels: list[str]) -> Scores:
        acc, rep = cls_report([e.label for e in examples], predictions, labels)
        metrics = {"accuracy": acc, "macro_f1": float(rep["macro avg"]["f1-score"])}
        add_benchmark(metrics, self.bench, self.name, examples, predictions)
        return Scores(metrics, rep)

    def prediction_rows(self, examples: Sequence[ClassifyExample], predictions: list) -> list[dict]:
        """predictions.jsonl: id, gold label, predicted label."""
        return [{"id": example_id(e, i), "gold": e.label, "pred": p}
                for i, (e, p) in enumerate(zip(examples, predictions))]

    def write_predictions(self, path: Path, examples: Sequence[ClassifyExample], predictions: list) -> None:
        """source, gold, predicted."""
        with open(path, "w", encoding="utf-8") as f:
            for e, p in zip(examples, predictions):
                f.write(f"{e.source}\t{e.label}\t{p}\n")


def finetune_cls(
    model_path: str | os.PathLike[str],
    dataset: TaskData,
    config: FinetuneConfig = FinetuneConfig(),
    out: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
    progress: bool = True,
) -> FinetuneResult:
    """Sequence classification on a :class:`~biotok_train.tasks.TaskData` with the engine's
    recipe; writes results.json and test_predictions.tsv to ``out``."""
    return fit(model_path, ClassifyTask(), dataset, config, out, force=force, progress=progress)


def format_cls_report(result: FinetuneResult) -> str:
    """A terminal table: one row per label, then the macro average and accuracy."""
    lines = [f"classification {result.dataset} · {result.model} · seed {result.config.seed} · "
             f"best epoch {result.best_epoch}", f"{'label':<14}{'P':>8}{'R':>8}{'F1':>8}{'support':>9}"]
    for k in [*result.labels, "macro avg"]:
        r = result.report[k]
        lines.append(f"{k:<14}{r['precision']:>8.4f}{r['recall']:>8.4f}{r['f1-score']:>8.4f}{r['support']:>9}")
    lines.append(f"{'accuracy':<14}{result.metrics['accuracy']:>24.4f}")
    return "\n".join(lines)


__all__ = ["ClassifyTask", "cls_report", "encode_texts", "finetune_cls", "format_cls_report"]
