"""Did the arms learn to use context? Each pretrained model's held-out [MASK] loss and top-1
beside the unigram floor and the most-frequent-piece top-1 (the plateau), and the causal-LM
probe of each vocabulary as one more arm metric (``--probe``)."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Sequence

from biotok_train.ablate.analysis import metric_label
from biotok_train.ablate.plan import ArmResult, Context, Leg, data_dir, prepared

log = logging.getLogger(__name__)


def prepare_heldout(ctx: Context, tokenizer: str, name: str):
    """The held-out lines prepared with ``name``'s tokenizer (for the held-out [MASK] numbers)."""
    return prepared(data_dir(ctx.out, name, heldout=True), ctx.held, tokenizer, ctx.cfg.seq_len)


def heldout_numbers(ctx: Context, size: str, name: str, data: Path, held: Path, model_dir: Path) -> dict:
    """Held-out [MASK] loss and top-1 of one pretrained model, with the per-sequence rows the
    pooled interval needs."""
    from biotok_train.pretrain.heldout import evaluate_saved

    log.info("[%s/%s] held-out [MASK] loss (%s)", size, name, model_dir.parent.name)
    t0 = time.perf_counter()
    h = evaluate_saved(model_dir, data, held)
    ctx.timings[f"{size}/{name}/{model_dir.parent.name}/heldout_mlm"] = round(time.perf_counter() - t0, 1)
    return h.to_dict(rows=True)


def plateau_sentences(arms: Sequence[ArmResult], sized: bool) -> list[str]:
    """Per arm: whether its held-out [MASK] loss left the unigram floor, by how much, with the interval."""
    out = []
    for a in arms:
        h = a.heldout_mlm
        if not h:
            continue
        who = f"{a.name} ({a.size})" if sized else a.name
        gap = f"{h['gap']:+.3f} nats [{h['gap_low']:+.3f}, {h['gap_high']:+.3f}]"
        if h["left_plateau"]:
            out.append(f"{who} left the plateau: held-out [MASK] loss {h['loss']:.3f} vs unigram floor "
                       f"{h['floor_loss']:.3f}, {gap}; top-1 {h['top1']:.3f} vs {h['floor_top1']:.3f} for always the "
                       "most frequent piece.")
        else:
            out.append(f"{who} did not leave the plateau: held-out [MASK] loss {h['loss']:.3f} vs unigram floor "
                       f"{h['floor_loss']:.3f}, {gap}; top-1 {h['top1']:.3f} vs {h['floor_top1']:.3f} for always the "
                       "most frequent piece: at this budget its masked-LM numbers say nothing about the vocabulary.")
    return out


def probe_arms(ctx: Context, legs: Sequence[Leg], arms: Sequence[ArmResult], tasks: dict) -> tuple[dict, list[dict]]:
    """The causal-LM probe of each vocabulary (OUT/probe/) in fair mode (every arm trained and
    scored on the same text, as lossy as the most lossy normalization among them: a cased and a
    lowercasing vocabulary would otherwise not be scored on the same characters), and Kendall τ
    between its ranking and each task's (per size and start, over the vocabularies)."""
    from biotok_train.probe.arms import probe_vocabularies, ranking_agreement

    cfg = ctx.cfg
    vocabs = {leg.vocab: leg.tokenizer for leg in legs}
    t0 = time.perf_counter()
    res = probe_vocabularies(vocabs, ctx.train, ctx.held, ctx.out / "probe", steps=cfg.probe,
                             seeds=cfg.pretrain_seeds, batch_size=cfg.batch_size, seq_len=cfg.seq_len,
                             fair=True, progress=ctx.progress)  # like for like: the arms may normalize differently
    ctx.timings["probe"] = round(time.perf_counter() - t0, 1)
    bpc = {v: res[v]["bits_per_char"]["mean"] for v in vocabs}
    agreements = []
    for size in cfg.sizes:
        for init in dict.fromkeys(leg.init for leg in legs):
            group = [a for a in arms if a.size == size and a.init == init]
            where = (f" ({size})" if len(cfg.sizes) > 1 else "") + (f" ({init} arms)" if cfg.base is not None else "")
            for task in cfg.tasks:
                other = {a.vocabulary or a.name: a.metrics[task]["mean"] for a in group}
                agreements.append({"size": size, "init": init, "task": task, **ranking_agreement(
                    bpc, other, f"{metric_label(tasks, task)}{where}")})
            other = {a.vocabulary or a.name: -a.heldout_mlm["gap"] for a in group if a.heldout_mlm}
            agreements.append({"size": size, "init": init, "task": "heldout_mlm", **ranking_agreement(
                bpc, other, f"the held-out [MASK] loss below its floor{where}")})
    return res, agreements


__all__ = ["heldout_numbers", "plateau_sentences", "prepare_heldout", "probe_arms"]
