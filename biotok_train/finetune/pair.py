"""Sentence-pair regression (BIOSSES similarity, 0 to 4): a :class:`PairRegressionTask`.

``[CLS] a [SEP] b [SEP]`` into ``AutoModelForSequenceClassification`` with one output and
``problem_type="regression"`` (mean squared error on the raw gold score); the prediction is
that output. Benchmark metric: Pearson's r (BLURB); the mean squared error is in the details.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from biotok.tokenizer import BiotokTokenizer
from biotok_train.scores import pearson
from biotok_train.finetune.common import Metric, add_benchmark, encode_pairs, example_id, uses_token_types
from biotok_train.finetune.engine import Scores
from biotok_train.finetune.yesno import collate_pairs


@dataclass(frozen=True)
class _Pair:
    input_ids: list[int]
    token_type_ids: list[int]
    score: float


class PairRegressionTask:
    """A similarity score for two texts; dev metric Pearson's r (or the named task's metric)."""

    name = "pair-regression"
    auto_model = "AutoModelForSequenceClassification"
    token_types = False

    def __init__(self, metric: Metric | None = None) -> None:
        self.bench = metric
        self.metric = metric.name if metric is not None else "pearson"

    def labels(self, dataset) -> list[str]:
        return ["score"]

    def model_kwargs(self, labels: list[str]) -> dict:
        return {"num_labels": 1, "problem_type": "regression", "id2label": {0: "score"}, "label2id": {"score": 0}}

    def setup(self, tok: BiotokTokenizer, model) -> None:
        self.token_types = uses_token_types(model)

    def encode(self, tok: BiotokTokenizer, examples: Sequence, labels: list[str], max_length: int) -> list:
        pairs = encode_pairs(tok, [e.text_a for e in examples], [e.text_b for e in examples], max_length)
        return [_Pair(ids, types, float(e.score)) for (ids, types), e in zip(pairs, examples)]

    def collate(self, features: Sequence[_Pair], pad_id: int) -> dict:
        import torch

        batch = collate_pairs(features, pad_id, self.token_types)
        batch["labels"] = torch.tensor([f.score for f in features], dtype=torch.float)
        return batch

    def decode(self, examples: Sequence, features: Sequence, logits: list, labels: list[str]) -> list:
        return [float(row.reshape(-1)[0]) for row in logits]

    def score(self, examples: Sequence, predictions: list, labels: list[str]) -> Scores:
        gold = [e.score for e in examples]
        r = pearson(gold, predictions)
        mse = sum((g - p) ** 2 for g, p in zip(gold, predictions)) / len(gold)
        metrics = {"pearson": r.value, "mse": mse}
        add_benchmark(metrics, self.bench, self.name, examples, predictions)
        return Scores(metrics, {"pearson": r.as_dict(), "mse": mse, "n": len(gold)})

    def prediction_rows(self, examples: Sequence, predictions: list) -> list[dict]:
        """predictions.jsonl: id, gold score, predicted score."""
        return [{"id": example_id(e, i), "gold": e.score, "pred": p}
                for i, (e, p) in enumerate(zip(examples, predictions))]


__all__ = ["PairRegressionTask"]
