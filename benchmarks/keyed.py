"""What the recipes under benchmarks/experiments/ cache by content, beside their page's command line
(:mod:`benchmarks.recipe`): a folder made once per the inputs it is made from (their JSON hashed into
its name), texts written into one, and tokenizers trained once, each under a key of its inputs, its
TrainConfig and the library versions; a base extended once per ExtendConfig in a folder.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

from benchmarks.corpora import write_lines
from biotok.errors import VocabSizeError
from biotok.io import sha256_file, versions
from biotok.output import atomic_directory

INPUTS = "inputs.json"  # in a keyed folder: the inputs its key was made from


def cache_key(obj: object) -> str:
    """A short, stable hash of JSON-able inputs: equal inputs (in any key order), equal key."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def file_inputs(root: Path, files: dict[str, Path]) -> dict[str, dict]:
    """Each of ``files`` as a cache key's input: its path under ``root`` and its sha256."""
    return {name: {"path": path.relative_to(root).as_posix(), "sha256": sha256_file(path)}
            for name, path in files.items()}


def keyed_folder(root: Path, inputs: dict, make: Callable[[Path], object]) -> Path:
    """root/KEY (:func:`cache_key` of ``inputs``), filled by ``make(folder)`` once: kept when it holds
    its inputs.json, written in one rename (a stopped run leaves nothing half made)."""
    out = root / cache_key(inputs)
    if not (out / INPUTS).is_file():
        with atomic_directory(out, force=True) as tmp:
            make(tmp)
            (tmp / INPUTS).write_text(json.dumps(inputs, indent=2) + "\n", encoding="utf-8")
    return out


def keyed_texts(root: Path, inputs: dict, texts: dict[str, Callable[[], Iterable[str]]]) -> dict[str, Path]:
    """NAME.txt of each of ``texts`` (its lines, one a line) in a :func:`keyed_folder` of ``inputs``."""
    def make(tmp: Path) -> None:
        for name, lines in texts.items():
            write_lines(tmp / f"{name}.txt", lines())

    out = keyed_folder(root, inputs, make)
    return {name: out / f"{name}.txt" for name in texts}


def trained(texts: Sequence[Path], cfg, folder: Path, *, again: bool = False, fit: bool = False,
            workers: int | None = None) -> Path:
    """``folder``: a biotok tokenizer of ``cfg`` (a TrainConfig) trained on ``texts``, unless one is
    there (``again``: regardless). ``fit``: a text that supports fewer pieces than asked trains the
    most it supports, in thousands."""
    from biotok.train import train_tokenizer  # lazy: the trainers, only when one trains

    if (folder / "tokenizer.json").is_file() and not again:
        return folder
    start = time.perf_counter()
    try:
        train_tokenizer(list(texts), cfg, folder, force=True, workers=workers)
    except VocabSizeError as e:
        if not (fit and e.too_large):
            raise
        size = e.supported // 1000 * 1000
        print(f"{folder.name}: {e}; training at {size}", file=sys.stderr)
        train_tokenizer(list(texts), replace(cfg, vocab_size=size), folder, force=True, workers=workers)
    print(f"trained {folder.name} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return folder


def extended(base, texts: Sequence[Path], cfg, folder: Path) -> Path | None:
    """``folder``: ``base`` extended by ``cfg`` (an ExtendConfig) on ``texts``, unless an extension of
    that config is there; None when the texts offer fewer pieces than ``cfg.add`` (nothing is kept)."""
    from dataclasses import asdict

    from biotok.errors import ConfigError
    from biotok.extension import extend  # lazy: the extension, only when one extends

    meta = folder / "biotok.json"
    if meta.is_file() and json.loads(meta.read_text(encoding="utf-8"))["config"].get("extend") == asdict(cfg):
        return folder
    try:
        extend(base, list(texts), folder, cfg, force=True)
    except ConfigError as e:
        print(f"{folder.name}: {e}", file=sys.stderr)
        return None
    return folder


def trained_each(root: Path, texts: Sequence[Path], configs: dict, inputs: dict, *, again: bool = False,
                 fit: bool = False) -> dict[str, Path]:
    """Each of ``configs`` ({name: TrainConfig}) :func:`trained` once in root/NAME-KEY, KEY the
    :func:`cache_key` of ``inputs`` (what the texts are made from), the config and the library versions."""
    key = lambda cfg: cache_key({**inputs, "config": cfg.to_dict(), "versions": versions()})  # noqa: E731
    return {name: trained(texts, cfg, root / f"{name}-{key(cfg)}", again=again, fit=fit)
            for name, cfg in configs.items()}


__all__ = ["INPUTS", "cache_key", "extended", "file_inputs", "keyed_folder", "keyed_texts", "trained", "trained_each"]
