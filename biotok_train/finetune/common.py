"""What the task heads share: the benchmark metric a head scores and early-stops on, example ids
for predictions.jsonl, and ``[CLS] a [SEP] b [SEP]`` pair encoding (similarity, QA, multiple choice).

No torch at import time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from biotok.tokenizer import BiotokTokenizer
from biotok_train.scores import Score, compute
from biotok_train.hf_models import frame_ids

@dataclass(frozen=True)
class Metric:
    """A benchmark metric (a name of :data:`biotok_train.scores.METRICS`) with its fixed
    options (ChemProt's negative class, HoC's label list...): what a head reports as its headline
    number and what early stopping maximizes on dev."""

    name: str
    options: tuple[tuple[str, Any], ...] = ()

    def score(self, task_type: str, examples: Sequence, predictions: Sequence) -> Score:
        """The metric of ``predictions`` against the examples' gold targets (HoC: rows grouped by abstract)."""
        from biotok_train.tasks import targets

        opts = dict(self.options)
        if self.name == "hoc_f1":
            opts.setdefault("groups", [e.group for e in examples])
        return compute(self.name, targets(task_type, examples), list(predictions), **opts)

    def to_dict(self) -> dict:
        return {"name": self.name, "options": {k: list(v) if isinstance(v, tuple) else v for k, v in self.options}}


def add_benchmark(metrics: dict[str, float], metric: Metric | None, task_type: str, examples: Sequence,
                  predictions: Sequence) -> None:
    """Put the benchmark ``metric`` (its value, and its details where the head has no number of
    that name) into a head's ``metrics``."""
    if metric is None:
        return
    s = metric.score(task_type, examples, predictions)
    metrics[s.metric] = s.value
    for k, v in s.details.items():
        metrics.setdefault(k, float(v))


def example_id(example: Any, index: int) -> str:
    """An example's id for predictions.jsonl: its ``id``, else its ``source`` ('file:line'), else its index."""
    return str(getattr(example, "id", "") or getattr(example, "source", "") or index)


def truncate_pair(a: list[int], b: list[int], budget: int) -> tuple[list[int], list[int]]:
    """Cut the longer of ``a`` and ``b`` one piece at a time until both fit ``budget`` (longest first)."""
    a, b = list(a), list(b)
    while len(a) + len(b) > budget:
        if len(a) > len(b):
            a.pop()
        else:
            b.pop()
    return a, b


def encode_pairs(tok: BiotokTokenizer, first: Sequence[str], second: Sequence[str],
                 max_length: int) -> list[tuple[list[int], list[int]]]:
    """(input_ids, token_type_ids) of ``[CLS] a [SEP] b [SEP]`` per pair, cut longest-first to ``max_length``."""
    start, end, _ = frame_ids(tok)
    a_ids = tok.encode_batch_ids(list(first))
    b_ids = tok.encode_batch_ids(list(second))
    out = []
    for a, b in zip(a_ids, b_ids):
        a, b = truncate_pair(a, b, max_length - 3)
        ids = [start, *a, end, *b, end]
        out.append((ids, [0] * (len(a) + 2) + [1] * (len(b) + 1)))
    return out


def uses_token_types(model) -> bool:
    """True when the model has segment embeddings (BERT, ELECTRA), so pairs get token_type_ids 0/1."""
    return int(getattr(model.config, "type_vocab_size", 0) or 0) >= 2


__all__ = ["Metric", "add_benchmark", "encode_pairs", "example_id", "truncate_pair", "uses_token_types"]
