"""The committed CPU ablation (docs/results/ablation-cpu/): a biotok Unigram_L vocabulary vs CamemBERTa's.

    python -m benchmarks.experiments.ablation_cpu            # about 75 min on 2 cores; rewrites docs/results/ablation-cpu/
    python -m benchmarks.experiments.ablation_cpu --quick    # a few steps into benchmarks/.data/ only (checks that it runs)

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

import argparse
import logging
import sys

from benchmarks._common import (PLATEAU_BUDGET, ablation_cpu_recipe as recipe, ablation_cpu_suffix as suffix,
                                ablation_cpu_workdir as workdir, require_data, run_published_ablation)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few steps, results kept in benchmarks/.data only")
    ap.add_argument("--budget", type=int, default=PLATEAU_BUDGET,
                    help=f"MLM steps per arm ({PLATEAU_BUDGET}: the first published run; benchmarks/experiments/plateau_fr.py finds one that leaves "
                         "the unigram plateau); another budget publishes to docs/results/ablation-cpu-BUDGET/ with the "
                         "held-out curve every 2,000 steps")
    args = ap.parse_args()
    require_data()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    work = workdir(args.budget, args.quick)
    tok = work / "Unigram_L-8k"
    more = suffix(args.budget)
    run_published_ablation(recipe(tok, args.quick, args.budget), work, tok, f"ablation-cpu{more}",
                           "CPU ablation: a biotok Unigram_L vocabulary vs CamemBERTa",
                           __doc__, args.quick, script=f"ablation_cpu{' --budget ' + str(args.budget) if more else ''}",
                           force=True)


if __name__ == "__main__":
    main()
