"""Keep evaluation text out of pretraining text: :func:`exclude_sentences`.

A model pretrained on the sentences it is later tested on has seen the test set: its scores
measure memory, not the vocabulary. Before pretraining on text gathered from several corpora,
drop every line that is, or contains, a sentence of the evaluated tasks' dev and test sets.

Sentences are compared *normalised* (:func:`normalize_sentence`): Unicode NFKC, lowercased,
every run of characters that are not letters or digits made one space. So the tokenized
``IL - 2 ( n = 5 ) .`` of a CoNLL file and the raw ``IL-2 (n=5).`` of an abstract are one
sentence. A line is dropped when its normalised form equals an evaluated sentence's, or
contains it as a run of whole words (for sentences of at least ``min_chars`` normalised
characters, so that a short line such as "Results" does not remove every line it occurs in).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Iterator

_NOT_ALNUM = re.compile(r"[\W_]+", re.UNICODE)
ANCHOR_WORDS = 3  # words indexed per evaluated sentence (its first ones)


def normalize_sentence(text: str) -> str:
    """NFKC, lowercase, runs of non-alphanumerics -> one space, stripped."""
    return _NOT_ALNUM.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


@dataclass(frozen=True)
class Exclusion:
    """What :func:`exclude_sentences` kept and dropped."""

    kept: tuple[str, ...]  # the lines kept, in order
    excluded: int  # lines dropped
    matched: int  # distinct evaluated sentences found in the text

    def to_dict(self) -> dict:
        return {"kept": len(self.kept), "excluded": self.excluded, "matched": self.matched}


class _Index:
    """The evaluated sentences as word tuples, indexed by their first words."""

    def __init__(self, sentences: Iterable[str], min_chars: int) -> None:
        self.whole: set[str] = set()
        self.by_anchor: dict[tuple[str, ...], list[tuple[str, ...]]] = defaultdict(list)
        for s in sentences:
            key = normalize_sentence(s)
            if not key:
                continue
            self.whole.add(key)
            if len(key) >= min_chars:
                words = tuple(key.split(" "))
                self.by_anchor[words[:ANCHOR_WORDS]].append(words)
        self.anchor_lengths = sorted({len(a) for a in self.by_anchor}, reverse=True)

    def found(self, line: str) -> Iterator[str]:
        """The evaluated sentences ``line`` is or contains (normalised)."""
        key = normalize_sentence(line)
        if key in self.whole:
            yield key
        words = key.split(" ")
        for i in range(len(words)):
            for n in self.anchor_lengths:
                for cand in self.by_anchor.get(tuple(words[i:i + n]), ()):
                    if tuple(words[i:i + len(cand)]) == cand:
                        yield " ".join(cand)


def exclude_sentences(lines: Iterable[str], sentences: Iterable[str], *, min_chars: int = 20) -> Exclusion:
    """``lines`` without those that are or contain one of ``sentences`` (normalised; see the module)."""
    index = _Index(sentences, min_chars)
    kept: list[str] = []
    excluded = 0
    matched: set[str] = set()
    for line in lines:
        hits = set(index.found(line))
        if hits:
            excluded += 1
            matched |= hits
        else:
            kept.append(line)
    return Exclusion(tuple(kept), excluded, len(matched))


__all__ = ["Exclusion", "exclude_sentences", "normalize_sentence"]
