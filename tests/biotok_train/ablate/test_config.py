"""ablate.config: the ablation's groups check themselves, the cross-group checks stay in AblationConfig, the flat
recipe (saved in OUT/config.json, compared on resume, part of content keys) is byte for byte what it was before the
groups, and a dry run swaps a group."""

from __future__ import annotations

import dataclasses
import json

import pytest

from biotok.errors import ConfigError
from biotok_train.ablate.command import command_line
from biotok_train.ablate.config import (FLAT, GROUPS, AblationConfig, Base, Curve, EngineConfig, Finetuning,
                                        Pretraining, Statistics, check_precision, split_address)
from biotok_train.config import FinetuneConfig, OptimConfig

_FT = ('{"epochs": %d, "optim": {"name": "adamw", "lr": %s, "weight_decay": 0.01, "warmup": 0.1, "schedule": "linear", '
       '"betas": [0.9, 0.999], "eps": 1e-06, "max_grad_norm": 1.0, "layer_decay": 1.0}, "seed": 0, "batch_size": %d, '
       '"max_steps": 0, "max_length": 256, "patience": 2, "max_train_sentences": 0, "max_eval_examples": 0, '
       '"scheme": "bio", "relation_input": "mask", "lr_grid": [], "train_fraction": 1.0, "threshold": null, '
       '"threshold_grid": [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, '
       '0.85, 0.9, 0.95], "threads": 0, "report_to": "auto", "bf16": true}')
# json.dumps(AblationConfig(...).recipe()) of the flat AblationConfig, before the groups (main at 8784e4f)
DEFAULT_RECIPE = ('{"corpus": [], "field_name": null, "tasks": ["e3c"], "data_dir": null, "sizes": ["tiny"], '
                  '"budget": 200, "batch_size": 32, "seq_len": 128, "lr": 0.0005, "pretrain_seeds": [0], "seeds": [0], '
                  '"finetune": ' + _FT % (3, "5e-05", 16) + ', "n_words": 1000, "heldout_every": 20, "floor": true, '
                  '"n_resamples": 1000, "confidence": 0.95, "arms": ["scratch"], "base": null, '
                  '"transfer_methods": ["fvt"], "curve": [], "curve_tasks": null}')
FULL_RECIPE = ('{"corpus": ["c1", "c2"], "field_name": "body", "tasks": ["e3c", "quaero"], "data_dir": "dd", '
               '"sizes": ["as-base"], "budget": 300, "batch_size": 16, "seq_len": 64, "lr": 0.0001, '
               '"pretrain_seeds": [0, 1], "seeds": [2, 3], "finetune": ' + _FT % (2, "3e-05", 8) + ', "n_words": 50, '
               '"heldout_every": 10, "floor": false, "n_resamples": 200, "confidence": 0.9, '
               '"arms": ["continual", "transfer", "extend", "scratch"], "base": "BASE", '
               '"transfer_methods": ["fvt", "random"], "extend_add": 100, "curve": [100, 200], "curve_tasks": ["quaero"]}')
FULL_COMMAND = ("biotok-train ablate --tokenizers a b --corpus c1 c2 --field body --task e3c quaero --data-dir dd "
                "--base BASE --arms continual,transfer,extend,scratch --transfer-methods fvt,random --extend-add 100 "
                "--budget 300 --curve 100,200 --curve-tasks quaero --batch-size 16 --seq-len 64 --lr 0.0001 "
                "--pretrain-seeds 0 1 --seeds 2 3 --ft-epochs 2 --ft-lr 3e-05 --ft-batch-size 8 --n-words 50 "
                "--heldout-every 10 --n-resamples 200 --confidence 0.9 --no-floor --pairs all --probe 5 --out OUT")
FULL_FLAT = dict(tokenizers=("a", "b"), corpus=("c1", "c2"), field_name="body", tasks=("e3c", "quaero"), data_dir="dd",
                 sizes=("as-base",), budget=300, batch_size=16, seq_len=64, lr=1e-4, pretrain_seeds=(0, 1), seeds=(2, 3),
                 finetune=FinetuneConfig(epochs=2, batch_size=8, optim=OptimConfig(lr=3e-5)), n_words=50,
                 heldout_every=10, floor=False, n_resamples=200, confidence=0.9,
                 arms=("continual", "transfer", "extend", "scratch"), base="BASE", transfer_methods=("fvt", "random"),
                 extend_add=100, curve=(200, 100), curve_tasks=("quaero",), probe=5, pairs="all")


def _full() -> AblationConfig:
    return AblationConfig(
        tokenizers=("a", "b"), corpus=("c1", "c2"), field_name="body", tasks=("e3c", "quaero"), data_dir="dd",
        sizes=("as-base",), arms=("continual", "transfer", "extend", "scratch"), probe=5,
        pretraining=Pretraining(budget=300, batch_size=16, seq_len=64, lr=1e-4, seeds=(0, 1)),
        finetuning=Finetuning(FinetuneConfig(epochs=2, batch_size=8, optim=OptimConfig(lr=3e-5)), seeds=(2, 3)),
        curve=Curve(steps=(200, 100), tasks=("quaero",)), base=Base("BASE", ("fvt", "random"), extend_add=100),
        statistics=Statistics(n_words=50, heldout_every=10, floor=False, n_resamples=200, confidence=0.9, pairs="all"))


def test_the_flat_recipe_is_byte_for_byte_the_one_before_the_groups():
    assert json.dumps(AblationConfig(tokenizers=("x",), corpus=()).recipe()) == DEFAULT_RECIPE
    assert json.dumps(_full().recipe()) == FULL_RECIPE
    assert command_line(_full()) == FULL_COMMAND
    assert list(_full().settings()) == [k for k in json.loads(FULL_RECIPE) if k not in ("corpus", "base", "data_dir")]


@pytest.mark.parametrize("cfg", [AblationConfig(tokenizers=("x",), corpus=()), _full()])
def test_flat_and_groups_are_one_table_both_ways(cfg):
    assert AblationConfig.from_flat(**cfg.flat()) == cfg
    assert list(cfg.flat()) == list(FLAT)
    assert AblationConfig.from_flat(**FULL_FLAT) == _full()
    for name in FLAT:  # each flat name reads one field, and its default is that field's
        if name not in ("tokenizers", "corpus"):
            assert AblationConfig.flat_default(name) == AblationConfig(("x",), ()).flat()[name]
    # every field of every group has one flat name
    assert {(g, f.name) for g, cls in GROUPS.items() for f in dataclasses.fields(cls)} <= set(FLAT.values())
    with pytest.raises(TypeError, match="budgett"):
        AblationConfig.from_flat(tokenizers=("x",), corpus=(), budgett=3)


def test_a_dry_run_swaps_a_group():
    quick = Pretraining(budget=4, batch_size=2, seq_len=16)
    cfg = dataclasses.replace(_full(), pretraining=quick, curve=Curve(steps=(2,)))
    assert cfg.tokens_per_arm == 4 * 2 * 16 and cfg.pretrain_config("tiny", 0).steps == 4
    assert cfg.finetune_config(1).max_length == 32 and cfg.finetune_config(1).seed == 1
    changed = {k for k, v in cfg.recipe().items() if v != _full().recipe()[k]}
    assert changed == {"budget", "batch_size", "seq_len", "lr", "pretrain_seeds", "curve", "curve_tasks"}
    with pytest.raises(ConfigError, match="--curve 100,200: each step must be between 0 and --budget 4"):
        dataclasses.replace(_full(), pretraining=quick)  # the cross-group checks run on the swapped config too


@pytest.mark.parametrize("make, message", [
    (lambda: Pretraining(budget=0), "--budget must be at least 1"),
    (lambda: Pretraining(batch_size=0), "--batch-size must be at least 1"),
    (lambda: Pretraining(seq_len=4), "--seq-len must be at least 8"),
    (lambda: Pretraining(lr=0.0), "--lr must be positive"),
    (lambda: Pretraining(lr=float("inf")), "--lr must be a finite number"),
    (lambda: Pretraining(seeds=()), "ablate needs at least one of --pretrain-seeds"),
    (lambda: Pretraining(seeds=(1, 1)), "--pretrain-seeds lists a value twice"),
    (lambda: Pretraining(seeds=(-1,)), "--pretrain-seeds -1 is out of range"),
    (lambda: Finetuning(seeds=()), "ablate needs at least one of --seeds"),
    (lambda: Finetuning(seeds=(0, 0)), "--seeds lists a value twice"),
    (lambda: Finetuning(seeds=(2**33,)), "--seeds 8589934592 is out of range"),
    (lambda: Curve(steps=(2**70,)), "--curve 1180591620717411303424 is out of range"),
    (lambda: Base(extend_add=0), "--extend-add 0: the extend arm adds at least 1 piece"),
    (lambda: Base(transfer_methods=("fvt", "fvt")), "--transfer-methods fvt,fvt: choose one or more of fvt, random"),
    (lambda: Base(transfer_methods=()), "--transfer-methods : choose one or more"),
    (lambda: Statistics(heldout_every=1), "heldout_every must be >= 2"),
    (lambda: Statistics(n_words=0), "--n-words must be at least 1"),
    (lambda: Statistics(n_resamples=99), "--n-resamples must be at least 100"),
    (lambda: Statistics(confidence=0.5), r"--confidence must be in \(0.5, 1\)"),
    (lambda: Statistics(pairs="some"), "--pairs 'some': one of reference, all"),
])
def test_each_group_checks_itself(make, message):
    with pytest.raises(ConfigError, match=message):
        make()


def _ab(**kw) -> AblationConfig:
    return AblationConfig(tokenizers=kw.pop("tokenizers", ("a",)), corpus=("c",), **kw)


@pytest.mark.parametrize("kw, message", [
    (dict(sizes=("huge",)), "unknown size 'huge'"),
    (dict(sizes=("tiny", "tiny")), "--sizes lists a value twice"),
    (dict(sizes=()), "ablate needs at least one of --sizes"),
    (dict(tasks=()), "ablate needs at least one of --tasks"),
    (dict(tasks=("e3c", "e3c")), "--tasks lists a value twice"),
    (dict(tokenizers=()), "ablate needs at least one of --tokenizers"),
    (dict(arms=("scratch", "scratch")), "--arms scratch,scratch: choose one or more of"),
    (dict(arms=("transfer",)), "--arms general, continual, transfer and extend start from a model"),
    (dict(base=Base("m"), sizes=("small",)), "--sizes does not apply with --base"),
    (dict(curve=Curve(steps=(200,))), "--curve 200: each step must be between 0 and --budget 200"),
    (dict(curve=Curve(steps=(5,), tasks=("quaero",))), "--curve-tasks quaero: each must be one of the --task values"),
    (dict(curve=Curve(steps=(5,), tasks=("e3c", "e3c"))), "--curve-tasks e3c,e3c"),
    (dict(probe=-1), r"--probe must be >= 0 \(0: no probe\)"),
    (dict(pretraining={"budget": 3}), "pretraining must be a Pretraining"),
])
def test_cross_group_checks_stay_in_the_ablation_config(kw, message):
    with pytest.raises(ConfigError, match=message):
        _ab(**kw)


def test_the_config_normalizes_as_before():
    with_base = _ab(base=Base("m"), arms=("continual", "scratch"))
    assert with_base.sizes == ("as-base",) and with_base.curve == Curve()
    first = _ab(tasks=("e3c", "quaero"), curve=Curve(steps=(9, 5, 9), tasks=["e3c"]))
    assert first.curve == Curve(steps=(5, 9)) and first.curve_task_list == ("e3c",)  # the first task is the default
    assert _ab(tasks=("e3c", "quaero"), curve=Curve(steps=(5,), tasks=())).curve_task_list == ()
    assert _ab(curve=Curve(tasks=("e3c",))).curve_task_list == ()  # no curve, no curve tasks
    assert _ab().finetuning.recipe == FinetuneConfig() and _ab(tasks=["e3c"]).tasks == ("e3c",)


def test_a_config_spells_its_command():
    cfg = _ab(tokenizers=("a", "b"), tasks=("e3c", "quaero"), sizes=("tiny", "small"),
              finetuning=Finetuning(FinetuneConfig(epochs=5), seeds=(0, 1)), statistics=Statistics(floor=False))
    assert cfg.tokens_per_arm == 200 * 32 * 128
    cmd = command_line(cfg, "runs/ab")
    assert cmd.startswith("biotok-train ablate --tokenizers a b --corpus c --task e3c quaero --sizes tiny,small")
    assert "--seeds 0 1" in cmd and "--ft-epochs 5" in cmd and "--no-floor" in cmd and cmd.endswith("--out runs/ab")
    assert "tokenizers" not in cfg.recipe() and cfg.recipe()["sizes"] == ["tiny", "small"]


def test_a_recipe_saved_flat_before_the_optimizer_was_nested_still_reads():
    ft = FinetuneConfig.from_dict({"epochs": 10, "lr": 5e-4, "warmup": 0.1, "weight_decay": 0.01, "layer_decay": 1.0})
    new = _ab(finetuning=Finetuning(ft)).recipe()
    old = {**new, "finetune": {"epochs": 10, "lr": 5e-4, "warmup": 0.1, "weight_decay": 0.01, "layer_decay": 1.0}}
    assert AblationConfig.saved_recipe(old) == new  # an ablation saved flat resumes
    single = {k: v for k, v in new.items() if k != "transfer_methods"} | {"transfer_method": "fvt"}
    assert AblationConfig.saved_recipe(single) == {**new}  # one transfer method, before several


@pytest.mark.parametrize("kw, message", [
    (dict(engine="spark"), "unknown --engine 'spark'"),
    (dict(workers=2000), "--workers must be between 0 .one per CPU. and 1024"),
    (dict(engine="ray", gpus_per_job=1.5), "--gpus-per-job must be a share of one GPU"),
    (dict(engine="ray", pretrain_gpus=-1), "pretrain_gpus must be a share of one GPU"),
    (dict(address="h:1"), "--address needs --engine ray"),
    (dict(engine="ray", address="h"), "--address must read HOST:PORT"),
    (dict(gpus_per_job=0.5), "--gpus-per-job needs --engine ray or processes"),
    (dict(only=("",)), "--only takes job-key patterns"),
    (dict(compile="sometimes"), "unknown --compile 'sometimes'"),
])
def test_the_engine_config_checks_itself(kw, message):
    with pytest.raises(ConfigError, match=message):
        EngineConfig(**kw)


def test_engine_helpers():
    assert EngineConfig(compile=True).compile == "on" and EngineConfig(compile=None).compile == "auto"
    assert split_address("ray://head:6379") == ("head", 6379) and split_address("auto") == ("auto", 0)
    assert check_precision("cuda:bf16") == "cuda:bf16" and check_precision(None) is None
    with pytest.raises(ConfigError, match="--precision must read DEVICE:bf16"):
        check_precision("bf16")
