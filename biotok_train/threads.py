"""torch's CPU thread count: for a process (:func:`set_threads`, an engine's worker) or for a
block, restored after it (:class:`Threads`: a fine-tune's, a probe's, the local engine's). Float
sums split across threads add up in another order, so a result is byte-identical only at one
thread count. No torch at import time."""

from __future__ import annotations


def set_threads(n: int) -> None:
    """torch's intra-op threads of this process (0: leave torch's default)."""
    if n > 0:
        import torch  # lazy: callers need no torch until they run

        torch.set_num_threads(n)


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


__all__ = ["Threads", "set_threads"]
