"""Shared plumbing of the task readers: streaming TSV rows with their line numbers, finding a file
under the corpora folder, and the cache of rebuilt (derived) data.

TSV files are read with quoting switched off (``csv.QUOTE_NONE``): BLURB's sentences hold literal
``"`` characters that a quoting reader would swallow. Every problem raises a
:class:`~biotok.errors.CorpusError` naming the file and line. No torch, no transformers.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Callable, Iterator, Sequence

from biotok.datadir import corpora_dir
from biotok.errors import ConfigError, CorpusError, DataError
from biotok.io import open_text, sha256_files

PathLike = str | os.PathLike[str]
CACHE_ENV = "BIOTOK_CACHE"


def read_tsv(
    path: PathLike, columns: Sequence[str], header: bool
) -> Iterator[tuple[int, dict[str, str]]]:
    """Stream (line number, row) pairs of a tab-separated file with ``len(columns)`` columns.

    ``header``: the first line must name exactly ``columns`` (in that order); otherwise there is
    no header and rows are mapped onto ``columns`` by position. Blank lines are skipped.
    """
    name = str(path)
    n = len(columns)
    with open_text(path) as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        try:
            if header:
                first = next(reader, None)
                if first is None:
                    return
                if [c.strip() for c in first] != list(columns):
                    raise CorpusError(
                        f"{name}:1: expected the header {' | '.join(columns)}, got {' | '.join(first)[:120]!r}"
                    )
            for row in reader:
                line = reader.line_num
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) != n:
                    raise CorpusError(
                        f"{name}:{line}: expected {n} tab-separated columns ({', '.join(columns)}), got {len(row)}"
                    )
                yield line, dict(zip(columns, row))
        except csv.Error as e:
            raise CorpusError(f"{name}:{reader.line_num}: {e}") from None


def corpus_file(corpora: PathLike | None, rel: str, task: str) -> Path:
    """``corpora/rel``, the corpora folder defaulting to ``$BIOTOK_SHARED_DATA/corpora``."""
    base = corpora_dir(corpora)
    if base is None:
        raise DataError(
            f"task {task!r} needs the corpora folder: pass --data-dir or set BIOTOK_SHARED_DATA"
        )
    f = Path(base) / rel
    if not f.exists():
        raise DataError(f"task {task!r}: {f} not found (check --data-dir or BIOTOK_SHARED_DATA)")
    return f


def cache_root(explicit: PathLike | None = None) -> Path:
    """Where derived data is built: ``explicit``, else ``$BIOTOK_CACHE``, else ~/.cache/biotok."""
    if explicit is not None:
        root, named = Path(explicit).expanduser(), str(explicit)
    else:
        env = os.environ.get(CACHE_ENV, "").strip()
        root = Path(env).expanduser() if env else Path.home() / ".cache" / "biotok"
        named = f"{CACHE_ENV}={env}" if env else str(root)
    if root.exists() and not root.is_dir():
        raise ConfigError(f"cache folder {named} is a file, not a folder; set {CACHE_ENV} to a folder")
    return root


def cached_build(
    kind: str,
    inputs: Sequence[PathLike],
    version: str,
    build: Callable[[Path], None],
    cache: PathLike | None = None,
) -> Path:
    """The cache folder ``<cache>/<kind>-<sha16>`` of derived data, built by ``build(tmp)`` on
    first use. The key hashes the input files and ``version`` (the builder's); the folder is
    filled in a temporary sibling and renamed into place, so a half-built one is never seen."""
    from biotok.output import atomic_directory  # light import; keeps module import cheap

    key = sha256_files(inputs, version)[:16]
    dest = cache_root(cache) / f"{kind}-{key}"
    if (dest / "COMPLETE").is_file():
        return dest
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        with atomic_directory(dest, force=True) as tmp:
            build(tmp)
            (tmp / "COMPLETE").write_text(f"{kind} {version}\n", encoding="utf-8")
    except PermissionError as e:
        raise DataError(f"cannot write the cache {dest} ({e.strerror}); set {CACHE_ENV} to a writable folder") from None
    return dest


def write_tsv(path: Path, rows: Sequence[Sequence[str]]) -> None:
    """Rows as tab-separated lines (no quoting; a value holding a tab or newline is a bug)."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            if any("\t" in v or "\n" in v or "\r" in v for v in row):
                raise DataError(f"{path}: refusing to write a value with a tab or newline: {row[0]!r}")
            f.write("\t".join(row) + "\n")


__all__ = [
    "CACHE_ENV", "cache_root", "cached_build", "corpus_file", "open_text", "read_tsv", "sha256_files",
    "write_tsv",
]
