"""The probe's model side: one small GPT-2 (transformers' own ``GPT2LMHeadModel``) trained on a
token stream for a fixed number of tokens, then scored on held-out documents.

Deterministic: the weights come from ``torch.manual_seed(seed)``, the order of the training
blocks from a numpy generator of the same seed, and dropout is off, so one seed gives one model.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from biotok_train.config import ProbeConfig
from biotok_train.precision import autocast

EVAL_BATCH = 16  # windows per forward pass when scoring
LOG_POINTS = 20  # training-loss points kept per run (for the plot)


def build_model(cfg: ProbeConfig, vocab_size: int, seed: int):
    """A fresh GPT-2 of the probe's shape over ``vocab_size`` ids (the boundary id included)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=vocab_size, n_positions=cfg.seq_len, n_embd=cfg.hidden, n_layer=cfg.layers,
                        n_head=cfg.heads, n_inner=4 * cfg.hidden, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        bos_token_id=vocab_size - 1, eos_token_id=vocab_size - 1, tie_word_embeddings=True)
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    model.biotok_bf16 = cfg.bf16  # read by train and doc_bits: the precision travels with the model
    return model


@dataclass
class TrainStats:
    """What one arm's training did: tokens, how often the stream went round, the loss curve, time."""

    tokens: int
    epochs: float
    curve: list[tuple[int, float]]  # (tokens seen, mean training loss in nats per token)
    wall_seconds: float
    cpu_seconds: float
    params: int


def _blocks(stream: np.ndarray, seq_len: int) -> np.ndarray:
    n = len(stream) // seq_len
    return stream[: n * seq_len].reshape(n, seq_len)


def train(model, stream: np.ndarray, cfg: ProbeConfig, seed: int, progress=None) -> TrainStats:
    """``cfg.steps`` AdamW steps over batches of ``cfg.batch_size`` blocks of ``cfg.seq_len``
    tokens; the blocks are visited in a fresh seeded order each pass over the stream.
    ``progress``: a :class:`biotok.progress.Progress` of the steps (a bar, or a line every 30 s
    off a terminal with the latest logged loss), or None."""
    from biotok_train.optim import build, clip_and_step

    blocks = _blocks(stream, cfg.seq_len)
    if len(blocks) < cfg.batch_size:
        raise ValueError(f"the training text gives {len(blocks)} blocks of {cfg.seq_len} tokens, fewer than "
                         f"one batch of {cfg.batch_size}")
    rng = np.random.default_rng(seed)
    order = np.concatenate([rng.permutation(len(blocks)) for _ in range(
        math.ceil(cfg.steps * cfg.batch_size / len(blocks)))])
    optimizer, scheduler = build(model, cfg.optim_config(), cfg.steps)
    every = max(1, cfg.steps // LOG_POINTS)
    curve: list[tuple[int, float]] = []
    window: list[torch.Tensor] = []
    wall, cpu = time.perf_counter(), time.process_time()
    model.train()
    for step in range(cfg.steps):
        idx = order[step * cfg.batch_size:(step + 1) * cfg.batch_size]
        x = torch.from_numpy(blocks[idx])
        with autocast("cpu", cfg.bf16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        clip_and_step(model, optimizer, scheduler, 1.0)
        window.append(loss.detach())
        if (step + 1) % every == 0 or step + 1 == cfg.steps:
            curve.append(((step + 1) * cfg.batch_size * cfg.seq_len, float(torch.stack(window).mean())))
            window = []
            if progress is not None:
                progress.set(loss=round(curve[-1][1], 4))
        if progress is not None:
            progress.update(1)
    model.eval()
    tokens = cfg.steps * cfg.batch_size * cfg.seq_len
    return TrainStats(tokens=tokens, epochs=tokens / (len(blocks) * cfg.seq_len), curve=curve,
                      wall_seconds=time.perf_counter() - wall, cpu_seconds=time.process_time() - cpu,
                      params=sum(p.numel() for p in model.parameters()))


def windows(n: int, length: int) -> list[tuple[int, int, int]]:
    """Sliding windows ``(begin, end, first_scored)`` over a sequence of ``n`` ids (the first, the
    boundary, is context only): each id from 1 on is scored exactly once, with up to ``length - 1``
    ids of context and at least half a window of it after the first window."""
    out: list[tuple[int, int, int]] = []
    stride = max(1, length // 2)
    scored = 1  # next id to score
    begin = 0
    while scored < n:
        end = min(begin + length, n)
        out.append((begin, end, scored))
        scored = end
        begin = max(0, end - (length - stride))
    return out


@torch.no_grad()
def doc_bits(model, docs: Sequence[np.ndarray], boundary: int, seq_len: int, bf16: bool | None = None,
             progress=None) -> np.ndarray:
    """Each document's negative log-likelihood of its pieces in bits, given the boundary id before
    it (windows of ``seq_len`` ids; longer documents are scored with a sliding window). ``bf16``
    None: the model's own setting (:func:`build_model`), autocast where supported; the
    log-softmax is fp32 either way. ``progress``: a callable ``(batches done, batches)``, or None."""
    bf16 = getattr(model, "biotok_bf16", False) if bf16 is None else bf16
    jobs: list[tuple[int, np.ndarray, int]] = []  # (doc, window ids, first scored position in the window)
    for i, d in enumerate(docs):
        seq = np.concatenate([np.array([boundary], dtype=np.int64), d])
        for begin, end, first in windows(len(seq), seq_len):
            jobs.append((i, seq[begin:end], first - begin))
    bits = np.zeros(len(docs), dtype=np.float64)
    jobs.sort(key=lambda j: -len(j[1]))  # similar lengths together: less padding
    for start in range(0, len(jobs), EVAL_BATCH):
        chunk = jobs[start:start + EVAL_BATCH]
        width = max(len(w) for _, w, _ in chunk)
        x = torch.full((len(chunk), width), boundary, dtype=torch.long)
        att = torch.zeros((len(chunk), width), dtype=torch.long)
        for r, (_, w, _) in enumerate(chunk):
            x[r, :len(w)] = torch.from_numpy(w)
            att[r, :len(w)] = 1
        with autocast("cpu", bf16):
            logits = model(input_ids=x, attention_mask=att).logits
        logp = F.log_softmax(logits.float(), dim=-1)
        # position t predicts id t + 1
        nll = -logp[:, :-1].gather(-1, x[:, 1:, None]).squeeze(-1).double()
        for r, (doc, w, first) in enumerate(chunk):
            bits[doc] += float(nll[r, first - 1:len(w) - 1].sum()) / math.log(2)
        if progress is not None:
            progress(start // EVAL_BATCH + 1, -(-len(jobs) // EVAL_BATCH))
    return bits


__all__ = ["TrainStats", "build_model", "doc_bits", "train", "windows"]
