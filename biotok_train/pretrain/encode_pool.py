"""Tokenize chunks of lines on N worker processes, results in submission order (prepare's engine).

Each line is encoded on its own (its ids, word starts and, when sampling, its sample depend on
the line and its index only), and chunks are collected in the order they were submitted: the
output is the same bytes whatever the number of workers. Every worker rebuilds the tokenizer
once from its serialized form (the exact bytes whose sha256 is its fingerprint). One worker runs
in this process, with no pool: today's single-thread path, the same code.

The pool is the standard library's, with the ``spawn`` start method (a clean interpreter,
whatever threads this process runs). Its workers never re-import the caller's ``__main__``
(:mod:`.encode_worker`): they need nothing from it, and a plain script without an
``if __name__ == "__main__":`` guard would otherwise run again in every worker.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Hashable, Iterable, Iterator

import numpy as np

from biotok.errors import BiotokError, ConfigError, DataError
from biotok.spawning import end_broken_pool
from biotok_train.config import PREPARE_MAX_WORKERS as MAX_WORKERS
from biotok_train.pretrain.encode_worker import Encoded, Encoder, _Context, _encode, _init, _ready, _signals_held

# A chunk is one task: about 0.2 s of one core (1.2-1.4 M characters/s), so Ctrl-C, the progress
# bar and the balance between workers stay fine-grained, while a task's start and its pickled
# lines (a few hundred kB) cost nothing beside it.
CHUNK_LINES = 4096
CHUNK_CHARS = 1 << 18
# workers=0 (every core) on a corpus smaller than this runs in one process: starting the workers
# (a fresh interpreter each, 0.5-2 s) would cost more than tokenizing it (about 3 s of one core)
AUTO_MIN_BYTES = 4 << 20
_log = logging.getLogger(__name__)


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
        queue can leave that queue's lock taken, and the pool's shutdown would wait forever. A
        pool broken by a dead worker has its others killed first (:func:`end_broken_pool`)."""
        end_broken_pool(self.pool)
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
