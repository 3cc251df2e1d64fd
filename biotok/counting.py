"""Word counts on every core, mergeable across shards.

:func:`count_corpus` normalizes and counts the whitespace words of a corpus in N worker
processes, with a result identical to one process: a count is a sum, so chunks are counted
apart and added, and every output is sorted by count then word. Plain files are cut into byte
ranges at line boundaries and each worker reads its own ranges; compressed files and stdin are
read once, in order, and their lines sent to the workers in batches.

Counts saved by ``biotok count`` (``word<TAB>count``, :func:`write_counts`) add up:
:func:`read_count_files` on the counts of shards gives the counts of the whole corpus, so the
expensive pass can run on many machines (one shard each) and training starts from the merge.

SentencePiece trains from these counts; scaling them to bound its memory is
:func:`biotok.backends.spm.scale_counts`.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import Counter, deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence, TextIO

from biotok._version import __version__
from biotok.config import NormalizeConfig
from biotok.corpus import (
    STDIN, CorpusFile, CorpusStats, LineError, compression, corpus_names, iter_records, line_pieces, piece_limit,
    resolve, texts_of,
)
from biotok.errors import ConfigError, CorpusError
from biotok.io import not_found, sha256_file
from biotok.normalize import build_normalizer
from biotok.output import atomic_file
from biotok.spawning import end_broken_pool, exit_with_parent, unguarded_main

# Byte range read by one task (a worker's unit of work): small enough to balance the workers
# and to keep each task's counter small, large enough that starting a task costs nothing.
CHUNK_BYTES = 16 << 20
# Characters normalized in one call (lines joined with "\n": one call into Rust per batch). Larger
# batches are slower: each normalization step copies the text's alignments (16 bytes a byte),
# which then no longer fit in the CPU caches (1 MiB batches: 5.6 MB/s, 128 KiB: 8.1 MB/s).
BATCH_CHARS = 1 << 17


# --- counting ----------------------------------------------------------------------------------
@dataclass
class CorpusCounts:
    """Word counts of a corpus, with what was read: lines kept, raw words and characters, files."""

    counts: Counter[str]
    lines: int = 0
    words: int = 0
    characters: int = 0
    split_lines: int = 0
    files: list[dict] = field(default_factory=list)

    def stats(self) -> dict:
        """The corpus statistics recorded in biotok.json (same keys as ``CorpusStats.as_dict``)."""
        return {"lines": self.lines, "words": self.words, "characters": self.characters,
                "split_lines": self.split_lines, "files": self.files}


MAX_WORKERS = 1024  # beyond any machine biotok runs on: a typo, refused before any process starts


def usable_workers(asked: int | None) -> int:
    """``asked`` worker processes, at most one per available core (said in the log when capped).

    A process per requested worker beyond the cores only thrashes; ``--workers 100000`` once
    spawned over 1,400 processes before the kernel killed unrelated jobs.
    """
    cores = default_workers()
    if asked is None:
        return cores
    if not 1 <= asked <= MAX_WORKERS:
        raise ConfigError(f"--workers must be between 1 and {MAX_WORKERS}, not {asked}")
    if asked > cores:
        logging.getLogger(__name__).info("--workers %d capped at %d, the cores this process may use", asked, cores)
        return cores
    return asked


def default_workers() -> int:
    """The cores this process may run on (the ``--workers`` default)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class _Partial:
    """What one task found."""

    counts: Counter[str]
    lines: int = 0
    words: int = 0
    characters: int = 0
    split_lines: int = 0
    error: tuple[int, str] | None = None  # (line number within the task, message)

    def add_texts(self, texts: list[str], normalizer) -> None:
        if not texts:
            return
        joined = "\n".join(texts)
        self.lines += len(texts)
        self.characters += len(joined) - (len(texts) - 1)
        self.words += len(joined.split())
        # One call for the whole batch: every normalization step works within a line (none
        # creates, removes or reads across a "\n"), so this equals normalizing line by line.
        self.counts.update((normalizer.normalize_str(joined) if normalizer else joined).split())


_NORMALIZER = None  # the worker's normalizer, built once per process by _init
_exit_with_parent = exit_with_parent  # the name its tests and docstrings use


def _init(normalize: dict | None, parent: int | None = None) -> None:
    """A process's normalizer; in a pool worker (``parent``: the pool's pid) also ignore Ctrl-C
    (it reaches the whole process group: the parent alone handles it) and exit with the parent."""
    global _NORMALIZER
    if parent is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _exit_with_parent(parent)
    _NORMALIZER = build_normalizer(NormalizeConfig.from_dict(normalize) if normalize else None)


def _count_range(path: str, jsonl: bool, field_name: str | None, start: int, end: int) -> _Partial:
    """Count the lines starting in [start, end) of a plain file (start and end at line starts)."""
    part = _Partial(Counter())
    texts: list[str] = []
    size = 0
    left = end - start
    last_cut = 0
    with open(path, "rb") as f:
        f.seek(start)
        for lineno, raw, offset in line_pieces(f, piece_limit(jsonl, field_name)):
            if left <= 0:
                break
            left -= len(raw)
            try:
                got, cut = texts_of(raw, lineno, offset, jsonl, field_name)
            except LineError as e:
                part.error = (e.lineno, e.detail)
                break
            part.split_lines += cut
            if offset > 0 and last_cut != lineno:
                part.split_lines += 1
                last_cut = lineno
            texts.extend(got)
            size += len(raw)
            if size >= BATCH_CHARS:
                part.add_texts(texts, _NORMALIZER)
                texts, size = [], 0
    part.add_texts(texts, _NORMALIZER)
    return part


def _ready() -> None:
    """A task that only makes the pool start a worker."""


def _start_workers(pool, n: int) -> None:
    """Start every worker with Ctrl-C and SIGTERM held back: a signal that cut a spawn in half
    would leave a half-started worker printing a traceback (its start data never sent). Once
    started, a worker has its data and exits with its parent (see _exit_with_parent)."""
    mask = getattr(signal, "pthread_sigmask", None)  # not on Windows: nothing to hold back there
    old = mask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM}) if mask else None
    try:
        for _ in range(n):  # each submit spawns one more worker while none is idle
            pool.submit(_ready)
    finally:
        if mask:
            mask(signal.SIG_SETMASK, old)


def _count_texts(texts: list[str]) -> _Partial:
    part = _Partial(Counter())
    part.add_texts(texts, _NORMALIZER)
    return part


def _splittable(cf: CorpusFile) -> bool:
    """A regular, uncompressed file: workers can read byte ranges of it directly."""
    if cf.path == STDIN or not os.path.isfile(cf.path):
        return False
    with open(cf.path, "rb") as f:
        head = f.read(6)
    return compression(head) is None


def _next_line_start(f, pos: int, size: int) -> int:
    """The first line start at or after ``pos`` (reading blocks: a 50 MB line is never held)."""
    if pos <= 0:
        return 0
    f.seek(pos - 1)
    while True:
        block = f.read(1 << 16)
        if not block:
            return size
        i = block.find(b"\n")
        if i >= 0:
            return f.tell() - len(block) + i + 1


def line_ranges(path: str, chunk_bytes: int = CHUNK_BYTES) -> list[tuple[int, int]]:
    """Cut a file into ranges of about ``chunk_bytes`` that start and end at line starts."""
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as f:
        target = chunk_bytes
        while target < size:
            pos = _next_line_start(f, target, size)
            if pos >= size:
                break
            if pos > cuts[-1]:
                cuts.append(pos)
            target = pos + chunk_bytes
    cuts.append(size)
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


def _lines_before(path: str, offset: int) -> int:
    n = 0
    with open(path, "rb") as f:
        left = offset
        while left > 0:
            block = f.read(min(1 << 20, left))
            if not block:
                break
            n += block.count(b"\n")
            left -= len(block)
    return n


class _Inline:
    """Runs tasks at once in this process (one worker): the same code path, no pool."""

    class _Done:
        def __init__(self, fn, args) -> None:
            self._value = fn(*args)

        def result(self):
            return self._value

    def __init__(self, normalize: dict | None) -> None:
        _init(normalize)

    def submit(self, fn, *args):
        return self._Done(fn, args)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        pass


def _pool(n: int, norm: dict | None):
    """Where the tasks run: in this process for one worker, else a pool of ``n`` spawned workers
    (one process when spawned workers would run the caller's script again: biotok.spawning)."""
    if n > 1 and (script := unguarded_main()) is not None:
        _warn_one_process(script, n)
        n = 1
    if n == 1:
        return _Inline(norm)
    # spawn: a clean interpreter per worker, whatever threads this process runs (tokenizers'
    # thread pool, tqdm) and on every OS alike
    pool = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init, initargs=(norm, os.getpid()))
    _start_workers(pool, n)
    return pool


_WARNED: set[str] = set()


def _warn_one_process(script: str, n: int) -> None:
    """Say once per script why the counting runs in one process, and how to get the cores back."""
    if script not in _WARNED:
        _WARNED.add(script)
        logging.getLogger(__name__).warning(
            "biotok: counting words in one process, not %d: %s calls biotok outside `if __name__ == "
            "\"__main__\":`, so each worker process would run it again (put the calls under that "
            "guard to count on every core; the result is the same)", n, script)


def _progress_bar():
    # lazy: tqdm (25 ms) only when a progress bar is asked for
    from tqdm import tqdm

    return tqdm(desc="counting", unit=" lines", mininterval=1.0, file=sys.stderr, disable=None)  # not when piped


@dataclass
class _Count:
    """One run of :func:`count_corpus`: the tasks in flight and what the finished ones found.

    Tasks are collected in submission order (at most ``2 * workers`` in flight while a file is
    streamed); each error is kept with its place, so the first in corpus order is the one raised.
    """

    files: list[CorpusFile]
    pool: Any  # _Inline or ProcessPoolExecutor
    workers: int
    field_name: str | None
    bar: Any = None  # a tqdm bar, or None
    result: CorpusCounts = field(default_factory=lambda: CorpusCounts(Counter()))
    errors: list[tuple[int, int, int, str]] = field(default_factory=list)  # (file, offset, line in task, message)
    pending: deque = field(default_factory=deque)  # (file index, offset, future)
    hashes: dict[int, Any] = field(default_factory=dict)  # file index -> future of its sha256
    described: dict[int, dict | None] = field(default_factory=dict)  # streamed files, described as read

    def __post_init__(self) -> None:
        self.kept = [0] * len(self.files)

    def collect(self, item) -> None:
        fi, offset, fut = item
        part: _Partial = fut.result()
        res = self.result
        res.counts.update(part.counts)
        res.lines += part.lines
        res.words += part.words
        res.characters += part.characters
        res.split_lines += part.split_lines
        self.kept[fi] += part.lines
        if part.error is not None:
            self.errors.append((fi, offset, *part.error))
        if self.bar is not None:
            self.bar.update(part.lines)

    def drain(self, limit: int) -> None:
        """Collect finished tasks, oldest first, until at most ``limit`` are in flight."""
        while len(self.pending) > limit:
            self.collect(self.pending.popleft())

    def split(self, fi: int, cf: CorpusFile, chunk_bytes: int) -> None:
        """A plain file: one task per byte range (workers read it themselves), one for its hash."""
        self.hashes[fi] = self.pool.submit(sha256_file, cf.path)
        for start, end in line_ranges(cf.path, chunk_bytes):
            self.pending.append((fi, start, self.pool.submit(_count_range, cf.path, cf.jsonl, self.field_name,
                                                             start, end)))

    def stream(self, fi: int, cf: CorpusFile) -> None:
        """A compressed file or stdin: read here, in order, and sent to the workers in batches."""
        batch: list[str] = []
        size = 0
        streamed = CorpusStats()  # read here, in order: its description is made here too
        try:
            for text in iter_records([cf], self.field_name, streamed):
                batch.append(text)
                size += len(text)
                if size >= BATCH_CHARS:
                    self.pending.append((fi, 0, self.pool.submit(_count_texts, batch)))
                    batch, size = [], 0
                    self.drain(2 * self.workers)
        except CorpusError as e:
            self.errors.append((fi, -1, 0, str(e)))
        if batch:
            self.pending.append((fi, 0, self.pool.submit(_count_texts, batch)))
        self.result.split_lines += streamed.split_lines
        self.described[fi] = streamed.files[0] if streamed.files else None
        self.drain(2 * self.workers)

    def first_error(self) -> CorpusError:
        """The first bad line in corpus order, numbered within its file."""
        fi, offset, lineno, detail = min(self.errors)
        cf = self.files[fi]
        if offset < 0:  # read in this process: the message is complete
            return CorpusError(detail)
        return CorpusError(f"{cf.name}:{_lines_before(cf.path, offset) + lineno}: {detail}")

    def describe(self, digests: dict[int, str]) -> list[dict]:
        """Each file as biotok.json records it: path, bytes, sha256 and the lines kept."""
        out = []
        for fi, cf in enumerate(self.files):
            if self.described.get(fi) is not None:
                out.append({**self.described[fi], "lines": self.kept[fi]})  # type: ignore[dict-item]
            elif cf.path == STDIN:
                out.append({"path": STDIN, "bytes": None, "sha256": None, "lines": self.kept[fi]})
            else:
                out.append({"path": cf.path, "bytes": os.path.getsize(cf.path), "sha256": digests[fi],
                            "lines": self.kept[fi]})
        return out


def count_corpus(
    corpus: Sequence[str | os.PathLike[str]] | Sequence[CorpusFile],
    normalize: NormalizeConfig | None = None,
    *,
    field_name: str | None = None,
    workers: int | None = None,
    progress: bool = False,
    chunk_bytes: int = CHUNK_BYTES,
) -> CorpusCounts:
    """Normalized word counts of a corpus on ``workers`` processes (default: every core).

    The result does not depend on ``workers``. A bad line raises a :class:`CorpusError` naming
    the file and line, the first one in corpus order whatever the worker that found it.
    """
    files = list(corpus) if corpus and isinstance(corpus[0], CorpusFile) else resolve(corpus)  # type: ignore[arg-type]
    n = usable_workers(workers)
    pool = _pool(n, normalize.to_dict() if normalize is not None else None)
    run = _Count(files, pool, n, field_name, _progress_bar() if progress else None)
    try:
        for fi, cf in enumerate(files):
            if run.errors:
                break
            if _splittable(cf):
                run.split(fi, cf, chunk_bytes)
            else:
                run.stream(fi, cf)
        run.drain(0)
        digests = {fi: fut.result() for fi, fut in run.hashes.items()}
    finally:
        end_broken_pool(pool)  # a worker died: the others killed, or the shutdown could wait forever
        pool.shutdown(wait=True, cancel_futures=True)
        if run.bar is not None:
            run.bar.close()
    if run.errors:
        raise run.first_error()
    run.result.files = run.describe(digests)
    return run.result


# --- count files: write, read, merge ---------------------------------------------------------------
def sorted_counts(counts: Counter[str] | dict[str, int]) -> list[tuple[str, int]]:
    """Most frequent first, ties by word: the one order every count file and trainer input uses."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def write_counts(counts: Counter[str] | dict[str, int], out: TextIO) -> int:
    """Write ``word<TAB>count`` lines in :func:`sorted_counts` order; return the number written."""
    n = 0
    for word, c in sorted_counts(counts):
        out.write(f"{word}\t{c}\n")
        n += 1
    return n


def save_counts(
    counted: CorpusCounts, out: str | os.PathLike[str], normalize: NormalizeConfig | None = None,
    field_name: str | None = None, *, force: bool = False, inputs: Iterable[str | os.PathLike[str]] = (),
) -> int:
    """Write the counts to ``out`` and their record to ``OUT.json``, atomically ('-': stdout only)."""
    if str(out) == STDIN:
        return write_counts(counted.counts, sys.stdout)
    meta = json.dumps(counts_meta(normalize, field_name, counted), indent=2, ensure_ascii=False) + "\n"
    with atomic_file(meta_path(out), force, inputs) as tmp_meta, atomic_file(out, force, inputs) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            n = write_counts(counted.counts, f)
        Path(tmp_meta).write_text(meta, encoding="utf-8")
    return n


# The largest count a counts file may give one word (2**31 - 1, SentencePiece's int32): the
# tokenizers backend feeds each word to its trainer as many times as counted, so an absurd count
# would keep it busy for hours (see docs/training.md, "Stopping a run").
MAX_COUNT = 2**31 - 1


def read_counts(path: str | os.PathLike[str], into: Counter[str] | None = None) -> Counter[str]:
    """Add the counts of a ``word<TAB>count`` file (as ``biotok count`` writes) to ``into``."""
    counts: Counter[str] = Counter() if into is None else into
    name = str(path)
    try:
        f = open(path, encoding="utf-8", newline="\n")  # noqa: SIM115
    except FileNotFoundError:
        raise CorpusError(not_found("counts file", name)) from None
    except OSError as e:
        raise CorpusError(f"cannot open counts file {name}: {e.strerror}") from None
    with f:
        try:
            for lineno, line in enumerate(f, 1):
                # a Windows line ending (CRLF) is a line ending, not part of the count
                word, tab, num = line.rstrip("\n").removesuffix("\r").partition("\t")
                # ASCII digits only: str.isdigit() also takes '²' or '٣', which int() refuses or reads
                if not tab or not word or not (num.isascii() and num.isdigit()) or int(num) < 1 \
                        or len(word.split()) != 1 or word.split()[0] != word:
                    raise CorpusError(
                        f"{name}:{lineno}: expected word<TAB>count (a word without spaces, a count "
                        f">= 1 in ASCII digits), got {line.rstrip(chr(10))[:60]!r}"
                    )
                if len(num) > 10 or int(num) > MAX_COUNT:
                    raise CorpusError(
                        f"{name}:{lineno}: count {num[:30]} of {word[:40]!r} is beyond {MAX_COUNT:,}: no word of a "
                        "corpus is that frequent, and the tokenizers backend feeds its trainer every occurrence"
                    )
                counts[word] += int(num)
                if counts[word] > MAX_COUNT:  # shards add up: the sum has the same limit as one count
                    raise CorpusError(
                        f"{name}:{lineno}: the counts of {word[:40]!r} add up to {counts[word]:,} with the counts "
                        f"files before it, beyond {MAX_COUNT:,}: no word of a corpus is that frequent"
                    )
        except UnicodeDecodeError as e:
            raise CorpusError(f"{name}: invalid UTF-8 in a counts file ({e.reason})") from None
    return counts


def read_count_files(paths: Iterable[str | os.PathLike[str]]) -> Counter[str]:
    """The sum of several count files: counts of shards add up to the counts of the corpus."""
    total: Counter[str] = Counter()
    paths = list(paths)
    for p in paths:
        read_counts(p, total)
    if not paths:
        raise CorpusError("no counts file given")
    if not total:
        raise CorpusError(f"the counts files {corpus_names(paths)} hold no word")
    return total


COUNTS_FORMAT = "biotok-counts/1"


def meta_path(counts_path: str | os.PathLike[str]) -> Path:
    """Where ``biotok count`` records how counts were made: ``COUNTS.json`` beside ``COUNTS``."""
    p = Path(counts_path)
    return p.with_name(p.name + ".json")


def counts_meta(normalize: NormalizeConfig | None, field_name: str | None, counted: CorpusCounts) -> dict:
    """What ``biotok count`` records beside its output: normalization, corpus, files and hashes."""
    return {
        "format": COUNTS_FORMAT,
        "biotok": __version__,
        "normalize": (normalize or NormalizeConfig()).to_dict(),
        "field": field_name,
        "distinct_words": len(counted.counts),
        "corpus": counted.stats(),
    }


def read_counts_meta(counts_path: str | os.PathLike[str]) -> dict | None:
    """The record beside a counts file, or None when there is none (an outside TSV)."""
    p = meta_path(counts_path)
    if not p.is_file():
        return None
    try:
        meta = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise CorpusError(f"{p} is not a valid counts record ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != COUNTS_FORMAT:
        raise CorpusError(f"{p} is not a biotok counts record (format {COUNTS_FORMAT})")
    # biotok always records how it normalized; a record without it would pass for 'default'
    # normalization and blame the training's options for the mismatch
    for key, may_be_null in (("normalize", False), ("corpus", True)):
        value = meta.get(key)
        if not isinstance(value, dict) and not (may_be_null and value is None):
            what = "missing" if key not in meta else "null" if value is None else f"a {type(value).__name__}"
            raise CorpusError(f"{p}: {key!r} is {what}, not an object: not a biotok counts record "
                              "(count again, or remove it)")
    return meta


__all__ = [
    "CHUNK_BYTES",
    "CorpusCounts",
    "count_corpus",
    "default_workers",
    "line_ranges",
    "counts_meta",
    "meta_path",
    "read_counts_meta",
    "save_counts",
    "read_count_files",
    "read_counts",
    "sorted_counts",
    "write_counts",
]
