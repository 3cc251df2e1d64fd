"""The probe's text side (no torch): documents, what each tokenizer's normalisation discards,
the token streams, and the unigram floor.

A *document* is one non-blank line (or one JSON ``text`` field) of the training or held-out
files. Every arm encodes the same documents; a document boundary is one extra id (the
tokenizer's vocabulary size), so no arm depends on which special tokens its tokenizer has.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from biotok.errors import CorpusError
from biotok.tokenizer import BiotokTokenizer

# Probes of what a normalizer discards: case ("AB" -> "ab") and accents ("é" -> "e").
_CASE_PROBE, _ACCENT_PROBE = "ABÉ", "éàü"
ENCODE_BATCH = 256  # documents per encode_batch call


@dataclass(frozen=True)
class Normalization:
    """What a tokenizer's normalizer throws away before segmenting."""

    lowercases: bool
    strips_accents: bool

    def label(self) -> str:
        parts = [p for p, on in (("lowercases", self.lowercases), ("strips accents", self.strips_accents)) if on]
        return ", ".join(parts) or "keeps case and accents"


def normalization(tok: BiotokTokenizer) -> Normalization:
    """Read from the tokenizer's own normalizer (none: nothing discarded)."""
    norm = tok.backend.normalizer

    def apply(s: str) -> str:
        return norm.normalize_str(s) if norm is not None else s

    case = apply(_CASE_PROBE)
    accents = apply(_ACCENT_PROBE)
    lowercases = case == case.lower() and case != case.upper()
    strips = not any(unicodedata.combining(c) for c in unicodedata.normalize("NFD", accents))
    return Normalization(lowercases=lowercases, strips_accents=strips)


def fair_transform(norms: Sequence[Normalization]) -> Normalization:
    """The transform that puts every arm on the same text: lowercase when one arm lowercases,
    strip accents when one strips them."""
    return Normalization(lowercases=any(n.lowercases for n in norms), strips_accents=any(n.strips_accents for n in norms))


def transform(text: str, how: Normalization | None) -> str:
    """``text`` lowercased and/or stripped of accents as ``how`` says (None: unchanged)."""
    if how is None:
        return text
    if how.lowercases:
        text = text.lower()
    if how.strips_accents:
        text = unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFD", text)
                                                   if not unicodedata.combining(c)))
    return text


def round_trip_share(tok: BiotokTokenizer, docs: Sequence[str], ids: Sequence[np.ndarray]) -> float:
    """Share of ``docs`` whose pieces decode back to the tokenizer's own normalized text (runs of
    whitespace collapsed): below 1, the pieces do not record everything the normalizer keeps
    (spacing around punctuation for WordPiece, characters behind [UNK]), so bits per character
    of the pieces leave that out."""
    if not docs:
        return 1.0
    norm = tok.backend.normalizer

    def canonical(text: str) -> str:
        return " ".join(text.split())

    same = sum(canonical(tok.backend.decode([int(i) for i in d], skip_special_tokens=False))
               == canonical(norm.normalize_str(t) if norm is not None else t) for t, d in zip(docs, ids))
    return same / len(docs)


def read_documents(paths: Sequence[str], field_name: str | None, what: str) -> list[str]:
    """The non-blank lines (documents) of ``paths``; CorpusError when there are none."""
    from biotok.corpus import iter_lines

    docs = [line for line in iter_lines(list(paths), field_name) if line.strip()]
    if not docs:
        raise CorpusError(f"{what} {', '.join(map(str, paths))} holds no text")
    return docs


def encode_documents(tok: BiotokTokenizer, docs: Sequence[str]) -> list[np.ndarray]:
    """Each document's piece ids (no special tokens)."""
    out: list[np.ndarray] = []
    for start in range(0, len(docs), ENCODE_BATCH):
        ids = tok.encode_batch_ids(list(docs[start:start + ENCODE_BATCH]), add_special_tokens=False)
        out.extend(np.asarray(x, dtype=np.int64) for x in ids)
    return out


def stream(docs: Sequence[np.ndarray], boundary: int) -> np.ndarray:
    """``B d1 B d2 ... B dn B``: the training token stream, documents joined by the boundary id."""
    parts: list[np.ndarray] = []
    b = np.array([boundary], dtype=np.int64)
    for d in docs:
        parts.extend((b, d))
    parts.append(b)
    return np.concatenate(parts)


@dataclass(frozen=True)
class UnigramFloor:
    """Add-one unigram model of the pieces of the training text (the boundary id excluded)."""

    log2p: np.ndarray  # (vocab,) log2 probability of each piece id

    @classmethod
    def fit(cls, docs: Sequence[np.ndarray], vocab_size: int) -> "UnigramFloor":
        counts = np.zeros(vocab_size, dtype=np.float64)
        for d in docs:
            counts += np.bincount(d, minlength=vocab_size)[:vocab_size]
        total = counts.sum() + vocab_size
        return cls(np.log2(counts + 1.0) - math.log2(total))

    def doc_bits(self, docs: Sequence[np.ndarray]) -> np.ndarray:
        """Each document's negative log-likelihood in bits under the unigram model."""
        return np.array([-float(self.log2p[d].sum()) for d in docs], dtype=np.float64)


__all__ = ["Normalization", "UnigramFloor", "encode_documents", "fair_transform", "normalization", "read_documents",
           "round_trip_share",
           "stream", "transform"]
