"""What a fine-tuning output holds besides its scores: the fine-tuned model in HF format (the
``transformers.pipeline`` of its task loads the folder, labels named as in the training data),
the TensorBoard view of its curves and its model card (README.md).

:class:`Trained` travels in :attr:`FinetuneResult.trained` from the training loop to
:func:`~biotok_train.finetune.engine.write_results`; it is never written to results.json.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class Trained:
    """The fine-tuned model and its tokenizer (None once dropped: bench keeps scores only) and the
    scalars of the run: ``(step, {name: value}, prefix)`` rows, train loss and lr per optimizer
    step, dev metrics and throughput per epoch."""

    model: Any = None
    tok: Any = None
    scalars: list[tuple[int, dict, str]] = field(default_factory=list)
    clock: float = field(default_factory=time.perf_counter)  # start of the current epoch

    def step(self, step: int, loss: float, lr: float) -> None:
        self.scalars.append((step, {"loss": loss, "lr": lr}, "train/"))

    def epoch(self, step: int, row: dict, examples: int) -> None:
        """An epoch's dev row (dev loss, dev metric, mean train loss) and its training throughput."""
        seconds = time.perf_counter() - self.clock
        values = {k: v for k, v in row.items() if k not in ("epoch", "steps")}
        values["examples_per_s"] = examples / seconds if seconds > 0 else 0.0
        self.scalars.append((step, values, "eval/"))
        self.clock = time.perf_counter()

    def without_model(self) -> "Trained":
        return Trained(None, None, self.scalars, self.clock)


def _max_length(model) -> int:
    """Pieces the model reads (RoBERTa-like models reserve positions for the padding offset)."""
    cfg = model.config
    n = int(getattr(cfg, "max_position_embeddings", 512))
    base = getattr(model, getattr(model, "base_model_prefix", ""), model)
    emb = getattr(base, "embeddings", None)
    if emb is not None and hasattr(emb, "create_position_ids_from_input_ids") and cfg.pad_token_id is not None:
        n -= int(cfg.pad_token_id) + 1
    return n


def save_model(trained: Trained, folder: Path) -> bool:
    """The fine-tuned model (safetensors, config with id2label/label2id) and its tokenizer into
    ``folder``; False when there is no model to save."""
    if trained is None or trained.model is None:
        return False
    from biotok_train.hf_models import fast_tokenizer, quiet_transformers, save_pretrained

    model = trained.model
    save_pretrained(model, folder)
    with quiet_transformers():
        fast = fast_tokenizer(trained.tok, type_vocab_size=int(getattr(model.config, "type_vocab_size", 2) or 1),
                              model_max_length=_max_length(model))
        fast.save_pretrained(str(folder))
    return True


def write_events(trained: Trained | None, folder: Path, report_to: str, final: Path | None = None) -> None:
    """The run's scalars as TensorBoard events under ``folder/tensorboard`` (``report_to``
    auto|tensorboard|none, :func:`biotok_train.tracking.resolve_report_to`); ``final``: where
    ``folder`` is renamed to (the path the log names)."""
    from biotok_train import tracking

    if trained is None or not trained.scalars:
        return
    quiet = logging.getLogger(tracking.__name__)
    level = quiet.level
    quiet.setLevel(logging.WARNING)  # it would name the temporary folder
    try:
        tracker = tracking.Tracker(folder, report_to)
    finally:
        quiet.setLevel(level)
    with tracker:
        for step, values, prefix in trained.scalars:
            tracker.scalars(step, values, prefix)
    if tracker.kind == "tensorboard":
        where = final if final is not None else folder
        log.info("TensorBoard: %s (tensorboard --logdir %s)", where / tracking.EVENTS_DIR, where)


def write_outputs(folder: Path, result, out: str | os.PathLike[str]) -> None:
    """The model (when the result holds one), TensorBoard events and README.md of a fine-tuning
    output ``out`` being filled in its temporary sibling ``folder``."""
    from biotok_train.cards import write_finetune_card

    trained = getattr(result, "trained", None)
    saved = save_model(trained, folder)
    write_events(trained, folder, getattr(result.config, "report_to", "auto"), Path(out))
    write_finetune_card(folder, result.to_dict(), has_model=saved, name=str(out))


__all__ = ["Trained", "save_model", "write_events", "write_outputs"]
