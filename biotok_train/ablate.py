"""``biotok-train ablate``: which vocabulary wins on which task, and with what confidence.

Every tokenizer is an *arm*. At each model size, each arm gets the same recipe and the same
number of training token positions (steps × batch × sequence length; a vocabulary with fewer
pieces per word sees more characters of text in them, which the report states): prepare the
pretraining text, pretrain BERT MLM once per pretraining seed, measure fertility and sequence
length on held-out lines and masked-word accuracy on the same held-out words, then fine-tune
every task once per (pretraining seed, fine-tuning seed). A *floor* per size, arm and task:
the same fine-tuning from a randomly initialised model of the same size.

The report (:mod:`biotok_train.stats`): every number as mean ± std over seeds; for each
candidate against the reference (the first tokenizer), a paired bootstrap 95 % interval of the
difference over test examples pooled across seeds (an example is drawn with all its seeds) and
a verdict word; each arm against its floor, flagged when it does not beat it (then the budget
was too small to judge the vocabularies on that task); and, with several sizes, Kendall τ of
the vocabulary rankings between sizes.

Resumable: every finished part (prepared data, each pretraining, MLM score, each fine-tuning
run with its test predictions) is reused, and a finished arm (``done.json``) is not reopened.

Layout of OUT::

    config.json                         the recipe (a resumed run must use the same one)
    corpus/pretrain.txt, heldout.txt    the split of the corpus (each Nth line held out)
    data/NAME/                          NAME's prepared pretraining data (shared by the sizes)
    arms/SIZE/NAME/p{P}/                pretraining seed P: model/, pretrain.json, mlm.json,
                                        TASK/f{F}/ (results.json, predictions.json; TASK is
                                        the task name, or a path's name + a short hash)
    arms/SIZE/NAME/floor/p{P}/          random-init model/ and TASK/f{F}/
    arms/SIZE/NAME/done.json
    ablation.md, ablation.json, ablation.png, timings.json
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import platform
import re
import shlex
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from biotok.errors import ConfigError
from biotok.output import atomic_directory, atomic_file
from biotok_train import stats as S
from biotok_train.config import SIZES, FinetuneConfig

log = logging.getLogger(__name__)
MLM = "mlm"  # the key of masked-word accuracy among the task keys of the report
MEAN_METRICS = ("accuracy", "hamming_score", "exact_match_ratio")  # means of per-example scores
ARMS = ("scratch", "continual", "transfer")  # how a model starts (see AblationConfig)
BASE_SIZE = "as-base"  # the size label of every arm when --base gives the architecture
TRANSFER_METHODS = ("fvt", "random")  # biotok_train.transfer.METHODS (not imported: it is torch-free but heavy)


@dataclass(frozen=True)
class AblationConfig:
    """Everything that must be equal across arms for the comparison to be fair.

    ``finetune`` is the recipe of every task (its seed replaced by each of ``seeds``, its max
    length capped at twice ``seq_len``); ``pretrain_seeds`` x ``seeds`` runs per arm and task.

    ``arms`` with a ``base`` model (PubMedBERT Table 9): ``continual`` continues the base with
    its own vocabulary (once); per tokenizer, ``transfer`` moves the base to it
    (``transfer_method``) and continues, ``scratch`` starts the base's architecture from random
    weights with it. Every arm then has the base's architecture (``sizes`` does not apply).
    """

    tokenizers: tuple[str, ...]
    corpus: tuple[str, ...]
    field_name: str | None = None
    tasks: tuple[str, ...] = ("e3c",)
    data_dir: str | None = None
    sizes: tuple[str, ...] = ("tiny",)
    budget: int = 200  # pretraining steps, the same for every arm
    batch_size: int = 32
    seq_len: int = 128
    lr: float = 5e-4
    pretrain_seeds: tuple[int, ...] = (0,)
    seeds: tuple[int, ...] = (0,)  # fine-tuning seeds
    finetune: FinetuneConfig = FinetuneConfig()
    n_words: int = 1000
    heldout_every: int = 20
    floor: bool = True
    n_resamples: int = 1000
    confidence: float = 0.95
    arms: tuple[str, ...] = ("scratch",)
    base: str | None = None
    transfer_method: str = "fvt"

    def __post_init__(self) -> None:
        object.__setattr__(self, "arms", tuple(self.arms))
        if not self.arms or any(a not in ARMS for a in self.arms) or len(set(self.arms)) != len(self.arms):
            raise ConfigError(f"--arms {','.join(self.arms)}: choose one or more of {', '.join(ARMS)}, each once")
        if self.base is None and set(self.arms) - {"scratch"}:
            raise ConfigError("--arms continual and transfer start from a model: give it with --base MODEL_DIR")
        if self.transfer_method not in TRANSFER_METHODS:
            raise ConfigError(f"unknown --transfer-method {self.transfer_method!r} (one of {', '.join(TRANSFER_METHODS)})")
        if self.base is not None:
            if tuple(self.sizes) not in (("tiny",), (BASE_SIZE,)):
                raise ConfigError("--sizes does not apply with --base: every arm has the base model's architecture")
            object.__setattr__(self, "sizes", (BASE_SIZE,))
        for name in ("tokenizers", "tasks", "sizes", "seeds", "pretrain_seeds"):
            if not getattr(self, name):
                raise ConfigError(f"ablate needs at least one of --{name.replace('_', '-')}")
        for name in ("tokenizers", "tasks", "sizes", "seeds", "pretrain_seeds", "corpus"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.heldout_every < 2:
            raise ConfigError("heldout_every must be >= 2")
        for s in self.sizes:
            if s not in SIZES["bert"] and self.base is None:
                raise ConfigError(f"unknown size {s!r} (choose {', '.join(SIZES['bert'])})")
        for name in ("sizes", "tasks", "seeds", "pretrain_seeds"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ConfigError(f"--{name.replace('_', '-')} lists a value twice")
        for name in ("budget", "batch_size", "n_words"):
            if getattr(self, name) < 1:
                raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
        if self.seq_len < 8:
            raise ConfigError("--seq-len must be at least 8")
        if self.lr <= 0:
            raise ConfigError("--lr must be positive")
        if self.n_resamples < 100:
            raise ConfigError("--n-resamples must be at least 100")
        if not 0.5 < self.confidence < 1:
            raise ConfigError("--confidence must be in (0.5, 1)")

    @property
    def tokens_per_arm(self) -> int:
        """Token positions each pretraining run trains on: steps × batch × sequence length."""
        return self.budget * self.batch_size * self.seq_len

    def recipe(self) -> dict:
        """The config without the tokenizer list: what a resumed run must match."""
        d = json.loads(json.dumps(asdict(self)))
        d.pop("tokenizers")
        return d

    def pretrain_config(self, size: str, seed: int, init_from: str | os.PathLike[str] | None = None):
        """One pretraining run: MLM for ``budget`` steps, a fresh BERT of ``size`` or ``init_from``'s model."""
        from biotok_train.config import PretrainConfig

        return PretrainConfig(objective="mlm", arch="bert", size=size if size in SIZES["bert"] else "tiny",
                              steps=self.budget, batch_size=self.batch_size, lr=self.lr, seed=seed,
                              init_from=None if init_from is None else str(init_from))

    def finetune_config(self, seed: int) -> FinetuneConfig:
        """The fine-tuning recipe for one seed."""
        return dataclasses.replace(self.finetune, seed=seed, max_length=min(self.finetune.max_length, self.seq_len * 2))

    def command(self, out: str | os.PathLike[str] = "OUT") -> str:
        """The ``biotok-train ablate`` command line of this config."""
        ft, d = self.finetune, FinetuneConfig()
        parts = ["biotok-train", "ablate", "--tokenizers", *self.tokenizers, "--corpus", *self.corpus]
        if self.field_name:
            parts += ["--field", self.field_name]
        for t in self.tasks:
            parts += ["--task", t]
        if self.data_dir:
            parts += ["--data-dir", self.data_dir]
        if self.base is not None:
            parts += ["--base", self.base, "--arms", ",".join(self.arms)]
            if self.transfer_method != "fvt":
                parts += ["--transfer-method", self.transfer_method]
        else:
            parts += ["--sizes", ",".join(self.sizes)]
        parts += ["--budget", str(self.budget), "--batch-size", str(self.batch_size),
                  "--seq-len", str(self.seq_len), "--lr", f"{self.lr:g}",
                  "--pretrain-seeds", *map(str, self.pretrain_seeds), "--seeds", *map(str, self.seeds)]
        for opt, name in (("--ft-epochs", "epochs"), ("--ft-lr", "lr"), ("--ft-batch-size", "batch_size"),
                          ("--ft-max-steps", "max_steps")):
            if getattr(ft, name) != getattr(d, name):
                parts += [opt, f"{getattr(ft, name):g}" if isinstance(getattr(ft, name), float) else str(getattr(ft, name))]
        base = AblationConfig(tokenizers=("x",), corpus=())
        for opt, name in (("--n-words", "n_words"), ("--heldout-every", "heldout_every"),
                          ("--n-resamples", "n_resamples")):
            if getattr(self, name) != getattr(base, name):
                parts += [opt, str(getattr(self, name))]
        if not self.floor:
            parts.append("--no-floor")
        parts += ["--out", str(out)]
        return " ".join(shlex.quote(p) for p in parts)


@dataclass(frozen=True)
class ArmResult:
    """One tokenizer at one size: its budget, its numbers (each a seed summary dict), its floors."""

    size: str
    name: str
    tokenizer: str
    vocab_size: int
    fertility: float  # pieces per word on the held-out lines (words as `biotok compare` defines them)
    pieces_per_line: float  # on the held-out lines, no special tokens
    chars_per_token: float  # characters of pretraining text per token with this tokenizer
    corpus_tokens: int  # tokens of the pretraining text with this tokenizer
    steps: int
    tokens_seen: int  # real (non-padding) tokens of one pretraining run
    chars_seen: int  # characters of text those tokens cover
    epochs: float  # passes over the pretraining text
    pretrain_loss: dict  # SeedSummary.to_dict() over pretraining seeds
    mlm: dict  # {"top1"|"top3"|"top5": SeedSummary dict} over pretraining seeds
    mlm_words: int
    metrics: dict  # {task: SeedSummary dict of its metric over every (pretraining, fine-tuning) seed pair}
    floors: dict = field(default_factory=dict)  # {task: SeedSummary dict}, random init
    init: str = "scratch"  # scratch | continual | transfer (see AblationConfig.arms)
    vocabulary: str = ""  # the name of its vocabulary (the tokenizer's leg name)

    def summary(self, task: str) -> S.SeedSummary:
        d = self.mlm["top1"] if task == MLM else self.metrics[task]
        return S.SeedSummary(d["mean"], d["std"], d["n"], tuple(d["values"]))


@dataclass(frozen=True)
class AblationReport:
    """The arms, the statistics computed from them, and where the report was written."""

    config: AblationConfig
    arms: list[ArmResult]
    tasks: dict  # task key -> {"name", "type", "metric", "n_test"}
    comparisons: list[dict]  # candidate vs reference, per size and task (PairedBootstrap fields)
    floors: list[dict]  # arm vs its floor, per size and task
    rankings: list[dict]  # RankAgreement dicts, per task, between sizes
    sentences: list[str]  # the verdicts, written from the numbers
    markdown: str
    markdown_path: Path
    json_path: Path
    png_path: Path
    mlm_floors: list = field(default_factory=list)  # arm vs always answering the most frequent word

    def arm(self, size: str, name: str) -> ArmResult:
        return next(a for a in self.arms if a.size == size and a.name == name)


def leg_names(tokenizers: Sequence[str]) -> list[str]:
    """Short unique names from tokenizer paths/aliases: directory or file stem, deduplicated."""
    names: list[str] = []
    for t in tokenizers:
        p = Path(str(t).rstrip("/"))
        base = p.name.split(".")[0] if p.name not in ("tokenizer.json", "tokenizer.json.gz") else p.parent.name
        base = re.sub(r"[^\w.-]+", "_", base) or "tok"
        name, k = base, 2
        while name in names:
            name, k = f"{base}-{k}", k + 1
        names.append(name)
    return names


@dataclass(frozen=True)
class Leg:
    """One arm of the ablation: its report name, its vocabulary and how its model starts."""

    name: str  # the arm's name (a folder name too)
    tokenizer: str  # its tokenizer (for continual: the base model directory)
    vocab: str  # the vocabulary's name: data/VOCAB holds its prepared text
    init: str = "scratch"  # scratch | continual | transfer


def plan_legs(cfg: AblationConfig, names: dict[str, str]) -> list[Leg]:
    """The arms in report order, the reference first. Without a base: one scratch arm per
    tokenizer. With one: continual (the base's vocabulary), then per tokenizer transfer, scratch."""
    if cfg.base is None:
        return [Leg(names[t], t, names[t]) for t in cfg.tokenizers]
    base_vocab = leg_names([cfg.base])[0]
    while base_vocab in names.values():
        base_vocab += "-base"
    legs = [Leg(f"continual.{base_vocab}", cfg.base, base_vocab, "continual")] if "continual" in cfg.arms else []
    for t in cfg.tokenizers:
        legs += [Leg(f"{a}.{names[t]}", t, names[t], a) for a in ("transfer", "scratch") if a in cfg.arms]
    return legs


def floor_dir(out: Path, size: str, leg: Leg, base: bool) -> Path:
    """Where an arm's floor runs live: its own folder, or with a base one per vocabulary (the
    transfer and scratch arms of a vocabulary share the same random-init model)."""
    return out / "arms" / size / (f"floor.{leg.vocab}" if base else f"{leg.name}/floor")


# --------------------------------------------------------------------------- files


def _write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, force=True) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def _cached(path: Path, compute: Callable[[], Any]) -> Any:
    """The JSON in ``path``, or ``compute()`` written there: each finished part is reused."""
    if path.is_file():
        return _read_json(path)
    value = compute()
    _write_json(path, value)
    return value


def _encode(x):
    """Predictions as JSON: sets become {"__set__": [...]} so that they come back as sets."""
    if isinstance(x, (set, frozenset)):
        return {"__set__": sorted(_encode(v) for v in x)}
    if isinstance(x, (list, tuple)):
        return [_encode(v) for v in x]
    return x


def _decode(x):
    if isinstance(x, dict) and set(x) == {"__set__"}:
        return set(x["__set__"])
    if isinstance(x, list):
        return [_decode(v) for v in x]
    return x


def split_corpus(cfg: AblationConfig, out: Path) -> tuple[Path, Path, int]:
    """corpus/pretrain.txt and corpus/heldout.txt, written once (each Nth non-blank line held
    out); returns them and the characters of pretraining text (newlines excluded)."""
    from biotok.corpus import iter_lines

    d = out / "corpus"
    train, held = d / "pretrain.txt", d / "heldout.txt"
    if not (d / "done").is_file():
        with atomic_directory(d, force=True) as tmp:  # an unfinished split (no 'done') is replaced
            n = chars = 0
            with open(tmp / train.name, "w", encoding="utf-8") as ft, open(tmp / held.name, "w", encoding="utf-8") as fh:
                for i, line in enumerate(iter_lines(list(cfg.corpus), cfg.field_name), 1):
                    if i % cfg.heldout_every == 0:
                        fh.write(line + "\n")
                    else:
                        ft.write(line + "\n")
                        chars += len(line)
                    n = i
            if n < cfg.heldout_every:
                raise ConfigError(f"the corpus has {n} lines: too few to hold out every {cfg.heldout_every}th")
            (tmp / "done").write_text(f"{n}\n{chars}\n", encoding="utf-8")
    parts = (d / "done").read_text(encoding="utf-8").split()
    chars = int(parts[1]) if len(parts) > 1 else sum(len(l) for l in train.read_text(encoding="utf-8").splitlines())
    return train, held, chars


def segmentation_stats(tokenizer, lines: Sequence[str]) -> tuple[float, float]:
    """(fertility, mean pieces per line) without special tokens: pieces per biotok word, the
    definition of ``biotok compare``."""
    from biotok.metrics import fragmentation

    f = fragmentation(tokenizer, lines)
    return f.fertility, f.mean_sequence_length


# --------------------------------------------------------------------------- the runs


@dataclass
class _Context:
    """What every arm shares: the recipe, the split corpus, the words, the tasks."""

    cfg: AblationConfig
    out: Path
    train: Path
    held: Path
    train_chars: int
    samples: list
    datasets: dict  # task key -> loaded dataset
    task_objs: dict  # task key -> (TaskSpec or None, task type, head): see biotok_train.finetune.resolve
    progress: bool
    timings: dict
    word_floor: tuple = ("", ())  # (most frequent word of the pretraining text, hit per held-out word)


def word_floor(train: Path, samples: Sequence) -> tuple[str, tuple[float, ...]]:
    """The masked-word floor: always answer the pretraining text's most frequent word (as the
    masked-word evaluation delimits words). Returns it and its hit (1.0 / 0.0) per sample."""
    from collections import Counter

    from biotok_train.evaluate.masked_words import WORD

    counts: Counter = Counter()
    with open(train, encoding="utf-8") as f:
        for line in f:
            counts.update(m.group(0) for m in WORD.finditer(line))
    if not counts:
        return "", tuple(0.0 for _ in samples)
    word = min(counts, key=lambda w: (-counts[w], w))
    return word, tuple(float(s.text[s.start:s.end] == word) for s in samples)


def _transferred(ctx: _Context, leg: Leg) -> Path:
    """The base model moved to ``leg``'s vocabulary (``transfer/VOCAB``, written once)."""
    from biotok_train.transfer import MARKER, TransferConfig, transfer_to

    d = ctx.out / "transfer" / leg.vocab
    if not (d / MARKER).is_file():
        log.info("[%s] transfer the base to %s (%s)", leg.name, leg.vocab, ctx.cfg.transfer_method)
        transfer_to(ctx.cfg.base, leg.tokenizer, d, TransferConfig(ctx.cfg.transfer_method, seed=0), force=True)
    return d


def _template(ctx: _Context, leg: Leg) -> Path:
    """The model whose architecture and tokenizer ``leg`` has (with a base only)."""
    return Path(ctx.cfg.base) if leg.init == "continual" else _transferred(ctx, leg)


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                   "vocab.txt", "vocab.json", "merges.txt", "spm.model", "sentencepiece.bpe.model")


def _random_like(template: Path, seed: int, out: Path) -> Path:
    """``template``'s architecture with random weights (its own initializer, ``seed``) and its
    tokenizer files: the start of a scratch arm and the floor of its vocabulary."""
    if (out / "config.json").is_file():
        return out
    import torch
    import transformers

    from biotok_train.hf_models import quiet_transformers
    from biotok_train.pretrain.init import MLM_TYPES

    with quiet_transformers():
        config = transformers.AutoConfig.from_pretrained(str(template))
        torch.manual_seed(seed)
        if MLM_TYPES.get(config.model_type) == "albert":
            model = transformers.AlbertForPreTraining(config)
        else:
            model = transformers.AutoModelForMaskedLM.from_config(config)
    with atomic_directory(out, force=True) as tmp:
        with quiet_transformers():
            model.save_pretrained(str(tmp))
        for name in TOKENIZER_FILES:
            if (template / name).is_file():
                shutil.copyfile(template / name, tmp / name)
    return out


def _random_init(ctx: _Context, leg: Leg, seed: int) -> Path:
    """The random-init model of ``leg``'s vocabulary and seed (with a base), shared by its arms."""
    return _random_like(_template(ctx, leg), seed, ctx.out / "init" / f"random.{leg.vocab}" / f"p{seed}")


def _init_from(ctx: _Context, leg: Leg, seed: int) -> Path | None:
    """Where ``leg``'s pretraining starts: None (a fresh BERT of the size), the base, the
    transferred base, or the random model of the base's architecture."""
    if ctx.cfg.base is None:
        return None
    if leg.init == "scratch":
        return _random_init(ctx, leg, seed)
    return _template(ctx, leg)


def _prepare_data(ctx: _Context, tokenizer: str, name: str):
    from biotok_train.pretrain.prepare import open_prepared, prepare

    d = ctx.out / "data" / name
    if (d / "meta.json").is_file():
        return open_prepared(d)
    log.info("[%s] prepare", name)
    return prepare([str(ctx.train)], tokenizer, ctx.cfg.seq_len, d, force=True, progress=ctx.progress)


def _pretrain(ctx: _Context, size: str, name: str, data: Path, seed: int, run_dir: Path,
              init_from: Path | None = None) -> dict:
    from biotok_train.pretrain import checkpoint as ckpt
    from biotok_train.pretrain.loop import pretrain

    model_dir = run_dir / "model"
    log.info("[%s/%s] pretrain seed %d, %d steps", size, name, seed, ctx.cfg.budget)
    t0 = time.perf_counter()
    res = pretrain(data, ctx.cfg.pretrain_config(size, seed, init_from), model_dir,
                   resume=(model_dir / ckpt.STATE).exists(), progress=ctx.progress)
    ctx.timings[f"{size}/{name}/p{seed}/pretrain"] = round(time.perf_counter() - t0, 1)
    rows = [json.loads(l) for l in (model_dir / "metrics.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    tokens = int(rows[-1]["tokens"]) if rows else 0
    return {"steps": res.steps, "final_loss": res.final_loss, "tokens_seen": tokens}


def _mlm(ctx: _Context, size: str, name: str, model_dir: Path) -> dict:
    from biotok_train.evaluate.masked_words import masked_word_accuracy
    from biotok_train.hf_models import load_mlm

    log.info("[%s/%s] eval-mlm on %d held-out words", size, name, len(ctx.samples))
    t0 = time.perf_counter()
    model, tok = load_mlm(model_dir)
    res = masked_word_accuracy(model, tok, ctx.samples, name=name)
    ctx.timings[f"{size}/{name}/{model_dir.parent.name}/mlm"] = round(time.perf_counter() - t0, 1)
    return {**res.to_dict(), "ranks": list(res.ranks)}


def _random_model(data: Path, size: str, seed: int, out: Path) -> Path:
    """A randomly initialised BERT MLM of ``size`` for the floor, saved like a pretrained one."""
    if (out / "config.json").is_file():
        return out
    import torch

    from biotok_train.hf_models import save_hf_tokenizer
    from biotok_train.pretrain import checkpoint as ckpt
    from biotok_train.pretrain.models import Vocab, build
    from biotok_train.pretrain.packed import PackedData

    packed = PackedData(data)
    torch.manual_seed(seed)
    vocab = Vocab(packed.vocab_size, packed.pad_id, packed.cls_id, packed.sep_id, packed.mask_id)
    module = build("mlm", "bert", size, vocab, packed.seq_len)
    with atomic_directory(out, force=True) as tmp:
        ckpt.save_model(module, tmp)
        save_hf_tokenizer(packed.path / "tokenizer", tmp, seq_len=packed.seq_len)
    return out


def _finetune(ctx: _Context, task: str, model_dir: Path, seed: int, run_dir: Path, label: str) -> dict:
    """results + test predictions of one fine-tuning run (reused when predictions.json exists)."""
    from biotok_train.finetune import run

    pred_file = run_dir / "predictions.json"
    if pred_file.is_file():
        return _read_json(pred_file)
    log.info("[%s] %s seed %d", label, task, seed)
    t0 = time.perf_counter()
    spec, kind, _ = ctx.task_objs[task]
    res = run(model_dir, spec, ctx.datasets[task], kind, ctx.cfg.finetune_config(seed), run_dir, force=True,
              progress=ctx.progress)
    ctx.timings[f"{label}/{task_dir(task)}/f{seed}"] = round(time.perf_counter() - t0, 1)
    value = {"metric": res.dev_metric, "score": float(res.metrics[res.dev_metric]), "metrics": res.metrics,
             "labels": res.labels, "predictions": _encode(res.predictions)}
    _write_json(pred_file, value)
    return value


def task_dir(task: str) -> str:
    """A folder name for a task key: a registered name as is, a path as its name + a short hash."""
    import hashlib

    if re.fullmatch(r"[\w.-]+", task) and not Path(task).exists():
        return task
    digest = hashlib.sha256(str(Path(task).resolve()).encode("utf-8")).hexdigest()[:8]
    stem = re.sub(r"[^\w.-]+", "_", Path(task.rstrip("/")).name) or "task"
    return f"{stem}-{digest}"


def _runs(ctx: _Context, task: str, base: Path, model_dirs: dict[int, Path], label: str) -> dict[str, dict]:
    """Every (pretraining seed, fine-tuning seed) run of ``task`` under ``base``: {"pP-fF": run}."""
    return {f"p{p}-f{f}": _finetune(ctx, task, model_dirs[p], f, base / f"p{p}" / task_dir(task) / f"f{f}", label)
            for p in ctx.cfg.pretrain_seeds for f in ctx.cfg.seeds}


def run_arm(ctx: _Context, size: str, leg: Leg) -> ArmResult:
    """One arm at one size, reusing every finished part under ``arms/SIZE/NAME``."""
    from biotok.formats import load

    cfg = ctx.cfg
    name, tokenizer = leg.name, leg.tokenizer
    arm_dir = ctx.out / "arms" / size / name
    done = arm_dir / "done.json"
    if done.is_file():
        return ArmResult(**_read_json(done))
    arm_dir.mkdir(parents=True, exist_ok=True)

    def seg():
        lines = [l for l in ctx.held.read_text(encoding="utf-8").splitlines() if l.strip()]
        f, pl = segmentation_stats(load(tokenizer), lines)
        return {"fertility": f, "pieces_per_line": pl}

    segs = _cached(ctx.out / "data" / f"{leg.vocab}.segmentation.json", seg)
    data = _prepare_data(ctx, tokenizer, leg.vocab)
    pre, mlm, models, floors = {}, {}, {}, {}
    for p in cfg.pretrain_seeds:
        run_dir = arm_dir / f"p{p}"
        pre[p] = _cached(run_dir / "pretrain.json",
                         lambda: _pretrain(ctx, size, name, data.path, p, run_dir, _init_from(ctx, leg, p)))
        models[p] = run_dir / "model"
        mlm[p] = _cached(run_dir / "mlm.json", lambda: _mlm(ctx, size, name, models[p]))
    metrics = {}
    for task in cfg.tasks:
        runs = _runs(ctx, task, arm_dir, models, f"{size}/{name}")
        metrics[task] = S.summarize_seeds([r["score"] for r in runs.values()]).to_dict()
    if cfg.floor:
        based = cfg.base is not None
        fdir = floor_dir(ctx.out, size, leg, based)
        floor_models = {p: _random_init(ctx, leg, p) if based else _random_model(data.path, size, p, fdir / f"p{p}" / "model")
                        for p in cfg.pretrain_seeds}
        for task in cfg.tasks:
            runs = _runs(ctx, task, fdir, floor_models, str(fdir.relative_to(ctx.out / "arms")))
            floors[task] = S.summarize_seeds([r["score"] for r in runs.values()]).to_dict()
    tokens = int(round(sum(v["tokens_seen"] for v in pre.values()) / len(pre)))
    cpt = ctx.train_chars / max(1, data.num_tokens)
    result = ArmResult(
        size=size, name=name, tokenizer=str(tokenizer), vocab_size=data.vocab_size,
        fertility=round(segs["fertility"], 4), pieces_per_line=round(segs["pieces_per_line"], 2),
        chars_per_token=round(cpt, 4), corpus_tokens=int(data.num_tokens), steps=int(next(iter(pre.values()))["steps"]),
        tokens_seen=tokens, chars_seen=int(round(tokens * cpt)), epochs=round(tokens / max(1, data.num_tokens), 3),
        pretrain_loss=S.summarize_seeds([v["final_loss"] for v in pre.values()]).to_dict(),
        mlm={k: S.summarize_seeds([m["accuracy"][k] for m in mlm.values()]).to_dict() for k in ("top1", "top3", "top5")},
        mlm_words=int(next(iter(mlm.values()))["n_words"]), metrics=metrics, floors=floors,
        init=leg.init, vocabulary=leg.vocab,
    )
    _write_json(done, asdict(result))
    return result


# --------------------------------------------------------------------------- statistics


def _task_rows(ctx: _Context, task: str, runs: dict[str, dict]):
    """Per-example rows of each run for the bootstrap, and the statistic: {run: rows}, metric."""
    test = list(ctx.datasets[task].test)
    _, kind, head = ctx.task_objs[task]
    metric = head.metric
    preds = {k: _decode(r["predictions"]) for k, r in runs.items()}
    labels = next(iter(runs.values()))["labels"]

    def score(items):  # any task: its own scorer on the resampled (example, prediction) pairs
        return head.score([e for e, _ in items], [p for _, p in items], labels).metrics[metric]

    score.__name__ = metric

    def agrees(rows: dict, statistic) -> bool:  # a fast path must give the head's own number
        return all(math.isclose(statistic(rows[k]), runs[k]["score"], abs_tol=1e-9) for k in rows)

    if kind == "ner" and all(hasattr(e, "tags") for e in test):  # strict IOB2 entity F1 from per-sentence counts
        gold = [list(e.tags) for e in test]
        rows = {k: S.entity_stats(gold, p) for k, p in preds.items()}
        if agrees(rows, S.MICRO_F1):
            return rows, S.MICRO_F1
    elif metric in MEAN_METRICS:  # a mean of per-example scores
        rows = {k: S.accuracy_stats([score([(e, q)]) for e, q in zip(test, p)]) for k, p in preds.items()}
        if agrees(rows, S.MEAN):
            return rows, S.MEAN
    return {k: list(zip(test, p)) for k, p in preds.items()}, score


def _load_runs(base: Path, cfg: AblationConfig, task: str) -> dict[str, dict]:
    return {f"p{p}-f{f}": _read_json(base / f"p{p}" / task_dir(task) / f"f{f}" / "predictions.json")
            for p in cfg.pretrain_seeds for f in cfg.seeds}


def _ranks(out: Path, cfg: AblationConfig, size: str, name: str) -> dict[int, list[int]]:
    """An arm's rank of each held-out word (-1: not scored), per pretraining seed."""
    return {p: _read_json(out / "arms" / size / name / f"p{p}" / "mlm.json")["ranks"] for p in cfg.pretrain_seeds}


def _mlm_rows(out: Path, cfg: AblationConfig, size: str, ref: str, cand: str):
    """Top-1 hits per held-out word scored by both arms, per pretraining seed."""
    r, c = _ranks(out, cfg, size, ref), _ranks(out, cfg, size, cand)
    first = cfg.pretrain_seeds[0]
    both = [i for i, (a, b) in enumerate(zip(r[first], c[first])) if a >= 0 and b >= 0]
    hit = lambda ranks: S.accuracy_stats([float(ranks[i] == 1) for i in both])  # noqa: E731
    return {str(p): hit(r[p]) for p in r}, {str(p): hit(c[p]) for p in c}


def _bootstrap(ref_by_run: dict, cand_by_run: dict, metric, cfg: AblationConfig, name: str | None = None
               ) -> S.PairedBootstrap:
    ref, cand, clusters = S.pool_seeds(ref_by_run, cand_by_run)
    return S.paired_bootstrap(ref, cand, metric, clusters=clusters, n_resamples=cfg.n_resamples,
                              confidence=cfg.confidence, seed=0, name=name)


def _mlm_floor_rows(out: Path, cfg: AblationConfig, size: str, name: str, hits: Sequence[float]):
    """Top-1 hits of an arm and of the word floor on the words the arm could score, per seed."""
    r = _ranks(out, cfg, size, name)
    words = [i for i, k in enumerate(r[cfg.pretrain_seeds[0]]) if k >= 0]
    arm = {str(p): S.accuracy_stats([float(r[p][i] == 1) for i in words]) for p in r}
    return {str(p): S.accuracy_stats([hits[i] for i in words]) for p in r}, arm


def compute_statistics(ctx: _Context, arms: list[ArmResult], legs: list[Leg]) -> tuple[list, list, list, list]:
    """(comparisons vs the reference, arm-vs-floor checks, rank agreements across sizes,
    masked-word top-1 of each arm against always answering the most frequent word)."""
    cfg, out = ctx.cfg, ctx.out
    comparisons, floors, mlm_floors = [], [], []
    names = [leg.name for leg in legs]
    ref = names[0]
    word, hits = ctx.word_floor
    for size in cfg.sizes:
        if word:
            for n in names:
                b = _bootstrap(*_mlm_floor_rows(out, cfg, size, n, hits), S.MEAN, cfg)
                mlm_floors.append({"size": size, "task": MLM, "arm": n, "word": word, **b.to_dict(),
                                   "beats_floor": b.verdict == S.BETTER})
        for cand in names[1:]:
            r_rows, c_rows = _mlm_rows(out, cfg, size, ref, cand)
            b = _bootstrap(r_rows, c_rows, S.MEAN, cfg)
            comparisons.append({"size": size, "task": MLM, "reference_arm": ref, "candidate_arm": cand,
                                **b.to_dict(), "metric": "top1"})
        for task in cfg.tasks:
            rows = {n: _task_rows(ctx, task, _load_runs(out / "arms" / size / n, cfg, task)) for n in names}
            for cand in names[1:]:
                b = _bootstrap(rows[ref][0], rows[cand][0], rows[ref][1], cfg, ctx.task_objs[task][2].metric)
                comparisons.append({"size": size, "task": task, "reference_arm": ref, "candidate_arm": cand,
                                    **b.to_dict()})
            if cfg.floor:
                for leg in legs:
                    n = leg.name
                    fdir = floor_dir(out, size, leg, cfg.base is not None)
                    floor_rows, metric = _task_rows(ctx, task, _load_runs(fdir, cfg, task))
                    b = _bootstrap(floor_rows, rows[n][0], metric, cfg, ctx.task_objs[task][2].metric)
                    floors.append({"size": size, "task": task, "arm": n, **b.to_dict(),
                                   "beats_floor": b.verdict == S.BETTER})
    rankings = []
    if len(cfg.sizes) > 1:
        by = {(a.size, a.name): a for a in arms}
        for task in (MLM, *cfg.tasks):
            scores = {s: {n: by[(s, n)].summary(task).mean for n in names} for s in cfg.sizes}
            label = "MLM top-1" if task == MLM else f"{task} {ctx.task_objs[task][2].metric}"
            rankings += [r.to_dict() for r in S.rank_agreement(scores, metric=label)]
    return comparisons, floors, rankings, mlm_floors


# --------------------------------------------------------------------------- the report


def _metric_label(ctx_tasks: dict, task: str) -> str:
    return "MLM top-1" if task == MLM else f"{ctx_tasks[task]['name']} {ctx_tasks[task]['metric']}"


def _at(size: str) -> str:
    """'At size tiny', or 'With the base's architecture' for the arms of a --base ablation."""
    return "With the base's architecture" if size == BASE_SIZE else f"At size {size}"


def verdict_sentences(cfg: AblationConfig, tasks: dict, comparisons: list[dict], floors: list[dict],
                      rankings: list[dict], arms: list[ArmResult], mlm_floors: Sequence[dict] = ()) -> list[str]:
    """The verdicts in words, every one computed from the numbers."""
    out = []
    seeds = len(cfg.pretrain_seeds) * len(cfg.seeds)
    pct = f"{cfg.confidence:.0%}"
    for c in comparisons:
        what = _metric_label(tasks, c["task"])
        ci = f"{c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}]"
        n = (f"{c['n_clusters']} held-out words × {len(cfg.pretrain_seeds)} pretraining seed(s)" if c["task"] == MLM
             else f"{c['n_clusters']} test examples × {seeds} seed pair(s)")
        if c["verdict"] == S.INDISTINGUISHABLE:
            head = f"cannot be told apart from {c['reference_arm']}"
        else:
            head = f"is {c['verdict']} than {c['reference_arm']}"
        out.append(f"{_at(c['size'])}, on {what}, {c['candidate_arm']} {head}: {ci} "
                   f"({pct} paired bootstrap interval over {n}).")
    for f in floors:
        if not f["beats_floor"]:
            out.append(f"{_at(f['size'])}, {f['arm']} does not beat its floor on {_metric_label(tasks, f['task'])} "
                       f"(pooled over seeds: pretrained {f['candidate']:.3f} vs random init {f['reference']:.3f}, "
                       f"{f['difference']:+.3f} [{f['low']:+.3f}, {f['high']:+.3f}]).")
    for size in cfg.sizes:
        for task in cfg.tasks:
            bad = [f["arm"] for f in floors if f["size"] == size and f["task"] == task and not f["beats_floor"]]
            if bad:
                out.append(f"The budget ({cfg.budget} steps, {cfg.tokens_per_arm:,} token positions per arm) was too "
                           f"small to judge the vocabularies on {_metric_label(tasks, task)} {_at(size).lower()}: "
                           f"{len(bad)} of {len({a.name for a in arms})} arms do not beat a randomly initialised model, "
                           "so the verdicts on that task say little about the vocabularies.")
    for size in cfg.sizes:
        low = [f for f in mlm_floors if f["size"] == size and not f["beats_floor"]]
        if low:
            scored = ", ".join(f"{f['arm']} ({f['candidate']:.3f})" for f in low)
            out.append(f"{_at(size)}, masked-word top-1 of {scored} "
                       f"is no better than always answering “{low[0]['word']}” ({low[0]['reference']:.3f} on the same "
                       "words): these models have not learned to use the context, so their masked-word comparison "
                       "says little about the vocabularies.")
    out += [r["sentence"] for r in rankings]
    return out


def _start(cfg: AblationConfig, a: ArmResult) -> str:
    """The first column of a row: the size, or with a base where the arm's model starts."""
    if cfg.base is None:
        return a.size
    return {"continual": "the base", "transfer": f"the base, {cfg.transfer_method} rows",
            "scratch": "random weights"}[a.init]


def _cell(s: dict, digits: int = 3) -> str:
    return S.SeedSummary(s["mean"], s["std"], s["n"], tuple(s["values"])).format(digits)


def format_report(cfg: AblationConfig, tasks: dict, arms: list[ArmResult], comparisons: list[dict],
                  floors: list[dict], rankings: list[dict], sentences: list[str], names: list[str],
                  out: str | os.PathLike[str], mlm_floors: Sequence[dict] = ()) -> str:
    """ablation.md: budgets, results with intervals and verdicts, floors, rankings, verdicts, command."""
    pct = f"{cfg.confidence:.0%}"
    seeds = len(cfg.pretrain_seeds) * len(cfg.seeds)
    first, who = ("starts from", "arm") if cfg.base is not None else ("size", "tokenizer")
    if cfg.base is not None:
        start = (f"Reference: **{names[0]}** (the first arm). Arms, as PubMedBERT's Table 9: *continual* continues "
                 f"the base model `{cfg.base}` with its own vocabulary; *transfer.T* moves the base to T's vocabulary "
                 f"(`{cfg.transfer_method}`: shared pieces keep their rows) and continues; *scratch.T* is the base's "
                 "architecture from random weights with T's vocabulary. Every arm: MLM with the base's architecture, "
                 f"{cfg.budget} steps × ")
    else:
        start = f"Reference: **{names[0]}** (the first tokenizer). Every arm: BERT MLM, {cfg.budget} steps × "
    lines = ["# Vocabulary ablation", "",
             start +
             f"{cfg.batch_size} sequences × {cfg.seq_len} pieces = {cfg.tokens_per_arm:,} token positions; "
             f"pretraining seeds {', '.join(map(str, cfg.pretrain_seeds))}; fine-tuning seeds "
             f"{', '.join(map(str, cfg.seeds))}.", "",
             "## Budget", "",
             "Same steps, batch and sequence length for every arm. A vocabulary with fewer pieces per word "
             "covers more characters of text with the same tokens: *characters seen* credits it.", "",
             f"| {first} | {who} | vocab | fertility | pieces/line | tokens seen | chars/token | characters seen | epochs | pretrain loss |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for a in arms:
        lines.append(f"| {_start(cfg, a)} | {a.name} | {a.vocab_size:,} | {a.fertility:.3f} | {a.pieces_per_line:.1f} | "
                     f"{a.tokens_seen:,} | {a.chars_per_token:.2f} | {a.chars_seen:,} | {a.epochs:.2f} | "
                     f"{_cell(a.pretrain_loss)} |")
    keys = [MLM, *cfg.tasks]
    for size in cfg.sizes:
        lines += ["", f"## Results {_at(size).lower()}", "",
                  f"Mean ± std over seeds; Δ: candidate minus {names[0]}, with its {pct} paired bootstrap interval "
                  f"over test examples pooled across seeds, and the verdict.", ""]
        head = [who]
        for k in keys:
            head += [_metric_label(tasks, k), "Δ [CI]", "verdict"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for n in names:
            a = next(x for x in arms if x.size == size and x.name == n)
            cells = [n]
            for k in keys:
                summary = a.mlm["top1"] if k == MLM else a.metrics[k]
                flag = ""
                if any(f["size"] == size and f["task"] == k and f["arm"] == n and not f["beats_floor"]
                       for f in (mlm_floors if k == MLM else floors)):
                    flag = " ⚠ not above floor"
                cells.append(_cell(summary) + flag)
                c = next((c for c in comparisons if c["size"] == size and c["task"] == k and c["candidate_arm"] == n), None)
                if c is None:
                    cells += ["reference", ""]
                else:
                    cells += [f"{c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}]", f"**{c['verdict']}**"]
            lines.append("| " + " | ".join(cells) + " |")
    if floors or mlm_floors:
        lines += ["", "## Floors", "",
                  "Each task fine-tuned the same way from a randomly initialised model of the same size and "
                  "vocabulary: how much pretraining bought. Masked words: always answering the most frequent word "
                  f"of the pretraining text, on the same words. Δ: pretrained minus floor ({pct} interval).", "",
                  f"| {first} | task | {who} | floor | pretrained | Δ [CI] | beats its floor |",
                  "|---|---|---|---|---|---|---|"]
        for f in [*mlm_floors, *floors]:
            a = next(x for x in arms if x.size == f["size"] and x.name == f["arm"])
            if f["task"] == MLM:
                floor_cell, pre = f"{f['reference']:.3f} (always “{f['word']}”)", _cell(a.mlm["top1"])
            else:
                floor_cell, pre = f"{_cell(a.floors[f['task']])} (random init)", _cell(a.metrics[f["task"]])
            lines.append(f"| {_start(cfg, a)} | {_metric_label(tasks, f['task'])} | {f['arm']} | {floor_cell} | "
                         f"{pre} | {f['difference']:+.3f} [{f['low']:+.3f}, {f['high']:+.3f}] | "
                         f"{'yes' if f['beats_floor'] else '**no**'} |")
    if rankings:
        lines += ["", "## Do the sizes agree?", ""] + [f"- {r['sentence']}" for r in rankings]
    lines += ["", "## Verdicts", ""] + [f"- {s}" for s in sentences]
    model = (f"MLM from the base `{cfg.base}` (arms {', '.join(cfg.arms)})" if cfg.base is not None
             else f"BERT MLM (sizes {', '.join(cfg.sizes)})")
    lines += ["", "## Recipe", "",
              f"- Pretraining: {model}, {cfg.budget} steps, batch {cfg.batch_size}, "
              f"sequence length {cfg.seq_len}, peak lr {cfg.lr:g}; the corpus minus each {cfg.heldout_every}th line.",
              f"- Fine-tuning: {cfg.finetune.epochs} epochs, lr {cfg.finetune.lr:g}, batch {cfg.finetune.batch_size}"
              + (f", at most {cfg.finetune.max_steps} steps" if cfg.finetune.max_steps else "")
              + f", early stopping on dev (patience {cfg.finetune.patience}); scored on test. Seed pairs per arm and task: {seeds}.",
              f"- Tasks: " + "; ".join(f"{t['name']} ({t['type']}, {t['metric']}, {t['n_test']} test examples)"
                                      for t in tasks.values()) + ".",
              f"- Masked words: whole-word top-k on {arms[0].mlm_words if arms else 0} held-out words, the same for "
              "every arm (the interval pairs the words both arms could score).",
              f"- Statistics: paired percentile bootstrap, {cfg.n_resamples} resamples of test examples (each drawn "
              "with all its seeds), fixed seed 0; verdict better/worse when the interval excludes 0.",
              "", "## Command and versions", "", "```", cfg.command(out), "```", "", _versions_line(), ""]
    return "\n".join(lines)


def _versions_line() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [f"Python {platform.python_version()}"]
    for pkg in ("biotok", "torch", "transformers", "tokenizers", "seqeval", "scipy", "numpy"):
        try:
            parts.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            continue
    return "Versions: " + ", ".join(parts) + "."


def plot(cfg: AblationConfig, tasks: dict, arms: list[ArmResult], comparisons: list[dict], names: list[str],
         path: Path, mlm_floors: Sequence[dict] = ()) -> Path:
    """One row per size, one panel per metric: mean ± std bars, each seed a dot, the floor a dashed
    line, and each candidate's verdict above its bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [MLM, *cfg.tasks]
    fig, axes = plt.subplots(len(cfg.sizes), len(keys), figsize=(3.6 * len(keys) + 0.6, 3.4 * len(cfg.sizes)),
                             squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, size in enumerate(cfg.sizes):
        for j, k in enumerate(keys):
            ax = axes[i][j]
            top = 0.05
            for x, n in enumerate(names):
                a = next(v for v in arms if v.size == size and v.name == n)
                s = a.summary(k)
                ax.bar(x, s.mean, 0.6, yerr=s.std or 0, capsize=4, color=colors[x % len(colors)], alpha=0.85)
                ax.plot([x] * len(s.values), s.values, "k.", ms=5)
                top = max(top, s.mean + (s.std or 0), *s.values)
                wf = next((f for f in mlm_floors if f["size"] == size and f["arm"] == n), None) if k == MLM else None
                if wf is not None or (k != MLM and k in a.floors):
                    fl = wf["reference"] if wf is not None else a.floors[k]["mean"]
                    label = (f"always “{wf['word']}”" if wf is not None else "floor (random init)") if x == 0 else None
                    ax.plot([x - 0.35, x + 0.35], [fl, fl], "k--", lw=1.2, label=label)
                    top = max(top, fl)
                c = next((c for c in comparisons if c["size"] == size and c["task"] == k and c["candidate_arm"] == n), None)
                if c is not None:
                    ax.annotate(c["verdict"] if c["verdict"] != S.INDISTINGUISHABLE else "≈", (x, s.mean + (s.std or 0)),
                                xytext=(0, 4), textcoords="offset points", ha="center", fontsize=8)
            ax.set_xticks(range(len(names)), names, rotation=15, fontsize=8)
            ax.set_ylim(0, min(1.0, top * 1.25))
            ax.set_title(f"{_metric_label(tasks, k)} · {size}", fontsize=9)
            if (k == MLM and mlm_floors) or (k != MLM and cfg.floor and j == 1):
                ax.legend(fontsize=7, loc="best")
    fig.suptitle(f"{cfg.budget} steps × {cfg.batch_size} × {cfg.seq_len} per arm; mean ± std over seeds "
                 f"(verdicts vs {names[0]}: {cfg.confidence:.0%} paired bootstrap)", fontsize=9)
    fig.tight_layout()
    with atomic_file(path, force=True) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
    return path


# --------------------------------------------------------------------------- entry


def same_recipe(old: dict, new: dict) -> bool:
    """Whether a saved recipe is ``new``: an option added to biotok since it was saved counts as
    equal when ``new`` keeps its default (an upgrade does not orphan a finished ablation)."""
    defaults = AblationConfig(tokenizers=("x",), corpus=()).recipe()
    return all(old[k] == v if k in old else k in defaults and defaults[k] == v for k, v in new.items()) and \
        set(old) <= set(new)


def _check_inputs(cfg: AblationConfig, out: Path) -> None:
    """The corpus, the tokenizers, the sequence length and the output folder, checked at the door."""
    from biotok.corpus import resolve
    from biotok.errors import OutputExistsError
    from biotok.formats import load
    from biotok.output import check_can_create
    from biotok_train.pretrain.prepare import MAX_SEQ_LEN

    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"{out} exists and is not a folder; choose another --out")
    check_can_create(out / "config.json")
    if not 8 <= cfg.seq_len <= MAX_SEQ_LEN:
        raise ConfigError(f"--seq-len {cfg.seq_len}: the models take 8 to {MAX_SEQ_LEN} tokens")
    resolve(list(cfg.corpus))
    toks = [load(t) for t in cfg.tokenizers]
    if cfg.base is not None:  # a masked LM with its tokenizer, and candidates it can move to
        from biotok_train.hf_models import load_model_tokenizer
        from biotok_train.pretrain.init import check_init_from
        from biotok_train.transfer import check_specials

        check_init_from(cfg.base, load_model_tokenizer(cfg.base), "mlm")
        for t, tok in zip(cfg.tokenizers, toks):
            check_specials(tok, f"--tokenizers {t}")


def run_ablation(cfg: AblationConfig, out: str | os.PathLike[str], progress: bool = True) -> AblationReport:
    """Run (or resume) every arm, then write ablation.md, ablation.json and ablation.png."""
    from biotok_train import datasets
    from biotok_train.evaluate.masked_words import sample_words
    from biotok_train.finetune import make_head, resolve

    out = Path(out)
    _check_inputs(cfg, out)  # a wrong input fails here, before anything is written
    resolved = {t: resolve(t, None, cfg.data_dir) for t in cfg.tasks}
    loaded = {t: data for t, (_, data, _) in resolved.items()}
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        cfg_file = out / "config.json"
        tokenizers = list(cfg.tokenizers)
        if cfg_file.is_file():
            old = _read_json(cfg_file)
            if not same_recipe(old.get("recipe") or {}, cfg.recipe()):
                if (out / "arms").exists():
                    raise ConfigError(f"{out} holds an ablation with another recipe (see {cfg_file}); "
                                      "use another --out")
                log.info("%s: no arm was run with its old recipe; starting with this one", out)
            else:
                tokenizers = list(dict.fromkeys([*old.get("tokenizers", []), *cfg.tokenizers]))
        _write_json(cfg_file, {"recipe": cfg.recipe(), "tokenizers": tokenizers})
        train, held, chars = split_corpus(cfg, out)
        samples = sample_words(held.read_text(encoding="utf-8").splitlines(), cfg.n_words, seed=0)
    except BaseException:
        if created:  # nothing worth resuming yet: leave no partial folder
            shutil.rmtree(out, ignore_errors=True)
        raise
    objs = {t: (spec, kind, make_head(kind, cfg.finetune_config(cfg.seeds[0]), spec))
            for t, (spec, _, kind) in resolved.items()}
    tasks = {t: {"name": spec.name if spec is not None else getattr(loaded[t], "name", t), "type": kind,
                 "metric": head.metric, "n_test": len(loaded[t].test)} for t, (spec, kind, head) in objs.items()}
    timings_file = out / "timings.json"
    timings = _read_json(timings_file) if timings_file.is_file() else {}
    ctx = _Context(cfg, out, train, held, chars, samples, loaded, objs, progress, timings, word_floor(train, samples))
    legs = plan_legs(cfg, dict(zip(tokenizers, leg_names(tokenizers))))
    names = [leg.name for leg in legs]
    try:
        arms = [run_arm(ctx, size, leg) for size in cfg.sizes for leg in legs]
    finally:
        _write_json(timings_file, timings)
    comparisons, floors, rankings, mlm_floors = compute_statistics(ctx, arms, legs)
    sentences = verdict_sentences(cfg, tasks, comparisons, floors, rankings, arms, mlm_floors)
    md = format_report(cfg, tasks, arms, comparisons, floors, rankings, sentences, names, out, mlm_floors)
    with atomic_file(out / "ablation.md", force=True) as tmp:
        tmp.write_text(md, encoding="utf-8")
    _write_json(out / "ablation.json", {
        "recipe": cfg.recipe(), "tokenizers": list(cfg.tokenizers), "reference": names[0],
        "command": cfg.command(out), "versions": _versions_line(), "tasks": tasks,
        "arms": [asdict(a) for a in arms], "comparisons": comparisons, "floors": floors, "mlm_floors": mlm_floors,
        "rankings": rankings,
        "verdicts": sentences,
    })
    png = plot(cfg, tasks, arms, comparisons, names, out / "ablation.png", mlm_floors)
    return AblationReport(cfg, arms, tasks, comparisons, floors, rankings, sentences, md, out / "ablation.md",
                          out / "ablation.json", png, mlm_floors)


from biotok_train._verbs import make_verb  # noqa: E402

make_verb(__name__, "biotok_train.ablate:run_ablation")  # biotok_train.X(...) calls it
