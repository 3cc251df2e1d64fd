"""torch's CPU thread count for a block, restored after it: a fine-tune's or a probe's
``threads`` option. Float sums split across threads add up in another order, so a result is
byte-identical only at one thread count. No torch at import time."""

from __future__ import annotations


class Threads:
    """``torch.set_num_threads(n)`` for a block (n > 0), the previous count restored after it."""

    def __init__(self, n: int) -> None:
        self.n, self.before = n, 0

    def __enter__(self) -> None:
        if self.n > 0:
            import torch

            self.before = torch.get_num_threads()
            torch.set_num_threads(self.n)

    def __exit__(self, *exc) -> None:
        if self.n > 0:
            import torch

            torch.set_num_threads(self.before)


__all__ = ["Threads"]
