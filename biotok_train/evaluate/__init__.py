"""Evaluation without fine-tuning: masked-word accuracy (:mod:`.masked_words`) and fill-mask /
cloze scoring (:mod:`.fillmask`). Neither imports torch at import time."""

from __future__ import annotations

from biotok_train.evaluate.masked_words import (
    KS, MlmResult, WordSample, eval_mlm, format_mlm, masked_word_accuracy, sample_words, samples_sha,
)

__all__ = ["KS", "MlmResult", "WordSample", "eval_mlm", "format_mlm", "masked_word_accuracy", "sample_words",
           "samples_sha"]
