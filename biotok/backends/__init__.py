"""Trainer backends, one per library, looked up by algorithm name in :data:`BACKENDS`."""

from __future__ import annotations

from typing import Callable, Iterator

from biotok.backends.base import Trained
from biotok.backends.hf import train_hf
from biotok.backends.spm import train_spm
from biotok.config import TrainConfig

# A trainer takes a function re-opening the corpus lines, the config and a progress flag.
Trainer = Callable[[Callable[[], Iterator[str]], TrainConfig, bool], Trained]

BACKENDS: dict[str, Trainer] = {
    "unigram": train_hf,
    "bpe": train_hf,
    "wordpiece": train_hf,
    "spm-unigram": train_spm,
    "spm-bpe": train_spm,
}

__all__ = ["BACKENDS", "Trained", "Trainer"]
