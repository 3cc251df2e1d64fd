"""How long must a tiny French MLM train to leave the unigram plateau? A recipe over ``ablate`` (docs/results/plateau-fr/).

    python -m benchmarks.experiments.plateau_fr                    # 2 vocabularies x 16,000 steps (about 80 CPU-minutes; resumable)
    python -m benchmarks.experiments.ablation_cpu --budget 16000   # then the ablation at that budget, reusing both pretrainings
    python -m benchmarks.experiments.plateau_fr --quick            # 20 steps into benchmarks/.data/ablation_cpu_quick/ only

The French CPU ablation's recipe (benchmarks/experiments/ablation_cpu.py: the E3C PAMJ clinical
cases, each 20th line held out; CamemBERTa's vocabulary and a biotok Unigram_L of 8,000 pieces
trained on the pretraining part; BERT-tiny, batch 8 x 128, lr 2e-3, one linear schedule over the
budget), pretraining seed 0, with ablate's curve every --every steps and no fine-tuning on it
(``curve_tasks=()``): at each step the held-out [MASK] loss minus the unigram floor of the same
positions, with its bootstrap interval over held-out sequences; a vocabulary has left the plateau
at the first step whose interval lies below zero. Each final model is fine-tuned once on E3C (one
seed, no floor). The work folder is ``ablation_cpu --budget``'s: at --every 2000 its pretraining
jobs have the same content keys, so whichever of the two runs second reuses both models (each
runs ablate with force: the recipes differ only in what is fine-tuned).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys

from benchmarks._common import (REPO, ablation_cpu_recipe, ablation_cpu_workdir, ablation_unigram_l, machine,
                                require_data)

PUBLISHED = REPO / "docs" / "results" / "plateau-fr"
TITLE = "When does a tiny French MLM leave the unigram plateau?"


def recipe(tokenizer, quick: bool, budget: int, every: int):
    """The ablation's recipe at ``budget``, seed 0, the held-out curve every ``every`` steps, nothing
    fine-tuned on it and one fine-tuning seed without floors (their jobs are the ablation's)."""
    cfg = ablation_cpu_recipe(tokenizer, quick, budget)
    return dataclasses.replace(cfg, pretrain_seeds=(0,), seeds=(0,), floor=False, probe=0, curve_tasks=(),
                               curve=tuple(range(every, cfg.budget, every)))


def intro(report) -> list[str]:
    """What was run, and the verdict of the held-out curve (its sentences, computed by ablate)."""
    cfg = report.config
    lines = [f"Setup: BERT-tiny, batch {cfg.batch_size} x {cfg.seq_len} pieces, lr {cfg.lr:g}, one linear schedule over "
             f"{cfg.budget:,} steps, pretraining seed 0, evaluated every {cfg.curve[0] if cfg.curve else cfg.budget:,} "
             "steps on the held-out lines of the E3C PAMJ split of `benchmarks/experiments/ablation_cpu.py` (every "
             "[MASK] position scored against the add-one unigram floor of the training pieces; 95 % bootstrap over "
             "held-out sequences). The curve is ablate's (`--curve ... --curve-tasks none`): nothing is fine-tuned on "
             f"it. {report.costs['total_cpu_s'] / 60:.0f} CPU-minutes in all on a {machine()['cpu_count']}-core CPU "
             "(`costs.json`).", "", "## The plateau, in short", ""]
    lines += [f"- {s}" for s in report.sentences if s.startswith(("On the held-out curve", "Every arm"))]
    first = {}  # per arm, the first step where it left the plateau
    for p in report.heldout_curve:
        if p["left_plateau"]:
            first.setdefault(p["arm"], p["step"])
    if first and len(first) == len({p["arm"] for p in report.heldout_curve}):
        lines += ["", "The ablation at that budget: `python -m benchmarks.experiments.ablation_cpu --budget "
                  f"{max(first.values())}`."]
    return lines


def main(argv: list[str] | None = None) -> int:
    from biotok.errors import BiotokError
    from biotok_train.ablate import run_ablation
    from biotok_train.ablate.render import publish
    from biotok_train.config import EngineConfig

    ap = argparse.ArgumentParser(prog="python -m benchmarks.experiments.plateau_fr", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20 steps, a point every 10, results in benchmarks/.data only")
    ap.add_argument("--budget", type=int, default=16000, help="the schedule's length and the most steps trained")
    ap.add_argument("--every", type=int, default=2000, help="steps between two held-out evaluations")
    ap.add_argument("--workers", type=int, default=1, help="2 or more: ablate --engine ray (one pretraining per CPU)")
    a = ap.parse_args(argv)
    require_data()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    work = ablation_cpu_workdir(a.budget, a.quick)
    tok = work / "Unigram_L-8k"
    cfg = recipe(tok, a.quick, a.budget, 10 if a.quick else a.every)
    try:
        ablation_unigram_l(cfg, work / "run", tok)
        engine = EngineConfig("ray", a.workers) if a.workers > 1 else EngineConfig()
        report = run_ablation(cfg, work / "run", progress=False, engine=engine, force=True)
        dest = work / "plateau-published" if a.quick else PUBLISHED
        publish(report, dest, title=TITLE, intro=intro(report),
                command=" ".join(["python -m benchmarks.experiments.plateau_fr", *(sys.argv[1:] if argv is None else argv)]))
    except BiotokError as e:
        print(f"plateau_fr: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {dest / 'README.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
