"""The contents an ablation's jobs are keyed by: the corpus (its files' sha256), each vocabulary
(its tokenizer's fingerprint), the base (its model files' sha256) and each task (its files'
sha256). A path moved with the same content keeps its key; a file changed in place does not."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from biotok.io import sha256_files
from biotok_train.ablate.graph import digest
from biotok_train.config import AblationConfig


def files_sha256(paths: Sequence[str | Path]) -> str:
    """sha256 over the bytes of ``paths`` in order, a folder as its files sorted by relative path
    (each file's relative name hashed too)."""
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
    """A task's content: its source files (a registered task's as read, or the user's), else its examples."""
    sources = [s for s in getattr(data, "sources", ()) if Path(s).exists()]
    if sources:
        return digest(task, files_sha256(sources))
    return digest(task, repr((data.train, data.dev, data.test)))


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


__all__ = ["corpus_key", "files_sha256", "fingerprints", "model_key", "precision_key", "task_key"]
