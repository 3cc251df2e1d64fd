"""The files a task reader opens, recorded while it reads: a task is keyed by their bytes
(:func:`biotok_train.ablate.keys.task_key`), not by the folder they sit in nor by what else lies
there. Python's audit hook sees every ``open`` (builtins, ``os.open``, gzip, lzma, tarfile...); a
recording keeps the regular files opened for reading under the data's own roots (the corpora
folder, the cache of rebuilt data, the user's files), so a module imported on the way never counts.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from pathlib import Path
from typing import Iterator, Sequence

_RECORDING: contextvars.ContextVar[list | None] = contextvars.ContextVar("biotok_task_reads", default=None)
_INSTALLED = False


def _reading(mode, flags) -> bool:
    if isinstance(mode, str):
        return "r" in mode and "+" not in mode
    return isinstance(flags, int) and (flags & os.O_ACCMODE) == os.O_RDONLY


def _hook(event: str, args: tuple) -> None:
    if event != "open":
        return
    rec = _RECORDING.get()
    if rec is None or len(args) < 3:
        return
    path, mode, flags = args[0], args[1], args[2]
    if isinstance(path, (str, bytes, os.PathLike)) and _reading(mode, flags):
        rec.append(os.fsdecode(path))


def _install() -> None:
    global _INSTALLED
    if not _INSTALLED:  # an audit hook cannot be removed: one for the process, idle unless recording
        sys.addaudithook(_hook)
        _INSTALLED = True


def _under(path: str, roots: Sequence[str]) -> bool:
    forms = {os.path.abspath(path), os.path.realpath(path)}
    return any(f == r or f.startswith(r.rstrip(os.sep) + os.sep) for f in forms for r in roots)


class Reads:
    """The regular files opened for reading under ``roots`` during a :func:`recording`, in the
    order first opened (absolute paths as opened)."""

    def __init__(self, roots: Sequence[str | os.PathLike[str]]):
        self.roots = [r for p in roots for r in {os.path.abspath(p), os.path.realpath(p)}]
        self.raw: list[str] = []

    @property
    def files(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for p in self.raw:
            a = os.path.abspath(p)
            if a not in seen and _under(a, self.roots) and os.path.isfile(a):
                seen[a] = None
        return tuple(seen)


@contextlib.contextmanager
def recording(roots: Sequence[str | os.PathLike[str] | None]) -> Iterator[Reads]:
    """Record the files this thread opens for reading under ``roots`` (None entries ignored)."""
    _install()
    reads = Reads([r for r in roots if r is not None])
    token = _RECORDING.set(reads.raw)
    try:
        yield reads
    finally:
        _RECORDING.reset(token)


def data_roots(*paths: str | os.PathLike[str] | None) -> list[Path]:
    """The roots a reading may take its files from: each path given (a file or a folder)."""
    return [Path(p) for p in paths if p is not None]


__all__ = ["Reads", "data_roots", "recording"]
