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


__all__ = ["MIN_COUNT", "ZipfFit", "best_fit", "piece_counts", "zipf_fit"]
