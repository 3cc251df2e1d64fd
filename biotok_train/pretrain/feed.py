"""The loop's input side: one masked micro-batch as a function of (seed, step, micro-batch, rank),
with static-shape predicted positions, built one ahead on a worker thread and copied to the GPU
from pinned memory while the previous step runs.

Every batch depends only on its key, never on the order it was built in, so building ahead
changes nothing in the run (same batches, same losses, same resume points).
"""

from __future__ import annotations

import math
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable

import torch

from biotok_train.pretrain.masking import IGNORE, mask_tokens
from biotok_train.pretrain.packed import PackedData

BUCKETS = 16  # predicted positions are padded to a multiple of (batch tokens / BUCKETS)


def mask_generator(seed: int, step: int, micro: int, rank: int) -> torch.Generator:
    """The masking generator of one micro-batch (a function of its key alone)."""
    g = torch.Generator()
    g.manual_seed((seed * 1_000_003 + step * 7_919 + micro * 104_729 + rank * 15_485_863) % (2**63))
    return g


def static_positions(labels: torch.Tensor, buckets: int = BUCKETS) -> torch.Tensor:
    """Flat indices of the positions to predict (label != -100), in order, padded with index 0
    up to a multiple of ``numel / buckets``: at most ``buckets`` shapes over a run, so a compiled
    step (and its CUDA graph) is reused. Index 0 is the first row's [CLS], whose label is always -100,
    so the padding drops out of every loss."""
    flat = labels.flatten()
    if flat.numel() and int(flat[0]) != IGNORE:
        raise ValueError("static_positions: position 0 must be a special token (label -100)")
    idx = (flat != IGNORE).nonzero().flatten()
    bucket = max(1, math.ceil(flat.numel() / buckets))
    size = min(flat.numel(), max(bucket, math.ceil(len(idx) / bucket) * bucket))
    out = torch.zeros(size, dtype=torch.long)
    out[: len(idx)] = idx
    return out


def select_positions(hidden: torch.Tensor, labels: torch.Tensor,
                     positions: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(hidden states, labels) at the predicted positions. ``positions`` (the loop's, from
    :func:`static_positions`): flat indices padded to a bucket size with
    positions whose label is -100, so the shapes are static (``torch.compile``, CUDA graphs) and the
    padding drops out of the losses; None: a boolean selection (data-dependent shape)."""
    if positions is None:
        sel = labels != -100
        return hidden[sel], labels[sel]
    return hidden.flatten(0, 1).index_select(0, positions), labels.flatten().index_select(0, positions)


def accuracy(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Share of the real (label != -100) positions whose argmax is the label."""
    return (logits.argmax(-1) == y).float().sum() / (y != -100).sum().clamp(min=1)


def masked_batch(packed: PackedData, position: int, batch_size: int, *, seed: int, step: int, micro: int,
                 rank: int, objective: str, arch: str, mask_prob: float, wwm: bool,
                 mask: Callable = mask_tokens) -> tuple[dict, int]:
    """The model inputs (CPU tensors) of the micro-batch at stream ``position``, and its real tokens
    (``mask``: the masking function, :func:`~biotok_train.pretrain.masking.mask_tokens`)."""
    electra = objective == "electra"
    sop = objective == "mlm" and arch == "albert"
    batch = packed.batch(packed.indices(position, batch_size, seed), sop=sop, seed=seed)
    m = mask(batch.input_ids, batch.word_starts, batch.special, mask_id=packed.mask_id,
                    vocab_size=packed.vocab_size, prob=mask_prob, wwm=wwm, mask_frac=0.85 if electra else 0.8,
                    random_frac=0.0 if electra else 0.1, generator=mask_generator(seed, step, micro, rank))
    inputs = dict(input_ids=m.input_ids, attention_mask=batch.attention_mask, token_type_ids=batch.token_type_ids,
                  labels=m.labels, sop_labels=batch.sop_labels, original_ids=batch.input_ids,
                  positions=static_positions(m.labels))
    return inputs, batch.num_tokens


class Feed:
    """Micro-batches by key: ``get(key, next_key)`` returns ``key``'s batch on ``device`` and starts
    building ``next_key``'s on a worker thread (``ahead``; pinned memory on CUDA), so the CPU side of
    the next step overlaps the GPU work of this one."""

    def __init__(self, make: Callable[[tuple], tuple[dict, int]], device: torch.device, ahead: bool) -> None:
        self.make, self.device = make, torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="biotok-feed") if ahead else None
        self.pending: tuple[tuple, Future] | None = None

    def _build(self, key: tuple) -> tuple[dict, int]:
        inputs, n = self.make(key)
        if self.cuda:
            inputs = {k: v.pin_memory() for k, v in inputs.items()}
        return inputs, n

    def get(self, key: tuple, next_key: tuple | None = None) -> tuple[dict, int]:
        """``key``'s inputs on the device (non-blocking copies) and real-token count."""
        if self.pending is not None and self.pending[0] == key:
            inputs, n = self.pending[1].result()
        else:
            inputs, n = self._build(key)
        self.pending = None
        if self.pool is not None and next_key is not None:
            self.pending = (next_key, self.pool.submit(self._build, next_key))
        return {k: v.to(self.device, non_blocking=self.cuda) for k, v in inputs.items()}, n

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        self.pending = None


__all__ = ["BUCKETS", "Feed", "mask_generator", "accuracy", "masked_batch", "select_positions", "static_positions"]
