"""Progress of long work as the ecosystem shows it: a tqdm bar when stderr is a terminal, and off
a terminal (nohup, SLURM, ``| cat``) a plain line every few seconds, as ``transformers.Trainer``
logs there: step, loss, tokens/s, elapsed and ETA.

:class:`Progress` counts steps (or batches, lines...) of one task; :class:`Phases` names the parts
of a job that has several (``biotok report``: a line per part off a terminal). Both write to the
``sys.stderr`` of the moment (so captured output sees them) and print nothing when disabled.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from typing import Any, Iterator, Sequence

EVERY_ENV = "BIOTOK_PROGRESS_SECONDS"  # seconds between two lines off a terminal (0: every update)
EVERY = 30.0


def on_terminal() -> bool:
    """stderr is an interactive terminal (a bar), not a file or a pipe (lines)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed or replaced by an object without isatty
        return False


def every_seconds() -> float:
    """The interval between progress lines: $BIOTOK_PROGRESS_SECONDS, else 30 s."""
    raw = os.environ.get(EVERY_ENV, "")
    try:
        value = float(raw) if raw.strip() else EVERY
    except ValueError:
        return EVERY
    return value if math.isfinite(value) and value >= 0 else EVERY


def duration(seconds: float) -> str:
    """``0:01:05`` (hours:minutes:seconds), as tqdm and the Trainer print times."""
    s = int(round(max(0.0, seconds))) if math.isfinite(seconds) else 0
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _value(v: Any) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, int) or (abs(v) >= 1000 and float(v).is_integer()):
        return f"{v:,.0f}"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"


class Progress:
    """``total`` units of work named ``desc``: a tqdm bar on a terminal, else a line such as
    ``mlm/bert: step 40/300 (13%), loss 6.812, tokens/s 5,210, elapsed 0:00:31, ETA 0:03:22`` at
    most every :func:`every_seconds` (the first update and the end always print one); nothing
    when ``enabled`` is False. ``initial``: units done before (a resumed run); ``with_fields``: lines
    only when numbers are given (:meth:`set`, ``update(loss=...)``): a training loop's lines come
    at its logged steps, each with a fresh loss; ``leave``: the bar stays on screen when closed."""

    def __init__(self, total: int | None, desc: str, *, unit: str = "step", initial: int = 0,
                 enabled: bool = True, bar: bool | None = None, every: float | None = None,
                 with_fields: bool = False, leave: bool = True) -> None:
        self.total, self.desc, self.unit = total, desc, unit
        self.n = self.initial = initial
        self.fields: dict[str, Any] = {}
        self.enabled = enabled
        self.bar = None
        self.every = every_seconds() if every is None else every
        self.start = time.perf_counter()
        self.printed_at: float | None = None  # perf_counter of the last line (None: none yet)
        self.printed_n = -1
        self.with_fields = with_fields
        if enabled and (on_terminal() if bar is None else bar):
            from tqdm.auto import tqdm  # lazy: only when a bar is drawn

            self.bar = tqdm(total=total, initial=initial, desc=desc, unit=unit, dynamic_ncols=True, file=sys.stderr,
                            leave=leave)

    def update(self, n: int = 1, **fields: Any) -> None:
        """``n`` more units done; ``fields`` (loss=..., tokens/s via ``**{"tokens/s": x}``) are shown."""
        self.n += n
        self.fields.update(fields)
        if self.bar is not None:
            if fields:
                self.bar.set_postfix({k: _value(v) for k, v in self.fields.items()}, refresh=False)
            self.bar.update(n)
        elif self.enabled and (fields or not self.with_fields):
            self._maybe_line()

    def set(self, **fields: Any) -> None:
        """Show these numbers from now on (the latest loss...); a line when one is due."""
        self.update(0, **fields)

    def _maybe_line(self, force: bool = False) -> None:
        now = time.perf_counter()
        due = self.printed_at is None or now - self.printed_at >= self.every
        if self.with_fields and not self.fields:
            return  # not even at the end: no numbers to show
        if (force or due) and self.n != self.printed_n and (self.n > self.initial or force):
            self.printed_at, self.printed_n = now, self.n
            self.write(self.line(now))

    def line(self, now: float | None = None) -> str:
        """The progress line: units done, the shown fields, the rate, elapsed time and ETA."""
        now = time.perf_counter() if now is None else now
        elapsed = now - self.start
        done = self.n - self.initial
        rate = done / elapsed if elapsed > 0 else 0.0
        parts = [f"{self.unit} {self.n:,}" + (f"/{self.total:,} ({100 * self.n / self.total:.0f}%)"
                                              if self.total else "")]
        parts += [f"{k} {_value(v)}" for k, v in self.fields.items()]
        parts.append(f"{self.unit}s/s {_value(rate)}")
        parts.append(f"elapsed {duration(elapsed)}")
        if self.total and rate > 0:
            parts.append(f"ETA {duration((self.total - self.n) / rate)}")
        return f"{self.desc}: " + ", ".join(parts)

    def write(self, message: str) -> None:
        """A line that does not break the bar (tqdm.write on a terminal), when enabled."""
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.write(message, file=sys.stderr)
        else:
            print(message, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        elif self.enabled:
            self._maybe_line(force=self.n > self.initial)
        self.enabled = False

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Phases:
    """The named parts of one job, in order: a bar over them on a terminal (its label the running
    part), else a line as each starts and one with its seconds when it ends; nothing when disabled."""

    def __init__(self, names: Sequence[str], desc: str, enabled: bool = True) -> None:
        self.names = list(names)
        self.progress = Progress(len(self.names), desc, unit="phase", enabled=enabled, every=math.inf)
        self.desc = desc

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def run(self, name: str):
        """Context manager around the part ``name``."""
        return _Phase(self, name)

    def close(self) -> None:
        self.progress.close()

    def __enter__(self) -> "Phases":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Phase:
    def __init__(self, phases: Phases, name: str) -> None:
        self.phases, self.name, self.t0 = phases, name, 0.0

    def __enter__(self) -> "_Phase":
        p = self.phases.progress
        self.t0 = time.perf_counter()
        if p.bar is not None:
            p.bar.set_description(f"{self.phases.desc}: {self.name}")
        else:
            p.write(f"{self.phases.desc}: {self.name} ({p.n + 1}/{p.total})...")
        return self

    def __exit__(self, exc_type, *exc) -> None:
        p = self.phases.progress
        if exc_type is not None:
            return
        p.n += 1
        if p.bar is not None:
            p.bar.update(1)
        else:
            p.write(f"{self.phases.desc}: {self.name} done in {time.perf_counter() - self.t0:.1f} s")
        p.printed_n = p.n  # no extra summary line at the end


class BarSafeHandler(logging.StreamHandler):
    """A log handler that writes above a running tqdm bar (``tqdm.write``), never onto its line;
    a plain stream handler while no bar is drawn."""

    def emit(self, record: logging.LogRecord) -> None:
        tqdm_module = sys.modules.get("tqdm")  # no bar was ever made without tqdm imported
        bars = getattr(getattr(tqdm_module, "tqdm", None), "_instances", None)
        if not bars:
            super().emit(record)
            return
        try:
            tqdm_module.tqdm.write(self.format(record), file=self.stream)
            self.flush()
        except Exception:  # noqa: BLE001 - logging's own policy: report, never raise
            self.handleError(record)


__all__ = ["EVERY", "EVERY_ENV", "BarSafeHandler", "Phases", "Progress", "duration", "every_seconds", "on_terminal"]
