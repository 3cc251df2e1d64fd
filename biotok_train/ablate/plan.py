"""The plan of an ablation: its arms (legs) and their results, what the runs share, and the
layout of OUT (where each part lives, its JSON files)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from biotok.output import atomic_file
from biotok_train import stats as S
from biotok_train.config import AblationConfig

MLM = "mlm"  # the key of masked-word accuracy among the task keys of the report


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
    mlm: dict  # {"top1"|"top3"|"top5": SeedSummary dict} over pretraining seeds
    mlm_words: int
    metrics: dict  # {task: SeedSummary dict of its metric over every (pretraining, fine-tuning) seed pair}
    floors: dict = field(default_factory=dict)  # {task: SeedSummary dict}, random init
    init: str = "scratch"  # scratch | continual | transfer (see AblationConfig.arms)
    vocabulary: str = ""  # the name of its vocabulary (the tokenizer's leg name)
    # held-out [MASK] loss and top-1 beside the unigram floor and the most-frequent-piece top-1, pooled over
    # pretraining seeds, with the gap's interval (biotok_train.pretrain.heldout.pooled_summary)
    heldout_mlm: dict = field(default_factory=dict)
    probe: dict = field(default_factory=dict)  # causal-LM probe of its vocabulary (with --probe)
    pretrain_loss: dict | None = None  # older runs only: a single step's training loss, no longer reported

    def summary(self, task: str) -> S.SeedSummary:
        d = self.mlm["top1"] if task == MLM else self.metrics[task]
        return S.SeedSummary.from_dict(d)


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


def data_dir(out: Path, vocab: str, heldout: bool = False) -> Path:
    """OUT/data/VOCAB: the pretraining text prepared with VOCAB (OUT/data/VOCAB.heldout: the held-out lines)."""
    return out / "data" / (f"{vocab}.heldout" if heldout else vocab)


def arm_model_dir(out: Path, size: str, name: str, seed: int) -> Path:
    """OUT/arms/SIZE/NAME/pSEED/model: an arm's pretrained model for one pretraining seed."""
    return out / "arms" / size / name / f"p{seed}" / "model"


def prepared(d: Path, text: Path, tokenizer: str, seq_len: int, progress: bool = False):
    """``text`` prepared with ``tokenizer`` into ``d``, or the preparation already there."""
    from biotok_train.config import PrepareConfig
    from biotok_train.pretrain.prepare import open_prepared, prepare

    if (d / "meta.json").is_file():
        return open_prepared(d)
    return prepare([str(text)], str(tokenizer), PrepareConfig(seq_len=seq_len), d, force=True, progress=progress)


def floor_dir(out: Path, size: str, leg: Leg, base: bool) -> Path:
    """Where an arm's floor runs live: its own folder, or with a base one per vocabulary (the
    transfer and scratch arms of a vocabulary share the same random-init model)."""
    return out / "arms" / size / (f"floor.{leg.vocab}" if base else f"{leg.name}/floor")


@dataclass
class Context:
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


def task_dir(task: str) -> str:
    """A folder name for a task key: a registered name as is, a path as its name + a short hash."""
    import hashlib

    if re.fullmatch(r"[\w.-]+", task) and not Path(task).exists():
        return task
    digest = hashlib.sha256(str(Path(task).resolve()).encode("utf-8")).hexdigest()[:8]
    stem = re.sub(r"[^\w.-]+", "_", Path(task.rstrip("/")).name) or "task"
    return f"{stem}-{digest}"


def write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, force=True) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def cached(path: Path, compute: Callable[[], Any]) -> Any:
    """The JSON in ``path``, or ``compute()`` written there: each finished part is reused."""
    if path.is_file():
        return read_json(path)
    value = compute()
    write_json(path, value)
    return value


def encode(x):
    """Predictions as JSON: sets become {"__set__": [...]} so that they come back as sets."""
    if isinstance(x, (set, frozenset)):
        return {"__set__": sorted(encode(v) for v in x)}
    if isinstance(x, (list, tuple)):
        return [encode(v) for v in x]
    return x


def decode(x):
    if isinstance(x, dict) and set(x) == {"__set__"}:
        return set(x["__set__"])
    if isinstance(x, list):
        return [decode(v) for v in x]
    return x
