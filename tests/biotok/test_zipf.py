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
