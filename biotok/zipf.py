"""Zipf fit of a tokenizer's piece frequencies: how closely they follow a power law.

He, Zeng and Jiang (EMNLP 2025, "Pre-trained Models Perform the Best When Token Distributions
Follow Zipf's Law") find that downstream scores peak at the vocabulary size whose token
frequencies follow a power law most closely; Lotz et al. (2025, "Beyond Text Compression:
Evaluating Tokenizers Across Scales") find Zipf-inspired intrinsic measures predict downstream
results better than compression. biotok measures it the simplest defensible way (docs/compare.md):
a least-squares line through (log rank, log frequency) over a stated rank range; the slope is the
Zipf exponent and R² the goodness of fit.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from biotok.errors import ConfigError

MIN_COUNT = 5  # pieces seen fewer times are sampling noise in the tail, left out of the fit
FIRST_RANK = 1  # the head is kept: Zipf's law is about the whole rank range that is well sampled
MIN_TYPES = 10  # fewer distinct frequent pieces than this: no fit


@dataclass(frozen=True)
class ZipfFit:
    """``log10 f(r) = intercept - exponent * log10 r`` fitted on ranks ``first_rank..last_rank``."""

    exponent: float  # the Zipf exponent s (1.0 for the classic law)
    intercept: float  # log10 of the fitted frequency at rank 1
    r2: float  # coefficient of determination of the log-log fit (1.0: a perfect power law)
    first_rank: int
    last_rank: int  # the last rank whose count is at least min_count
    types: int  # distinct pieces seen
    tokens: int  # pieces counted

    def as_dict(self) -> dict:
        return asdict(self)


def zipf_fit(counts: Mapping[str, int] | Sequence[int], min_count: int = MIN_COUNT,
             first_rank: int = FIRST_RANK) -> ZipfFit | None:
    """The power-law fit of piece counts (a Counter or plain counts); None when too few pieces
    reach ``min_count`` for a fit to mean anything."""
    if min_count < 1 or first_rank < 1:
        raise ConfigError(f"min_count and first_rank must be at least 1, not {min_count} and {first_rank}")
    values = counts.values() if isinstance(counts, Mapping) else counts
    freq = np.sort(np.fromiter((int(c) for c in values if c > 0), dtype=np.float64))[::-1]
    return _fit_sorted(freq, min_count, first_rank)


def _fit_sorted(freq: np.ndarray, min_count: int = MIN_COUNT, first_rank: int = FIRST_RANK) -> ZipfFit | None:
    """:func:`zipf_fit` of positive counts already sorted from the largest."""
    last = int(np.searchsorted(-freq, -min_count, side="right"))  # ranks with count >= min_count
    if last - first_rank + 1 < MIN_TYPES:
        return None
    ranks = np.arange(first_rank, last + 1, dtype=np.float64)
    x, y = np.log10(ranks), np.log10(freq[first_rank - 1:last])
    slope, intercept = np.polyfit(x, y, 1)
    residual = float(np.sum((y - (intercept + slope * x)) ** 2))
    total = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - residual / total if total > 0 else 0.0
    return ZipfFit(exponent=round(float(-slope), 6), intercept=round(float(intercept), 6), r2=round(r2, 6),
                   first_rank=first_rank, last_rank=last, types=int(freq.size), tokens=int(freq.sum()))


def piece_counts(tokenizer, lines: Iterable[str]) -> Counter:
    """How often each piece occurs when ``tokenizer`` (a biotok tokenizer) encodes ``lines``."""
    ids: Counter = Counter()
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == 1024:
            ids.update(i for row in tokenizer.encode_batch_ids(batch) for i in row)
            batch = []
    if batch:
        ids.update(i for row in tokenizer.encode_batch_ids(batch) for i in row)
    return Counter({tokenizer.id_to_token(i): n for i, n in ids.items()})


def best_fit(fits: Mapping[int, ZipfFit | None]) -> int | None:
    """The key (a vocabulary size) whose fit is closest to a power law (highest R²); ties: the smaller."""
    scored = [(f.r2, -k) for k, f in fits.items() if f is not None]
    return -max(scored)[1] if scored else None


RESAMPLES = 200  # bootstrap resamples of the held-out lines behind the best fit's interval
CONFIDENCE = 0.95


@dataclass(frozen=True)
class ZipfChoice:
    """The best fit and how sure it is: the R² margin over the runner-up with its paired bootstrap
    interval over held-out lines, and every size that interval cannot tell from the best."""

    best: int | None
    runner_up: int | None = None
    margin: float | None = None  # R² of the best minus R² of the runner-up, on all the lines
    low: float | None = None  # its percentile interval over the resamples
    high: float | None = None
    tied: tuple[int, ...] = ()  # the best, then the sizes whose margin interval reaches 0
    r2_intervals: tuple[tuple[int, float, float], ...] = ()  # (size, low, high) of each size's R²
    resamples: int = 0
    confidence: float = CONFIDENCE

    @property
    def distinct(self) -> bool:
        """True when the bootstrap tells the best from every other size."""
        return self.best is not None and len(self.tied) <= 1

    def as_dict(self) -> dict:
        return asdict(self)


def line_pieces(tokenizer, lines: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The piece ids of ``lines`` (no special tokens added) and the line each belongs to."""
    rows = tokenizer.encode_batch_ids(list(lines))
    ids = np.fromiter((i for row in rows for i in row), dtype=np.int64)
    line_of = np.repeat(np.arange(len(rows), dtype=np.int64), [len(r) for r in rows])
    return ids, line_of


def bootstrap_best(fits: Mapping[int, ZipfFit | None], pieces: Mapping[int, tuple[np.ndarray, np.ndarray]],
                   n_lines: int, resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
                   seed: int = 0) -> ZipfChoice:
    """:func:`best_fit` with a paired percentile bootstrap over lines: every resample draws the same
    lines for every size, refits, and records each size's R² (``pieces``: :func:`line_pieces`)."""
    best = best_fit(fits)
    fitted = sorted(k for k, f in fits.items() if f is not None)
    if best is None or len(fitted) < 2 or n_lines < 2 or resamples < 1:
        return ZipfChoice(best, tied=(best,) if best is not None else ())
    rng = np.random.default_rng(seed)
    r2 = {k: np.full(resamples, np.nan) for k in fitted}
    for b in range(resamples):
        weight = np.bincount(rng.integers(0, n_lines, n_lines), minlength=n_lines)
        for k in fitted:
            ids, line_of = pieces[k]
            counts = np.bincount(ids, weights=weight[line_of]) if ids.size else np.zeros(0)
            f = _fit_sorted(np.sort(counts[counts > 0])[::-1])
            r2[k][b] = f.r2 if f is not None else np.nan
    q = ((1 - confidence) / 2 * 100, (1 + confidence) / 2 * 100)

    def interval(x: np.ndarray) -> tuple[float, float]:
        x = x[~np.isnan(x)]
        return (float(np.percentile(x, q[0])), float(np.percentile(x, q[1]))) if x.size else (float("nan"),) * 2

    margins = {k: interval(r2[best] - r2[k]) for k in fitted if k != best}
    runner = max((k for k in fitted if k != best), key=lambda k: (fits[k].r2, -k))
    tied = (best, *sorted(k for k, (lo, _) in margins.items() if not lo > 0))
    return ZipfChoice(best=best, runner_up=runner, margin=round(fits[best].r2 - fits[runner].r2, 6),
                      low=round(margins[runner][0], 6), high=round(margins[runner][1], 6), tied=tied,
                      r2_intervals=tuple((k, *map(lambda v: round(v, 6), interval(r2[k]))) for k in fitted),
                      resamples=resamples, confidence=confidence)


__all__ = ["CONFIDENCE", "MIN_COUNT", "RESAMPLES", "ZipfChoice", "ZipfFit", "best_fit", "bootstrap_best",
           "line_pieces", "piece_counts", "zipf_fit"]
