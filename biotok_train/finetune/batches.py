"""Batches that waste nothing, for the fine-tuning engine (:mod:`.engine`): training order
grouped by length as transformers' ``group_by_length`` sampler (shuffled, then sorted within
mega-batches), rows padded to their batch's longest only, evaluation batches
:data:`EVAL_BATCH_FACTOR` times the training batch; and the optimizer-step progress bar
(:class:`Progress`).

No torch at import time.
"""

from __future__ import annotations

import logging
import random
from typing import Any, Sequence

log = logging.getLogger("biotok_train.finetune.engine")  # the engine's logger: one switch for its lines


def pad_rows(rows: Sequence[Sequence[int]], pad_id: int):
    """(input_ids, attention_mask): ``rows`` right-padded to the longest of them (not to
    ``max_length``), as long tensors built in one call each."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.tensor([[*r, *([pad_id] * (width - len(r)))] for r in rows], dtype=torch.long)
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows], dtype=torch.long)
    return ids, mask


def feature_length(task: Any, feature: Any) -> int:
    """The pieces a feature puts in a batch row: the task's ``length(feature)`` hook where it has
    one (multiple choice: its longest option), else ``len(feature.input_ids)``."""
    if hasattr(task, "length"):
        return task.length(feature)
    return len(feature.input_ids)


MEGA_BATCHES = 50  # batches per length-sorted group, as transformers' LengthGroupedSampler


def length_grouped_order(lengths: Sequence[int], batch_size: int, gen: random.Random) -> list[int]:
    """Indices of ``lengths`` so that consecutive runs of ``batch_size`` have similar lengths,
    as transformers' ``group_by_length`` sampler: shuffle, cut into mega-batches of
    min(50, n / (4 batch_size)) batches, sort each by length (longest first, ties in shuffled
    order), and move the longest feature of all to the front (a too-long batch fails at once).
    Deterministic given ``gen``'s state."""
    n = len(lengths)
    order = list(range(n))
    gen.shuffle(order)
    size = max(1, min(n // (batch_size * 4), MEGA_BATCHES)) * batch_size
    megas = [sorted(order[i : i + size], key=lambda j: -lengths[j]) for i in range(0, n, size)]
    if megas:
        top = max(range(len(megas)), key=lambda m: (lengths[megas[m][0]], -m))
        megas[0][0], megas[top][0] = megas[top][0], megas[0][0]
    return [i for m in megas for i in m]


EVAL_BATCH_FACTOR = 4  # evaluation batches are this many training batches (no activations kept)



class Progress:
    """The optimizer-step progress (steps, ETA, the last loss and dev score): a tqdm bar on a
    terminal, a line every 30 s off it (:class:`biotok.progress.Progress`), or nothing."""

    def __init__(self, total: int, desc: str, progress: bool, bar: bool | None) -> None:
        from biotok.progress import Progress as Shown, on_terminal

        show = bar if bar is not None else progress and on_terminal()
        self.shown = Shown(total, desc, unit="step", enabled=bool(show), with_fields=True)
        self.bar = self.shown.bar  # the tqdm bar, or None (lines or nothing)

    def step(self, loss: float) -> None:
        self.shown.update(1, loss=f"{loss:.4f}")

    def dev(self, metric: str, value: float) -> None:
        self.shown.set(**{f"dev {metric}": f"{value:.4f}"})

    def line(self, message: str) -> None:
        """A log line that does not break the bar."""
        if self.bar is None:
            log.info("%s", message)
        else:
            self.bar.write(message)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.shown.close()


__all__ = ["EVAL_BATCH_FACTOR", "MEGA_BATCHES", "Progress", "feature_length", "length_grouped_order",
           "pad_rows"]
