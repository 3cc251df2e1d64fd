"""The contents an ablation's jobs are keyed by: the corpus (its files' sha256), each vocabulary
(its tokenizer's fingerprint), the base (its model files' sha256), each task (the sha256 of the
files its reader opened) and the arithmetic. A path moved with the same content keeps its key; a
file changed in place does not. :func:`fingerprints` is what every job's inputs are made of
(:func:`biotok_train.ablate.grid.build` says which job takes which)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from biotok.io import sha256_files
from biotok_train.ablate.graph import digest
from biotok_train.config import AblationConfig


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
    return digest(sha256_files([f.path for f in files]), cfg.field_name, cfg.heldout_every)


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
    sources = [s for s in getattr(data, "sources", ()) if Path(s).is_file()]
    digests = list(getattr(data, "digests", ()))  # of the bytes read (tasks.load): never the files read again
    if digests and len(digests) == len(getattr(data, "sources", ())):
        sources = digests
    elif sources:
        sources = [sha256_files([s]) for s in sources]
    if sources:
        spec = getattr(data, "spec", None)
        scoring = [spec.metric, spec.threshold] if spec is not None and task in _registered() else None
        return digest(task_identity(task, data), sources, scoring)
    return digest(task, repr((data.train, data.dev, data.test)))


def keep_tasks(datasets: dict) -> None:
    """Each task's data kept under its key (:mod:`biotok_train.tasks.snapshot`): the jobs this
    process runs fine-tune on the examples that were keyed, never on the files read again."""
    from biotok_train.tasks import snapshot  # lazy: one use

    for t, d in datasets.items():
        snapshot.keep(task_key(t, d), d)


def _registered() -> dict:
    from biotok_train.tasks.registry import TASKS  # lazy: the registry

    return TASKS


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
    :func:`grid.build` (``precision``: another machine's arithmetic, default this one's)."""
    from biotok.formats import load  # lazy: tokenizers

    toks = {}
    for leg in legs:
        if leg.vocab not in toks:
            toks[leg.vocab] = load(leg.tokenizer).fingerprint
    return {"corpus": corpus, "base": model_key(cfg.base) if cfg.base is not None else None, "tok": toks,
            "task": {t: task_key(t, d) for t, d in datasets.items()}, "precision": precision or precision_key()}


def precision_key() -> str:
    """The arithmetic this machine trains in where a config asks for bf16 ("cpu:bf16", "cuda:fp32"...):
    the same recipe resumed on a machine without bf16 units would compute other numbers, so the
    models' jobs are keyed by it (a folder moved to such a machine reruns them)."""
    from biotok_train.hf_models import best_device  # lazy: torch
    from biotok_train.precision import bf16_supported  # lazy: torch

    device = best_device()
    return f"{device.type}:{'bf16' if bf16_supported(device) else 'fp32'}"


__all__ = ["corpus_key", "files_sha256", "fingerprints", "keep_tasks", "model_key", "finetune_settings", "precision_key",
           "task_identity", "task_key"]
