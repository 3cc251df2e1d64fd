"""biotok.zipf: the power-law fit recovers a known exponent and ranks vocabularies by fit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biotok.errors import ConfigError
from biotok.zipf import best_fit, piece_counts, zipf_fit


def zipf_counts(exponent: float, types: int, top: float = 1e6) -> list[int]:
    return [int(round(top / r ** exponent)) for r in range(1, types + 1)]


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=0.6, max_value=1.8), st.integers(min_value=200, max_value=3000))
def test_exact_power_law_gives_its_exponent_and_r2_one(exponent, types):
    fit = zipf_fit(zipf_counts(exponent, types))
    assert fit is not None
    assert fit.exponent == pytest.approx(exponent, abs=0.02)
    assert fit.r2 > 0.995
    assert fit.last_rank <= types and fit.types <= types


def test_sampled_zipf_text_recovers_the_exponent():
    rng = np.random.default_rng(0)
    ranks = np.arange(1, 5001)
    p = 1 / ranks ** 1.1
    sample = rng.choice(ranks, size=400_000, p=p / p.sum())
    fit = zipf_fit(np.bincount(sample)[1:].tolist())
    assert fit.exponent == pytest.approx(1.1, abs=0.05)
    assert fit.r2 > 0.98


def test_a_distribution_far_from_a_power_law_fits_worse():
    flat_then_cliff = [1000] * 300 + [10] * 300  # two plateaus, no power law
    zipf = zipf_counts(1.0, 600, top=1000)
    assert zipf_fit(flat_then_cliff).r2 < zipf_fit(zipf).r2
    assert best_fit({8000: zipf_fit(flat_then_cliff), 16000: zipf_fit(zipf)}) == 16000
    assert best_fit({1: None}) is None


def test_too_few_frequent_pieces_give_no_fit_and_bad_arguments_fail():
    assert zipf_fit([100, 50, 3, 2]) is None
    with pytest.raises(ConfigError):
        zipf_fit([1, 2, 3], min_count=0)


def test_piece_counts_of_a_tokenizer(tiny_unigram, sample_lines):
    from biotok.formats import load

    tok = load(tiny_unigram)
    counts = piece_counts(tok, sample_lines[:200])
    assert sum(counts.values()) == sum(len(tok.encode(l).pieces) for l in sample_lines[:200])
    fit = zipf_fit(counts)
    assert 0.5 < fit.exponent < 2.0 and fit.r2 > 0.8


def _lines_of(counts: list[int], n_lines: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Piece ids with these totals, spread at random over ``n_lines`` lines."""
    rng = np.random.default_rng(seed)
    ids = np.repeat(np.arange(len(counts)), counts)
    return ids, rng.integers(0, n_lines, ids.size)


def test_bootstrap_tells_a_clear_best_fit_and_says_when_it_cannot():
    from biotok.zipf import bootstrap_best

    zipf = [int(20000 / r) for r in range(1, 301)]  # a power law
    bent = [int(20000 / r ** (0.5 if r < 30 else 1.5)) for r in range(1, 301)]  # far from one
    near = [c + (3 if r % 2 else 0) for r, c in enumerate(zipf)]  # the power law, barely moved
    pieces = {1000: _lines_of(zipf, 500, 1), 2000: _lines_of(bent, 500, 2), 4000: _lines_of(near, 500, 3)}
    fits = {k: zipf_fit(np.bincount(ids)) for k, (ids, _) in pieces.items()}
    c = bootstrap_best(fits, pieces, 500, resamples=100)
    assert c.best == max(fits, key=lambda k: fits[k].r2)
    assert set(c.tied) == {1000, 4000}  # the two power laws cannot be told apart; the bent one can
    assert not c.distinct and c.low <= 0 <= c.high
    clear = bootstrap_best({k: fits[k] for k in (1000, 2000)}, pieces, 500, resamples=100)
    assert clear.distinct and clear.tied == (1000,) and clear.runner_up == 2000 and clear.low > 0
    assert clear == bootstrap_best({k: fits[k] for k in (1000, 2000)}, pieces, 500, resamples=100)  # seeded
    assert bootstrap_best({1000: fits[1000]}, pieces, 500).tied == (1000,)
