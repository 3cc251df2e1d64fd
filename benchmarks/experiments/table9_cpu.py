"""PubMedBERT's Table 9 for French on CPU (docs/results/table9-cpu/): scratch, continual or transfer?

    python -m benchmarks.experiments.table9_cpu            # about 25 min on 2 cores, with the base; rewrites docs/results/table9-cpu/
    python -m benchmarks.experiments.table9_cpu --quick    # a few steps into benchmarks/.data/ only (checks that it runs)

Phases: (1) a "general" BERT-tiny pretrained on the French WMT biomedical abstracts with
CamemBERTa's vocabulary (no Hub here, so biotok builds the base); (2) the ablation's own split of
the E3C PAMJ clinical cases and a biotok Unigram_L vocabulary (8,000 pieces, lowercased) trained
on its pretraining part; (3) ``biotok-train ablate --base GENERAL --arms scratch,continual,transfer``:
the general model continued with its own vocabulary, moved to Unigram_L (fvt) and continued, and
its architecture from random weights with Unigram_L, all on the same token budget, with E3C NER
(2 fine-tuning seeds, random-init floors) and masked-word accuracy; (4) the report copied into
docs/results/table9-cpu/. Work files live in benchmarks/.data/table9_cpu/ (resumable).
"""

from __future__ import annotations

from pathlib import Path

import benchmarks._common as C
from benchmarks._common import published_ablation_main
from benchmarks.corpora import CORPORA, PAMJ


def recipe(base: Path, tokenizer: Path, quick: bool):
    """Everything the three arms hold equal."""
    from biotok_train.ablate.config import AblationConfig, Base, Finetuning, Pretraining
    from biotok_train.config import FinetuneConfig, OptimConfig

    cfg = AblationConfig(
        tokenizers=(str(tokenizer),), corpus=(str(PAMJ),), field_name="text", tasks=("e3c",), data_dir=str(CORPORA),
        arms=("scratch", "continual", "transfer"), base=Base(str(base)),
        pretraining=Pretraining(budget=1000, batch_size=8, seq_len=128, lr=2e-3),
        finetuning=Finetuning(FinetuneConfig(epochs=10, optim=OptimConfig(lr=5e-4)), seeds=(0, 1)))
    return C.quick_variant(cfg, budget=10, n_words=100) if quick else cfg


def general_model(work: Path, quick: bool) -> Path:
    """BERT-tiny pretrained on general-ish French biomedical abstracts with CamemBERTa's vocabulary."""
    from biotok_train.config import OptimConfig, PretrainConfig

    return C.general_model(work / "general", work / "data-general", PretrainConfig(
        size="tiny", steps=10 if quick else 3000, batch_size=8, seed=0, optim=OptimConfig(lr=2e-3)))


def main() -> None:
    published_ablation_main(__doc__, "table9-cpu", "PubMedBERT's Table 9 for French on CPU: scratch, continual or "
                            "transfer", "table9_cpu", lambda work, args: general_model(work, args.quick), recipe)


if __name__ == "__main__":
    main()
