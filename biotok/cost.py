"""``biotok cost``: what each vocabulary costs to pretrain on, before any GPU is booked.

From a sample of the pretraining corpus, each tokenizer's pieces per byte of text give the
tokens of one epoch over the full corpus (its size in bytes, measured or given); with the
batch, sequence length, epochs and a throughput (tokens per second per GPU) that gives the
optimizer steps and the GPU-hours. The parameters a vocabulary adds are its input embedding
(V x H) and the MLM output layer (V x H more when untied, V biases either way). Formulas are
in docs/compare.md ("Pretraining cost").

The throughput default comes from biotok's own measured table, shipped as package data
(``biotok/data/pretrain_throughput.json``, written by ``python -m benchmarks.run_all``'s
``pretrain_throughput`` step) so an installed wheel has it too; otherwise it must be given.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

from biotok.config import INT64_MAX, CostConfig
from biotok.errors import ConfigError, CorpusError
from biotok.tokenizer import BiotokTokenizer

THROUGHPUT_TABLE = Path(__file__).resolve().parent / "data" / "pretrain_throughput.json"
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kKmMgGtT]?)(i?)[bB]?\s*$")


def parse_size(text: str | int) -> int:
    """Bytes from '7GB', '453.7MB', '2GiB' or a plain number (decimal units; 'i' = binary)."""
    if isinstance(text, int):
        if text < 1:
            raise ConfigError(f"corpus size must be positive, not {text}")
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise ConfigError(f"cannot read the size {text!r} (examples: 7GB, 453.7MB, 2GiB, 1000000)")
    value, unit, binary = m.groups()
    base = 1024 if binary else 1000
    power = " KMGT".index(unit.upper()) if unit else 0
    out = int(float(value) * base**power)
    if out < 1:
        raise ConfigError(f"corpus size must be positive, not {text!r}")
    if out > INT64_MAX:  # no corpus is larger than 8 EiB: the estimates would be meaningless numbers
        raise ConfigError(f"corpus size {text!r} is beyond {INT64_MAX:,} bytes (8 EiB)")
    return out


@dataclass(frozen=True)
class Throughput:
    tokens_per_second: float
    source: str


def default_throughput(path: str | os.PathLike[str] = THROUGHPUT_TABLE) -> Throughput | None:
    """biotok's measured pretraining throughput (tokens/s), with what it was measured on; None if absent."""
    p = Path(path)
    if not p.is_file():
        return None
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
        tps = float(d["biotok_tokens_per_s"])
    except (ValueError, KeyError, TypeError):
        return None
    what = ", ".join(f"{k} {d[k]}" for k in ("size", "device", "seq_len", "batch_size") if k in d)
    return Throughput(tps, f"measured by benchmarks/speed/pretrain_throughput.py ({what})")


@dataclass(frozen=True)
class CorpusSample:
    """A uniform sample of a corpus' lines, and the corpus' total text size."""

    lines: tuple[str, ...]
    sample_bytes: int
    corpus_bytes: int
    corpus_lines: int


def sample_corpus(lines: Iterable[str], size: int, seed: int = 0, label: str = "") -> CorpusSample:
    """One pass: count the UTF-8 bytes of every line (+1 for its newline) and keep a uniform
    reservoir sample of ``size`` lines (seeded, so the same corpus gives the same sample);
    ``label``: the corpus as an error names it."""
    rng = random.Random(seed)
    keep: list[str] = []
    total = n = 0
    for line in lines:
        total += len(line.encode("utf-8")) + 1
        if n < size:
            keep.append(line)
        else:
            j = rng.randrange(n + 1)
            if j < size:
                keep[j] = line
        n += 1
    if n == 0:
        raise CorpusError(f"the corpus {label + ' ' if label else ''}has no line")
    return CorpusSample(tuple(keep), sum(len(l.encode("utf-8")) + 1 for l in keep), total, n)


@dataclass(frozen=True)
class VocabCost:
    """What one vocabulary costs under the budget assumptions."""

    name: str
    vocab_size: int
    sample_pieces: int
    pieces_per_byte: float
    tokens_per_epoch: int
    tokens_total: int
    steps: int
    gpu_hours: float
    wall_hours: float
    embedding_params: int
    output_params: int  # the MLM output layer's own parameters (biases only when tied)
    relative_tokens: float  # tokens / tokens of the first vocabulary


@dataclass(frozen=True)
class CostReport:
    config: CostConfig
    tokens_per_second: float
    throughput_source: str
    corpus_bytes: int
    sample_lines: int
    sample_bytes: int
    costs: tuple[VocabCost, ...]

    def as_dict(self) -> dict:
        return asdict(self)


def vocab_cost(name: str, vocab_size: int, sample_pieces: int, sample_bytes: int, corpus_bytes: int,
               config: CostConfig, tokens_per_second: float, reference_tokens: int | None = None) -> VocabCost:
    """Pure arithmetic: tokens, steps, GPU-hours and parameters of one vocabulary. Sizes whose
    tokens or hours would pass 2^63 (or overflow a float) are refused: :class:`ConfigError`, never
    inf, NaN or a 300-digit count."""
    ppb = sample_pieces / sample_bytes
    _check_estimate(name, "tokens per epoch", ppb * corpus_bytes, corpus_bytes, config, tokens_per_second)
    per_epoch = round(ppb * corpus_bytes)
    _check_estimate(name, "tokens", per_epoch * config.epochs, corpus_bytes, config, tokens_per_second)
    total = round(per_epoch * config.epochs)
    steps = math.ceil(total / (config.batch_size * config.seq_len))
    _check_estimate(name, "GPU-hours", total / 3600 / tokens_per_second, corpus_bytes, config, tokens_per_second)
    gpu_hours = total / tokens_per_second / 3600
    emb = vocab_size * config.hidden_size
    out = vocab_size if config.tied_embeddings else vocab_size * config.hidden_size + vocab_size
    return VocabCost(
        name=name, vocab_size=vocab_size, sample_pieces=sample_pieces, pieces_per_byte=ppb,
        tokens_per_epoch=per_epoch, tokens_total=total, steps=steps, gpu_hours=gpu_hours,
        wall_hours=gpu_hours / config.gpus, embedding_params=emb, output_params=out,
        relative_tokens=per_epoch / reference_tokens if reference_tokens else 1.0,
    )


def _check_estimate(name: str, what: str, value: float, corpus_bytes: int, config: CostConfig,
                    tokens_per_second: float) -> None:
    """Refuse an estimate that is not a finite number below 2^63 (an impossible size or speed)."""
    if math.isfinite(value) and 0 <= value <= INT64_MAX:
        return
    raise ConfigError(f"{name}: {config.epochs:g} epoch(s) over {corpus_bytes:,} bytes at {tokens_per_second:g} "
                      f"tokens/s per GPU gives {what} beyond {INT64_MAX:,}: no estimate can mean anything; check "
                      "--corpus-size, --epochs and --tokens-per-second")


def estimate_cost(
    tokenizers: Sequence[BiotokTokenizer], sample: CorpusSample, config: CostConfig | None = None,
    *, corpus_bytes: int | None = None, throughput: Throughput | None = None,
) -> CostReport:
    """Tokens per epoch, steps, GPU-hours and vocabulary parameters for every tokenizer."""
    cfg = config or CostConfig()
    if not tokenizers:
        raise ConfigError("no tokenizer to measure")
    if throughput is None:
        if cfg.tokens_per_second is not None:
            throughput = Throughput(cfg.tokens_per_second, "given")
        else:
            throughput = default_throughput()
            if throughput is None:
                raise ConfigError(
                    "no measured throughput table (biotok/data/pretrain_throughput.json): "
                    "give --tokens-per-second (per GPU)"
                )
    size = corpus_bytes if corpus_bytes is not None else sample.corpus_bytes
    costs: list[VocabCost] = []
    lines = list(sample.lines)
    for tok in tokenizers:
        pieces = 0
        for i in range(0, len(lines), 2000):
            pieces += sum(len(e.ids) for e in tok.backend.encode_batch(lines[i : i + 2000], add_special_tokens=False))
        if pieces == 0:
            raise CorpusError(f"{tok.name} gives no piece on the corpus sample")
        ref = costs[0].tokens_per_epoch if costs else None
        costs.append(vocab_cost(tok.name, tok.vocab_size, pieces, sample.sample_bytes, size, cfg,
                                throughput.tokens_per_second, ref))
    return CostReport(cfg, throughput.tokens_per_second, throughput.source, size, len(lines), sample.sample_bytes,
                      tuple(costs))
