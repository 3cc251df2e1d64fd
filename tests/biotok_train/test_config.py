"""biotok_train's public face: lazy verbs, configs as the single source, one optimizer policy."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import click
import pytest

from biotok.errors import ConfigError
from biotok_train.config import FinetuneConfig, OptimConfig, PrepareConfig, PretrainConfig


def test_import_is_cheap_and_verbs_are_there():
    code = ("import sys, biotok_train, biotok_train.cli, biotok_train.pretrain, biotok_train.finetune;"
            "names = ['prepare', 'bench', 'eval_mlm', 'fill_mask', 'run_ablation', 'transfer_to', 'PretrainConfig',"
            " 'FinetuneConfig', 'AblationConfig', 'PrepareConfig', 'BenchConfig', 'TransferConfig', 'OptimConfig'];"
            "assert all(callable(getattr(biotok_train, n)) for n in names), names;"
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_a_verb_named_like_its_package_is_imported_from_it():
    import biotok_train
    import biotok_train.pretrain.loop as loop
    from biotok_train.finetune import finetune
    from biotok_train.pretrain import pretrain

    assert pretrain is loop.pretrain and finetune.__module__ == "biotok_train.finetune"
    assert not callable(biotok_train.pretrain) and not callable(biotok_train.finetune)  # plain packages


def test_electra_base_learning_rate_lives_in_the_config():
    assert PretrainConfig(objective="electra", size="base").optim.lr == 2e-4
    assert PretrainConfig(objective="electra", size="small").optim.lr == 5e-4
    assert PretrainConfig(objective="mlm", size="base").optim.lr == 5e-4
    assert PretrainConfig(objective="electra", size="base", optim=OptimConfig(lr=1e-3)).optim.lr == 1e-3
    assert PretrainConfig(optim=OptimConfig(name="lamb")).optim == OptimConfig(name="lamb", lr=5e-4, warmup=0.06)


def test_optimizer_settings_are_nested_not_copied():
    for cls in (PretrainConfig, FinetuneConfig):
        names = {f.name for f in dataclasses.fields(cls)}
        assert "optim" in names and not names & {"lr", "warmup", "weight_decay", "schedule", "layer_decay", "betas"}
    ft = FinetuneConfig(optim=OptimConfig(lr=3e-5))
    assert ft.optim == OptimConfig(lr=3e-5, warmup=0.1)  # the fine-tuning warm-up fills what is left None
    assert FinetuneConfig.from_options(lr=3e-5, epochs=2) == dataclasses.replace(ft, epochs=2)
    assert ft.with_lr(1e-4).optim.lr == 1e-4 and ft.option("lr") == 3e-5 and ft.option("epochs") == 3


def test_a_config_saved_flat_before_nesting_still_reads():
    old_pretrain = {"objective": "mlm", "size": "tiny", "optim": "lamb", "lr": 1e-3, "warmup": 0.1, "schedule": "cosine",
                    "weight_decay": 0.0, "max_grad_norm": 0.5, "adam_eps": 1e-8, "betas": [0.9, 0.98], "steps": 20}
    cfg = PretrainConfig.from_dict(old_pretrain)
    assert cfg.optim == OptimConfig(name="lamb", lr=1e-3, warmup=0.1, schedule="cosine", weight_decay=0.0,
                                    max_grad_norm=0.5, eps=1e-8, betas=(0.9, 0.98)) and cfg.steps == 20
    assert PretrainConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg  # today's shape round-trips
    ft = FinetuneConfig.from_dict({"epochs": 10, "lr": 5e-4, "warmup": 0.1, "weight_decay": 0.01, "layer_decay": 1.0})
    assert ft.optim.lr == 5e-4 and ft.epochs == 10  # an ablation's saved recipe: tests/biotok_train/ablate/test_config.py


@pytest.mark.parametrize("cls,kwargs,needle", [
    (PretrainConfig, {"optim": {"name": "sgd"}}, "optimizer"),
    (PretrainConfig, {"optim": "adamw"}, "optim must be an OptimConfig"),
    (OptimConfig, {"schedule": "step"}, "schedule"),
    (PretrainConfig, {"steps": 0}, "--steps"),
    (FinetuneConfig, {"epochs": 0}, "--epochs"),
    (OptimConfig, {"lr": 0.0}, "--lr"),
    (FinetuneConfig, {"max_length": 4}, "--max-length"),
    (OptimConfig, {"name": "sgd"}, "optimizer"),
])
def test_configs_validate_with_config_errors(cls, kwargs, needle):
    with pytest.raises(ConfigError, match=needle):
        cls(**kwargs)


def test_cli_defaults_are_the_dataclass_defaults():
    from biotok_train.ablate.config import AblationConfig, Statistics
    from biotok_train.cli import main

    def defaults(cmd: str) -> dict:
        return {p.name: p.default for p in main.commands[cmd].params if isinstance(p, click.Option)}

    mlm, pretrain = defaults("mlm"), PretrainConfig()
    for name in ("size", "steps", "batch_size", "grad_accum", "mask_prob", "seed", "log_every", "save_every", "bf16"):
        assert mlm[name] == getattr(pretrain, name), name
    assert (mlm["optim"], mlm["warmup"], mlm["schedule"], mlm["weight_decay"]) == (
        pretrain.optim.name, pretrain.optim.warmup, pretrain.optim.schedule, pretrain.optim.weight_decay)
    assert mlm["lr"] is None and OptimConfig().lr is None  # the run's default: 5e-4, ELECTRA-base 2e-4
    prepare = defaults("prepare")
    for name in ("seq_len", "field_name", "sample_alpha", "copies", "seed"):
        assert prepare[name] == getattr(PrepareConfig(), name), name
    ner = defaults("ner")
    for name in ("epochs", "lr", "seed", "batch_size", "max_steps", "max_length", "patience"):
        assert ner[name] == FinetuneConfig().option(name), name
    ab = defaults("ablate")
    assert (ab["budget"], ab["ft_epochs"], ab["ft_lr"]) == (200, FinetuneConfig().epochs, FinetuneConfig().optim.lr)
    assert (ab["sizes"], ab["n_resamples"]) == (("tiny",), Statistics.n_resamples)
    # --task has no click default (--task-type alone must not add e3c): the config's default, said in its help
    task = next(p for p in main.commands["ablate"].params if p.name == "tasks")
    assert f"[default: {', '.join(AblationConfig.tasks)}, unless --task-type]" in task.help
    assert AblationConfig(tokenizers=("a",), corpus=("c",)).finetuning.recipe == FinetuneConfig()


def test_finetuning_uses_the_pretraining_weight_decay_rule():
    pytest.importorskip("torch")
    from transformers import BertConfig, BertForSequenceClassification

    from biotok_train.optim import build

    model = BertForSequenceClassification(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                                                     num_attention_heads=2, intermediate_size=32, num_labels=3))
    optimizer, scheduler = build(model, FinetuneConfig().optim, total=10)
    names = {id(p): n for n, p in model.named_parameters()}
    decayed, plain = optimizer.param_groups
    assert decayed["weight_decay"] == 0.01 and plain["weight_decay"] == 0.0
    assert all("LayerNorm" not in names[id(p)] and not names[id(p)].endswith("bias") for p in decayed["params"])
    assert {names[id(p)] for p in plain["params"]} >= {"classifier.bias", "bert.embeddings.LayerNorm.weight"}
    assert scheduler.get_last_lr()[0] == pytest.approx(5e-5 / 1)  # warm-up 10 % of 10 steps = 1 step


def test_dataset_registry_names_the_task():
    import biotok_train
    from biotok_train import tasks
    from biotok_train.finetune import HEADS, make_head

    assert biotok_train.load_dataset is tasks.load  # one door, two names
    assert tasks.task_type("frenchmedmcqa-nbr") == "classify" and tasks.task_type("quaero") == "ner"
    assert tasks.task_type("chemprot") == "relation" and tasks.task_type("some/bio/folder") == "ner"
    assert all(spec.task_type in HEADS for spec in tasks.TASKS.values())
    assert make_head("ner").metric == "micro_f1" and make_head("classify").metric == "accuracy"
    assert make_head("ner", spec=tasks.get_task("ncbi-disease")).metric == "entity_f1"
    with pytest.raises(ConfigError, match="unknown task type"):
        make_head("translation")
