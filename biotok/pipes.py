"""Standard streams that survive a closed pipe: ``biotok-train mlm ... 2>&1 | head -1``, a closed
SSH session or a reader that went away never stops a run. A write that meets EPIPE (or EIO, a
terminal hung up) points the stream's file descriptor at /dev/null, so every later write (Python's,
tqdm's, a C library's, the interpreter's flush at exit) is dropped, and the run goes on. The
exit code still says how the run ended. Torch-free.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from typing import Any, Iterator

GONE = (errno.EPIPE, errno.EIO)


class SafeStream:
    """A text stream whose writes never raise for a reader that is gone (:data:`GONE`): from the
    first such write on, it writes to /dev/null (:attr:`gone` is then True)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.gone = False

    def _lost(self) -> None:
        self.gone = True
        try:
            fd = self._stream.fileno()
        except (AttributeError, OSError, ValueError):
            return  # no descriptor (a test's buffer): the writes are dropped here
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, fd)
        finally:
            os.close(null)

    def write(self, text: str) -> int:
        if self.gone and not _has_fd(self._stream):
            return len(text)
        try:
            return self._stream.write(text)
        except OSError as e:
            if e.errno not in GONE:
                raise
            self._lost()
            return len(text)

    def flush(self) -> None:
        if self.gone and not _has_fd(self._stream):
            return
        try:
            self._stream.flush()
        except OSError as e:
            if e.errno not in GONE:
                raise
            self._lost()
            with contextlib.suppress(OSError, ValueError):
                self._stream.flush()  # what was buffered goes to /dev/null now

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _has_fd(stream: Any) -> bool:
    try:
        stream.fileno()
        return True
    except (AttributeError, OSError, ValueError):
        return False


@contextlib.contextmanager
def safe_std_streams() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`SafeStream` for the block (a command's run)."""
    saved = sys.stdout, sys.stderr
    if sys.stdout is not None and not isinstance(sys.stdout, SafeStream):
        sys.stdout = SafeStream(sys.stdout)
    if sys.stderr is not None and not isinstance(sys.stderr, SafeStream):
        sys.stderr = SafeStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def keep_safe_std_streams() -> None:
    """``sys.stdout`` and ``sys.stderr`` as :class:`SafeStream` for the rest of this process (a pool worker)."""
    if sys.stdout is not None and not isinstance(sys.stdout, SafeStream):
        sys.stdout = SafeStream(sys.stdout)
    if sys.stderr is not None and not isinstance(sys.stderr, SafeStream):
        sys.stderr = SafeStream(sys.stderr)


__all__ = ["GONE", "SafeStream", "keep_safe_std_streams", "safe_std_streams"]
