"""Multiple-choice QA with several right answers (FrenchMedMCQA): an :class:`MCQTask`.

Design. FrenchMedMCQA questions have five options and one to five right ones, scored by the
Hamming score and the exact match ratio (FrenchMedMCQA paper), so the task is a set prediction.
The head is transformers' multiple-choice head (``AutoModelForMultipleChoice``: each
``[CLS] question [SEP] option [SEP]`` is encoded, pooled and scored by one linear unit, giving a
logit per option), but trained as independent binary decisions: binary cross-entropy of each
option's logit against right / wrong, instead of the softmax over options that picks exactly one.
At prediction every option whose sigmoid reaches the threshold (0.5) is in the answer set; when
none does, the best-scoring option alone (every question has at least one right answer).
Questions with fewer options than others in a batch get padded, ignored choices.

(DrBenchmark does it differently: question and all options in one input, classified into the 31
answer combinations. Per-option scoring also handles any number of options.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from biotok.errors import ConfigError
from biotok.tokenizer import BiotokTokenizer
from biotok_train.scores import hamming_score
from biotok_train.finetune.common import Metric, add_benchmark, encode_pairs, example_id, uses_token_types
from biotok_train.finetune.engine import Scores
from biotok_train.hf_models import frame_ids

DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class _Question:
    choices: list[tuple[list[int], list[int]]]  # (input_ids, token_type_ids) per option
    targets: list[float]  # 1.0 for a right option


class MCQTask:
    """The set of right options of each question; dev metric the Hamming score (or the named task's)."""

    name = "mcq"
    auto_model = "AutoModelForMultipleChoice"
    token_types = False

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, metric: Metric | None = None) -> None:
        if not 0 < threshold < 1:
            raise ConfigError(f"--threshold must be in (0, 1), got {threshold}")
        self.threshold, self.bench = threshold, metric
        self.metric = metric.name if metric is not None else "hamming_score"

    def labels(self, dataset) -> list[str]:
        return ["right"]  # one logit per option

    def model_kwargs(self, labels: list[str]) -> dict:
        return {}

    def setup(self, tok: BiotokTokenizer, model) -> None:
        self.token_types = uses_token_types(model)

    def encode(self, tok: BiotokTokenizer, examples: Sequence, labels: list[str], max_length: int) -> list:
        self._filler = list(frame_ids(tok)[:2])  # [CLS] [SEP]: the input of a padded choice
        n = [len(e.options) for e in examples]
        questions = [e.question for e in examples for _ in e.options]
        options = [o for e in examples for o in e.options]
        pairs = encode_pairs(tok, questions, options, max_length)
        out, k = [], 0
        for e, m in zip(examples, n):
            right = set(e.answers)
            out.append(_Question(pairs[k : k + m], [1.0 if j in right else 0.0 for j in range(m)]))
            k += m
        return out

    def length(self, feature: _Question) -> int:
        """Pieces in a batch: options times the longest option (the engine groups batches by it)."""
        return len(feature.choices) * max(len(ids) for ids, _ in feature.choices)

    def collate(self, features: Sequence[_Question], pad_id: int) -> dict:
        """(batch, choices, length) tensors; a padded choice has label -1 (ignored by :meth:`loss`)."""
        import torch

        n_choices = max(len(f.choices) for f in features)
        width = max(len(ids) for f in features for ids, _ in f.choices)
        shape = (len(features), n_choices, width)
        ids = torch.full(shape, pad_id, dtype=torch.long)
        mask = torch.zeros(shape, dtype=torch.long)
        types = torch.zeros(shape, dtype=torch.long)
        labels = torch.full((len(features), n_choices), -1.0)
        for i, f in enumerate(features):
            for j in range(n_choices):
                row, tt = f.choices[j] if j < len(f.choices) else (self._filler, [0, 0])
                ids[i, j, : len(row)] = torch.tensor(row)
                mask[i, j, : len(row)] = 1
                types[i, j, : len(tt)] = torch.tensor(tt)
                if j < len(f.targets):
                    labels[i, j] = f.targets[j]
        batch = {"input_ids": ids, "attention_mask": mask, "labels": labels}
        if self.token_types:
            batch["token_type_ids"] = types
        return batch

    def loss(self, logits, labels):
        """Binary cross-entropy of each real option's logit against right (1) / wrong (0)."""
        import torch.nn.functional as F

        keep = labels >= 0
        return F.binary_cross_entropy_with_logits(logits[keep], labels[keep])

    def decode(self, examples: Sequence, features: Sequence, logits: list, labels: list[str]) -> list:
        """Indices of the options at or above the threshold; the best one when none is."""
        out = []
        for e, row in zip(examples, logits):
            probs = row[: len(e.options)].sigmoid().tolist()
            chosen = tuple(j for j, p in enumerate(probs) if p >= self.threshold)
            out.append(chosen or (max(range(len(probs)), key=probs.__getitem__),))
        return out

    def score(self, examples: Sequence, predictions: list, labels: list[str]) -> Scores:
        s = hamming_score([e.answers for e in examples], predictions)
        metrics = {"hamming_score": s.value, **{k: float(v) for k, v in s.details.items()}}
        add_benchmark(metrics, self.bench, self.name, examples, predictions)
        return Scores(metrics, {"questions": s.as_dict(), "threshold": self.threshold})

    def prediction_rows(self, examples: Sequence, predictions: list) -> list[dict]:
        """predictions.jsonl: id, gold and predicted option indices (0 = a)."""
        return [{"id": example_id(e, i), "gold": list(e.answers), "pred": list(p)}
                for i, (e, p) in enumerate(zip(examples, predictions))]


__all__ = ["DEFAULT_THRESHOLD", "MCQTask"]
