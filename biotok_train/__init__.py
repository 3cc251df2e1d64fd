"""biotok_train: pretrain (BERT MLM/WWM, ALBERT SOP, ELECTRA RTD), fine-tune and evaluate models
on any biotok vocabulary. Needs the ``[train]`` extra (torch, transformers, seqeval).

The verbs a notebook needs, each with its config (imported on first use, so ``import
biotok_train`` stays cheap)::

    from biotok_train import prepare, PrepareConfig, PretrainConfig, FinetuneConfig, bench, BenchConfig
    from biotok_train import eval_mlm, transfer_to, TransferConfig, run_probe, ProbeConfig
    from biotok_train.pretrain import pretrain
    from biotok_train.finetune import finetune
    data = prepare(["corpus.txt"], "tok/", PrepareConfig(seq_len=128), "data/")
    run = pretrain(data.path, PretrainConfig(size="tiny", steps=300), "runs/bert-tiny")
    res = finetune(run.out, "quaero-medline", FinetuneConfig(epochs=3))   # NER, or any registered task
    suite = bench(run.out, BenchConfig(suite="fr", seeds=(0, 1)), "bench/fr")  # tasks + one suite score
    acc = eval_mlm(run.out, ["heldout.txt"], n_words=1000)              # masked-word accuracy top-1/3/5
    moved = transfer_to("general-model/", "tok-clinical/", "general-fvt/", TransferConfig("fvt"))  # new vocabulary
    probe = run_probe(ProbeConfig(tokenizers=("tokA/", "tokB/"), corpus=("train.txt",),
                                  heldout=("heldout.txt",)), "probe/")      # causal-LM bits per character

``pretrain`` and ``finetune`` share their names with the packages that hold them, so they are
imported from there (``biotok_train.pretrain.pretrain``, ``biotok_train.finetune.finetune``);
every other verb and every config is also a name of this package.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> (module, attribute), imported on first use
_VERBS: dict[str, tuple[str, str]] = {
    "prepare": ("biotok_train.pretrain.prepare", "prepare"),
    "bench": ("biotok_train.finetune.bench", "run_bench"),
    "eval_mlm": ("biotok_train.evaluate.masked_words", "eval_mlm"),
    "run_ablation": ("biotok_train.ablate.run", "run_ablation"),
    "run_probe": ("biotok_train.probe.run", "run_probe"),
    "transfer_to": ("biotok_train.transfer", "transfer_to"),
    "fill_mask": ("biotok_train.evaluate.fillmask", "fill_mask"),
    "cloze_accuracy": ("biotok_train.evaluate.fillmask", "cloze_accuracy"),
    "load_dataset": ("biotok_train.tasks", "load"),
    "load_mlm": ("biotok_train.hf_models", "load_mlm"),
    **{name: ("biotok_train.config", name) for name in (
        "BenchConfig", "FinetuneConfig", "OptimConfig", "PrepareConfig", "PretrainConfig", "ProbeConfig",
        "TransferConfig")},
    "AblationConfig": ("biotok_train.ablate.config", "AblationConfig"),
}

__all__ = sorted(_VERBS)


def __getattr__(name: str) -> Any:
    if name not in _VERBS:
        raise AttributeError(f"module 'biotok_train' has no attribute {name!r}")
    module, attr = _VERBS[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_VERBS])
