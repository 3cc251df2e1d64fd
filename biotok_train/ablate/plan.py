"""The plan of an ablation: its arms (legs), what the runs share, and the
layout of OUT (where each part lives, its JSON files)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath
from typing import Sequence

from biotok_train.ablate.config import AblationConfig


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
    tokenizer: str  # its tokenizer (general, continual: the base model directory; extend: extend/VOCAB in OUT)
    vocab: str  # the vocabulary's name: data/VOCAB holds its prepared text
    init: str = "scratch"  # scratch | continual | transfer | general | extend
    method: str = ""  # transfer: how the new rows are made (TRANSFER_METHODS)

    @property
    def pretrained(self) -> bool:
        """Whether the arm is pretrained (every arm but general, the base as it is)."""
        return self.init != "general"


def base_vocab(cfg: AblationConfig, names: dict[str, str]) -> str:
    """The name of the base's own vocabulary, kept apart from the candidates' names."""
    vocab = leg_names([cfg.base.model])[0]
    while vocab in names.values():
        vocab += "-base"
    return vocab


def plan_legs(cfg: AblationConfig, names: dict[str, str]) -> list[Leg]:
    """The arms in report order, the reference first. Without a base: one scratch arm per
    tokenizer. With one: general, continual (the base's vocabulary), then per tokenizer a transfer
    arm per method (``transfer.T``, or ``transfer-METHOD.T`` with several methods) and scratch.
    The extend arm (``extend.B+K``: the base's vocabulary B plus K pieces, FVT rows) follows continual."""
    if cfg.base.model is None:
        return [Leg(names[t], t, names[t]) for t in cfg.tokenizers]
    bv = base_vocab(cfg, names)
    legs = [Leg(f"{a}.{bv}", cfg.base.model, bv, a) for a in ("general", "continual") if a in cfg.arms]
    if "extend" in cfg.arms:
        ev = f"{bv}+{cfg.base.extend_add}"
        legs.append(Leg(f"extend.{ev}", str(Layout().extend(ev)), ev, "extend", "fvt"))
    several = len(cfg.base.transfer_methods) > 1
    for t in cfg.tokenizers:
        if "transfer" in cfg.arms:
            legs += [Leg(f"transfer-{m}.{names[t]}" if several else f"transfer.{names[t]}", t, names[t], "transfer", m)
                     for m in cfg.base.transfer_methods]
        if "scratch" in cfg.arms:
            legs.append(Leg(f"scratch.{names[t]}", t, names[t], "scratch"))
    return legs


def comparison_pairs(legs: Sequence[Leg]) -> list[tuple[str, str]]:
    """(reference, candidate) pairs the report compares: every arm against the first; with a base
    also every transfer and scratch arm against continual (the same budget on the base's
    vocabulary: what the vocabulary buys) and each transfer method against the first method of the
    same vocabulary (what that method buys)."""
    ref = legs[0].name
    pairs = [(ref, leg.name) for leg in legs[1:]]
    cont = next((leg.name for leg in legs if leg.init == "continual"), None)
    for leg in legs:
        if cont and cont != ref and leg.init in ("transfer", "scratch", "extend"):
            pairs.append((cont, leg.name))
        first = next(x for x in legs if x.init == leg.init and x.vocab == leg.vocab)
        if leg.init == "transfer" and first is not leg and first.name != ref:
            pairs.append((first.name, leg.name))
    return list(dict.fromkeys(pairs))


@dataclass(frozen=True)
class Layout:
    """Every path under an ablation's OUT (see :mod:`biotok_train.ablate`), the one place they are
    spelled: under ``out``, or relative to it (the default: what jobs own and take as arguments)."""

    out: PurePath = PurePosixPath()

    def corpus(self, name: str = "") -> PurePath:
        """corpus/: the split (pretrain.txt, heldout.txt, done)."""
        return self.out / "corpus" / name if name else self.out / "corpus"

    def data(self, vocab: str, heldout: bool = False) -> PurePath:
        """data/VOCAB: the pretraining text prepared with VOCAB (data/VOCAB.heldout: the held-out lines)."""
        return self.out / "data" / (f"{vocab}.heldout" if heldout else vocab)

    def transfer(self, method: str, vocab: str) -> PurePath:
        return self.out / "transfer" / method / vocab

    def extend(self, vocab: str) -> PurePath:
        """extend/VOCAB: the base's tokenizer extended (``biotok extend``), the extend arm's vocabulary."""
        return self.out / "extend" / vocab

    def init(self, vocab: str, p: int) -> PurePath:
        """init/random.VOCAB/pP: the base's architecture with random weights and VOCAB's tokenizer."""
        return self.out / "init" / f"random.{vocab}" / f"p{p}"

    def run(self, size: str, arm: str, p: int, step: int | None = None) -> PurePath:
        """arms/SIZE/ARM/pP: one pretraining seed of an arm (model/, curve/, TASK/fF); with ``step``,
        arms/SIZE/ARM/kK/pP: the curve's fine-tunes of its model after K steps."""
        return self.out / "arms" / size / arm / (f"k{step}" if step is not None else "") / f"p{p}"

    def floor_model(self, size: str, arm: str, p: int) -> PurePath:
        return self.out / "arms" / size / arm / "floor" / f"p{p}" / "model"

    def probe(self) -> PurePath:
        return self.out / "probe"


def data_dir(out: Path, vocab: str, heldout: bool = False) -> Path:
    """OUT/data/VOCAB (:meth:`Layout.data`)."""
    return Path(Layout(Path(out)).data(vocab, heldout))


def floor_name(leg: Leg, base: bool) -> str:
    """The name of an arm's floor under arms/SIZE/: its own (NAME/floor), or with a base one per
    vocabulary (floor.VOCAB: the arms of a vocabulary share the same random-init model)."""
    return f"floor.{leg.vocab}" if base else f"{leg.name}/floor"


def snapshot_dir(run_dir: Path, step: int) -> Path:
    """RUN/curve/step-K: a pretraining run's model after K steps (a point of the curve)."""
    return run_dir / "curve" / f"step-{step}"


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                   "vocab.txt", "vocab.json", "merges.txt", "spm.model", "sentencepiece.bpe.model")


def task_dir(task: str, key: str | None = None) -> str:
    """A folder name for a task: a registered name as is; a user's files as ``file-`` + a short hash
    of ``key`` (their content key, :func:`biotok_train.ablate.keys.task_key`): moved or renamed,
    their runs keep their folder, edited they get another. Without a key: the path's name + a
    short hash of the resolved path."""
    import hashlib  # lazy: only for task paths

    if re.fullmatch(r"[\w.-]+", task) and not Path(task).exists():
        return task
    if key is not None:
        return f"file-{key[:8]}"
    digest = hashlib.sha256(str(Path(task).resolve()).encode("utf-8")).hexdigest()[:8]
    stem = re.sub(r"[^\w.-]+", "_", Path(task.rstrip("/")).name) or "task"
    return f"{stem}-{digest}"


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


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
