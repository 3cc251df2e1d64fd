"""TensorBoard scalars beside the JSONL logs, as ``transformers.Trainer(report_to=...)`` users expect.

The JSONL log (metrics.jsonl, results.json) stays the source of truth; TensorBoard is a view of
the same numbers: loss, learning rate, throughput, dev metrics per epoch, and the held-out [MASK]
loss beside its floors, written to ``OUT/tensorboard/`` (open it with ``tensorboard --logdir OUT``).
Counters (tokens seen, steps averaged) are not curves: they stay in the JSONL.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import numbers
from pathlib import Path
from typing import Mapping

from biotok.errors import ConfigError

log = logging.getLogger(__name__)

REPORT_TO = ("auto", "tensorboard", "none")
EVENTS_DIR = "tensorboard"
#: metrics.jsonl fields that count rather than measure: never drawn as curves
COUNTERS = ("step", "time", "tokens", "steps_averaged", "graphs")
#: held-out summary key -> its TensorBoard tag (under ``heldout/``): the model beside its floors
HELDOUT_TAGS = {"loss": "mask_loss", "floor_loss": "unigram_floor_loss", "gap": "gap_to_floor",
                "top1": "top1", "floor_top1": "most_frequent_top1"}


def resolve_report_to(value: str) -> str:
    """``auto`` becomes ``tensorboard`` when the package is installed (said in the log), else ``none``."""
    if value not in REPORT_TO:
        raise ConfigError(f"--report-to must be one of {', '.join(REPORT_TO)}, not {value!r}")
    installed = importlib.util.find_spec("tensorboard") is not None
    if value == "tensorboard" and not installed:
        raise ConfigError("--report-to tensorboard needs the tensorboard package (pip install tensorboard)")
    if value == "auto":
        return "tensorboard" if installed else "none"
    return value


class Tracker:
    """Scalars to TensorBoard (``report_to="tensorboard"``) or nowhere (``"none"``)."""

    def __init__(self, out: str | Path, report_to: str = "auto", main: bool = True, announce: bool = True) -> None:
        self.kind = resolve_report_to(report_to) if main else "none"
        self.writer = None
        if self.kind == "tensorboard":
            from torch.utils.tensorboard import SummaryWriter  # imports tensorboard: only when asked for

            folder = Path(out) / EVENTS_DIR
            self.writer = SummaryWriter(log_dir=str(folder))
            if announce:
                log.info("TensorBoard: %s (tensorboard --logdir %s)", folder, out)

    def train_row(self, row: Mapping[str, object]) -> None:
        """A metrics.jsonl row of the pretraining loop as ``train/`` curves at its step; its counters
        (tokens seen, steps averaged, graphs compiled, wall time) are no curves and stay in the JSONL."""
        self.scalars(int(row["step"]), {k: v for k, v in row.items() if k not in COUNTERS}, "train/")

    def heldout(self, step: int, summary: Mapping[str, object]) -> None:
        """The held-out [MASK] numbers (:meth:`HeldoutMLM.summary`) beside their floors, at ``step``."""
        self.scalars(step, {tag: summary[key] for key, tag in HELDOUT_TAGS.items() if key in summary}, "heldout/")

    def scalars(self, step: int, values: Mapping[str, object], prefix: str = "") -> None:
        """One scalar per finite number of ``values`` at ``step`` (others, like strings, are skipped)."""
        if self.writer is None:
            return
        for key, value in values.items():
            if isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value):
                self.writer.add_scalar(f"{prefix}{key}", float(value), step)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.flush()
            self.writer.close()
            self.writer = None

    def __enter__(self) -> "Tracker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_scalars(folder: str | Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar of the event files under ``folder`` (tensorboard's own reader): tag -> [(step, value)]."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out: dict[str, list[tuple[int, float]]] = {}
    for events in sorted(Path(folder).rglob("events.out.tfevents.*")):
        acc = EventAccumulator(str(events))
        acc.Reload()
        for tag in acc.Tags().get("scalars", []):
            out.setdefault(tag, []).extend((e.step, e.value) for e in acc.Scalars(tag))
    return out


__all__ = ["COUNTERS", "EVENTS_DIR", "HELDOUT_TAGS", "REPORT_TO", "Tracker", "read_scalars", "resolve_report_to"]
