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
        rec.append((os.fsdecode(path), _stat(os.fsdecode(path))))


def _stat(path: str) -> tuple | None:
    """What changes when a file is written or replaced: its inode, size and times (None: not a file)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) if os.path.isfile(path) else None


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
        self.raw: list[tuple[str, tuple | None]] = []  # (path as opened, its stat when opened)

    def _first(self) -> dict[str, tuple | None]:
        seen: dict[str, tuple | None] = {}
        for p, st in self.raw:
            a = os.path.abspath(p)
            if (a in seen or _under(a, self.roots)) and os.path.isfile(a):
                seen[a] = st  # in the order first opened, as last opened (a cache rebuilt, then read)
        return seen

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(self._first())

    def digests(self) -> tuple[str, ...]:
        """The sha256 of each of :attr:`files`, of the bytes the reader read: a file written or
        replaced since it was opened (its inode, size or times differ before or after hashing) is
        one :class:`~biotok.errors.DataError`, so no key is ever taken of other bytes than those used."""
        from biotok.errors import DataError  # lazy: one use
        from biotok.io import sha256_file  # lazy: one use

        out = []
        for path, opened in self._first().items():
            try:
                digest = sha256_file(path)
            except OSError as e:
                raise DataError(f"cannot read {path} again to key it: {e.strerror or e}") from None
            if opened is None or _stat(path) != opened:
                raise DataError(f"{path} changed while it was read (written or replaced meanwhile); run again "
                                "once it is written")
            out.append(digest)
        return tuple(out)


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
