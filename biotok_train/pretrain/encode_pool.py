"""Tokenize chunks of lines on N worker processes, results in submission order (prepare's engine).

Each line is encoded on its own (its ids, word starts and, when sampling, its sample depend on
the line and its index only), and chunks are collected in the order they were submitted: the
output is the same bytes whatever the number of workers. Every worker rebuilds the tokenizer
once from its serialized form (the exact bytes whose sha256 is its fingerprint). One worker runs
in this process, with no pool: today's single-thread path, the same code.

The pool is the standard library's, with the ``spawn`` start method (a clean interpreter,
whatever threads this process runs). Its workers never re-import the caller's ``__main__``
(:func:`_main_hidden`): they need nothing from it, and a plain script without an
``if __name__ == "__main__":`` guard would otherwise run again in every worker.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import multiprocessing.context
import os
import signal
import sys
import threading
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Hashable, Iterable, Iterator

import numpy as np

from biotok.errors import BiotokError, ConfigError, DataError
from biotok_train.config import PREPARE_MAX_WORKERS as MAX_WORKERS
# A chunk is one task: about 0.2 s of one core (1.2-1.4 M characters/s), so Ctrl-C, the progress
# bar and the balance between workers stay fine-grained, while a task's start and its pickled
# lines (a few hundred kB) cost nothing beside it.
CHUNK_LINES = 4096
CHUNK_CHARS = 1 << 18
# workers=0 (every core) on a corpus smaller than this runs in one process: starting the workers
# (a fresh interpreter each, 0.5-2 s) would cost more than tokenizing it (about 3 s of one core)
AUTO_MIN_BYTES = 4 << 20
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Encoded:
    """A chunk of lines encoded: every token id and word-start flag, end to end, and each line's length."""

    ids: np.ndarray  # the token dtype (uint16 or uint32)
    starts: np.ndarray  # uint8: 1 on the first piece of a pre-tokenized word
    lengths: np.ndarray  # int64: tokens of each line (0: a line without tokens)
    nbytes: int  # UTF-8 bytes of the lines, newlines included (the progress bar's unit)


# --- the worker side ------------------------------------------------------------------------------
class Encoder:
    """A tokenizer with its samplers (one per copy) and token dtype: encodes chunks of lines."""

    def __init__(self, tokenizer: Any, dtype: str, sampling: tuple[float, tuple[int, ...]] | None) -> None:
        """``tokenizer``: a ``tokenizers.Tokenizer``, or its serialized form (``to_str()``)."""
        from tokenizers import Tokenizer  # lazy: only where tokenizing happens

        self.backend = Tokenizer.from_str(tokenizer) if isinstance(tokenizer, str) else tokenizer
        self.dtype = np.dtype(dtype)
        self.samplers = None
        if sampling is not None:
            from biotok.sampling import Sampler

            alpha, seeds = sampling
            self.samplers = [Sampler(self.backend, alpha, seed=s) for s in seeds]

    def encode(self, lines: list[str], copy: int = 0, first_index: int = 0) -> Encoded:
        """Encode ``lines``; with sampling, with copy ``copy``'s sampler, the i-th line sampled as
        line ``first_index + i`` of the corpus."""
        ids: list[list[int]] = []
        starts: list[np.ndarray] = []
        if self.samplers is None:
            try:
                encodings = self.backend.encode_batch(lines, add_special_tokens=False)
            except (TypeError, UnicodeError):
                from biotok.tokenizer import _refuse_unencodable

                _refuse_unencodable(lines)
                raise
            for e in encodings:
                ids.append(e.ids)
                starts.append(word_start_flags(e.word_ids))
        else:
            sampler = self.samplers[copy]
            for i, line in enumerate(lines):
                x = sampler.sample(line, first_index + i)
                ids.append(x.ids)
                starts.append(np.asarray(x.word_starts, dtype=np.uint8))
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        flat = np.fromiter((t for row in ids for t in row), dtype=np.int64, count=int(lengths.sum()))
        return Encoded(ids=flat.astype(self.dtype),
                       starts=np.concatenate(starts) if starts else np.zeros(0, np.uint8),
                       lengths=lengths, nbytes=sum(len(t.encode("utf-8")) + 1 for t in lines))


_WORKER: Encoder | None = None  # a pool worker's encoder, built once by _init
_STARTED: Any = None  # the pool's "every worker started" event


def _init(tokenizer_json: str, dtype: str, sampling: tuple[float, tuple[int, ...]] | None, parent: int,
          started: Any) -> None:
    """A pool worker: load the tokenizer once, ignore Ctrl-C (it reaches the whole process group: the
    parent alone stops the pool), exit when the parent is gone, and tokenize on one thread (the pool
    is the parallelism: no N x N threads)."""
    global _WORKER, _STARTED
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    mask = getattr(signal, "pthread_sigmask", None)
    if mask:  # the mask held while spawning is inherited: a SIGTERM must reach the worker again
        mask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    _exit_with_parent(parent)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    _WORKER, _STARTED = Encoder(tokenizer_json, dtype, sampling), started


def _ready() -> None:
    """The task that starts a worker: it holds its worker until every worker is started (no idle one,
    so that each of the pool's first submits starts one more)."""
    _STARTED.wait()


def _encode(lines: list[str], copy: int, first_index: int) -> Encoded:
    """A pool task."""
    assert _WORKER is not None, "a pool worker without its tokenizer"
    return _WORKER.encode(lines, copy, first_index)


def _exit_with_parent(parent: int) -> None:
    """A worker whose parent is gone (killed with SIGKILL) exits instead of waiting for work forever."""
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="biotok-parent-watch", daemon=True).start()


def word_start_flags(word_ids: list[int | None]) -> np.ndarray:
    """1 on the first piece of each pre-tokenized word (specials and continuations 0)."""
    w = np.fromiter((-1 if x is None else x for x in word_ids), dtype=np.int64, count=len(word_ids))
    prev = np.concatenate(([-1], w[:-1]))
    return ((w >= 0) & (w != prev)).astype(np.uint8)


# --- the parent side ------------------------------------------------------------------------------
def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def usable_workers(asked: int, corpus_bytes: int | None) -> int:
    """Worker processes for ``asked`` (0: every available core, one for a corpus under
    AUTO_MIN_BYTES), at most one per core, and one where this process may not start any."""
    if not 0 <= asked <= MAX_WORKERS:
        raise ConfigError(f"--workers must be between 0 (every core) and {MAX_WORKERS}, not {asked}")
    cores = available_cores()
    if asked == 0:
        n = 1 if corpus_bytes is not None and corpus_bytes < AUTO_MIN_BYTES else cores
    elif asked > cores:
        _log.info("--workers %d capped at %d, the cores this process may use", asked, cores)
        n = cores
    else:
        n = asked
    if n > 1 and (why := _cannot_start_processes()):
        _log.info("tokenizing in one process: %s", why)
        n = 1
    return n


def _cannot_start_processes() -> str | None:
    """Why this process may not start worker processes, or None."""
    me = multiprocessing.current_process()
    if me.daemon:
        return "this is a daemonic worker process (it may not have children)"
    if getattr(me, "_inheriting", False):
        return "this process is still starting (a script re-run by a spawned worker)"
    return None


_SPAWN_LOCK = threading.Lock()


@contextlib.contextmanager
def _main_hidden():
    """While a worker is spawned: ``__main__`` says neither its file nor its module name, so the
    worker does not import (run) it again. Our workers unpickle only biotok's functions and plain data."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


@contextlib.contextmanager
def _signals_held():
    """Ctrl-C and SIGTERM held back in this (main) thread's Python handlers and delivered at the end.

    Blocking the signals is not enough: another thread takes a process-wide signal and this thread
    runs the handler at its next bytecode, which can fall between a worker's start and the pool's
    record of it (a worker nobody stops, holding the pool's queue open: the pool's shutdown hangs).
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # the handlers run in the main thread only: nothing interrupts this one
        return
    held: list[int] = []
    previous = {s: signal.signal(s, lambda signum, frame: held.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if held:
            signal.raise_signal(held[0])


class _Process(multiprocessing.context.SpawnProcess):
    """A spawned worker started with Ctrl-C and SIGTERM held back (a signal that cut a spawn in half
    would leave a half-started worker printing a traceback) and without re-running ``__main__``.

    Daemonic: a worker that Ctrl-C kept out of the pool's records (it came between the start and the
    record) is terminated at exit, where a non-daemonic one would be waited for forever.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.daemon = True

    @staticmethod
    def _Popen(process_obj):
        mask = getattr(signal, "pthread_sigmask", None)  # not on Windows
        with _SPAWN_LOCK, _main_hidden():
            old = mask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM}) if mask else None
            try:
                return multiprocessing.context.SpawnProcess._Popen(process_obj)
            finally:
                if mask:
                    mask(signal.SIG_SETMASK, old)


class _Context(multiprocessing.context.SpawnContext):
    Process = _Process


class _Inline:
    """One worker: the tasks run at once in this process, the same code, no pool."""

    def __init__(self, initargs: tuple) -> None:
        self.encoder = Encoder(*initargs)

    def run(self, tasks: Iterable[tuple[Hashable, list[str], int, int]]) -> Iterator[tuple[Hashable, Encoded]]:
        for tag, lines, copy, index in tasks:
            yield tag, self.encoder.encode(lines, copy, index)

    def close(self) -> None:
        pass


class _Pool:
    """``n`` spawned workers, all started at once; at most ``2 n`` chunks in flight, collected oldest first."""

    def __init__(self, n: int, initargs: tuple) -> None:
        _log.debug("tokenizing on %d worker processes", n)
        self.n = n
        context = _Context()
        started = context.Event()
        self.pool = ProcessPoolExecutor(n, mp_context=context, initializer=_init,
                                        initargs=(*initargs, os.getpid(), started))
        try:
            with _signals_held():
                for _ in range(n):  # each submit starts one more worker while none is idle
                    self.pool.submit(_ready)
                started.set()
        except BaseException as e:
            started.set()
            self.close()
            if isinstance(e, BrokenProcessPool):  # a worker killed as it started
                raise _died() from None
            raise

    def run(self, tasks: Iterable[tuple[Hashable, list[str], int, int]]) -> Iterator[tuple[Hashable, Encoded]]:
        pending: deque = deque()
        for tag, lines, copy, index in tasks:
            try:
                pending.append((tag, self.pool.submit(_encode, lines, copy, index)))
            except BrokenProcessPool:
                raise _died() from None
            while len(pending) > 2 * self.n:
                yield self._result(*pending.popleft())
        while pending:
            yield self._result(*pending.popleft())

    def _result(self, tag: Hashable, future) -> tuple[Hashable, Encoded]:
        try:
            return tag, future.result()
        except BrokenProcessPool:
            raise _died() from None
        except BiotokError:
            raise
        except Exception as e:  # a tokenizer failing in a worker: one line, the cause kept in the chain
            raise DataError(f"tokenizing failed in a worker process: {type(e).__name__}: {e}") from e

    def close(self) -> None:
        """Shut the pool down: chunks not started are cancelled, the workers finish the one they hold
        (a fraction of a second) and exit. Not terminated: a worker killed while it reads the task
        queue can leave that queue's lock taken, and the pool's shutdown would wait forever."""
        self.pool.shutdown(wait=True, cancel_futures=True)


def _died() -> DataError:
    return DataError("a tokenizing worker process died (killed, or out of memory?): prepare stopped, nothing "
                     "written; run it again, with fewer --workers if memory is short")


def encode_chunks(
    tasks: Iterable[tuple[Hashable, list[str], int, int]],
    backend: Any,
    dtype: np.dtype,
    workers: int,
    sampling: tuple[float, tuple[int, ...]] | None = None,
) -> Iterator[tuple[Hashable, Encoded]]:
    """``(tag, Encoded)`` for each ``(tag, lines, copy, first_index)`` of ``tasks``, in order, on
    ``workers`` processes (1: this one) with the ``tokenizers.Tokenizer`` ``backend`` (each worker
    gets its ``to_str()``). ``tasks`` is read lazily: memory holds only the chunks in flight.
    Closing the generator (or an error, or Ctrl-C) stops the workers."""
    dtype_name = np.dtype(dtype).name
    runner: _Inline | _Pool = (_Inline((backend, dtype_name, sampling)) if workers <= 1
                               else _Pool(workers, (backend.to_str(), dtype_name, sampling)))
    try:
        yield from runner.run(tasks)
    finally:
        runner.close()


__all__ = ["AUTO_MIN_BYTES", "CHUNK_CHARS", "CHUNK_LINES", "Encoded", "Encoder", "MAX_WORKERS", "available_cores",
           "encode_chunks", "usable_workers", "word_start_flags"]
