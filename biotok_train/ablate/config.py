"""The configuration of an ablation: :class:`AblationConfig` (what is compared, on what budget), composed
of groups, and :class:`EngineConfig` (who runs its jobs).

Each group is a frozen dataclass that checks itself: :class:`Pretraining`, :class:`Finetuning`,
:class:`Curve`, :class:`Base`, :class:`Statistics`; a dry run swaps a group
(``dataclasses.replace(cfg, pretraining=QUICK)``). What is saved and spelled stays flat (the recipe
in OUT/config.json, the command line, the job keys): :data:`FLAT` is the one table between the flat
names and the groups, read by :meth:`AblationConfig.flat`, :meth:`AblationConfig.recipe` and
:meth:`AblationConfig.from_flat`. Torch-free, like :mod:`biotok_train.config`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass

from biotok.config import SEED_MAX, check_numbers
from biotok.errors import ConfigError
from biotok_train.config import (COMPILE, COMPILE_MODES, MAX_WORKERS, PAIRS, SIZES, TRANSFER_METHODS, FinetuneConfig,
                                 OptimConfig, PretrainConfig, _check)

ARMS = ("scratch", "continual", "transfer", "general", "extend")  # how a model starts (see AblationConfig)
BASE_SIZE = "as-base"  # the size label of every arm when --base gives the architecture


def _distinct(values: tuple, name: str) -> None:
    """At least one value, each once (``name``: the option's field name, --NAME)."""
    option = f"--{name.replace('_', '-')}"
    if not values:
        raise ConfigError(f"ablate needs at least one of {option}")
    if len(set(values)) != len(values):
        raise ConfigError(f"{option} lists a value twice")


@dataclass(frozen=True)
class Pretraining:
    """Every arm's pretraining: ``budget`` steps of ``batch_size`` sequences of ``seq_len`` tokens at
    ``lr``, one model per seed of ``seeds`` (--pretrain-seeds)."""

    budget: int = 200  # pretraining steps, the same for every arm
    batch_size: int = 32
    seq_len: int = 128
    lr: float = 5e-4
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seeds", tuple(self.seeds))
        _distinct(self.seeds, "pretrain_seeds")
        for name in ("budget", "batch_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
        if self.seq_len < 8:
            raise ConfigError("--seq-len must be at least 8")
        if self.lr <= 0:
            raise ConfigError("--lr must be positive")
        check_numbers(self, {"seeds": (0, SEED_MAX)}, {"seeds": "pretrain_seeds"})


@dataclass(frozen=True)
class Finetuning:
    """Every task's fine-tuning: ``recipe`` once per fine-tuning seed of ``seeds`` (its seed replaced by
    each, its max length capped at twice the pretraining's sequence length)."""

    recipe: FinetuneConfig = FinetuneConfig()
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seeds", tuple(self.seeds))
        _distinct(self.seeds, "seeds")
        check_numbers(self, {"seeds": (0, SEED_MAX)})


@dataclass(frozen=True)
class Curve:
    """The learning curve: pretraining ``steps`` (between 0 and the budget) at which every pretrained arm is
    saved, scored on the held-out [MASK] positions and fine-tuned on ``tasks`` (None: the first task;
    empty: none, so the curve costs only pretraining and evaluation)."""

    steps: tuple[int, ...] = ()
    tasks: tuple[str, ...] | None = None  # fine-tuned at each curve step (None: the first task; (): none)

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(sorted(set(self.steps))))
        if self.tasks is not None:
            object.__setattr__(self, "tasks", tuple(self.tasks))
        check_numbers(self, names={"steps": "curve"})


@dataclass(frozen=True)
class Base:
    """The model the arms other than scratch start from (``model``, a Hugging Face masked LM directory;
    None: none), the ``transfer_methods`` of the transfer arms and the pieces the extend arm adds."""

    model: str | None = None
    transfer_methods: tuple[str, ...] = ("fvt",)
    extend_add: int = 2000  # the extend arm: pieces added to the base's vocabulary

    def __post_init__(self) -> None:
        if self.extend_add < 1:
            raise ConfigError(f"--extend-add {self.extend_add}: the extend arm adds at least 1 piece")
        methods = tuple(self.transfer_methods)
        object.__setattr__(self, "transfer_methods", methods)
        if any(m not in TRANSFER_METHODS for m in methods) or not methods or len(set(methods)) != len(methods):
            raise ConfigError(f"--transfer-methods {','.join(methods)}: choose one or more of "
                              f"{', '.join(TRANSFER_METHODS)}, each once")
        check_numbers(self)


@dataclass(frozen=True)
class Statistics:
    """What is measured and how it is compared: ``n_words`` held-out masked words (each
    ``heldout_every``-th corpus line held out), the random-init ``floor``, bootstrap intervals of
    ``n_resamples`` at ``confidence``, and the ``pairs`` the report compares (``reference``: each arm
    with the first; ``all``: every pair; analysis only, in no job's key nor in the recipe)."""

    n_words: int = 1000
    heldout_every: int = 20
    floor: bool = True
    n_resamples: int = 1000
    confidence: float = 0.95
    pairs: str = "reference"

    def __post_init__(self) -> None:
        if self.heldout_every < 2:
            raise ConfigError("heldout_every must be >= 2")
        if self.n_words < 1:
            raise ConfigError("--n-words must be at least 1")
        if self.n_resamples < 100:
            raise ConfigError("--n-resamples must be at least 100")
        if not 0.5 < self.confidence < 1:
            raise ConfigError("--confidence must be in (0.5, 1)")
        if self.pairs not in PAIRS:
            raise ConfigError(f"--pairs {self.pairs!r}: one of {', '.join(PAIRS)}")
        check_numbers(self)


GROUPS = {"pretraining": Pretraining, "finetuning": Finetuning, "curve": Curve, "base": Base,
          "statistics": Statistics}
# The flat names (the recipe's keys, in its order; the command's options) -> (group, field); group None:
# a field of AblationConfig itself.
FLAT: dict[str, tuple[str | None, str]] = {
    "tokenizers": (None, "tokenizers"), "corpus": (None, "corpus"), "field_name": (None, "field_name"),
    "tasks": (None, "tasks"), "data_dir": (None, "data_dir"), "sizes": (None, "sizes"),
    "budget": ("pretraining", "budget"), "batch_size": ("pretraining", "batch_size"),
    "seq_len": ("pretraining", "seq_len"), "lr": ("pretraining", "lr"), "pretrain_seeds": ("pretraining", "seeds"),
    "seeds": ("finetuning", "seeds"), "finetune": ("finetuning", "recipe"),
    "n_words": ("statistics", "n_words"), "heldout_every": ("statistics", "heldout_every"),
    "floor": ("statistics", "floor"), "n_resamples": ("statistics", "n_resamples"),
    "confidence": ("statistics", "confidence"), "arms": (None, "arms"),
    "base": ("base", "model"), "transfer_methods": ("base", "transfer_methods"), "extend_add": ("base", "extend_add"),
    "curve": ("curve", "steps"), "curve_tasks": ("curve", "tasks"), "probe": (None, "probe"),
    "pairs": ("statistics", "pairs"),
}


@dataclass(frozen=True)
class AblationConfig:
    """Everything that must be equal across arms for the comparison to be fair: the ``tokenizers`` (the
    first is the reference), the pretraining ``corpus`` (its JSON ``field_name``), the fine-tuning
    ``tasks`` (a registered name, a BIO path, NAME=PATH, or typed files:
    :func:`biotok_train.tasks.named.files_source`), model ``sizes``, and the groups.

    ``arms`` with a ``base`` model (PubMedBERT Table 9): ``general`` is the base as it is
    (fine-tuned only), ``continual`` continues the base with its own vocabulary (once); per
    tokenizer, ``transfer`` moves the base to it (one arm per method of ``base.transfer_methods``) and
    continues, ``scratch`` starts the base's architecture from random weights with it. Every arm
    then has the base's architecture (``sizes`` does not apply). ``extend`` keeps the base's
    vocabulary, adds ``base.extend_add`` pieces chosen on the pretraining text
    (:func:`biotok.extension.extend`: no text gets more pieces), makes their rows by FVT and continues
    (once): keep, extend or replace. ``probe`` > 0: a causal-LM probe (:mod:`biotok_train.probe`) of
    each vocabulary, that many steps per pretraining seed.
    """

    tokenizers: tuple[str, ...]
    corpus: tuple[str, ...]
    field_name: str | None = None
    tasks: tuple[str, ...] = ("e3c",)
    data_dir: str | None = None
    sizes: tuple[str, ...] = ("tiny",)
    arms: tuple[str, ...] = ("scratch",)
    probe: int = 0
    pretraining: Pretraining = Pretraining()
    finetuning: Finetuning = Finetuning()
    curve: Curve = Curve()
    base: Base = Base()
    statistics: Statistics = Statistics()

    def __post_init__(self) -> None:
        for name, group in GROUPS.items():
            _check(isinstance(getattr(self, name), group), f"{name} must be a {group.__name__}, not "
                                                          f"{getattr(self, name)!r}")
        object.__setattr__(self, "arms", tuple(self.arms))
        if not self.arms or any(a not in ARMS for a in self.arms) or len(set(self.arms)) != len(self.arms):
            raise ConfigError(f"--arms {','.join(self.arms)}: choose one or more of {', '.join(ARMS)}, each once")
        if self.base.model is None and set(self.arms) - {"scratch"}:
            raise ConfigError("--arms general, continual, transfer and extend start from a model: give it with "
                              "--base MODEL_DIR")
        budget, steps = self.pretraining.budget, self.curve.steps
        if any(not 0 < s < budget for s in steps):
            raise ConfigError(f"--curve {','.join(map(str, steps))}: each step must be between 0 and --budget "
                              f"{budget} (both excluded: they are always on the curve)")
        self._check_curve_tasks()
        self._check_sizes()
        for name in ("tokenizers", "tasks", "corpus"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not self.tokenizers:
            raise ConfigError("ablate needs at least one of --tokenizers")
        _distinct(self.tasks, "tasks")
        if self.probe < 0:
            raise ConfigError("--probe must be >= 0 (0: no probe)")
        check_numbers(self)

    def _check_sizes(self) -> None:
        """With a base, every arm has its architecture (the one size :data:`BASE_SIZE`); else known sizes, each once."""
        if self.base.model is not None:
            if tuple(self.sizes) not in (("tiny",), (BASE_SIZE,)):
                raise ConfigError("--sizes does not apply with --base: every arm has the base model's architecture")
            object.__setattr__(self, "sizes", (BASE_SIZE,))
        object.__setattr__(self, "sizes", tuple(self.sizes))
        if not self.sizes:
            raise ConfigError("ablate needs at least one of --sizes")
        for s in self.sizes:
            if s not in SIZES["bert"] and self.base.model is None:
                raise ConfigError(f"unknown size {s!r} (choose {', '.join(SIZES['bert'])})")
        _distinct(self.sizes, "sizes")

    def _check_curve_tasks(self) -> None:
        """The curve's tasks: None, or tasks of ``tasks`` each once (the first task alone reads as None)."""
        if self.curve.tasks is None:
            return
        ct, tasks = self.curve.tasks, tuple(self.tasks)
        if any(t not in tasks for t in ct) or len(set(ct)) != len(ct):
            raise ConfigError(f"--curve-tasks {','.join(ct) or 'none'}: each must be one of the --task values "
                              f"({', '.join(tasks)}), once")
        if ct == tasks[:1]:
            object.__setattr__(self, "curve", dataclasses.replace(self.curve, tasks=None))

    @classmethod
    def from_flat(cls, **flat) -> AblationConfig:
        """The config of flat values (the recipe's names, :data:`FLAT`: ``budget``, ``pretrain_seeds``,
        ``finetune``, ...); a name left out takes its default."""
        top: dict = {}
        groups: dict[str, dict] = {name: {} for name in GROUPS}
        for name, value in flat.items():
            if name not in FLAT:
                raise TypeError(f"AblationConfig has no field {name!r}")
            group, key = FLAT[name]
            (top if group is None else groups[group])[key] = value
        return cls(**top, **{name: GROUPS[name](**values) for name, values in groups.items()})

    def flat(self) -> dict:
        """The flat values of this config, in the recipe's order (the inverse of :meth:`from_flat`)."""
        return {name: getattr(self if group is None else getattr(self, group), key)
                for name, (group, key) in FLAT.items()}

    @staticmethod
    def flat_default(name: str):
        """The default of flat field ``name`` (the command line's defaults)."""
        group, key = FLAT[name]
        return getattr(AblationConfig if group is None else GROUPS[group], key)

    @property
    def curve_task_list(self) -> tuple[str, ...]:
        """The tasks fine-tuned at each step of the curve (none without a curve)."""
        if not self.curve.steps:
            return ()
        return tuple(self.tasks)[:1] if self.curve.tasks is None else self.curve.tasks

    @property
    def tokens_per_arm(self) -> int:
        """Token positions each pretraining run trains on: steps × batch × sequence length."""
        p = self.pretraining
        return p.budget * p.batch_size * p.seq_len

    def recipe(self) -> dict:
        """The config without the tokenizer list, flat: what a resumed run must match."""
        flat = {k: dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v for k, v in self.flat().items()}
        d = json.loads(json.dumps(flat))
        d.pop("tokenizers")
        d.pop("probe")  # one more metric: it changes no arm
        d.pop("pairs")  # which comparisons the report computes: analysis only, no job changes
        if "extend" not in self.arms:  # a recipe saved before the extend arm existed stays the same recipe
            d.pop("extend_add")
        return d

    def settings(self) -> dict:
        """The recipe without the paths of its inputs (corpus, tasks, base, data folder): what must be
        equal for a resumed run; the inputs themselves are compared by their contents (ablate.keys)."""
        return {k: v for k, v in self.recipe().items() if k not in ("corpus", "base", "data_dir")}

    @staticmethod
    def saved_recipe(recipe: dict) -> dict:
        """A :meth:`recipe` read back from an ablation's config.json, its fine-tuning recipe in
        today's shape: one saved before the optimizer fields were nested (flat ``lr``,
        ``warmup``, ...) reads as the same recipe, and a fine-tuning field added since takes
        its default."""
        if not isinstance(recipe.get("finetune"), dict):
            return recipe
        finetune = FinetuneConfig.from_dict(recipe["finetune"]).to_dict()
        recipe = {**recipe, "finetune": json.loads(json.dumps(finetune))}
        if "transfer_method" in recipe:  # saved before several methods could run at once
            recipe["transfer_methods"] = [recipe.pop("transfer_method")]
        return recipe

    def pretrain_config(self, size: str, seed: int, init_from: str | os.PathLike[str] | None = None):
        """One pretraining run: MLM for ``budget`` steps, a fresh BERT of ``size`` or ``init_from``'s model."""
        p = self.pretraining
        return PretrainConfig(objective="mlm", arch="bert", size=size if size in SIZES["bert"] else "tiny",
                              steps=p.budget, batch_size=p.batch_size, optim=OptimConfig(lr=p.lr), seed=seed,
                              init_from=None if init_from is None else str(init_from), compile="auto",
                              compile_mode="auto")

    def finetune_config(self, seed: int) -> FinetuneConfig:
        """The fine-tuning recipe for one seed."""
        recipe = self.finetuning.recipe
        return dataclasses.replace(recipe, seed=seed, max_length=min(recipe.max_length, self.pretraining.seq_len * 2))


ENGINES = ("local", "ray", "processes")  # who runs an ablation's jobs (biotok_train.ablate.engines)


@dataclass(frozen=True)
class EngineConfig:
    """Who runs the jobs of an ablation; never part of its recipe (the result is the same whatever runs it).

    ``local``: in this process, in plan order (``workers``: torch threads; 0: torch's default).
    ``ray``: Ray Core tasks on a local instance of ``workers`` CPUs (0: every core) or the running
    cluster at ``address``; each fine-tuning job asks for ``gpus_per_job`` GPUs (a fraction lets
    several share one). ``processes``: ``workers`` processes of this machine (0: one per CPU), GPUs
    shared as with Ray: where Ray is not installed.

    ``only``: run just the jobs whose keys match one of these patterns (``fnmatch``: ``*`` spans
    slashes) and the jobs they need: one piece of a grid, sized for a short GPU slot; the report
    waits for every job. (The arithmetic the models' jobs are keyed by is not the engine's: it
    changes content keys; ``run_ablation(precision=...)``, :func:`check_precision`.)
    ``pretrain_gpus``: with ``gpus_per_job``, the share of a GPU a job that does not share asks (a
    pretraining; 0: a whole GPU each, one at a time), so that several pretrainings run side by side.
    ``compile``, ``compile_mode``: the pretrainings' torch.compile (as ``biotok-train mlm``'s; auto:
    on CUDA, off on the CPU); how a model is trained, not what it computes, so not in any key."""

    engine: str = "local"
    workers: int = 0
    gpus_per_job: float = 0.0
    address: str | None = None
    only: tuple[str, ...] = ()
    pretrain_gpus: float = 0.0
    compile: str = "auto"  # the pretrainings' torch.compile (PretrainConfig.compile): auto | on | off
    compile_mode: str = "auto"  # and its mode (PretrainConfig.compile_mode)

    def __post_init__(self) -> None:
        if isinstance(self.compile, bool) or self.compile is None:  # --compile/--no-compile, or neither
            object.__setattr__(self, "compile", {True: "on", False: "off", None: "auto"}[self.compile])
        _check(self.compile in COMPILE, f"unknown --compile {self.compile!r} (one of {', '.join(COMPILE)})")
        _check(self.compile_mode in COMPILE_MODES,
               f"unknown --compile-mode {self.compile_mode!r} (one of {', '.join(COMPILE_MODES)})")
        _check(self.engine in ENGINES, f"unknown --engine {self.engine!r} (choose {', '.join(ENGINES)})")
        _check(isinstance(self.workers, int) and 0 <= self.workers <= MAX_WORKERS,
               f"--workers must be between 0 (one per CPU) and {MAX_WORKERS}, not {self.workers}")
        f = self.gpus_per_job
        _check(isinstance(f, (int, float)) and (f == 0 or 0 < f <= 1),
               f"--gpus-per-job must be a share of one GPU, 0 < f <= 1 (0.5: two jobs share one), not {f}")
        p = self.pretrain_gpus
        _check(isinstance(p, (int, float)) and (p == 0 or 0 < p <= 1),
               f"pretrain_gpus must be a share of one GPU, 0 < f <= 1 (0: a whole GPU each), not {p}")
        _check(self.engine == "ray" or self.address is None, "--address needs --engine ray")
        if self.address is not None:
            split_address(self.address)
        _check(self.engine != "local" or self.gpus_per_job == 0, "--gpus-per-job needs --engine ray or processes")
        _check(isinstance(self.only, tuple) and all(isinstance(p, str) and p.strip() for p in self.only),
               f"--only takes job-key patterns such as 'finetune/small/NAME/p0/*', not {self.only!r}")


def check_precision(precision: str | None) -> str | None:
    """``ablate --precision``: the arithmetic another machine keyed the models' jobs by ("cuda:bf16"),
    to report here from the records its pieces made (None: this machine's); a malformed one: ConfigError."""
    _check(precision is None or re.fullmatch(r"[a-z]+:(bf16|fp32)", str(precision)) is not None,
           f"--precision must read DEVICE:bf16 or DEVICE:fp32 (cuda:bf16, cpu:fp32...), not {precision!r}")
    return precision


MAX_WORKERS = 1024  # jobs (processes, Ray CPUs) or torch threads at a time: more is a typo, not a machine


def split_address(address: str) -> tuple[str, int]:
    """(host, port) of a Ray ``--address`` HOST:PORT or ray://HOST:PORT ('auto': ("auto", 0)); a
    malformed one is a ConfigError."""
    from urllib.parse import urlsplit  # lazy: one use

    if address == "auto":
        return "auto", 0
    rest = address[len("ray://"):] if address.startswith("ray://") else address
    try:
        parts = urlsplit("//" + rest)
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    _check(bool(host) and port is not None and 0 < port and not any(c.isspace() for c in address)
           and rest == parts.netloc,
           f"--address must read HOST:PORT, ray://HOST:PORT or auto (a running Ray cluster), not {address!r}")
    return host, port

