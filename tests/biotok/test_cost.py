"""Pretraining cost: sizes, the sample, the arithmetic, the measured-throughput default."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biotok.config import CostConfig
from biotok.cost import (
    Throughput,
    default_throughput,
    estimate_cost,
    parse_size,
    sample_corpus,
    vocab_cost,
)
from biotok.errors import ConfigError, CorpusError


@pytest.mark.parametrize("text, n", [("1000", 1000), ("7GB", 7 * 10**9), ("453.7MB", 453_700_000),
                                     ("2GiB", 2 * 1024**3), ("10 kb", 10_000), (5, 5)])
def test_parse_size(text, n):
    assert parse_size(text) == n


@pytest.mark.parametrize("bad", ["", "seven", "5XB", "0", "-3GB"])
def test_parse_size_rejects(bad):
    with pytest.raises(ConfigError):
        parse_size(bad)


def test_config_validation():
    for bad in ({"epochs": 0}, {"batch_size": 0}, {"seq_len": 0}, {"gpus": 0}, {"tokens_per_second": -1.0},
                {"sample_lines": 0}):
        with pytest.raises(ConfigError):
            CostConfig(**bad)


def test_vocab_cost_by_hand():
    cfg = CostConfig(epochs=2, batch_size=8, seq_len=128, gpus=4, hidden_size=768, tied_embeddings=False)
    c = vocab_cost("t", 32000, sample_pieces=250, sample_bytes=1000, corpus_bytes=4_000_000, config=cfg,
                   tokens_per_second=1000.0, reference_tokens=500_000)
    assert c.pieces_per_byte == 0.25
    assert c.tokens_per_epoch == 1_000_000 and c.tokens_total == 2_000_000
    assert c.steps == math.ceil(2_000_000 / (8 * 128))
    assert c.gpu_hours == pytest.approx(2_000_000 / 1000 / 3600)
    assert c.wall_hours == pytest.approx(c.gpu_hours / 4)
    assert c.embedding_params == 32000 * 768 and c.output_params == 32000 * 768 + 32000
    assert c.relative_tokens == 2.0
    tied = vocab_cost("t", 32000, 250, 1000, 4_000_000, CostConfig(), 1000.0)
    assert tied.output_params == 32000  # only the output biases are the MLM head's own


@given(st.integers(1, 10**6), st.integers(1, 10**6), st.integers(1, 10**12), st.floats(0.1, 10))
def test_cost_scales_with_the_corpus(pieces, sample_bytes, corpus_bytes, epochs):
    cfg = CostConfig(epochs=epochs)
    c = vocab_cost("t", 1000, pieces, sample_bytes, corpus_bytes, cfg, 5000.0)
    assert c.tokens_per_epoch == round(pieces / sample_bytes * corpus_bytes)
    assert c.steps * cfg.batch_size * cfg.seq_len >= c.tokens_total
    assert c.gpu_hours >= 0 and c.wall_hours == pytest.approx(c.gpu_hours)


def test_sample_is_uniform_deterministic_and_counts_bytes():
    lines = [f"ligne {i} é" for i in range(1000)]
    a = sample_corpus(lines, 50, seed=1)
    assert a == sample_corpus(lines, 50, seed=1) and a != sample_corpus(lines, 50, seed=2)
    assert len(a.lines) == 50 and a.corpus_lines == 1000
    assert a.corpus_bytes == sum(len(l.encode("utf-8")) + 1 for l in lines)
    assert a.sample_bytes == sum(len(l.encode("utf-8")) + 1 for l in a.lines)
    assert max(int(l.split()[1]) for l in a.lines) > 500  # not just the head of the corpus
    small = sample_corpus(lines[:10], 50)
    assert small.lines == tuple(lines[:10]) and small.sample_bytes == small.corpus_bytes
    with pytest.raises(CorpusError):
        sample_corpus([], 10)


def test_default_throughput_from_the_table(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"biotok_tokens_per_s": 1234.5, "size": "tiny", "device": "CPU", "seq_len": 128}))
    t = default_throughput(p)
    assert t.tokens_per_second == 1234.5 and "tiny" in t.source and "CPU" in t.source
    assert default_throughput(tmp_path / "none.json") is None
    p.write_text("{}")
    assert default_throughput(p) is None


def test_estimate_cost(tiny_unigram, tiny_wordpiece, sample_lines, monkeypatch):
    import biotok
    import biotok.cost

    toks = [biotok.load(str(tiny_unigram)), biotok.load(str(tiny_wordpiece))]
    sample = sample_corpus(sample_lines, 200)
    rep = estimate_cost(toks, sample, CostConfig(tokens_per_second=10_000.0), corpus_bytes=10**9)
    assert rep.throughput_source == "given" and rep.corpus_bytes == 10**9
    a, b = rep.costs
    n = sum(len(tok.encode(l).ids) for l in sample.lines for tok in toks[:1])
    assert a.sample_pieces == n and a.relative_tokens == 1.0
    assert b.relative_tokens == pytest.approx(b.tokens_per_epoch / a.tokens_per_epoch)
    # no throughput given and no table: one clear error
    monkeypatch.setattr(biotok.cost, "default_throughput", lambda: None)
    with pytest.raises(ConfigError, match="--tokens-per-second"):
        estimate_cost(toks, sample, CostConfig())
    rep = estimate_cost(toks, sample, CostConfig(), throughput=Throughput(99.0, "measured"))
    assert rep.tokens_per_second == 99.0 and rep.corpus_bytes == sample.corpus_bytes
