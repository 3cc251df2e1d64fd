"""The committed CPU ablation (docs/results/ablation-cpu/): a biotok Unigram_L vocabulary vs CamemBERTa's.

    python -m benchmarks.experiments.ablation_cpu            # about 75 min on 2 cores; rewrites docs/results/ablation-cpu/
    python -m benchmarks.experiments.ablation_cpu --quick    # a few steps into benchmarks/.data/ only (checks that it runs)

The other options (a GPU slot's included): :mod:`biotok_train.ablate.experiment`.
Phases: (1) the ablation's own split of the E3C PAMJ clinical cases (each 20th line held out);
(2) ``biotok train`` on the pretraining part only: Unigram, lowercased (AliBERT's Unigram_L),
8,000 pieces (this 3.2 M-character corpus supports at most ~11,600 Unigram pieces); (3)
``biotok-train ablate`` CamemBERTa (the reference) vs that vocabulary: BERT-tiny, the same
token budget, 2 pretraining seeds x 2 fine-tuning seeds, E3C NER with random-init floors, and
masked-word accuracy on 1,000 held-out words; with a --budget past the plateau, one pretraining
seed with the held-out curve every 2,000 steps (nothing fine-tuned on it): the pretraining jobs of
benchmarks/experiments/plateau_fr.py at that budget, in the same work folder, so whichever of the
two runs second reuses both models (ablate runs with force: the recipes differ only in what is
fine-tuned) x 3 fine-tuning seeds (a second pretraining seed would cost about 45 CPU-minutes per
vocabulary at 16,000 steps), plus the causal-LM probe of each vocabulary (400 steps) ranked against
the MLM arms (Kendall tau); (4) the report copied into docs/results/ablation-cpu/
(ablation-cpu-BUDGET/). Work files (the split, the tokenizer, the runs, resumable) live in
benchmarks/.data/ablation_cpu/ (ablation_cpu-BUDGET/).
"""

from __future__ import annotations

import dataclasses
import sys

import benchmarks._common as C
from benchmarks._common import (PLATEAU_BUDGET, REPO, ablation_cpu_recipe as recipe, ablation_cpu_suffix as suffix,
                                ablation_cpu_workdir as workdir, ablation_unigram_l, publish_ablation, require_data)
from biotok_train.ablate import experiment as X

GPU_PACK, TOK = REPO / ".gpu", "Unigram_L-8k"  # the work folders: benchmarks._common.CACHE
SLOT = X.Slot(540.0, 16, 0.125, REPO / "benchmarks" / "results" / "gpu" / "h200-2026-11-28" / "costs.json")


def experiment(budget: int = PLATEAU_BUDGET) -> X.Experiment:
    """The recipe at ``budget`` MLM steps an arm (another than the first run's publishes to ablation-cpu-BUDGET/)."""
    more, config = suffix(budget), lambda work, tasks: recipe(work / TOK, tasks is not None, budget)

    def page(work, dest, command, downstream):  # the report over the seeds done, from the records alone
        from biotok_train.ablate import run_ablation

        seeds = tuple(downstream["pretrain_seeds"]) if downstream else None
        cfg = config(work, None if "quick" not in work.name else ("e3c",))
        pretraining = dataclasses.replace(cfg.pretraining, seeds=seeds or cfg.pretraining.seeds)
        report = run_ablation(dataclasses.replace(cfg, pretraining=pretraining), work / "run",
                              progress=False, force=True)
        publish_ablation(report, work / "run", dest, "CPU ablation: a biotok Unigram_L vocabulary vs CamemBERTa",
                         __doc__, command)
        print("\n".join(report.sentences))

    return X.Experiment(
        "ablation_cpu", __doc__, config, lambda work, dest, command, a: ablation_unigram_l(
            config(work, ("e3c",) if a.dry_run else None), work / "run", work / TOK), page, C.CACHE, GPU_PACK,
        REPO / "docs" / "results" / f"ablation-cpu{more}", ("e3c",), require=require_data, slot=SLOT,
        options=lambda ap: ap.add_argument("--budget", type=int, default=PLATEAU_BUDGET, help=(
            f"MLM steps per arm ({PLATEAU_BUDGET}: the first published run; plateau_fr finds one past the plateau, "
            "published to docs/results/ablation-cpu-BUDGET/ with the held-out curve every 2,000 steps)")),
        gpu_by_default=True, workdir=lambda dry: workdir(budget, dry), out="run", threads=0, verbose=True)


def main(argv: list[str] | None = None) -> int:
    budget = X.parser(experiment()).parse_known_args(argv)[0].budget
    return X.main(experiment(budget), argv)


if __name__ == "__main__":
    sys.exit(main())
