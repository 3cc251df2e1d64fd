"""A job's identity and the contents it is keyed by.

:class:`Key`: what a job is (its kind, size, arm, vocabulary, transfer method, pretraining seed,
task, fine-tuning seed, curve step); ``str(key)`` is the job key that names its record
(``OUT/jobs/KEY.json``) and :meth:`Key.parse` the only reader of one.

The contents: the corpus (its files' sha256), each vocabulary (its tokenizer's fingerprint), the
base (its model files' sha256), each task (the sha256 of the files its reader opened) and the
arithmetic. A path moved with the same content keeps its key; a file changed in place does not.
:func:`fingerprints` is what every job's inputs are made of (:func:`biotok_train.ablate.plan.make_plan`
says which job takes which).

A job's *content key* (:func:`content_keys`) hashes its own inputs (contents and settings, never a
path) and its needs' content keys, so a changed input makes exactly the jobs downstream of it stale;
a job is *done* when ``OUT/jobs/KEY.json`` holds a record of that key. A killed job's files are
resumed when it was started with the same content key, removed otherwise."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence

from biotok.io import sha256_files
from biotok_train.ablate.config import AblationConfig



class Keyed(Protocol):
    """What a content key reads of a job (:class:`~biotok_train.ablate.jobs.Job`; no import of jobs: it imports keys)."""

    key: str
    needs: Sequence[str]
    inputs: Any

# the kinds of job, in the order a plan first makes them
KINDS = ("extend", "prepare", "transfer", "init", "floor-model", "pretrain", "evaluate", "finetune", "curve", "probe")
_NUMBER = {"p": "pseed", "f": "fseed", "k": "step"}


def digest(*parts: Any) -> str:
    """sha256 of the JSON of ``parts``: the content key of plain values."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_keys(jobs: Sequence[Keyed]) -> dict[str, str]:
    """Each job's content key: its key, its own inputs, and its needs' content keys (in plan order)."""
    keys: dict[str, str] = {}
    for job in jobs:
        missing = [n for n in job.needs if n not in keys]
        if missing:
            raise ValueError(f"job {job.key} needs {missing[0]}, which is not planned before it")
        keys[job.key] = digest(job.key, job.inputs, [keys[n] for n in job.needs])
    return keys


@dataclass(frozen=True)
class Key:
    """One job's identity. Its string (the job key) by kind::

        extend/VOCAB                     prepare/VOCAB                    transfer/METHOD/VOCAB
        init/VOCAB/pP
        floor-model/SIZE/ARM/pP          pretrain/SIZE/ARM/pP             evaluate/SIZE/ARM/pP[/kK]
        finetune/SIZE/ARM/pP/TASK/fF     curve/SIZE/ARM/kK/pP/TASK/fF     probe

    ARM is an arm's name, or its floor's (``NAME/floor``, with a base ``floor.VOCAB``); TASK a task's
    folder name (:func:`~biotok_train.ablate.plan.task_dir`)."""

    kind: str  # one of KINDS
    size: str | None = None  # a model size (as-base: the base's architecture)
    arm: str | None = None  # an arm's name, or its floor's
    vocab: str | None = None  # a vocabulary's name (data/VOCAB)
    method: str | None = None  # a transfer method (TRANSFER_METHODS)
    pseed: int | None = None  # the pretraining seed (pP)
    task: str | None = None  # a task's folder name
    fseed: int | None = None  # the fine-tuning seed (fF)
    step: int | None = None  # a step of the curve (kK)

    def __str__(self) -> str:
        k = self.kind
        if k in ("extend", "prepare", "transfer", "init", "probe"):
            return "/".join(x for x in (k, self.method, self.vocab) if x is not None) + \
                (f"/p{self.pseed}" if k == "init" else "")
        if k == "curve":
            return f"{k}/{self.size}/{self.arm}/k{self.step}/p{self.pseed}/{self.task}/f{self.fseed}"
        tail = f"/{self.task}/f{self.fseed}" if k == "finetune" else f"/k{self.step}" if self.step is not None else ""
        return f"{k}/{self.size}/{self.arm}/p{self.pseed}{tail}"

    @classmethod
    def parse(cls, text: str) -> "Key":
        """The key a job key string names; one that no plan makes: ValueError."""
        parts = str(text).split("/")
        kind, n = parts[0], len(parts)
        layouts = {"extend": (2, "vocab"), "prepare": (2, "vocab"), "transfer": (3, "method vocab"), "init": (3, "vocab p"), "probe": (1, ""),
                   "pretrain": (4, "size arm p"), "floor-model": (4, "size arm p"),
                   "evaluate": (4 + (n == 5), "size arm p" + " k" * (n == 5))}
        if kind in layouts and n == layouts[kind][0]:
            names, values = layouts[kind][1].split(), parts[1:]
        elif kind == "finetune" and n >= 6:
            names, values = "size arm p task f".split(), [parts[1], "/".join(parts[2:-3]), *parts[-3:]]
        elif kind == "curve" and n >= 7:
            names, values = "size arm k p task f".split(), [parts[1], "/".join(parts[2:-4]), *parts[-4:]]
        else:
            raise ValueError(f"{text!r} is not a job key")
        fields = {}
        for name, value in zip(names, values):
            if name in _NUMBER:
                if not re.fullmatch(rf"{name}\d+", value):
                    raise ValueError(f"{text!r} is not a job key ({value!r} is not {name}N)")
                fields[_NUMBER[name]] = int(value[1:])
            else:
                fields[name] = value
        key = cls(kind, **fields)
        if str(key) != text or not all(values):
            raise ValueError(f"{text!r} is not a job key")
        return key

    @property
    def floor(self) -> bool:
        """A floor's job: a fine-tune from a random-init model (``NAME/floor``, ``floor.VOCAB``)."""
        return self.arm is not None and (self.arm.endswith("/floor") or self.arm.startswith("floor."))

    @property
    def owner(self) -> str:
        """The arm or shared part a job's cost counts for: the arm (a floor's: its arm's own name,
        ``NAME``; with a base ``floor.VOCAB``), ``transfer-METHOD.VOCAB``, ``prepare.VOCAB``,
        ``init.VOCAB``, ``extend.VOCAB``, ``probe``."""
        if self.arm is not None:
            return self.arm.removesuffix("/floor")
        if self.kind == "transfer":
            return f"transfer-{self.method}.{self.vocab}"
        return f"{self.kind}.{self.vocab}" if self.vocab is not None else self.kind

    @property
    def group(self) -> str:
        """The key without its seeds and task: what a table of jobs counts together
        (``finetune/SIZE/ARM``, ``curve/SIZE/ARM/kK``, ``init/VOCAB``, ``prepare``)."""
        if self.kind in ("extend", "prepare", "transfer", "probe"):
            return self.kind
        if self.kind == "init":
            return f"init/{self.vocab}"
        return f"{self.kind}/{self.size}/{self.arm}" + (f"/k{self.step}" if self.kind == "curve" else "")


def files_sha256(paths: Sequence[str | Path]) -> str:
    """sha256 over the bytes of ``paths`` in order, a folder as its files sorted by relative path,
    each file's name (relative to its folder) hashed too: the files of a model folder, which name
    what they are."""
    h = hashlib.sha256()
    for p in map(Path, paths):
        files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
        for f in files:
            h.update(str(f.relative_to(p) if p.is_dir() else f.name).encode("utf-8"))
            h.update(sha256_files([f]).encode())
    return h.hexdigest()


def corpus_key(cfg: AblationConfig) -> str:
    """The corpus's content and how it is split: the key of corpus/ (the split is redone when it changes)."""
    from biotok.corpus import resolve  # lazy: corpus readers

    files = resolve(list(cfg.corpus))
    return digest(sha256_files([f.path for f in files]), cfg.field_name, cfg.statistics.heldout_every)


def model_key(model: str) -> str:
    """A model folder's content: its config, weights and tokenizer files (training state aside)."""
    from biotok_train.hf_models import encoder_dir  # lazy: torch

    d = encoder_dir(model)
    files = sorted(f for f in d.iterdir() if f.is_file() and f.suffix in (".json", ".safetensors", ".bin", ".txt",
                                                                          ".model") and f.name != "metrics.jsonl")
    return files_sha256(files)


def task_key(task: str, data) -> str:
    """A task's content: the bytes of the files its reader opened, in the order it opened them
    (``data.sources``: :func:`biotok_train.tasks.load` records them, with ``data.digests`` of the
    bytes it read, so the key is of the bytes used), wherever they sit and whatever
    lies beside them; a registered task also by its name and its scoring (metric, threshold), a user's files
    by their task type only (moved, renamed or linked, the same bytes keep their key). Data made
    in memory: its examples."""
    from biotok_train.tasks.registry import TASKS  # lazy: the registry

    sources = [s for s in getattr(data, "sources", ()) if Path(s).is_file()]
    digests = list(getattr(data, "digests", ()))  # of the bytes read (tasks.load): never the files read again
    if digests and len(digests) == len(getattr(data, "sources", ())):
        sources = digests
    elif sources:
        sources = [sha256_files([s]) for s in sources]
    if sources:
        spec = getattr(data, "spec", None)
        scoring = [spec.metric, spec.threshold] if spec is not None and task in TASKS else None
        return digest(task_identity(task, data), sources, scoring)
    return digest(task, repr((data.train, data.dev, data.test)))


def keep_tasks(datasets: dict) -> None:
    """Each task's data kept under its key (:mod:`biotok_train.tasks.snapshot`): the jobs this
    process runs fine-tune on the examples that were keyed, never on the files read again."""
    from biotok_train.tasks import snapshot  # lazy: one use

    for t, d in datasets.items():
        snapshot.keep(task_key(t, d), d)


def finetune_settings(cfg: AblationConfig, seed: int) -> dict:
    """The fine-tuning recipe a fine-tune's key holds: every option, less those at a default they
    were added with (a finished run's records stay valid when an option is added)."""
    from biotok_train.config import THRESHOLD_GRID  # lazy: one constant

    added_with = {"threshold_grid": THRESHOLD_GRID, "max_eval_examples": 0}
    d = cfg.finetune_config(seed).to_dict()
    return {k: v for k, v in d.items()
            if k not in added_with or (tuple(v) if isinstance(v, list) else v) != added_with[k]}


def task_identity(task: str, data=None) -> str:
    """What names a task in a recipe: a registered name as is; a user's files by their task type
    ("file:ner"), never their path (a moved task file is the same recipe, its bytes decide)."""
    from biotok_train.tasks.registry import TASKS  # lazy: the registry

    if task in TASKS:
        return task
    return f"file:{getattr(data, 'task_type', None) or 'ner'}"


def fingerprints(cfg: AblationConfig, legs, datasets: dict, corpus: str, precision: str | None = None) -> dict:
    """{"corpus", "base", "tok": {vocab: fingerprint}, "task": {task: key}, "precision"} for
    :func:`~biotok_train.ablate.plan.make_plan` (``precision``: another machine's arithmetic, default this one's)."""
    from biotok.formats import load  # lazy: tokenizers

    toks = {}
    for leg in legs:
        if leg.vocab not in toks and leg.init != "extend":
            toks[leg.vocab] = load(leg.tokenizer).fingerprint
    base = next((toks[leg.vocab] for leg in legs if leg.tokenizer == cfg.base.model and leg.vocab in toks), None)
    for leg in legs:  # an extended vocabulary is made by a job: keyed by what it is made of
        if leg.init == "extend":  # the base's fingerprint as continual's, else read once here
            toks[leg.vocab] = extended_key(base or load(cfg.base.model).fingerprint, corpus, cfg.base.extend_add)
    return {"corpus": corpus, "base": model_key(cfg.base.model) if cfg.base.model is not None else None, "tok": toks,
            "task": {t: task_key(t, d) for t, d in datasets.items()}, "precision": precision or precision_key()}


def extended_key(base: str, corpus: str, add: int) -> str:
    """The content key of the base's tokenizer (``base``: its fingerprint) extended by ``add`` pieces
    of the pretraining split (``corpus``: its key), with :class:`biotok.extension.ExtendConfig`'s
    other settings at their defaults and the selection's version (either changed: another vocabulary)."""
    from biotok.extension import SELECTION_VERSION, ExtendConfig  # lazy: tokenizers

    return digest("extend", base, corpus, dataclasses.asdict(ExtendConfig(add=add)), SELECTION_VERSION)


def precision_key() -> str:
    """The arithmetic this machine trains in where a config asks for bf16 ("cpu:bf16", "cuda:fp32"...):
    the same recipe resumed on a machine without bf16 units would compute other numbers, so the
    models' jobs are keyed by it (a folder moved to such a machine reruns them)."""
    from biotok_train.hf_models import best_device  # lazy: torch
    from biotok_train.precision import bf16_supported  # lazy: torch

    device = best_device()
    return f"{device.type}:{'bf16' if bf16_supported(device) else 'fp32'}"


__all__ = ["KINDS", "Key", "content_keys", "digest", "corpus_key", "extended_key", "files_sha256", "fingerprints", "keep_tasks", "model_key", "finetune_settings",
           "precision_key", "task_identity", "task_key"]
