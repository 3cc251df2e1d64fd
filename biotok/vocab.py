"""Vocabulary diff across marker conventions, and the AliBERT "duplicates" count.

Pieces are compared in a common, marker-free *form*: '▁mot' (SentencePiece), 'mot' (WordPiece
word start), 'Ġmot' (GPT-2 byte-level) and 'mot</w>' (FlauBERT end of word) all have the form
'mot'. Whether the piece sits at a word boundary is kept as an attribute (``boundary``):
for '▁', '##' and 'Ġ' vocabularies it marks a word *start*, for '</w>' a word *end*.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from functools import cached_property, lru_cache
from typing import Iterable, Mapping, NamedTuple, Union
from weakref import WeakKeyDictionary

from biotok.formats import load
from biotok.tokenizer import BiotokTokenizer, detect_marker

VocabLike = Union[BiotokTokenizer, Mapping[str, int], Iterable[str], str, "os.PathLike[str]"]

_SPECIAL_RE = re.compile(r"^(\[[A-Za-z_]+[0-9]*\]|<[A-Za-z_/|]+[0-9]*>|<0x[0-9A-Fa-f]{2}>|<\|[^|]*\|>)$")
_CACHE: "WeakKeyDictionary[BiotokTokenizer, dict[str, Vocab]]" = WeakKeyDictionary()


class Piece(NamedTuple):
    """A vocabulary entry in marker-free form: ``boundary`` is True at a word start ('▁', 'Ġ',
    or a WordPiece piece without '##'), or at a word end for '</w>' vocabularies."""

    piece: str
    form: str
    boundary: bool
    id: int


@dataclass(frozen=True)
class Vocab:
    """A vocabulary as marker-free pieces (specials removed), with its marker convention."""

    name: str
    marker: str
    size: int  # all entries, specials included
    pieces: tuple[Piece, ...]

    @cached_property
    def forms(self) -> frozenset[str]:
        return frozenset(p.form for p in self.pieces)


@dataclass(frozen=True)
class VocabDiff:
    """Two vocabularies compared on marker-free forms."""

    name_a: str
    name_b: str
    marker_a: str
    marker_b: str
    size_a: int
    size_b: int
    forms_a: int
    forms_b: int
    shared: int
    only_a: int
    only_b: int
    jaccard: float
    duplicates_a: int
    duplicates_b: int
    examples_shared: tuple[str, ...]
    examples_only_a: tuple[str, ...]
    examples_only_b: tuple[str, ...]

    def swapped(self) -> "VocabDiff":
        return VocabDiff(
            self.name_b, self.name_a, self.marker_b, self.marker_a, self.size_b, self.size_a,
            self.forms_b, self.forms_a, self.shared, self.only_b, self.only_a, self.jaccard,
            self.duplicates_b, self.duplicates_a, self.examples_shared, self.examples_only_b,
            self.examples_only_a,
        )

    def as_dict(self) -> dict:
        return asdict(self)


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode: the byte each printable stand-in character encodes."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def _decode_bytelevel(s: str) -> str:
    dec = _byte_decoder()
    try:
        return bytes(dec[c] for c in s).decode("utf-8")
    except (KeyError, UnicodeDecodeError):
        return s  # a partial UTF-8 sequence: keep the byte-level spelling


def split_marker(piece: str, marker: str) -> tuple[str, bool]:
    """(marker-free form, boundary) of one piece under a marker convention."""
    if marker == "▁":
        return (piece[1:], True) if piece.startswith("▁") else (piece, False)
    if marker == "##":
        return (piece[2:], False) if piece.startswith("##") and len(piece) > 2 else (piece, True)
    if marker == "Ġ":
        if piece.startswith("Ġ"):
            return _decode_bytelevel(piece[1:]), True
        return _decode_bytelevel(piece), False
    if marker == "</w>":
        return (piece[:-4], True) if piece.endswith("</w>") else (piece, False)
    return piece, False


def _special_pieces(tok: BiotokTokenizer) -> set[str]:
    out = set(tok.specials.values())
    out |= {t.content for t in tok.backend.get_added_tokens_decoder().values() if t.special}
    return out


def as_vocab(v: VocabLike, name: str | None = None, marker: str | None = None) -> Vocab:
    """Normalize a tokenizer, a {piece: id} map or a list of pieces into a :class:`Vocab`."""
    if isinstance(v, Vocab):
        return v
    if isinstance(v, (str, os.PathLike)):  # a path or alias: load it
        v = load(v)
    if isinstance(v, BiotokTokenizer) and name is None:
        key = f"{v.name}\0{marker or v.marker}\0{v.vocab_size}"
        cached = _CACHE.setdefault(v, {})
        if key not in cached:
            cached.clear()
            cached[key] = _build_vocab(v, None, marker)
        return cached[key]
    return _build_vocab(v, name, marker)


def _build_vocab(v: VocabLike, name: str | None, marker: str | None) -> Vocab:
    if isinstance(v, BiotokTokenizer):
        mapping = v.get_vocab()
        specials = _special_pieces(v)
        mk = marker or v.marker
        nm = name or v.name
    else:
        mapping = dict(v) if isinstance(v, Mapping) else {p: i for i, p in enumerate(v)}
        specials = set()
        mk = marker or detect_marker(mapping)
        nm = name or "vocab"
    pieces = []
    for piece, idx in sorted(mapping.items(), key=lambda kv: kv[1]):
        if piece in specials or (piece[:1] in "[<" and piece and _SPECIAL_RE.match(piece)):
            continue
        form, boundary = split_marker(piece, mk)
        if not form:  # the bare marker '▁' / 'Ġ': a word boundary, not a spelling
            continue
        pieces.append(Piece(piece, form, boundary, idx))
    return Vocab(nm, mk, len(mapping), tuple(pieces))


def duplicate_pairs(v: VocabLike, marker: str | None = None) -> list[tuple[str, str]]:
    """Pairs (piece with boundary marker, same form without) present in one vocabulary.

    In a Unigram vocab trained on unspaced punctuation, '▁mot' and 'mot' both exist because
    'mot' also follows '(' or "l'": the AliBERT paper's argument for spacing punctuation.
    """
    voc = as_vocab(v, marker=marker)
    with_b: dict[str, Piece] = {}
    without: dict[str, Piece] = {}
    for p in voc.pieces:
        (with_b if p.boundary else without).setdefault(p.form, p)
    both = sorted((f for f in with_b if f in without), key=lambda f: with_b[f].id)
    return [(with_b[f].piece, without[f].piece) for f in both]


def duplicates(v: VocabLike, marker: str | None = None) -> int:
    """How many forms exist both with and without the word-boundary marker."""
    voc = as_vocab(v, marker=marker)
    with_b = {p.form for p in voc.pieces if p.boundary}
    without = {p.form for p in voc.pieces if not p.boundary}
    return len(with_b & without)


def _examples(voc: Vocab, forms: set[str], k: int) -> tuple[str, ...]:
    """Up to k forms of ``forms`` in vocabulary order (lowest id first), favouring 4+ letters."""
    seen: list[str] = []
    short: list[str] = []
    done: set[str] = set()
    for p in voc.pieces:
        if p.form in forms and p.form not in done:
            done.add(p.form)
            (seen if len(p.form) >= 4 else short).append(p.form)
            if len(seen) >= k:
                break
    return tuple((seen + short)[:k])


def _rank(voc: Vocab) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, p in enumerate(voc.pieces):
        out.setdefault(p.form, i)
    return out


def _shared_examples(va: Vocab, vb: Vocab, shared: frozenset[str], k: int) -> tuple[str, ...]:
    """Shared forms frequent in both (smallest sum of ranks), 4+ letters first: symmetric in a, b."""
    ra, rb = _rank(va), _rank(vb)
    order = sorted(shared, key=lambda f: (len(f) < 4, ra[f] + rb[f], f))
    return tuple(order[:k])


def diff_vocab(a: VocabLike, b: VocabLike, *, examples: int = 10) -> VocabDiff:
    """Compare two vocabularies on marker-free forms: sizes, shared, only-in-each, Jaccard."""
    va, vb = as_vocab(a), as_vocab(b)
    fa, fb = va.forms, vb.forms
    shared = fa & fb
    union = fa | fb
    return VocabDiff(
        name_a=va.name,
        name_b=vb.name,
        marker_a=va.marker,
        marker_b=vb.marker,
        size_a=va.size,
        size_b=vb.size,
        forms_a=len(fa),
        forms_b=len(fb),
        shared=len(shared),
        only_a=len(fa - fb),
        only_b=len(fb - fa),
        jaccard=len(shared) / len(union) if union else 1.0,
        duplicates_a=duplicates(va),
        duplicates_b=duplicates(vb),
        examples_shared=_shared_examples(va, vb, shared, examples),
        examples_only_a=_examples(va, set(fa - fb), examples),
        examples_only_b=_examples(vb, set(fb - fa), examples),
    )


def piece_lengths(v: VocabLike) -> dict[int, int]:
    """Histogram of marker-free piece lengths (characters) over the vocabulary."""
    hist: dict[int, int] = {}
    for p in as_vocab(v).pieces:
        hist[len(p.form)] = hist.get(len(p.form), 0) + 1
    return dict(sorted(hist.items()))
