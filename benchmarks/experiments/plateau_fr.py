"""How long must a tiny French MLM train to leave the unigram plateau? A recipe over ``ablate`` (docs/results/plateau-fr/).

    python -m benchmarks.experiments.plateau_fr                    # 2 vocabularies x 16,000 steps (about 80 CPU-minutes; resumable)
    python -m benchmarks.experiments.ablation_cpu --budget 16000   # then the ablation at that budget, reusing both pretrainings
    python -m benchmarks.experiments.plateau_fr --quick            # 20 steps into benchmarks/.data/ablation_cpu_quick/ only

The French CPU ablation's recipe (ablation_cpu.py) at pretraining seed 0, with ablate's curve every --every steps and
nothing fine-tuned on it: at each step the held-out [MASK] loss minus the unigram floor, with its bootstrap interval; a
vocabulary has left the plateau at the first step whose interval lies below zero. Each final model is fine-tuned once
on E3C. The work folder is ``ablation_cpu --budget``'s: whichever runs second reuses both models. Other options:
:mod:`biotok_train.ablate.experiment`.
"""

from __future__ import annotations

from dataclasses import replace

import benchmarks._common as C
from benchmarks._common import REPO, ablation_cpu_recipe, ablation_cpu_workdir, ablation_unigram_l, machine, require_data
from biotok_train.ablate import experiment as X
from biotok_train.ablate.config import Curve

PUBLISHED, TOK = REPO / "docs" / "results" / "plateau-fr", "Unigram_L-8k"
TITLE = "When does a tiny French MLM leave the unigram plateau?"


def recipe(tokenizer, quick: bool, budget: int, every: int):
    """The ablation's recipe at ``budget``, seed 0, the held-out curve every ``every`` steps, nothing
    fine-tuned on it and one fine-tuning seed without floors (their jobs are the ablation's)."""
    cfg = ablation_cpu_recipe(tokenizer, quick, budget)
    return replace(cfg, probe=0, pretraining=replace(cfg.pretraining, seeds=(0,)), finetuning=replace(cfg.finetuning, seeds=(0,)),
                   statistics=replace(cfg.statistics, floor=False), curve=Curve(tuple(range(every, cfg.pretraining.budget, every)), ()))


def intro(report) -> list[str]:
    """What was run, and the verdict of the held-out curve (its sentences, computed by ablate)."""
    cfg, curve = report.config.pretraining, report.config.curve.steps
    lines = [f"Setup: BERT-tiny, batch {cfg.batch_size} x {cfg.seq_len} pieces, lr {cfg.lr:g}, one linear schedule over "
             f"{cfg.budget:,} steps, pretraining seed 0, evaluated every {curve[0] if curve else cfg.budget:,} "
             "steps on the held-out lines of the E3C PAMJ split of `benchmarks/experiments/ablation_cpu.py` (every "
             "[MASK] position scored against the add-one unigram floor of the training pieces; 95 % bootstrap over "
             "held-out sequences). The curve is ablate's (`--curve ... --curve-tasks none`): nothing is fine-tuned on "
             f"it. {report.costs['total_cpu_s'] / 60:.0f} CPU-minutes in all on a {machine()['cpu_count']}-core CPU "
             "(`costs.json`).", "", "## The plateau, in short", ""]
    lines += [f"- {s}" for s in report.sentences if s.startswith(("On the held-out curve", "Every arm"))]
    first = {p["arm"]: p["step"] for p in reversed(report.heldout_curve) if p["left_plateau"]}  # its first step off it
    if first and len(first) == len({p["arm"] for p in report.heldout_curve}):
        lines += ["", "The ablation at that budget: `python -m benchmarks.experiments.ablation_cpu --budget "
                  f"{max(first.values())}`."]
    return lines


def experiment(budget: int = 16000, every: int = 2000) -> X.Experiment:
    """The plateau search at ``budget`` steps, a held-out point every ``every`` (a dry run: 20 steps, every 10)."""
    config = lambda work, tasks: recipe(work / TOK, tasks is not None, budget, 10 if tasks else every)  # noqa: E731

    def page(work, dest, command, downstream):  # the report from the records alone, and its page
        from biotok_train.ablate import run_ablation
        from biotok_train.ablate.render import publish

        report = run_ablation(config(work, ("e3c",) if work.name.endswith("_quick") else None), work / "run",
                              progress=False, force=True)
        publish(report, dest, title=TITLE, intro=intro(report), command=command)

    return X.Experiment(
        "plateau_fr", __doc__, config, lambda work, dest, command, a: ablation_unigram_l(
            config(work, ("e3c",) if a.dry_run else None), work / "run", work / TOK), page, C.CACHE, REPO / ".gpu",
        PUBLISHED, ("e3c",), options=lambda ap: (
            ap.add_argument("--budget", type=int, default=16000, help="the schedule's length and the most steps trained"),
            ap.add_argument("--every", type=int, default=2000, help="steps between two held-out evaluations")), require=require_data, gpu_by_default=True,
        workdir=lambda dry: ablation_cpu_workdir(budget, dry), out="run", threads=0, verbose=True)


def main(argv: list[str] | None = None) -> int:
    a = X.parser(experiment()).parse_known_args(argv)[0]
    return X.main(experiment(a.budget, a.every), argv)


if __name__ == "__main__":
    raise SystemExit(main())
