"""WordPiece: which new pieces can never make a word take more pieces (the overhang proof).

Greedy longest match (WordPiece) from a later start can take *more* pieces than from an earlier
one. A new piece ``p`` is taken where the base would take ``r1``, the longest base piece that
begins ``p``; the base then goes on from the end of ``r1`` over ``s + y`` (``s``: the rest of
``p``, the *overhang*; ``y``: whatever text follows ``p``), the extended model from the end of
``p`` over ``y`` alone. ``p`` is safe when, for every ``y`` a word can hold (the model's
``max_input_chars_per_word`` bounds it), the base takes at least as many pieces over ``s + y``
as over ``y`` and fails (``[UNK]``) on one exactly when it fails on the other. By induction along
any word, every word then takes no more pieces with the new pieces than without, with the same
decoding (docs/extend.md: the guarantee). Safety depends on the base alone, so each piece is
judged once, whatever else is chosen.

The check runs the two greedy matches side by side over an unknown ``y``: the one behind steps,
either within the text both have read (its longest base piece there) or across the front one's
position by a base ``##`` piece that extends that text, which writes the next characters of ``y``.
It branches over base pieces, not characters, and stops when both stand at one position.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

NEG = float("-inf")


class Overhang:
    """The base's continuation pieces and, memoized, the least ``pieces(s + y) - pieces(y)``
    over every text ``y`` of at most ``room`` characters (``-inf``: one of the two fails)."""

    def __init__(self, vocab: Iterable[str], prefix: str, max_chars: int) -> None:
        k = len(prefix)
        vocab = set(vocab)
        self.prefix, self.max_chars, self.vocab = prefix, max_chars, vocab
        self.cont = {p[k:] for p in vocab if p.startswith(prefix) and len(p) > k}
        self.ext: dict[str, list[str]] = defaultdict(list)  # a proper prefix of a continuation -> those
        for b in sorted(self.cont):
            for e in range(1, len(b)):
                self.ext[b[:e]].append(b)
        self.memo: dict[tuple[int, str, int], float] = {}
        self.walks: dict[tuple[str, int], tuple[str, ...] | None] = {}

    def least(self, behind: int, lag: str, room: int) -> float:
        """``behind``: +1 when the base's match over ``s + y`` (counted +1 a piece) is behind,
        -1 when the one over ``y`` (-1 a piece) is; ``lag``: the text between them; ``room``:
        the characters ``y`` may still hold past the front one."""
        key = (behind, lag, room)
        v = self.memo.get(key)
        if v is not None:
            return v
        k = next((e for e in range(len(lag), 0, -1) if lag[:e] in self.cont), 0)
        if k == 0:  # no piece goes on from here: this match fails where the other may not
            v = NEG
        elif k == len(lag):  # both stand at one position: the rest is the same for both
            v = behind
        else:
            v = behind + self.least(behind, lag[k:], room)
        if v != NEG:
            for b in self.ext.get(lag, ()):  # ... or a longer piece crosses the front one's position
                z = b[len(lag):]
                if len(z) <= room:
                    v = min(v, behind + self.least(-behind, z, room - len(z)))
                    if v == NEG:
                        break
        self.memo[key] = v
        return v

    def needs(self, piece: str, most: int = 8) -> list[tuple[str, ...]] | None:
        """What adding ``piece`` (a word start, or ``##`` + a continuation) requires so that no word
        ever takes more pieces or decodes differently, whatever else is added: groups of *shadows*
        (longer pieces beginning with ``piece``), one of each to be in the vocabulary, since a
        shadow matched where a text goes on keeps the greedy match from taking ``piece`` there;
        ``[]``: safe as it is; None: impossible (or more than ``most`` groups)."""
        if piece in self.vocab:
            return []
        k = len(self.prefix)
        ways = [(piece, self.vocab, len(piece))]  # at a word's start any string of the vocabulary matches
        if k and piece.startswith(self.prefix) and len(piece) > k:
            ways.append((piece[k:], self.cont, len(piece) - k + 1))  # inside a word: "##" + the rest
        groups: set[tuple[str, ...]] = set()
        for body, pool, used in ways:
            r1 = next((e for e in range(len(body) - 1, 0, -1) if body[:e] in pool), 0)
            crossing = self._crossing(body[r1:], max(self.max_chars - used, 0)) if r1 else None
            if crossing is None:
                return None
            for z in crossing:
                g = tuple(piece + z[:i] for i in range(1, len(z) + 1))
                if not any(q in self.vocab for q in g):
                    groups.add(g)
                    if len(groups) > 2 * most:
                        return None
        groups = {g for g in groups if not any(g[:i] in groups for i in range(1, len(g)))}
        return sorted(groups) if len(groups) <= most else None

    def _crossing(self, overhang: str, room: int) -> tuple[str, ...] | None:
        """The texts ``z`` that begin a ``y`` breaking the overhang's check (the base over the
        overhang crosses its end by ``z`` and then takes fewer pieces), memoized; None: the base
        cannot go on over the overhang itself."""
        key = (overhang, room)
        if key in self.walks:
            return self.walks[key]
        lag, steps, bad = overhang, 0, []
        while True:  # the base over the overhang, and each piece that crosses its end
            for b in self.ext.get(lag, ()):
                z = b[len(lag):]
                if len(z) <= room and steps + 1 + self.least(-1, z, room - len(z)) < 0:
                    bad.append(z)
            e = next((e for e in range(len(lag), 0, -1) if lag[:e] in self.cont), 0)
            if e == 0:
                self.walks[key] = None
                return None
            steps += 1
            if e == len(lag):
                break
            lag = lag[e:]
        self.walks[key] = out = tuple(sorted(set(bad)))
        return out

    def safe(self, piece: str) -> bool:
        """Whether ``piece`` needs no shadow (:meth:`needs`)."""
        return self.needs(piece) == []


__all__ = ["Overhang"]
