"""Where a tokenizer cuts the raw text: piece spans trimmed of whitespace, and biotok words.

Every evidence module (entities, terminology, morphemes, numbers, the HTML page) reads a
tokenizer's cuts through :class:`Segmentation`, so they all agree on what "one piece" and
"a cut" mean. Offsets come from the tokenizer itself (``encode_batch``), so markers
('▁', '##', 'Ġ', '</w>') never matter; SentencePiece's '▁mot' covers ' mot' and is trimmed to
'mot'. A piece holding only whitespace (a bare '▁') is kept as a zero-width piece at the next
non-space character: it counts as a piece of the word that follows, never as a cut.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from biotok.config import NormalizeConfig
from biotok.metrics import WordSplitter
from biotok.tokenizer import BiotokTokenizer


_MARKERS = frozenset("▁Ġ \t\n")


def _trim(text: str, a: int, b: int) -> tuple[int, int]:
    """(a, b) without leading/trailing whitespace; all-space: zero width at the next non-space."""
    n = len(text)
    a, b = max(0, min(a, n)), max(0, min(b, n))
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    if a == b:
        q = a
        while q < n and text[q].isspace():
            q += 1
        return q, q
    return a, b


# How a piece that covers no character of the text (a bare word-start marker) is spelled in tables.
EMPTY_PIECE = "∅"

@dataclass(frozen=True)
class Segmentation:
    """One text cut by one tokenizer: pieces, their trimmed character spans, UNK flags."""

    text: str
    pieces: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    unknown: tuple[bool, ...]
    _starts: tuple[int, ...] = field(default=(), repr=False, compare=False)
    _ends: tuple[int, ...] = field(default=(), repr=False, compare=False)
    _ordered: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        starts = tuple(a for a, _ in self.spans)
        ends = tuple(b for _, b in self.spans)
        ordered = all(x <= y for x, y in zip(starts, starts[1:])) and all(x <= y for x, y in zip(ends, ends[1:]))
        object.__setattr__(self, "_starts", starts)
        object.__setattr__(self, "_ends", ends)
        object.__setattr__(self, "_ordered", ordered)

    @classmethod
    def from_offsets(
        cls, text: str, pieces: Sequence[str], offsets: Sequence[tuple[int, int]],
        unknown: Sequence[bool] | None = None,
    ) -> "Segmentation":
        """Build from a tokenizer's raw offsets (trimmed here)."""
        spans = []
        reach = 0
        for piece, (a, b) in zip(pieces, offsets):
            a, b = _trim(text, a, b)
            if piece and all(c in _MARKERS for c in piece):
                b = a  # a bare '▁' / 'Ġ' holds no character of the text, whatever its offsets say
            # a piece reaching back into the previous one (a space inserted by a normalizer, as
            # in '▁.' after 'bilatérale', is aligned to the character before it) starts where the
            # previous one ends; pieces sharing one character (byte-level halves of 'é') stay as they are
            if a < reach < b:
                a = reach
            spans.append((a, b))
            reach = max(reach, b)
        unk = tuple(unknown) if unknown is not None else (False,) * len(spans)
        return cls(text, tuple(pieces), tuple(spans), unk)

    def __len__(self) -> int:
        return len(self.pieces)

    def _candidates(self, start: int, end: int) -> range:
        if not self._ordered:
            return range(len(self.spans))
        # pieces whose end >= start and whose start < end (zero-width included, refined below)
        return range(bisect_left(self._ends, start), bisect_right(self._starts, max(start, end - 1)))

    def cover(self, start: int, end: int) -> list[int]:
        """Indices of the pieces holding characters of [start, end) (zero-width ones inside too)."""
        out = []
        for i in self._candidates(start, end):
            a, b = self.spans[i]
            if (a < end and b > start) or (a == b and start <= a < end):
                out.append(i)
        return out

    def whole(self, start: int, end: int) -> bool:
        """True when [start, end) is covered by exactly one piece, and that piece is not UNK."""
        idx = self.cover(start, end)
        return len(idx) == 1 and not self.unknown[idx[0]]

    def cuts(self, start: int, end: int) -> list[int]:
        """Sorted positions strictly inside (start, end) where one piece ends and another begins."""
        out: set[int] = set()
        for i in self.cover(start, end):
            a, b = self.spans[i]
            if a == b:
                continue
            for x in (a, b):
                if start < x < end:
                    out.add(x)
        return sorted(out)

    def crosses(self, position: int) -> bool:
        """True when a piece straddles ``position`` (holds characters on both sides of it)."""
        for i in self._candidates(position, position + 1):
            a, b = self.spans[i]
            if a < position < b:
                return True
        return False

    def surfaces(self) -> tuple[str, ...]:
        """Each piece as spelled in the text (markers gone, case kept); UNK as itself, a piece that
        covers no character (a bare '▁') as :data:`EMPTY_PIECE`."""
        out = []
        for p, (a, b), u in zip(self.pieces, self.spans, self.unknown):
            out.append(p if u else EMPTY_PIECE if a == b else self.text[a:b])
        return tuple(out)


def segment(tokenizer: BiotokTokenizer, texts: Sequence[str], batch_size: int = 2000) -> list[Segmentation]:
    """Segment each text alone (no special tokens added) with one tokenizer."""
    unk = tokenizer.unk_id
    out: list[Segmentation] = []
    texts = list(texts)
    for i in range(0, len(texts), batch_size):
        chunk = texts[i : i + batch_size]
        for text, e in zip(chunk, tokenizer.backend.encode_batch(chunk, add_special_tokens=False)):
            out.append(Segmentation.from_offsets(text, e.tokens, e.offsets, [x == unk for x in e.ids]))
    return out


def word_spans(texts: Sequence[str], normalize_config: NormalizeConfig | None = None) -> list[list[tuple[int, int]]]:
    """biotok words of each text as character spans (the same words as the fragmentation metrics)."""
    texts = list(texts)
    splitter = WordSplitter(normalize_config)
    out: list[list[tuple[int, int]]] = []
    for i in range(0, len(texts), 2000):
        out.extend([list(map(tuple, s)) for s in splitter.spans(texts[i : i + 2000])])  # type: ignore[arg-type]
    return out


def content_words(text: str, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans holding at least one letter or digit: punctuation marks are not counted as words."""
    return [(a, b) for a, b in spans if any(c.isalnum() for c in text[a:b])]
