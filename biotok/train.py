"""``train_tokenizer``: corpus + config -> a saved, loadable, documented tokenizer artifact."""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from biotok.artifact import MARKER as ARTIFACT_MARKER
from biotok.artifact import write_artifact
from biotok.backends import BACKENDS
from biotok.config import NormalizeConfig, TrainConfig
from biotok.corpus import resolve
from biotok.counting import count_corpus, meta_path, read_count_files, read_counts_meta
from biotok.errors import ConfigError, CorpusError, VocabSizeError
from biotok.formats.hf import load_hf
from biotok.io import sha256_file
from biotok.output import check_writable
from biotok.pathology import trained_suffix

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainResult:
    """Where the artifact went and what it took."""

    path: Path
    vocab_size: int
    seconds: float
    config: TrainConfig
    corpus: dict = field(default_factory=dict)
    warnings: tuple[str, ...] = ()  # vocabulary pathologies found (biotok.pathology), also logged

    def summary(self) -> str:
        """One line: what was trained, from what, how fast, and where it went."""
        c = self.corpus
        source = f"{c['lines']:,} lines ({c['words']:,} words)" if c else "word counts"
        return (
            f"trained {self.config.algo} ({self.config.backend}): {self.vocab_size:,} pieces from "
            f"{source} in {self.seconds:.1f} s -> {self.path}"
        )

    def load(self):
        """The trained tokenizer, loaded (a :class:`~biotok.tokenizer.BiotokTokenizer`)."""
        return load_hf(self.path)


def default_out(config: TrainConfig) -> Path:
    """A name that says what was trained: biotok-unigram-lower-32000, biotok-bpe-raw-cased-8000.

    A non-default backend is named too: biotok-unigram-tokenizers-lower-32000.
    """
    parts = ["biotok", config.label]
    if not config.normalize.space_punctuation:
        parts.append("raw")
    parts.append("lower" if config.normalize.lowercase else "cased")
    parts.append(str(config.vocab_size))
    return Path("-".join(parts))


def counts_from_files(paths: Sequence[str | os.PathLike[str]], cfg: TrainConfig) -> tuple[Counter[str], dict]:
    """Merged counts of ``biotok count`` outputs, checked against the training's normalization.

    Each ``COUNTS.json`` written beside a counts file says how its words were normalized; a
    mismatch with ``cfg.normalize`` is an error (the vocabulary would not match the saved
    normalizer). Returns the counts and their provenance.
    """
    counts = read_count_files(paths)
    described = []
    stats = {"lines": 0, "words": 0, "characters": 0, "split_lines": 0, "files": []}
    complete = True
    for p in paths:
        entry: dict = {"path": str(p), "bytes": os.path.getsize(p), "sha256": sha256_file(p)}
        meta = read_counts_meta(p)
        if meta is None:
            complete = False
            logger.warning("warning: no %s beside %s: its words are assumed normalized like this training",
                           meta_path(p).name, p)
        else:
            norm = NormalizeConfig.from_dict(meta.get("normalize") or {})
            if norm != cfg.normalize:
                raise ConfigError(
                    f"{p} was counted with normalization {_norm_label(norm)}, but this training uses "
                    f"{_norm_label(cfg.normalize)}: count again with the same --lower/--normalize/"
                    "--unicode/--strip-accents, or train with them"
                )
            corpus = meta.get("corpus") or {}
            for k in ("lines", "words", "characters", "split_lines"):
                stats[k] += int(corpus.get(k) or 0)
            stats["files"].extend(corpus.get("files") or [])
            entry["corpus"] = corpus
        described.append(entry)
    return counts, {"from_counts": described, "corpus": stats if complete else None}


def _norm_label(n: NormalizeConfig) -> str:
    diff = {k: v for k, v in n.to_dict().items() if v != getattr(NormalizeConfig(), k)}
    return "default" if not diff else ", ".join(f"{k}={v}" for k, v in diff.items())


def _count(corpus: list, cfg: TrainConfig, workers: int | None, progress: bool,
           corpus_names: dict[str, str]) -> tuple[Counter[str], dict]:
    """The first pass: the corpus' words normalized and counted, and its provenance (each file
    under the name ``corpus_names`` gives it); an empty corpus: one CorpusError."""
    files = resolve(corpus)
    counted = count_corpus(files, cfg.normalize, field_name=cfg.field_name, workers=workers, progress=progress)
    source = {"corpus": counted.stats()}
    for entry in source["corpus"].get("files", []):
        entry["path"] = corpus_names.get(str(entry["path"]), entry["path"])
    if not counted.counts:
        what = "no non-blank line" if counted.lines == 0 else "no word left after normalization"
        raise CorpusError(f"the corpus is empty: {what} in {', '.join(cf.name for cf in files)}")
    return counted.counts, source


def train_tokenizer(
    corpus: Sequence[str | os.PathLike[str]] = (),
    config: TrainConfig | None = None,
    out: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
    progress: bool = False,
    workers: int | None = None,
    from_counts: Sequence[str | os.PathLike[str]] = (),
    corpus_names: dict[str, str] | None = None,
    shown_as: str | None = None,
) -> TrainResult:
    """Train a tokenizer on ``corpus`` (files, dirs, '-') or on ``from_counts``; save it to ``out``.

    The first pass normalizes and counts words on ``workers`` processes (default: every core;
    the result never depends on it); ``from_counts`` instead merges count files written by
    ``biotok count`` (shards of a corpus add up). ``corpus_names`` maps a corpus path to the name
    the provenance records for it (a temporary file); ``shown_as``: where the folder ends up when
    ``out`` is temporary (the model card's snippet loads it from there). Raises a :class:`~biotok.errors.BiotokError`
    for bad input; nothing is written then.
    """
    cfg = config or TrainConfig()
    corpus, from_counts = list(corpus), list(from_counts)
    if corpus and from_counts:
        raise ConfigError("give either a corpus or --from-counts files, not both")
    if not corpus and not from_counts:
        raise CorpusError("no corpus given (or --from-counts files)")
    dest = check_writable(out if out is not None else default_out(cfg), force, inputs=corpus + from_counts,
                          marker=ARTIFACT_MARKER)
    start = time.perf_counter()
    if from_counts:
        counts, source = counts_from_files(from_counts, cfg)
    else:
        counts, source = _count(corpus, cfg, workers, progress, corpus_names or {})
    trained = BACKENDS[(cfg.algo, cfg.backend)](counts, cfg, progress)  # type: ignore[index]
    seconds = time.perf_counter() - start

    got = trained.tokenizer.get_vocab_size(with_added_tokens=True)
    if got != cfg.vocab_size:
        raise VocabSizeError(cfg.vocab_size, got, cfg.label, _mf(cfg) if got < cfg.vocab_size else "")
    provenance = {
        **source,
        "vocab_size": got,
        "training_seconds": round(seconds, 3),
        "backend_notes": trained.notes,
    }
    path = write_artifact(dest, trained.tokenizer, cfg, provenance, trained.extra_files, force,
                          inputs=corpus + from_counts, shown_as=shown_as)
    suffix = trained_suffix(cfg.label, "##" if cfg.algo == "wordpiece" else "▁", trained.tokenizer, counts)
    warnings = (suffix.warning(),) if suffix is not None else ()
    for w in warnings:
        logger.warning("warning: %s", w)
    return TrainResult(path=path, vocab_size=got, seconds=seconds, config=cfg, corpus=source.get("corpus") or {},
                       warnings=warnings)


def _mf(cfg: TrainConfig) -> str:
    """The min-frequency note for trainers where it limits the vocabulary."""
    return f" (min frequency {cfg.min_frequency})" if cfg.algo in ("bpe", "wordpiece") and cfg.backend == "tokenizers" else ""
