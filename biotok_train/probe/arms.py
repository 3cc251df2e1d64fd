"""The probe as one more metric of an ablation: bits per character of each vocabulary, and
whether it ranks the vocabularies as another metric does (Kendall τ)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

from biotok_train.config import ProbeConfig


def probe_vocabularies(vocabs: Mapping[str, str], train: Path, held: Path, out: Path, *, steps: int,
                       seeds: Sequence[int], batch_size: int, seq_len: int, lr: float = 1e-3,
                       field_name: str | None = None, fair: bool = False, progress: bool = True) -> dict[str, dict]:
    """Run (or resume) :func:`~biotok_train.probe.run.run_probe` on ``vocabs`` (``{name: tokenizer}``,
    the reference first) in ``out``; ``{name: {bits_per_char, unigram_floor, versus_floor,
    versus_reference}}``."""
    from biotok_train.probe.run import run_probe

    cfg = ProbeConfig(tokenizers=tuple(vocabs.values()), corpus=(str(train),), heldout=(str(held),), steps=steps,
                      seeds=tuple(seeds), batch_size=batch_size, seq_len=min(seq_len, 1024), lr=lr,
                      field_name=field_name, fair=fair)
    report = run_probe(cfg, out, progress=progress)
    comps = {c["candidate_arm"]: c for c in report.comparisons}
    result = {}
    for name, arm in zip(vocabs, report.arms):  # the probe's arms come in the order of its tokenizers
        c = comps.get(arm["name"])
        result[name] = {"bits_per_char": arm["bits_per_char"], "unigram_floor": arm["unigram_floor_bits_per_char"],
                        "versus_floor": {k: arm["versus_floor"][k] for k in ("difference", "low", "high", "verdict")},
                        "versus_reference": None if c is None else
                        {k: c[k] for k in ("difference", "low", "high", "verdict")},
                        "notes": [n for n in report.notes if n.startswith(arm["name"])]}
    result["_report"] = {"md": str(report.paths["md"]), "notes": report.notes, "setup": report.setup}
    return result


def ranking_agreement(probe: Mapping[str, float], other: Mapping[str, float], other_name: str,
                      other_higher_is_better: bool = True) -> dict:
    """Kendall τ between the probe's ranking (lower bits per character first) and ``other``'s."""
    from scipy.stats import kendalltau

    vocabs = [v for v in probe if v in other]
    order_p = sorted(vocabs, key=lambda v: probe[v])
    order_o = sorted(vocabs, key=lambda v: -other[v] if other_higher_is_better else other[v])
    tau = p = None
    if len(vocabs) >= 2:
        res = kendalltau([-probe[v] for v in vocabs], [other[v] if other_higher_is_better else -other[v] for v in vocabs])
        if not math.isnan(res.statistic):
            tau, p = float(res.statistic), float(res.pvalue)
    if tau is None:
        sentence = (f"The probe and {other_name}: fewer than two vocabularies or tied scores, no ranking to compare.")
    else:
        same = "rank the vocabularies the same way" if math.isclose(tau, 1.0) else (
            "rank them in reverse" if math.isclose(tau, -1.0) else "agree only in part")
        caveat = ("; with 2 vocabularies τ is ±1 by construction" if len(vocabs) == 2 else
                  (f"; not significant at 5 % with {len(vocabs)} vocabularies" if p >= 0.05 else ""))
        sentence = (f"The probe ({' < '.join(order_p)} in bits/char) and {other_name} ({' > '.join(order_o)}) {same} "
                    f"(Kendall τ = {tau:+.2f}, p = {p:.2f}){caveat}.")
    return {"metric": other_name, "vocabularies": vocabs, "tau": tau, "p_value": p, "probe_order": order_p,
            "other_order": order_o, "sentence": sentence}


__all__ = ["probe_vocabularies", "ranking_agreement"]
