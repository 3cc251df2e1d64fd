"""The worker side of :mod:`biotok_train.pretrain.encode_pool`: what a spawned worker imports.

Light on purpose (the standard library and ``tokenizers``, no numpy): each worker is a fresh
interpreter, and its imports are paid once per worker per prepare. Also the spawn itself
(:class:`_Process`): a worker started with Ctrl-C and SIGTERM held and without re-running the
caller's ``__main__``.
"""

from __future__ import annotations

import contextlib
import multiprocessing.context
import os
import signal
import threading
import time
from array import array
from dataclasses import dataclass
from itertools import chain
from typing import Any

from biotok.spawning import SPAWN_LOCK, exit_with_parent, main_hidden

_TYPECODES = {"uint16": "H", "uint32": "I"}  # array typecodes of the token types (I: 4 bytes on every platform biotok runs on)
assert array("H").itemsize == 2 and array("I").itemsize == 4 and array("q").itemsize == 8


@dataclass(frozen=True)
class Encoded:
    """A chunk of lines encoded: every token id and word-start flag, end to end, and each line's length
    (bytes in this machine's byte order: no numpy in a worker, whose start it would slow)."""

    ids: bytes  # the token type (uint16 or uint32)
    starts: bytes  # uint8: 1 on the first piece of a pre-tokenized word
    lengths: bytes  # int64: tokens of each line (0: a line without tokens)
    nbytes: int  # UTF-8 bytes of the lines, newlines included (the progress bar's unit)


class Encoder:
    """A tokenizer with its samplers (one per copy) and token dtype: encodes chunks of lines."""

    def __init__(self, tokenizer: Any, dtype: str, sampling: tuple[float, tuple[int, ...]] | None) -> None:
        """``tokenizer``: a ``tokenizers.Tokenizer``, or its serialized form (``to_str()``); ``dtype``:
        uint16 or uint32."""
        from tokenizers import Tokenizer  # lazy: only where tokenizing happens

        self.backend = Tokenizer.from_str(tokenizer) if isinstance(tokenizer, str) else tokenizer
        self.typecode = _TYPECODES[dtype]
        self.samplers = None
        if sampling is not None:
            from biotok.sampling import Sampler

            alpha, seeds = sampling
            self.samplers = [Sampler(self.backend, alpha, seed=s) for s in seeds]

    def encode(self, lines: list[str], copy: int = 0, first_index: int = 0) -> Encoded:
        """Encode ``lines``; with sampling, with copy ``copy``'s sampler, the i-th line sampled as
        line ``first_index + i`` of the corpus."""
        ids: list[list[int]] = []
        starts: list[bytes] = []
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
                starts.append(bytes(x.word_starts))
        return Encoded(ids=array(self.typecode, chain.from_iterable(ids)).tobytes(), starts=b"".join(starts),
                       lengths=array("q", map(len, ids)).tobytes(),
                       nbytes=sum(len(t.encode("utf-8")) + 1 for t in lines))


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
    exit_with_parent(parent)
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


def word_start_flags(word_ids: list[int | None]) -> bytes:
    """1 on the first piece of each pre-tokenized word (specials and continuations 0), a byte each."""
    out = bytearray(len(word_ids))
    prev = None
    for i, w in enumerate(word_ids):
        if w is not None and w != prev:
            out[i] = 1
        prev = w
    return bytes(out)


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
        with SPAWN_LOCK, main_hidden():
            old = mask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM}) if mask else None
            try:
                return multiprocessing.context.SpawnProcess._Popen(process_obj)
            finally:
                if mask:
                    mask(signal.SIG_SETMASK, old)


class _Context(multiprocessing.context.SpawnContext):
    Process = _Process
