"""The committed CPU ablation (docs/results/ablation-cpu/): a biotok Unigram_L vocabulary vs CamemBERTa's.

    python -m benchmarks.experiments.ablation_cpu            # about 75 min on 2 cores; rewrites docs/results/ablation-cpu/
    python -m benchmarks.experiments.ablation_cpu --quick    # a few steps into benchmarks/.data/ only (checks that it runs)

Phases: (1) the ablation's own split of the E3C PAMJ clinical cases (each 20th line held out);
(2) ``biotok train`` on the pretraining part only: Unigram, lowercased (AliBERT's Unigram_L),
8,000 pieces (this 3.2 M-character corpus supports at most ~11,600 Unigram pieces); (3)
``biotok-train ablate`` CamemBERTa (the reference) vs that vocabulary: BERT-tiny, the same
token budget, 2 pretraining seeds x 2 fine-tuning seeds, E3C NER with random-init floors, and
masked-word accuracy on 1,000 held-out words; with a --budget past the plateau, the seed-0 model
that benchmarks/experiments/plateau_fr.py trained for each vocabulary (in chunks; resumed training gives
the same model as one run, so this command alone rebuilds it; its time is in plateau-fr/, not in
this timings.json) x 3 fine-tuning seeds (a second pretraining seed would cost about 45
CPU-minutes per vocabulary at 16,000 steps), plus the causal-LM probe of each vocabulary (400 steps) ranked against the MLM
arms (Kendall tau); (4) the report copied into docs/results/ablation-cpu/ (ablation-cpu-BUDGET/).
Work files (the split, the tokenizer, the runs, resumable) live in benchmarks/.data/ablation_cpu/.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from benchmarks._common import CACHE, DATA, require_data, run_published_ablation

PAMJ = DATA / "corpora" / "e3c-fr" / "layer3_fr_pamj_ccby.jsonl.xz"
CAMEMBERTA = DATA / "tokenizers" / "camemberta-base"
PLATEAU_BUDGET = 6000  # the first published run (docs/results/ablation-cpu/): its arms are on the plateau


def recipe(tokenizer: Path, quick: bool, budget: int = PLATEAU_BUDGET):
    """The ablation config: everything the comparison holds equal across the two vocabularies."""
    from biotok_train.config import AblationConfig
    from biotok_train.config import FinetuneConfig, OptimConfig

    past = budget != PLATEAU_BUDGET and not quick  # the run at a budget that plateau_fr.py found (its seed-0 models reused)
    return AblationConfig(
        tokenizers=(str(CAMEMBERTA), str(tokenizer)), corpus=(str(PAMJ),), field_name="text", tasks=("e3c",),
        data_dir=str(DATA / "corpora"), sizes=("tiny",), budget=20 if quick else budget, batch_size=8, seq_len=128,
        lr=2e-3, pretrain_seeds=(0,) if past else (0, 1), seeds=(0, 1, 2) if past else (0, 1),
        finetune=FinetuneConfig(epochs=1 if quick else 10, optim=OptimConfig(lr=5e-4), max_train_sentences=40 if quick else 0),
        n_words=100 if quick else 1000,
        probe=400 if past else 0,  # past the plateau: does the causal-LM probe rank as the MLM does?
    )


def workdir(budget: int, quick: bool) -> Path:
    """The ablation's work folder for ``budget`` (benchmarks/experiments/plateau_fr.py trains its seed-0 models there)."""
    return CACHE / ("ablation_cpu_quick" if quick else "ablation_cpu" + suffix(budget))


def suffix(budget: int) -> str:
    """What a budget adds to the names of the work folder and the published one (ablation-cpu-BUDGET)."""
    return "" if budget == PLATEAU_BUDGET else f"-{budget}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few steps, results kept in benchmarks/.data only")
    ap.add_argument("--budget", type=int, default=PLATEAU_BUDGET,
                    help=f"MLM steps per arm ({PLATEAU_BUDGET}: the first published run; benchmarks/experiments/plateau_fr.py finds one that leaves "
                         "the unigram plateau); another budget publishes to docs/results/ablation-cpu-BUDGET/")
    args = ap.parse_args()
    require_data()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    work = workdir(args.budget, args.quick)
    tok = work / "Unigram_L-8k"
    more = suffix(args.budget)
    run_published_ablation(recipe(tok, args.quick, args.budget), work, tok, f"ablation-cpu{more}",
                           "CPU ablation: a biotok Unigram_L vocabulary vs CamemBERTa",
                           __doc__, args.quick, script=f"ablation_cpu{' --budget ' + str(args.budget) if more else ''}")


if __name__ == "__main__":
    main()
