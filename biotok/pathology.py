"""Vocabulary pathologies, computed from word counts: a short word-internal piece (the plural
``s``) as the most frequent piece, and frequent words one tokenizer splits where another keeps
them whole (``avec`` -> ``▁a vec``). ``biotok train`` warns about the first; ``biotok compare``
and ``biotok report`` show both (issue 45: such a vocabulary made a plateau model's answer look
like a verdict)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Iterable, Iterator, Mapping, Sequence

from biotok.config import NormalizeConfig
from biotok.normalize import build_normalizer
from biotok.page import Column, Section, Table

if TYPE_CHECKING:
    from tokenizers import Tokenizer

COMMON_WORDS = 300  # the commonest words whose cut is compared across tokenizers
SCAN_WORDS = 50_000  # the commonest distinct words encoded to count pieces from word counts
SUFFIX_CHARS = 3  # a word-internal piece of at most this many letters is a suffix
TALLY_LINES = 20_000  # compare: words are counted on the corpus' first lines only (about 0.6 s)
EXAMPLES = 8


@dataclass(frozen=True)
class TopSuffix:
    """The most frequent piece of a tokenizer is a short word-internal one (a suffix)."""

    name: str
    piece: str
    share: float  # of all the pieces of the counted words

    def warning(self) -> str:
        return (f"{self.name}: the most frequent piece is the word-internal {self.piece!r} "
                f"({100 * self.share:.1f} % of the pieces): frequent words are cut before it")

    def as_dict(self) -> dict:
        return {"name": self.name, "piece": self.piece, "share": self.share}


@dataclass(frozen=True)
class SplitWord:
    word: str
    count: int
    pieces: tuple[str, ...]  # this tokenizer's cut
    whole_in: tuple[str, ...]  # the tokenizers that keep it whole

    def as_dict(self) -> dict:
        return {"word": self.word, "count": self.count, "pieces": list(self.pieces), "whole_in": list(self.whole_in)}


@dataclass(frozen=True)
class Pathologies:
    """Per tokenizer: a suffix as the top piece (or None), the common words it alone splits."""

    names: tuple[str, ...]
    top_suffix: tuple[TopSuffix | None, ...]
    split_words: tuple[tuple[SplitWord, ...], ...]
    common: int  # how many of the commonest words were compared

    @property
    def found(self) -> bool:
        return any(self.top_suffix) or any(self.split_words)

    def warnings(self) -> list[str]:
        out = [t.warning() for t in self.top_suffix if t is not None]
        for name, split in zip(self.names, self.split_words):
            if split:
                ex = ", ".join(f"{s.word} -> {' '.join(s.pieces)}" for s in split[:3])
                out.append(f"{name} splits {len(split)} of the {self.common} commonest words that another "
                           f"tokenizer keeps whole ({ex})")
        return out

    def markdown(self) -> list[str]:
        """The section printed by ``compare`` and written to report.md."""
        out = ["## Vocabulary pathologies", ""]
        if not self.found:
            return out + [f"None: no tokenizer's most frequent piece is a word-internal suffix, and none splits one "
                          f"of the {self.common} commonest words another keeps whole.", ""]
        out += [f"- {w}" for w in self.warnings()] + [""]
        for name, split in zip(self.names, self.split_words):
            if split:
                out += [f"{name}: commonest words it splits and another keeps whole", "",
                        "| word | count | pieces | whole in |", "|---|---:|---|---|"]
                out += [f"| {s.word} | {s.count:,} | {' '.join(s.pieces)} | {', '.join(s.whole_in)} |"
                        for s in split[:EXAMPLES]]
                out.append("")
        return out

    def section(self) -> Section:
        """The HTML report's section: the same findings, one table of split words per tokenizer."""
        cols = (Column("word", "text"), Column("count", "int"), Column("pieces", "text"), Column("whole in", "text"))
        tables = tuple(
            Table(f"{name}: commonest words it splits and another keeps whole", cols,
                  tuple((s.word, s.count, " ".join(s.pieces), ", ".join(s.whole_in)) for s in split[:EXAMPLES]),
                  f"{len(split)} of the {self.common} commonest words of the corpus.")
            for name, split in zip(self.names, self.split_words) if split)
        lead = (" ".join(w + "." for w in self.warnings()) if self.found else
                f"None: no tokenizer's most frequent piece is a word-internal suffix, and none splits one of the "
                f"{self.common} commonest words another keeps whole.")
        return Section("pathologies", "Vocabulary pathologies", lead, tables=tables)

    def as_dict(self) -> dict:
        return {"common_words": self.common,
                "tokenizers": [{"name": n, "top_suffix": t.as_dict() if t else None,
                                "split_words": [s.as_dict() for s in split]}
                               for n, t, split in zip(self.names, self.top_suffix, self.split_words)]}


def _internal(piece: str, marker: str) -> str | None:
    """The letters of a word-internal piece (None: word-initial, or a convention without one)."""
    if marker in ("▁", "Ġ"):
        return None if piece.startswith(marker) else piece
    if marker == "##":
        return piece[2:] if piece.startswith("##") and len(piece) > 2 else None
    return None  # '</w>' vocabularies mark word ends: no word-internal start to tell


def top_suffix(name: str, marker: str, piece_freqs: Mapping[str, int]) -> TopSuffix | None:
    """A :class:`TopSuffix` when the most frequent piece is at most SUFFIX_CHARS letters inside a word."""
    if not piece_freqs:
        return None
    piece, n = min(piece_freqs.items(), key=lambda kv: (-kv[1], kv[0]))
    letters = _internal(piece, marker)
    if not letters or len(letters) > SUFFIX_CHARS or not letters.isalpha():
        return None
    return TopSuffix(name, piece, n / sum(piece_freqs.values()))


def _cuts(tokenizer: Tokenizer, words: Sequence[str], specials: set[int]) -> list[tuple[str, ...]]:
    encs = tokenizer.encode_batch(list(words), add_special_tokens=False)
    return [tuple(p for p, i in zip(e.tokens, e.ids) if i not in specials) for e in encs]


def _specials(tokenizer: Tokenizer) -> set[int]:
    return {k for k, t in tokenizer.get_added_tokens_decoder().items() if t.special}


def piece_frequencies(tokenizer: Tokenizer, counts: Mapping[str, int], scan: int = SCAN_WORDS) -> Counter[str]:
    """Piece occurrences over the ``scan`` commonest words, each counted as often as the word."""
    words = [w for w, _ in islice(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])), scan)]
    freqs: Counter[str] = Counter()
    for w, cut in zip(words, _cuts(tokenizer, words, _specials(tokenizer))):
        for p in cut:
            freqs[p] += counts[w]
    return freqs


def trained_suffix(name: str, marker: str, tokenizer: Tokenizer, counts: Mapping[str, int]) -> TopSuffix | None:
    """``biotok train``'s check: the top piece over the training words' counts."""
    return top_suffix(name, marker, piece_frequencies(tokenizer, counts))


def find_pathologies(names: Sequence[str], markers: Sequence[str], tokenizers: Sequence[Tokenizer],
                     counts: Mapping[str, int], piece_freqs: Sequence[Mapping[str, int]] | None = None,
                     common: int = COMMON_WORDS) -> Pathologies:
    """Both checks for tokenizers measured on the same words (``piece_freqs``: measured on the
    corpus, else counted from ``counts``)."""
    top = [w for w, _ in islice(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])), common)]
    cuts = [_cuts(t, top, _specials(t)) for t in tokenizers]
    split: list[tuple[SplitWord, ...]] = []
    for k, name in enumerate(names):
        mine = []
        for i, w in enumerate(top):
            whole = tuple(names[j] for j in range(len(names)) if j != k and len(cuts[j][i]) == 1)
            if len(cuts[k][i]) > 1 and whole:
                mine.append(SplitWord(w, counts[w], cuts[k][i], whole))
        split.append(tuple(mine))
    freqs = piece_freqs if piece_freqs is not None else [piece_frequencies(t, counts) for t in tokenizers]
    return Pathologies(names=tuple(names),
                       top_suffix=tuple(top_suffix(n, m, f) for n, m, f in zip(names, markers, freqs)),
                       split_words=tuple(split), common=len(top))


class WordTally:
    """Counts the words of the lines that pass through (the first ``limit``), for compare."""

    def __init__(self, config: NormalizeConfig | None = None, limit: int = TALLY_LINES) -> None:
        self.counts: Counter[str] = Counter()
        self._norm = build_normalizer(config)
        self._limit = limit

    def wrap(self, lines: Iterable[str]) -> Iterator[str]:
        batch: list[str] = []
        for k, line in enumerate(lines):
            if k < self._limit:
                batch.append(line)
                if len(batch) == 1000:
                    self._add(batch)
                    batch = []
            yield line
        self._add(batch)

    def _add(self, batch: list[str]) -> None:
        # one normalizer call per batch: no normalization step works across a newline (biotok.counting)
        text = "\n".join(batch)
        self.counts.update((self._norm.normalize_str(text) if self._norm else text).split())


__all__ = ["COMMON_WORDS", "Pathologies", "SplitWord", "TopSuffix", "WordTally", "find_pathologies",
           "piece_frequencies", "top_suffix", "trained_suffix"]
