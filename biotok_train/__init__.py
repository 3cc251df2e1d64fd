"""biotok_train: pretrain (BERT MLM/WWM, ALBERT SOP, ELECTRA RTD), fine-tune and evaluate models
on any biotok vocabulary. Needs the ``[train]`` extra (torch, transformers, seqeval).

The verbs a notebook needs, each with its config (imported on first use, so ``import
biotok_train`` stays cheap)::

    from biotok_train import prepare, pretrain, PretrainConfig, finetune, FinetuneConfig, evaluate, bench, BenchConfig
    data = prepare(["corpus.txt"], "tok/", 128, "data/")
    run = pretrain(data.path, PretrainConfig(size="tiny", steps=300), "runs/bert-tiny")
    res = finetune(run.out, "quaero-medline", FinetuneConfig(epochs=3))   # NER, or any registered task
    suite = bench(run.out, BenchConfig(suite="fr", seeds=(0, 1)), "bench/fr")  # tasks + one suite score
    acc = evaluate(run.out, ["heldout.txt"], n_words=1000)              # masked-word accuracy top-1/3/5
    moved = transfer("general-model/", "tok-clinical/", "general-fvt/", TransferConfig("fvt"))  # new vocabulary
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> (module, attribute); attribute None: the module itself, callable as its verb
# (pretrain, finetune, evaluate, ablate and transfer are packages or modules too: see biotok_train._verbs)
_VERBS: dict[str, tuple[str, str | None]] = {
    "prepare": ("biotok_train.pretrain.prepare", "prepare"),
    "pretrain": ("biotok_train.pretrain", None),
    "finetune": ("biotok_train.finetune", None),
    "evaluate": ("biotok_train.evaluate", None),
    "ablate": ("biotok_train.ablate", None),
    "transfer": ("biotok_train.transfer", None),
    "bench": ("biotok_train.evaluate.bench", "run_bench"),
    "fill_mask": ("biotok_train.evaluate.fillmask", "fill_mask"),
    "cloze_accuracy": ("biotok_train.evaluate.fillmask", "cloze_accuracy"),
    "load_dataset": ("biotok_train.datasets.tasks", "load"),
    "load_mlm": ("biotok_train.hf_models", "load_mlm"),
    "PretrainConfig": ("biotok_train.config", "PretrainConfig"),
    "FinetuneConfig": ("biotok_train.config", "FinetuneConfig"),
    "OptimConfig": ("biotok_train.config", "OptimConfig"),
    "AblationConfig": ("biotok_train.ablate", "AblationConfig"),
    "TransferConfig": ("biotok_train.transfer", "TransferConfig"),
    "BenchConfig": ("biotok_train.evaluate.bench", "BenchConfig"),
}

__all__ = sorted(_VERBS)


def __getattr__(name: str) -> Any:
    if name not in _VERBS:
        raise AttributeError(f"module 'biotok_train' has no attribute {name!r}")
    module, attr = _VERBS[name]
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
        globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_VERBS])
