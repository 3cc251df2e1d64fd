"""Multi-label text classification (HoC hallmarks, MORFITT specialties): a :class:`MultiLabelTask`.

``[CLS] text [SEP]`` into ``AutoModelForSequenceClassification`` with one output per label and
``problem_type="multi_label_classification"`` (binary cross-entropy on each label); a label is
predicted when its sigmoid reaches the threshold: 0.5 by default. MORFITT's is chosen on dev
(``grid``): after each dev pass the head keeps the grid's threshold with the best dev score (the
first of equal ones), and the best epoch's is applied to test. The MORFITT/DrBenchmark code's
fixed ``THRESHOLD_VALUE = 0.70`` made a small model predict almost nothing (weighted F1
0.000-0.036 on one H200, 2026-11-28). HoC rows are sentences; its benchmark metric groups them by
abstract (PMID) before scoring (BLURB).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from biotok.errors import ConfigError
from biotok.tokenizer import BiotokTokenizer
from biotok_train.scores import weighted_f1_multilabel
from biotok_train.finetune.classify import encode_texts
from biotok_train.finetune.common import Metric, add_benchmark, example_id
from biotok_train.finetune.batches import pad_rows
from biotok_train.finetune.engine import Scores, label_kwargs

DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class _Row:
    input_ids: list[int]
    targets: list[float]  # 1.0 for each gold label


class MultiLabelTask:
    """Zero or more labels per text; dev metric the weighted F1 over labels, or the named task's."""

    name = "multilabel"
    auto_model = "AutoModelForSequenceClassification"

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, metric: Metric | None = None,
                 grid: Sequence[float] = ()) -> None:
        if not 0 < threshold < 1 or any(not 0 < t < 1 for t in grid):
            raise ConfigError(f"--threshold must be in (0, 1), got {threshold} {list(grid) or ''}".rstrip())
        self.threshold, self.bench, self.grid = threshold, metric, tuple(grid)
        self.metric = metric.name if metric is not None else "weighted_f1"
        self.search: list[dict] = []  # with a grid: each threshold's dev score at the last tuning

    def tune(self, examples: Sequence, features: Sequence, logits: list, labels: list[str]) -> None:
        """With a grid: keep the threshold whose decisions score best on ``examples`` (dev), the
        first of equal ones; without one, nothing (the threshold is fixed)."""
        if not self.grid:
            return
        import torch  # lazy: torch

        probs = torch.stack(logits).float().sigmoid() if logits else torch.zeros((0, len(labels)))
        self.search = []
        for t in self.grid:
            pred = [tuple(labels[j] for j in range(len(labels)) if row[j]) for row in (probs >= t).tolist()]
            self.search.append({"threshold": t, self.metric: self._headline(examples, pred, labels)})
        self.threshold = max(self.search, key=lambda r: r[self.metric])["threshold"]  # max: the first of equal ones

    def _headline(self, examples: Sequence, predictions: list, labels: list[str]) -> float:
        if self.bench is not None:
            return float(self.bench.score(self.name, examples, predictions).value)
        return float(weighted_f1_multilabel([e.labels for e in examples], predictions, labels).value)

    def labels(self, dataset) -> list[str]:
        return list(dataset.labels)

    def model_kwargs(self, labels: list[str]) -> dict:
        return {**label_kwargs(labels), "problem_type": "multi_label_classification"}

    def encode(self, tok: BiotokTokenizer, examples: Sequence, labels: list[str], max_length: int) -> list:
        lid = {l: i for i, l in enumerate(labels)}
        rows = encode_texts(tok, [e.text for e in examples], max_length)
        out = []
        for r, e in zip(rows, examples):
            t = [0.0] * len(labels)
            for lab in e.labels:
                if lab not in lid:
                    raise ConfigError(f"{e.source or e.id}: label {lab!r} is not among the model's labels")
                t[lid[lab]] = 1.0
            out.append(_Row(r, t))
        return out

    def collate(self, features: Sequence[_Row], pad_id: int) -> dict:
        import torch

        ids, mask = pad_rows([f.input_ids for f in features], pad_id)
        return {"input_ids": ids, "attention_mask": mask,
                "labels": torch.tensor([f.targets for f in features], dtype=torch.float)}

    def decode(self, examples: Sequence, features: Sequence, logits: list, labels: list[str]) -> list:
        """The labels whose sigmoid is at least the threshold, in label order."""
        return [tuple(labels[j] for j, p in enumerate(row.sigmoid().tolist()) if p >= self.threshold)
                for row in logits]

    def score(self, examples: Sequence, predictions: list, labels: list[str]) -> Scores:
        """Weighted F1 and the benchmark metric; with a grid, the threshold in use and each
        threshold's dev score (``threshold_search``) too."""
        s = weighted_f1_multilabel([e.labels for e in examples], predictions, labels)
        metrics = {"weighted_f1": s.value, **{k: float(v) for k, v in s.details.items()}}
        add_benchmark(metrics, self.bench, self.name, examples, predictions)
        report = {"rows": s.as_dict(), "threshold": self.threshold}
        if self.grid:
            metrics["threshold"] = float(self.threshold)
            report["threshold_search"] = [dict(r) for r in self.search]
        return Scores(metrics, report)

    def prediction_rows(self, examples: Sequence, predictions: list) -> list[dict]:
        """predictions.jsonl: id, group (HoC: the PMID), gold labels, predicted labels."""
        return [{"id": example_id(e, i), "group": getattr(e, "group", ""), "gold": list(e.labels), "pred": list(p)}
                for i, (e, p) in enumerate(zip(examples, predictions))]


__all__ = ["DEFAULT_THRESHOLD", "MultiLabelTask"]
