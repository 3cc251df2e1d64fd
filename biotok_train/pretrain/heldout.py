"""Held-out masked-LM numbers that say whether a model uses context.

On prepared held-out data (same tokenizer as the training data), a fixed seeded 15 % of the
pieces (or whole words) are selected and *all* replaced by [MASK]; the model's loss and top-1
on those positions are reported beside two floors computed on the same positions:

* the unigram cross-entropy: each piece's add-one frequency in the training pieces, the best a
  model that ignores context can do (a tiny MLM early in training sits on it: the plateau);
* the top-1 of always answering the most frequent training piece.

A model *left the plateau* when its held-out loss is below the unigram floor with a paired
bootstrap interval (over held-out sequences) entirely below -0.001 nats. Works on the pretraining modules
(MLM, ALBERT, and ELECTRA's generator) and on a saved ``*ForMaskedLM``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F

from biotok_train import stats as S
from biotok_train.errors import TokenizerMismatchError
from biotok_train.pretrain.masking import select
from biotok_train.pretrain.packed import PackedData
from biotok_train.precision import autocast

EVAL_SEED = 1234  # masking of held-out data: the same positions for every model and run
MAX_SEQUENCES = 2000  # held-out sequences scored at most (the first ones)
PLATEAU_MARGIN = 1e-3  # nats: a gap smaller than this is float rounding, not learning


@dataclass(frozen=True)
class HeldoutMLM:
    """Loss and top-1 on held-out [MASK] positions, with their context-free floors."""

    sequences: int
    positions: int
    loss: float  # nats per [MASK] position
    top1: float
    floor_loss: float  # unigram cross-entropy of the same positions (add-one on the training pieces)
    floor_top1: float  # top-1 of always answering the most frequent training piece
    most_frequent: int  # that piece's id
    rows: list  # per sequence: model nll, floor nll, model hits, floor hits, positions

    def to_dict(self, rows: bool = False) -> dict:
        d = asdict(self)
        if not rows:
            d.pop("rows")
        return d

    def versus_floor(self, n_resamples: int = 2000, confidence: float = 0.95) -> S.PairedBootstrap:
        """Held-out loss minus the unigram floor, with a paired bootstrap interval over sequences
        (negative and excluding 0: the model left the plateau)."""
        r = np.asarray(self.rows, dtype=np.float64)
        return S.paired_bootstrap(r[:, [1, 4]], r[:, [0, 4]], S.MEAN, n_resamples=n_resamples, confidence=confidence,
                                  seed=0, higher_is_better=False, name="held-out [MASK] loss minus unigram floor")

    def summary(self, n_resamples: int = 2000) -> dict:
        """The numbers a report prints: loss, floor, the gap with its interval, top-1s, and whether
        the model left the plateau."""
        b = self.versus_floor(n_resamples)
        return {"positions": self.positions, "loss": self.loss, "floor_loss": self.floor_loss,
                "gap": b.difference, "gap_low": b.low, "gap_high": b.high, "left_plateau": b.high < -PLATEAU_MARGIN,
                "top1": self.top1, "floor_top1": self.floor_top1, "most_frequent": self.most_frequent}


def describe(s: dict) -> str:
    """One line: ``held-out [MASK] loss 6.27 vs unigram floor 6.30 (-0.03 [-0.05, -0.01], left the
    plateau); top-1 0.244 vs 0.049 (most frequent piece)``."""
    where = "left the plateau" if s["left_plateau"] else "on the plateau"
    return (f"held-out [MASK] loss {s['loss']:.3f} vs unigram floor {s['floor_loss']:.3f} "
            f"({s['gap']:+.3f} [{s['gap_low']:+.3f}, {s['gap_high']:+.3f}], {where}); "
            f"top-1 {s['top1']:.3f} vs {s['floor_top1']:.3f} (most frequent piece)")


def unigram_counts(data: PackedData) -> np.ndarray:
    """How often each id occurs among the pieces of prepared data (no [CLS]/[SEP]/[PAD])."""
    counts = np.zeros(data.vocab_size, dtype=np.float64)
    step = 1 << 24
    for start in range(0, len(data.tokens), step):
        counts += np.bincount(np.asarray(data.tokens[start:start + step], dtype=np.int64),
                              minlength=data.vocab_size)[:data.vocab_size]
    return counts


def masked_logits(module, input_ids, attention_mask, token_type_ids, sel):
    """Vocabulary logits at the ``sel`` positions, for a pretraining module (MLM, ALBERT, the
    ELECTRA generator) or a Hugging Face ``*ForMaskedLM``."""
    if hasattr(module, "generator"):  # ELECTRA: the generator is the masked LM
        g = module.generator
        h = g.electra(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]
        return g.generator_lm_head(g.generator_predictions(h[sel]))
    if hasattr(module, "arch") and hasattr(module, "model"):  # MLMModule
        model = module.model
        if module.arch == "albert":
            h = model.albert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]
            return model.predictions(h[sel])
        if getattr(module, "one_type", False):
            token_type_ids = torch.zeros_like(token_type_ids)
        h = model.base_model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]
        return model.cls(h[sel]) if module.arch == "bert" else model.lm_head(h[sel])
    kwargs = {"token_type_ids": token_type_ids} if int(getattr(module.config, "type_vocab_size", 2) or 1) > 1 else {}
    return module(input_ids=input_ids, attention_mask=attention_mask, **kwargs).logits[sel]


@torch.no_grad()
def evaluate_heldout(module, heldout: PackedData, counts: np.ndarray, *, mask_prob: float = 0.15, wwm: bool = False,
                     batch_size: int = 32, device: torch.device | str = "cpu",
                     max_sequences: int = MAX_SEQUENCES, bf16: bool = True, progress: bool = False) -> HeldoutMLM:
    """Score ``module`` on the first ``max_sequences`` sequences of ``heldout`` (every selected
    position replaced by [MASK]); ``counts``: :func:`unigram_counts` of the training data;
    ``bf16``: autocast where supported (:mod:`biotok_train.precision`), the loss in fp32;
    ``progress``: a bar on a terminal, a line every 30 s off it (:mod:`biotok.progress`)."""
    from biotok.progress import Progress

    if len(counts) != heldout.vocab_size:
        raise TokenizerMismatchError(f"held-out data {heldout.path} has a vocabulary of {heldout.vocab_size}, the "
                                     f"training data {len(counts)}: prepare both with the same tokenizer")
    log_floor = np.log(counts + 1.0) - math.log(counts.sum() + len(counts))
    top = int(np.argmax(counts))
    was_training = module.training
    module.eval()
    n = min(len(heldout), max_sequences) if max_sequences else len(heldout)
    rows: list[list[float]] = []
    g = torch.Generator().manual_seed(EVAL_SEED)
    shown = Progress(n, "held-out [MASK] loss", unit="sequence", enabled=progress)
    try:
        for start in range(0, n, batch_size):
            b = heldout.batch(np.arange(start, min(n, start + batch_size)))
            sel = select(b.word_starts, b.special, prob=mask_prob, wwm=wwm, generator=g)
            x = b.input_ids.masked_fill(sel, heldout.mask_id)
            with autocast(device, bf16):
                logits = masked_logits(module, x.to(device), b.attention_mask.to(device),
                                       b.token_type_ids.to(device), sel.to(device))
            logits = logits.float()
            y = b.input_ids[sel]
            nll = F.cross_entropy(logits, y.to(device), reduction="none").double().cpu().numpy()
            hits = (logits.argmax(-1).cpu() == y).double().numpy()
            yn = y.numpy()
            row_of = sel.nonzero()[:, 0].numpy()
            for r in range(sel.shape[0]):
                m = row_of == r
                rows.append([float(nll[m].sum()), float(-log_floor[yn[m]].sum()), float(hits[m].sum()),
                             float((yn[m] == top).sum()), float(m.sum())])
            shown.update(sel.shape[0])
    finally:
        shown.close()
        module.train(was_training)
    t = np.asarray(rows, dtype=np.float64).sum(axis=0)
    pos = max(t[4], 1.0)
    return HeldoutMLM(sequences=n, positions=int(t[4]), loss=t[0] / pos, top1=t[2] / pos, floor_loss=t[1] / pos,
                      floor_top1=t[3] / pos, most_frequent=top, rows=rows)


def evaluate_saved(model_dir, train_data, heldout_data, *, mask_prob: float = 0.15, wwm: bool = False,
                   max_sequences: int = MAX_SEQUENCES) -> HeldoutMLM:
    """:func:`evaluate_heldout` of a saved masked LM (a pretraining run's folder): the unigram
    floor from ``train_data``, the positions from ``heldout_data`` (both prepared data folders)."""
    from biotok_train.hf_models import best_device, check_model, load_masked_lm

    train, held = PackedData(train_data), PackedData(heldout_data)
    if train.fingerprint != held.fingerprint:
        raise TokenizerMismatchError(f"{heldout_data} and {train_data} were prepared with different tokenizers")
    device = best_device()
    model = load_masked_lm(model_dir)
    check_model(model, held.vocab_size, model_dir)
    model = model.to(device)
    return evaluate_heldout(model, held, unigram_counts(train), mask_prob=mask_prob, wwm=wwm, device=device,
                            max_sequences=max_sequences)


def pooled_summary(by_seed: dict, n_resamples: int = 2000, confidence: float = 0.95) -> dict:
    """Several seeds' :class:`HeldoutMLM` rows (``{seed: rows}``, the same held-out sequences)
    pooled: loss, floors and the gap to the unigram floor with a paired bootstrap interval over
    held-out sequences (each drawn with all its seeds); ``left_plateau`` as :meth:`HeldoutMLM.summary`."""
    ref = {k: np.asarray(v, dtype=np.float64)[:, [1, 4]] for k, v in by_seed.items()}
    cand = {k: np.asarray(v, dtype=np.float64)[:, [0, 4]] for k, v in by_seed.items()}
    r, c, clusters = S.pool_seeds(ref, cand)
    b = S.paired_bootstrap(r, c, S.MEAN, clusters=clusters, n_resamples=n_resamples, confidence=confidence, seed=0,
                           higher_is_better=False, name="held-out [MASK] loss minus unigram floor")
    t = np.concatenate([np.asarray(v, dtype=np.float64) for v in by_seed.values()]).sum(axis=0)
    pos = max(t[4], 1.0)
    return {"seeds": len(by_seed), "positions": int(t[4] / max(1, len(by_seed))), "loss": t[0] / pos,
            "floor_loss": t[1] / pos, "gap": b.difference, "gap_low": b.low, "gap_high": b.high,
            "left_plateau": b.high < -PLATEAU_MARGIN, "top1": t[2] / pos, "floor_top1": t[3] / pos}


__all__ = ["EVAL_SEED", "PLATEAU_MARGIN", "HeldoutMLM", "describe", "evaluate_heldout", "evaluate_saved", "masked_logits",
           "pooled_summary", "unigram_counts"]
