"""torch's CPU thread count: for a process (:func:`set_threads`, an engine's worker) or for a
block, restored after it (:class:`Threads`: a fine-tune's, a probe's, the local engine's). Float
sums split across threads add up in another order, so a result is byte-identical only at one
thread count. A count above the cores this process may use is capped to them, said once in a
warning line (1,024 threads of 8 MiB stacks end a run in a MemoryError, and only thrash where
they start): :func:`capped`, also for the engines' worker counts. No torch at import time."""

from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)
_SAID: set[tuple[str, int]] = set()


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def capped(n: int, what: str = "torch threads") -> int:
    """``n`` (threads, workers), at most the cores this process may use: a count above them is
    capped, with one warning line per count and ``what`` in this process. 0 stays 0 (a default)."""
    cores = available_cores()
    if n <= cores:
        return n
    if (what, n) not in _SAID:
        _SAID.add((what, n))
        log.warning("%d %s capped at %d, the cores this process may use", n, what, cores)
    return cores


def set_threads(n: int) -> None:
    """torch's intra-op threads of this process (0: leave torch's default; at most the cores)."""
    if n > 0:
        import torch  # lazy: callers need no torch until they run

        torch.set_num_threads(capped(n))


class Threads:
    """:func:`set_threads` for a block (n > 0), the previous count restored after it."""

    def __init__(self, n: int) -> None:
        self.n, self.before = n, 0

    def __enter__(self) -> None:
        if self.n > 0:
            import torch  # lazy: as set_threads

            self.before = torch.get_num_threads()
            set_threads(self.n)

    def __exit__(self, *exc) -> None:
        set_threads(self.before)


__all__ = ["Threads", "available_cores", "capped", "set_threads"]
