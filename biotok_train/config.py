"""The configuration dataclasses of biotok_train: the single source of every option and default.

Each config validates itself in ``__post_init__`` (raising :class:`~biotok.errors.ConfigError`),
and the command line reads its defaults from the fields here
(:func:`biotok.cli.options.default_of`), so an option is declared once. This module imports
neither torch nor transformers: ``biotok-train --help`` and
``import biotok_train`` stay fast.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass

from biotok.config import SEED_MAX, check_numbers
from biotok.errors import ConfigError

# Model shapes by architecture and size: layers, hidden, heads, intermediate, embedding (None = hidden).
Shape = tuple[int, int, int, int, int | None]
SIZES: dict[str, dict[str, Shape]] = {
    "bert": {
        "tiny": (2, 128, 2, 512, None),
        "small": (4, 512, 8, 2048, None),  # BERT-small (Turc et al. 2019)
        "base": (12, 768, 12, 3072, None),  # BERT-base
    },
    "albert": {  # factorized embedding 128, one shared layer group (ALBERT / BioALBERT)
        "tiny": (2, 128, 2, 512, 128),
        "small": (6, 512, 8, 2048, 128),
        "base": (12, 768, 12, 3072, 128),  # ALBERT-base
    },
    "electra": {  # the discriminator; the generator is 1/3 of its hidden size
        "tiny": (2, 128, 2, 512, 128),
        "small": (12, 256, 4, 1024, 128),  # ELECTRA-small
        "base": (12, 768, 12, 3072, 768),  # ELECTRA-base
    },
}
OPTIMIZERS = ("adamw", "lamb")
COMPILE = ("auto", "on", "off")  # PretrainConfig.compile: auto = on for CUDA, off on CPU
# PretrainConfig.compile_mode; "auto": reduce-overhead (CUDA graphs) where they were measured to pay
# (a fresh BERT-small MLM on one CUDA device: +60-70 % tokens/s over eager on an H200), else default
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs", "auto")
SCHEDULES = ("linear", "cosine")
PAIRS = ("reference", "all")  # ProbeConfig.pairs, ablate.config.Statistics.pairs: each arm against the first, or every pair
THRESHOLD_GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))  # 0.05, 0.10, ..., 0.95: thresholds tried on dev


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(message)


def _at_least(config: object, names: tuple[str, ...], low: int) -> None:
    for name in names:
        _check(getattr(config, name) >= low, f"--{name.replace('_', '-')} must be at least {low}")


# The learning rate and warm-up of a run whose OptimConfig leaves them None (see OptimConfig.lr).
PRETRAIN_LR = 5e-4
ELECTRA_BASE_LR = 2e-4  # the ELECTRA paper's base learning rate
PRETRAIN_WARMUP = 0.06
FINETUNE_LR = 5e-5
FINETUNE_WARMUP = 0.1


@dataclass(frozen=True)
class OptimConfig:
    """The one optimizer + schedule policy of pretraining and fine-tuning (see :mod:`biotok_train.optim`),
    the ``optim`` field of :class:`PretrainConfig` and :class:`FinetuneConfig`.

    ``lr`` and ``warmup`` None: the default of the run this config belongs to (pretraining: lr
    5e-4, 2e-4 for ELECTRA-base, warm-up 0.06; fine-tuning: lr 5e-5, warm-up 0.1), filled in by
    that run's config. ``warmup`` below 1 is a fraction of the steps, otherwise a number of steps;
    biases and LayerNorm weights never get weight decay. ``layer_decay`` below 1: layer-wise
    learning-rate decay (ELECTRA, ELECTRAMed): layer ``l`` of ``L`` (embeddings 0, the head
    ``L + 1``) gets ``lr * layer_decay ** (L + 1 - l)``.
    """

    name: str = "adamw"  # "adamw" | "lamb"
    lr: float | None = None  # None: the run's default
    weight_decay: float = 0.01
    warmup: float | None = None  # < 1: fraction of steps, else steps; None: the run's default
    schedule: str = "linear"  # "linear" | "cosine"
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-6
    max_grad_norm: float = 1.0  # 0: no clipping
    layer_decay: float = 1.0  # 1: every layer gets lr

    def __post_init__(self) -> None:
        object.__setattr__(self, "betas", tuple(self.betas))  # a list when read back from JSON
        _check(self.name in OPTIMIZERS, f"unknown optimizer {self.name!r} (adamw or lamb)")
        _check(0 < self.layer_decay <= 1, "--layer-decay must be in (0, 1]")
        _check(self.schedule in SCHEDULES, f"unknown schedule {self.schedule!r} (linear or cosine)")
        _check(self.lr is None or self.lr > 0, "--lr must be positive")
        _check(self.eps >= 0 and len(self.betas) == 2 and all(0 <= b < 1 for b in self.betas),
               "invalid optimizer betas or eps")
        _check(self.weight_decay >= 0, "--weight-decay must be >= 0")
        _check(self.warmup is None or self.warmup >= 0, "--warmup must be >= 0")
        _check(self.max_grad_norm >= 0, "max_grad_norm must be >= 0")
        check_numbers(self)  # finite: --lr inf, --warmup nan...

    def with_defaults(self, lr: float, warmup: float) -> OptimConfig:
        """This policy with ``lr`` and ``warmup`` where it leaves them None."""
        return dataclasses.replace(self, lr=lr if self.lr is None else self.lr,
                                   warmup=warmup if self.warmup is None else self.warmup)


def _optim(value: OptimConfig | dict, lr: float, warmup: float) -> OptimConfig:
    """A run's ``optim`` field (an OptimConfig, or its dict from a saved config) with its defaults."""
    if isinstance(value, dict):
        value = OptimConfig(**value)
    _check(isinstance(value, OptimConfig), f"optim must be an OptimConfig, not {value!r}")
    return value.with_defaults(lr, warmup)


def _from_saved(cls, d: dict, renamed: dict[str, str]):
    """``cls`` from its saved dict (``dataclasses.asdict``), also from one saved before the
    optimizer fields were nested in ``optim``: those flat fields (``renamed``: old name -> OptimConfig
    field) move into ``optim``. Keys that are no field any more are dropped."""
    d = dict(d)
    if not isinstance(d.get("optim"), dict):  # the flat shape of biotok <= round 2
        d["optim"] = {new: d.pop(old) for old, new in renamed.items() if old in d}
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in d.items() if k in names})


_OPTIM_OPTIONS = frozenset(f.name for f in dataclasses.fields(OptimConfig)) - {"name"}


@dataclass(frozen=True)
class PretrainConfig:
    """Everything that defines a pretraining run (saved with the checkpoint).

    ``optim``: the optimizer and schedule; its lr left None is the paper default (2e-4 for
    ELECTRA-base, else 5e-4), its warm-up None 0.06. ``init_from``: continue the model of that
    directory (``arch`` and ``size`` then come from it) instead of a fresh one.
    """

    objective: str = "mlm"  # "mlm" | "electra"
    arch: str = "bert"  # "bert" | "albert" (ignored for electra)
    size: str = "tiny"  # "tiny" | "small" | "base"
    wwm: bool = False
    optim: OptimConfig = OptimConfig()
    steps: int = 1000
    batch_size: int = 32  # sequences per device per micro-batch
    batch_tokens: int = 0  # > 0: the micro-batch in tokens (batch_size = batch_tokens // the data's seq_len)
    grad_accum: int = 1
    seed: int = 0
    bf16: bool = True  # bf16 autocast where supported: CUDA, a CPU with amx_bf16/avx512_bf16 (biotok_train.precision)
    compile: str = "auto"  # "auto" (on for CUDA, off on CPU) | "on" | "off"; True/False read as on/off
    compile_mode: str = "default"  # torch.compile mode: reduce-overhead = CUDA graphs; auto: see COMPILE_MODES
    compile_backend: str = "inductor"  # torch.compile backend (aot_eager: graph capture without code generation)
    mask_prob: float = 0.15
    rtd_weight: float = 50.0
    generator_ratio: float = 1 / 3
    log_every: int = 10
    save_every: int = 0  # 0: only at the end (and on SIGINT or SIGTERM)
    peak_tflops: float | None = None
    device: str | None = None  # None: cuda when available, else cpu
    init_from: str | None = None  # a HF model directory to continue (its arch and size; see pretrain/init.py)
    heldout: str | None = None  # prepared held-out data (same tokenizer): [MASK] loss and top-1 vs floors
    report_to: str = "auto"  # "tensorboard" | "none" | "auto" (tensorboard when installed): OUT/tensorboard/

    def __post_init__(self) -> None:
        _check(self.objective in ("mlm", "electra"), f"unknown objective {self.objective!r} (mlm or electra)")
        arch = "electra" if self.objective == "electra" else self.arch
        _check(arch in SIZES, f"unknown architecture {self.arch!r} (bert or albert)")
        _check(self.size in SIZES[arch], f"unknown size {self.size!r} (choose {', '.join(SIZES[arch])})")
        _at_least(self, ("steps", "batch_size", "grad_accum", "log_every"), 1)
        _at_least(self, ("save_every", "batch_tokens"), 0)
        _check(0 < self.mask_prob < 1, "mask probability must be in (0, 1)")
        if isinstance(self.compile, bool) or self.compile is None:  # a saved config, or compile=True in Python
            object.__setattr__(self, "compile", {True: "on", False: "off", None: "auto"}[self.compile])
        _check(self.compile in COMPILE, f"unknown --compile {self.compile!r} (one of {', '.join(COMPILE)})")
        _check(self.compile_mode in COMPILE_MODES,
               f"unknown --compile-mode {self.compile_mode!r} (one of {', '.join(COMPILE_MODES)})")
        _check(self.compile_mode in ("default", "auto") or self.compile_backend == "inductor",
               f"--compile-mode {self.compile_mode} needs the inductor backend, not {self.compile_backend!r}")
        lr = ELECTRA_BASE_LR if self.objective == "electra" and self.size == "base" else PRETRAIN_LR
        object.__setattr__(self, "optim", _optim(self.optim, lr, PRETRAIN_WARMUP))
        check_numbers(self, {"seed": (0, SEED_MAX)})

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> PretrainConfig:
        """The config of a saved ``to_dict()`` (biotok_pretrain.json, state.pt), old flat shape included."""
        return _from_saved(cls, d, {"optim": "name", "lr": "lr", "warmup": "warmup", "schedule": "schedule",
                                    "weight_decay": "weight_decay", "max_grad_norm": "max_grad_norm",
                                    "adam_eps": "eps", "betas": "betas"})


SCHEMES = ("bio", "bioul", "io")
RELATION_INPUTS = ("mask", "markers")


@dataclass(frozen=True)
class FinetuneConfig:
    """The fine-tuning recipe of every task (NER, classification, ...); ``max_steps`` > 0 caps
    the optimizer steps (all epochs together). ``optim``: the optimizer and schedule
    (:class:`OptimConfig`; lr left None is 5e-5, warm-up None 0.1; AdamW, linear decay).

    Task options: ``scheme`` the NER tagging scheme the model learns (PubMedBERT Table 13);
    ``relation_input`` entities as BLURB's dummy masks or as marker tokens (Table 14);
    ``lr_grid`` several peak learning rates, one run each, the best dev score wins (PubMedBERT
    §2.5; empty: ``optim.lr`` alone); ``train_fraction`` the share of training examples used (few-shot
    curves); ``threshold`` the sigmoid threshold of multi-label and multiple-choice decisions
    (None: the task's: chosen on dev for MORFITT, else 0.5); ``threshold_grid`` the thresholds a
    task whose threshold is chosen on dev tries (each epoch's dev score is the best of them, and
    the best is applied to test); ``threads`` torch's CPU threads during the run
    (0: torch's default; on a loaded machine one thread per process measured 3-4x more work per
    CPU-second than two, so run several 1-thread processes rather than one many-thread one).
    """

    epochs: int = 3
    optim: OptimConfig = OptimConfig()  # lr None: 5e-5, warm-up None: 0.1 (AdamW, linear decay)
    seed: int = 0
    batch_size: int = 16
    max_steps: int = 0
    max_length: int = 256
    patience: int = 2
    max_train_sentences: int = 0  # > 0: use only the first N training examples (smoke tests)
    max_eval_examples: int = 0  # > 0: score on the first N dev and test examples only (smoke tests, dry runs)
    scheme: str = "bio"  # NER tags the model learns: "bio" | "bioul" | "io"
    relation_input: str = "mask"  # "mask" (BLURB's @GENE$ dummies) | "markers" ([E1] ... [/E1] tokens)
    lr_grid: tuple[float, ...] = ()  # peak lrs tried, the best on dev kept; empty: optim.lr alone
    train_fraction: float = 1.0  # share of the training examples used (fixed subset, seed 42)
    threshold: float | None = None  # multi-label / multiple-choice sigmoid threshold; None: the task's
    threshold_grid: tuple[float, ...] = THRESHOLD_GRID  # tried on dev where the task's threshold is chosen on dev
    threads: int = 0  # torch CPU threads (torch.set_num_threads) for the run; 0: torch's default
    report_to: str = "auto"  # "tensorboard" | "none" | "auto" (tensorboard when installed): OUT/tensorboard/
    bf16: bool = True  # bf16 autocast where supported: CUDA, a CPU with amx_bf16/avx512_bf16 (biotok_train.precision)

    def __post_init__(self) -> None:
        _at_least(self, ("epochs", "batch_size", "patience"), 1)
        _at_least(self, ("max_steps", "max_train_sentences", "max_eval_examples", "threads"), 0)
        _at_least(self, ("max_length",), 8)
        _check(self.scheme in SCHEMES, f"unknown --scheme {self.scheme!r} (one of {', '.join(SCHEMES)})")
        _check(self.relation_input in RELATION_INPUTS,
               f"unknown --relation-input {self.relation_input!r} (one of {', '.join(RELATION_INPUTS)})")
        object.__setattr__(self, "lr_grid", tuple(float(x) for x in self.lr_grid))
        _check(all(x > 0 for x in self.lr_grid), "--lr-grid values must be positive")
        _check(len(set(self.lr_grid)) == len(self.lr_grid), "--lr-grid lists a learning rate twice")
        _check(0 < self.train_fraction <= 1, "--train-fraction must be in (0, 1]")
        _check(self.threshold is None or 0 < self.threshold < 1, "--threshold must be in (0, 1)")
        object.__setattr__(self, "threshold_grid", tuple(float(x) for x in self.threshold_grid))
        _check(bool(self.threshold_grid) and all(0 < x < 1 for x in self.threshold_grid)
               and len(set(self.threshold_grid)) == len(self.threshold_grid),
               "--threshold-grid: one or more thresholds in (0, 1), each once")
        object.__setattr__(self, "optim", _optim(self.optim, FINETUNE_LR, FINETUNE_WARMUP))
        check_numbers(self, {"seed": (0, SEED_MAX)})

    def learning_rates(self) -> tuple[float, ...]:
        """The peak learning rates to try: ``lr_grid``, or ``optim.lr`` alone."""
        return self.lr_grid or (float(self.optim.lr),)  # type: ignore[arg-type]

    def with_lr(self, lr: float) -> FinetuneConfig:
        """This recipe at peak learning rate ``lr`` (one run of an ``lr_grid``)."""
        return dataclasses.replace(self, optim=dataclasses.replace(self.optim, lr=lr))

    @classmethod
    def from_options(cls, **values) -> FinetuneConfig:
        """The recipe of flat command-line values: ``lr``, ``warmup``, ``weight_decay``,
        ``layer_decay`` (any :class:`OptimConfig` field but its name) set ``optim``, the others
        are fields of their own."""
        optim = {k: values.pop(k) for k in list(values) if k in _OPTIM_OPTIONS}
        return cls(**values, optim=OptimConfig(**optim))

    def option(self, name: str):
        """The value of flat option ``name`` (the inverse of :meth:`from_options`)."""
        return getattr(self.optim if name in _OPTIM_OPTIONS else self, name)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> FinetuneConfig:
        """The config of a saved ``to_dict()`` (results.json, an ablation recipe), old flat shape included."""
        return _from_saved(cls, d, {"lr": "lr", "warmup": "warmup", "weight_decay": "weight_decay",
                                    "layer_decay": "layer_decay"})


# A probe is a small model: sizes beyond these ask the allocator for terabytes (--hidden 1048576)
PROBE_SIZES = {"layers": (1, 96), "hidden": (1, 16384), "heads": (1, 256), "batch_size": (1, 65536),
               "n_resamples": (1, 1_000_000)}


@dataclass(frozen=True)
class ProbeConfig:
    """A causal-LM probe of vocabularies (:mod:`biotok_train.probe`): one small GPT-2 per
    tokenizer, the same shape, training tokens and seeds, scored in bits per character of the
    held-out text.

    ``tokens`` > 0 sets the budget in training tokens per arm (``steps`` is then derived);
    ``fair``: every arm is trained and scored on the same text, lowercased and/or stripped of
    accents when one of the tokenizers discards that information; ``threads`` torch's CPU threads
    during training (0: torch's default). Not in the recipe: the thread count changes how the sums
    are split, so bits per character move in their last digits (<= 0.007 measured between 1 and 2
    threads) and a cached run is reused at any count; pin it for byte-identical output.
    """

    tokenizers: tuple[str, ...] = ()
    corpus: tuple[str, ...] = ()
    heldout: tuple[str, ...] = ()
    steps: int = 300
    tokens: int = 0  # > 0: training tokens per arm (overrides steps)
    seeds: tuple[int, ...] = (0,)
    batch_size: int = 16
    seq_len: int = 128
    layers: int = 2
    hidden: int = 128
    heads: int = 2
    lr: float = 1e-3
    warmup: float = 0.06
    fair: bool = False
    field_name: str | None = None  # JSON field of .jsonl inputs (default: text)
    n_resamples: int = 2000
    confidence: float = 0.95
    report_to: str = "auto"  # "tensorboard" | "none" | "auto": OUT/runs/ARM/seedS/tensorboard/ (not in the recipe)
    bf16: bool = True  # bf16 autocast where supported (biotok_train.precision); the recipe says so only when on
    threads: int = 0  # torch CPU threads (torch.set_num_threads) while training; 0: torch's default (not in the recipe)
    pairs: str = "reference"  # the report compares "reference" (each arm with the first) or "all" (every pair); not in the recipe

    def __post_init__(self) -> None:
        _check(self.pairs in PAIRS, f"--pairs {self.pairs!r}: one of {', '.join(PAIRS)}")
        for name in ("tokenizers", "corpus", "heldout", "seeds"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        _at_least(self, ("steps", "batch_size", "layers", "hidden", "heads", "n_resamples"), 1)
        _at_least(self, ("tokens",), 0)
        _check(8 <= self.seq_len <= 1024, "--seq-len must be in [8, 1024]")
        _check(self.hidden % self.heads == 0, "--hidden must be a multiple of --heads")
        _check(len(self.seeds) > 0 and len(set(self.seeds)) == len(self.seeds), "--seeds: give distinct seeds")
        _check(all(s >= 0 for s in self.seeds), "--seeds must be >= 0")
        _check(self.lr > 0, "--lr must be positive")
        _check(self.warmup >= 0, "--warmup must be >= 0")
        _check(0 < self.confidence < 1, "confidence must be in (0, 1)")
        check_numbers(self, {"seeds": (0, SEED_MAX), "threads": (0, MAX_WORKERS), **PROBE_SIZES})
        if self.tokens:
            per_step = self.batch_size * self.seq_len
            object.__setattr__(self, "steps", max(1, -(-self.tokens // per_step)))

    @property
    def tokens_per_arm(self) -> int:
        """Training tokens every arm sees: steps x batch x sequence length."""
        return self.steps * self.batch_size * self.seq_len

    def recipe(self) -> dict:
        """What decides a run's result (the tokenizer and the seed aside)."""
        recipe = {k: v for k, v in dataclasses.asdict(self).items()
                  if k not in ("tokenizers", "seeds", "tokens", "n_resamples", "confidence", "corpus", "heldout",
                               "report_to", "threads", "pairs")}
        if not self.bf16:  # fp32: the recipe of every probe written before bf16, so those resume
            recipe.pop("bf16")
        return recipe

    def optim_config(self) -> OptimConfig:
        """AdamW, linear warm-up then linear decay, at this lr."""
        return OptimConfig(name="adamw", lr=self.lr, warmup=self.warmup, schedule="linear")


TRANSFER_METHODS = ("fvt", "random")  # how TransferConfig makes the rows not shared with the old vocabulary


SUITES = ("blurb", "fr")  # benchmark suites (their tasks: biotok_train.tasks.registry.suite_tasks)


@dataclass(frozen=True)
class BenchConfig:
    """A benchmark run: the ``suite`` (blurb or fr), the fine-tuning ``seeds``, ``tasks`` (names;
    empty: every task of the suite) and the fine-tuning recipe shared by all tasks."""

    suite: str = "blurb"
    seeds: tuple[int, ...] = (0, 1, 2)
    tasks: tuple[str, ...] = ()
    finetune: FinetuneConfig = FinetuneConfig()

    def __post_init__(self) -> None:
        _check(self.suite in SUITES, f"unknown suite {self.suite!r} (one of {', '.join(SUITES)})")
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        object.__setattr__(self, "tasks", tuple(self.tasks))
        _check(bool(self.seeds), "--seeds needs at least one seed")
        _check(len(set(self.seeds)) == len(self.seeds), "--seeds lists a seed twice")
        _check(len(set(self.tasks)) == len(self.tasks), "--tasks lists a task twice")
        check_numbers(self, {"seeds": (0, SEED_MAX)})


@dataclass(frozen=True)
class TransferConfig:
    """How the rows that are not shared are initialized (:mod:`biotok_train.transfer`), and the
    seed of the random ones."""

    method: str = "fvt"  # "fvt" | "random"
    seed: int = 0

    def __post_init__(self) -> None:
        _check(self.method in TRANSFER_METHODS,
               f"unknown transfer method {self.method!r} (choose {', '.join(TRANSFER_METHODS)})")
        _check(isinstance(self.seed, int) and not isinstance(self.seed, bool) and self.seed >= 0,
               f"--seed must be a non-negative integer, not {self.seed!r}")
        check_numbers(self, {"seed": (0, SEED_MAX)})


MAX_WORKERS = 1024  # jobs (processes, Ray CPUs) or torch threads at a time: more is a typo, not a machine


MAX_SEQ_LEN = 512  # the absolute positions of the BERT-family models biotok-train builds and continues
PREPARE_MAX_WORKERS = 1024  # beyond any machine: a typo, refused before any process starts


@dataclass(frozen=True)
class PrepareConfig:
    """How ``prepare`` tokenizes a corpus into pretraining data (:mod:`biotok_train.pretrain.prepare`).

    ``seq_len``: tokens per training sequence, specials included (at most :data:`MAX_SEQ_LEN`: a
    longer one would only fail later, or try to allocate tens of GB). ``sample_alpha``: subword
    regularization (Unigram smoothing exponent, or BPE-dropout probability; None: the
    tokenizer's single best segmentation), ``copies`` differently segmented copies of the corpus,
    seeded by ``seed``. ``field_name``: the JSON field of .jsonl inputs (None: text).
    ``workers``: tokenizing processes, 0 every core this process may use (one for a corpus under
    4 MB, where starting them costs more than they save), 1 this process alone; the data is the
    same bytes whatever the number.
    """

    seq_len: int = 128
    field_name: str | None = None
    sample_alpha: float | None = None
    copies: int = 1
    seed: int = 0
    workers: int = 0

    def __post_init__(self) -> None:
        _check(self.copies >= 1, f"--copies must be at least 1, not {self.copies}")
        _check(self.sample_alpha is None or self.sample_alpha > 0,
               f"--sample-alpha must be > 0 (0 is the tokenizer's own segmentation), not {self.sample_alpha}")
        _check(self.copies == 1 or self.sample_alpha is not None,
               "--copies needs --sample-alpha: without sampling every copy would be the same")
        _check(self.seq_len >= 8, f"--seq-len {self.seq_len} is too short (at least 8; 128 or 512 usual)")
        _check(self.seq_len <= MAX_SEQ_LEN,
               f"--seq-len {self.seq_len} is longer than the models' {MAX_SEQ_LEN} positions "
               f"(BERT, ALBERT, ELECTRA); use at most {MAX_SEQ_LEN} (128 or 512 usual)")
        check_numbers(self, {"seed": (0, SEED_MAX), "workers": (0, PREPARE_MAX_WORKERS)})


__all__ = ["BenchConfig", "COMPILE", "COMPILE_MODES", "ELECTRA_BASE_LR",
           "FINETUNE_LR", "FINETUNE_WARMUP",
           "FinetuneConfig", "MAX_SEQ_LEN", "OptimConfig", "OPTIMIZERS", "PREPARE_MAX_WORKERS", "PrepareConfig", "PRETRAIN_LR",
           "PRETRAIN_WARMUP", "PretrainConfig", "ProbeConfig", "RELATION_INPUTS", "SCHEDULES", "SCHEMES", "SIZES",
           "SUITES", "TRANSFER_METHODS", "TransferConfig"]
