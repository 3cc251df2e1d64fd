"""The decision page (``report.html``) as plain data: what a section, a table or a segmentation holds.

:mod:`biotok.evidence` builds its sections from these types and :mod:`biotok.report` renders them
(:func:`biotok.report.html.render_html`); this module depends on neither, so both can use it.
:func:`segmented_texts` draws texts piece by piece, as each tokenizer cuts them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from biotok.segment import Segmentation, segment
from biotok.tokenizer import BiotokTokenizer
from biotok.vocab import split_marker


@dataclass(frozen=True)
class PieceView:
    """One piece as drawn: its text as spelled in the source, its piece, flags."""

    text: str
    piece: str
    word_start: bool = False
    word_end: bool = False
    unknown: bool = False
    gap: str = ""  # whitespace of the source text before this piece


@dataclass(frozen=True)
class SegmentedText:
    """A text and, for each tokenizer (in page order), its pieces."""

    text: str
    label: str
    pieces: tuple[tuple[PieceView, ...], ...]


@dataclass(frozen=True)
class Column:
    label: str
    kind: str = "num"  # 'text', 'int', 'num' (3 decimals), 'num1', 'num2', 'pct' / 'pct2' (a share in [0, 1])
    better: str | None = None  # 'low' or 'high': the best cell of the column is highlighted
    help: str = ""
    group: str = ""  # columns with the same group (e.g. a tokenizer) share a header above them


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Any, ...], ...]
    caption: str = ""
    row_colours: tuple[int | None, ...] = ()  # tokenizer index of each row (its colour dot), or None


@dataclass(frozen=True)
class Figure:
    title: str
    png: bytes
    caption: str = ""


@dataclass(frozen=True)
class Examples:
    """Rows of segmented examples: (label, [(colour index or None, name, pieces)])."""

    title: str
    rows: tuple[tuple[str, tuple[tuple[int | None, str, tuple[str, ...]], ...]], ...]
    caption: str = ""
    columns: int = 1  # rows laid out in this many columns


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    lead: str = ""
    tables: tuple[Table, ...] = ()
    figures: tuple[Figure, ...] = ()
    examples: tuple[Examples, ...] = ()
    segmented: tuple[SegmentedText, ...] = ()
    segmented_layout: str = "rows"  # 'rows' (sentences) or 'grid' (terms: one column per tokenizer)
    grid_label: str = "term"  # header of the first column of a grid
    note: str = ""
    examples_layout: str = "rows"  # 'rows' or 'columns' (one card per tokenizer, side by side)


@dataclass(frozen=True)
class TokenizerInfo:
    name: str
    source: str = ""
    marker: str = ""
    vocab_size: int = 0
    lowercase: bool | None = None


@dataclass(frozen=True)
class VocabData:
    """Marker-free forms of every vocabulary: ``masks[i]`` has bit k set when form i is in vocabulary k."""

    names: tuple[str, ...]
    forms: tuple[str, ...]
    masks: tuple[int, ...]


Card = tuple[str, tuple[str, str]]  # (tokenizer name, (label, value)): one line of a summary card


@dataclass(frozen=True)
class Page:
    title: str
    subtitle: str
    tokenizers: tuple[TokenizerInfo, ...]
    cards: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()  # per tokenizer: (name, [(label, value)])
    sections: tuple[Section, ...] = ()
    vocab: VocabData | None = None
    command: str = ""
    versions: tuple[tuple[str, str], ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()


def piece_views(seg: Segmentation, marker: str = "") -> tuple[PieceView, ...]:
    """The pieces of a segmentation as drawn, with the tokenizer's own word-boundary marker."""
    out = []
    prev = 0
    for piece, (a, b), unk, surf in zip(seg.pieces, seg.spans, seg.unknown, seg.surfaces()):
        gap = seg.text[prev:a] if a > prev else ""
        _, boundary = split_marker(piece, marker) if marker else ("", False)
        if a == b and not unk:
            surf = piece  # a bare '▁': drawn as itself
        out.append(PieceView(text=surf, piece=piece, word_start=boundary and marker != "</w>",
                             word_end=boundary and marker == "</w>", unknown=unk, gap=gap))
        prev = max(prev, b)
    return tuple(out)


# What a page draws, whatever its inputs hold (one 2 MB line drawn piece by piece made a 69 MB page):
MAX_SHOWN_TEXTS = 200  # texts drawn by one section (a sentences or terms file may hold more)
MAX_SHOWN_CHARS = 1000  # characters of one text drawn (a longer one is cut at a space)


def _shown(text: str) -> str:
    if len(text) <= MAX_SHOWN_CHARS:
        return text
    cut = text.rfind(" ", MAX_SHOWN_CHARS // 2, MAX_SHOWN_CHARS + 1)
    return text[: cut if cut > 0 else MAX_SHOWN_CHARS]


def shown_note(n: int) -> str:
    """The sentence a section's description adds when it holds more texts than a page draws."""
    return "" if n <= MAX_SHOWN_TEXTS else f" The first {MAX_SHOWN_TEXTS:,} of {n:,} are drawn."


def segmented_texts(tokenizers: Sequence[BiotokTokenizer], texts: Sequence[str],
                    labels: Sequence[str] | None = None) -> tuple[SegmentedText, ...]:
    """Segment each text with every tokenizer (no special tokens): the first
    :data:`MAX_SHOWN_TEXTS` texts, each cut to :data:`MAX_SHOWN_CHARS` characters (at a space; its
    label then says so), so that no input makes a page larger than a page should be."""
    labels = list(labels) if labels is not None else [""] * len(texts)
    texts, labels = list(texts)[:MAX_SHOWN_TEXTS], labels[:MAX_SHOWN_TEXTS]
    shown = [_shown(t) for t in texts]
    labels = [lab if s == t else f"{lab + ', ' if lab else ''}first {len(s):,} of {len(t):,} characters"
              for s, t, lab in zip(shown, texts, labels)]
    per_tok = [segment(t, shown) for t in tokenizers]
    return tuple(
        SegmentedText(text, label, tuple(piece_views(segs[i], t.marker) for t, segs in zip(tokenizers, per_tok)))
        for i, (text, label) in enumerate(zip(shown, labels))
    )


def png_figure(path: str | Path, title: str, caption: str = "") -> Figure:
    return Figure(title, Path(path).read_bytes(), caption)


def colour_index(names: Sequence[str]) -> dict[str, int]:
    """Tokenizer name -> its position on the page (its colour)."""
    return {n: i for i, n in enumerate(names)}


def pct(x: float | None, digits: int = 1) -> str:
    """A share in [0, 1] as a percentage; NaN or None -> 'n/a'."""
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.{digits}f}%"


def num(x: float | None, digits: int = 2) -> str:
    """A number with ``digits`` decimals; NaN or None -> 'n/a'."""
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


__all__ = ["Card", "Column", "Examples", "Figure", "Page", "PieceView", "Section", "SegmentedText", "Table",
           "TokenizerInfo", "VocabData", "colour_index", "num", "pct", "piece_views", "png_figure", "segmented_texts",
           "shown_note"]
