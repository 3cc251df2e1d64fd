"""Did the arms learn to use context? Each pretrained model's held-out [MASK] loss and top-1
beside the unigram floor and the most-frequent-piece top-1 (the plateau), at the budget and at
each step of the curve (when it left the plateau), and the causal-LM probe of each vocabulary
as one more arm metric (``--probe``)."""

from __future__ import annotations

from itertools import groupby
from typing import Sequence

from biotok_train import stats as S
from biotok_train.ablate.plan import comparison_pairs, evaluate_key, heldout_key
from biotok_train.ablate.results import ArmResult, at_size, metric_label

HELDOUT_FIELDS = ("positions", "loss", "floor_loss", "gap", "gap_low", "gap_high", "left_plateau", "top1", "floor_top1")


def plateau_sentences(arms: Sequence[ArmResult], sized: bool) -> list[str]:
    """Per arm: whether its held-out [MASK] loss left the unigram floor, by how much, with the interval."""
    out = []
    for a in arms:
        h = a.heldout_mlm
        if not h:
            continue
        who = f"{a.name} ({a.size})" if sized else a.name
        gap = f"{h['gap']:+.3f} nats [{h['gap_low']:+.3f}, {h['gap_high']:+.3f}]"
        left = h["left_plateau"]
        out.append(f"{who} {'left' if left else 'did not leave'} the plateau: held-out [MASK] loss {h['loss']:.3f} vs "
                   f"unigram floor {h['floor_loss']:.3f}, {gap}; top-1 {h['top1']:.3f} vs {h['floor_top1']:.3f} for "
                   "always the most frequent piece" + ("." if left else ": at this budget its masked-LM numbers say "
                                                       "nothing about the vocabulary."))
    return out


def heldout_curve(res) -> list[dict]:
    """Each pretrained arm's held-out [MASK] numbers after k MLM steps, pooled over pretraining
    seeds (:func:`~biotok_train.pretrain.heldout.pooled_summary`): k = 0 where the arm starts from a
    model on disk, each --curve step, and the budget (its final evaluation). ``token_positions``:
    what it trained on by then (k × batch × sequence length); ``positions``: [MASK] positions scored."""
    from biotok_train.pretrain.heldout import pooled_summary  # lazy: torch-side module

    cfg, points = res.cfg, []
    for size in cfg.sizes if cfg.curve.steps else ():
        for leg in (x for x in res.legs if x.pretrained):
            for k in (0, *cfg.curve.steps, cfg.pretraining.budget):
                ev = _evaluations(res, size, leg.name, k)
                if ev is None:  # k = 0 of a scratch arm without a base
                    continue
                h = pooled_summary({p: e["heldout"]["rows"] for p, e in ev.items()}, cfg.statistics.n_resamples, cfg.statistics.confidence)
                points.append({"size": size, "arm": leg.name, "step": k,
                               "token_positions": k * cfg.pretraining.batch_size * cfg.pretraining.seq_len,
                               **{f: h[f] for f in HELDOUT_FIELDS},
                               "mlm_top1": S.summarize_seeds([e["mlm"]["accuracy"]["top1"] for e in ev.values()]
                                                             ).to_dict()})
    return points


def _evaluations(res, size: str, arm: str, k: int) -> dict | None:
    """The evaluation records of an arm's model after k steps, by pretraining seed (None: not planned)."""
    cfg = res.cfg
    keys = [evaluate_key(size, arm, p) if k == cfg.pretraining.budget else heldout_key(size, arm, p, k) for p in cfg.pretraining.seeds]
    if any(key not in res.records for key in keys):
        return None
    return dict(zip(cfg.pretraining.seeds, (res.records[key] for key in keys)))


def heldout_curve_gaps(res) -> list[dict]:
    """At each step of the held-out curve, each arm minus another arm of the same vocabulary that the
    report compares it with (:func:`~biotok_train.ablate.plan.comparison_pairs`: one transfer method
    against the first): [MASK] loss on the same held-out positions, paired bootstrap over held-out
    sequences (each drawn with all its seeds); lower is better."""
    import numpy as np  # lazy: only with a curve

    cfg, legs, gaps = res.cfg, {leg.name: leg for leg in res.legs}, []
    pairs = [(r, c) for r, c in comparison_pairs(res.legs) if legs[r].pretrained and legs[c].pretrained
             and legs[r].vocab == legs[c].vocab]
    for size in cfg.sizes if cfg.curve.steps else ():
        for ref, cand in pairs:
            for k in (0, *cfg.curve.steps, cfg.pretraining.budget):
                r, c = _evaluations(res, size, ref, k), _evaluations(res, size, cand, k)
                if r is None or c is None:
                    continue
                rows = lambda ev: {p: np.asarray(e["heldout"]["rows"], dtype=np.float64)[:, [0, 4]]  # noqa: E731
                                   for p, e in ev.items()}
                ref_rows, cand_rows, clusters = S.pool_seeds(rows(r), rows(c))
                b = S.paired_bootstrap(ref_rows, cand_rows, S.MEAN, clusters=clusters, n_resamples=cfg.statistics.n_resamples,
                                       confidence=cfg.statistics.confidence, seed=0, higher_is_better=False,
                                       name="held-out [MASK] loss")
                gaps.append({"size": size, "step": k, "reference_arm": ref, "candidate_arm": cand, **b.to_dict()})
    return gaps


def heldout_gap_sentences(gaps: Sequence[dict], sized: bool) -> list[str]:
    """Per pair of arms on the held-out curve: at which steps the candidate's [MASK] loss is lower,
    higher or not distinguishable from the reference's, with the difference where it starts and at the end."""
    out = []
    for (size, ref, cand), rows in groupby(gaps, key=lambda g: (g["size"], g["reference_arm"], g["candidate_arm"])):
        rows = list(rows)
        by = {v: [r["step"] for r in rows if r["verdict"] == v] for v in (S.BETTER, S.WORSE, S.INDISTINGUISHABLE)}
        words = {S.BETTER: "lower", S.WORSE: "higher", S.INDISTINGUISHABLE: "not distinguishable"}
        parts = [f"{words[v]} at k = {', '.join(f'{k:,}' for k in steps)}" for v, steps in by.items() if steps]
        ends = [rows[0]] if len(rows) == 1 else [rows[0], rows[-1]]
        diff = "; ".join(f"k = {r['step']:,}: {r['difference']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}] nats"
                         for r in ends)
        out.append(f"On the held-out curve{f' ({size})' if sized else ''}, {cand}'s [MASK] loss against {ref}'s (the "
                   f"same positions) is {'; '.join(parts)} ({diff}).")
    return out


def curve_plateau_sentences(points: Sequence[dict], budget: int, sized: bool) -> list[str]:
    """Per arm, from its held-out curve: the first step measured where it left the plateau (and
    whether it stays off), or that it did not within the budget; whether its top-1 ever beats
    always answering the most frequent piece; per size, the budget by which every arm left."""
    out = []
    for size, group in groupby(points, key=lambda p: p["size"]):
        group = list(group)
        firsts = []
        for arm, rows in groupby(group, key=lambda p: p["arm"]):
            rows = list(rows)
            who = f"{arm} ({size})" if sized else arm
            first = next((r for r in rows if r["left_plateau"]), None)
            firsts.append(first)
            out.append(_left_sentence(who, rows, first, budget))
            if all(r["top1"] <= r["floor_top1"] for r in rows):  # the same held-out positions at every step
                out.append(f"On the held-out curve, {who}'s top-1 on [MASK] positions never beats always answering "
                           f"the most frequent piece ({rows[-1]['floor_top1']:.3f}): what it learned shows in the "
                           "loss only.")
        if firsts and all(firsts):
            last = max(firsts, key=lambda r: r["step"])
            where = f" {at_size(size).lower()}" if sized else ""
            out.append(f"Every arm{where} has left the plateau by step {last['step']:,} "
                       f"({last['token_positions']:,} token positions), the first step measured where all had: an "
                       "ablation of this recipe needs about that budget before its arms' masked-LM numbers say "
                       "something about their vocabularies.")
    return out


def _left_sentence(who: str, rows: list[dict], first: dict | None, budget: int) -> str:
    gap = lambda r: f"{r['gap']:+.3f} [{r['gap_low']:+.3f}, {r['gap_high']:+.3f}] nats"  # noqa: E731
    tried = ", ".join(f"{r['step']:,}" for r in rows)
    if first is None:
        last = rows[-1]
        return (f"On the held-out curve, {who} does not leave the plateau within {budget:,} steps (measured at k = "
                f"{tried}): at {last['token_positions']:,} token positions its [MASK] loss minus the unigram floor is "
                f"{gap(last)}.")
    when = ("from the start (k = 0: the model it starts from)" if first["step"] == 0 else
            f"by step {first['step']:,} ({first['token_positions']:,} token positions; measured at k = {tried})")
    stays = all(r["left_plateau"] for r in rows if r["step"] >= first["step"])
    return (f"On the held-out curve, {who} leaves the plateau {when}: [MASK] loss {first['loss']:.3f} vs unigram "
            f"floor {first['floor_loss']:.3f}, {gap(first)}" + ("" if stays else ", though it is back on the plateau "
                                                                  "at a later step") + ".")


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
            where = (f" ({size})" if len(cfg.sizes) > 1 else "") + (f" ({init} arms)" if cfg.base.model is not None else "")
            for task in cfg.tasks:
                other = {a.vocabulary or a.name: a.metrics[task]["mean"] for a in group}
                agreements.append({"size": size, "init": init, "task": task, **ranking_agreement(
                    bpc, other, f"{metric_label(res.tasks, task)}{where}")})
            other = {a.vocabulary or a.name: -a.heldout_mlm["gap"] for a in group if a.heldout_mlm}
            agreements.append({"size": size, "init": init, "task": "heldout_mlm", **ranking_agreement(
                bpc, other, f"the held-out [MASK] loss below its floor{where}")})
    return agreements


__all__ = ["HELDOUT_FIELDS", "curve_plateau_sentences", "heldout_curve", "heldout_curve_gaps", "heldout_gap_sentences", "plateau_sentences", "probe_agreements"]
