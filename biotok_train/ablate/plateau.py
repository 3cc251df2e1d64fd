"""Did the arms learn to use context? Each pretrained model's held-out [MASK] loss and top-1
beside the unigram floor and the most-frequent-piece top-1 (the plateau), and the causal-LM
probe of each vocabulary as one more arm metric (``--probe``)."""

from __future__ import annotations

from typing import Sequence

from biotok_train.ablate.analysis import metric_label
from biotok_train.ablate.plan import ArmResult


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


def probe_agreements(res, arms: Sequence[ArmResult]) -> list[dict]:
    """Kendall τ between the causal-LM probe's ranking of the vocabularies (bits per character) and
    each task's, and the held-out [MASK] gap's (per size and start, over the vocabularies)."""
    from biotok_train.probe.arms import ranking_agreement  # lazy: torch-side module

    cfg, probed = res.cfg, res.records["probe"]
    bpc = {v: probed[v]["bits_per_char"]["mean"] for v in dict.fromkeys(leg.vocab for leg in res.legs)}
    agreements = []
    for size in cfg.sizes:
        for init in dict.fromkeys(leg.init for leg in res.legs if leg.pretrained):
            group = [a for a in arms if a.size == size and a.init == init]
            where = (f" ({size})" if len(cfg.sizes) > 1 else "") + (f" ({init} arms)" if cfg.base is not None else "")
            for task in cfg.tasks:
                other = {a.vocabulary or a.name: a.metrics[task]["mean"] for a in group}
                agreements.append({"size": size, "init": init, "task": task, **ranking_agreement(
                    bpc, other, f"{metric_label(res.tasks, task)}{where}")})
            other = {a.vocabulary or a.name: -a.heldout_mlm["gap"] for a in group if a.heldout_mlm}
            agreements.append({"size": size, "init": init, "task": "heldout_mlm", **ranking_agreement(
                bpc, other, f"the held-out [MASK] loss below its floor{where}")})
    return agreements


__all__ = ["plateau_sentences", "probe_agreements"]
