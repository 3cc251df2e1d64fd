"""Sample sentences for the page: corpus lines picked by a hash of their text, while the corpus streams by."""

from __future__ import annotations

import hashlib
import heapq
from typing import Iterable


class SentencePicker:
    """Chooses k corpus lines of readable length by a hash of their text while the corpus streams
    by (:meth:`watch`), keeping only k candidates in memory: same corpus, same lines."""

    def __init__(self, k: int = 6, min_chars: int = 60, max_chars: int = 220) -> None:
        self.k, self.min_chars, self.max_chars = k, min_chars, max_chars
        self._heap: list[tuple[str, str]] = []  # (negated-order key, line): a max-heap on the hash
        self._seen: set[str] = set()

    def offer(self, line: str) -> None:
        s = line.strip()
        if not (self.min_chars <= len(s) <= self.max_chars and any(c.isalpha() for c in s)) or self.k <= 0:
            return
        h = hashlib.sha256(s.encode("utf-8")).hexdigest()
        if h in self._seen:
            return
        key = "".join(chr(0x10FFFF - ord(c)) for c in h)  # reverse order: heap top = largest hash
        if len(self._heap) < self.k:
            heapq.heappush(self._heap, (key, s))
            self._seen.add(h)
        elif key > self._heap[0][0]:
            _, old = heapq.heapreplace(self._heap, (key, s))
            self._seen.discard(hashlib.sha256(old.encode("utf-8")).hexdigest())
            self._seen.add(h)

    def watch(self, lines: Iterable[str]) -> Iterable[str]:
        """Pass ``lines`` through unchanged, offering each one."""
        for line in lines:
            self.offer(line)
            yield line

    @property
    def picked(self) -> list[str]:
        """The chosen lines, smallest hash first."""
        return [s for _, s in sorted(self._heap, reverse=True)]


def pick_sentences(lines: Iterable[str], k: int = 6, *, min_chars: int = 60, max_chars: int = 220) -> list[str]:
    """k lines of ``lines`` of readable length, chosen by a hash of their text (see :class:`SentencePicker`)."""
    p = SentencePicker(k, min_chars, max_chars)
    for line in lines:
        p.offer(line)
    return p.picked



__all__ = ["SentencePicker", "pick_sentences"]
