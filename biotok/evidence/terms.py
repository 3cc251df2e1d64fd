"""A term list (``--terms``) on the page and in report.md: each term segmented alone by every tokenizer.

The segmentation itself is :func:`biotok.terminology.segment_terms` (a :class:`~biotok.terminology.TermTable`,
also in ``compare --json``); this module renders it: the report.md table (pieces per tokenizer)
and the page's grid of coloured pieces.
"""

from __future__ import annotations

from typing import Sequence

from biotok.page import Section, segmented_texts, shown_note
from biotok.terminology import TermTable
from biotok.tokenizer import BiotokTokenizer


def terms_markdown(terms: TermTable) -> list[str]:
    """The term list, one row per term, each tokenizer's pieces in a column."""
    lines = ["## Terms", "", "| term | category | " + " | ".join(terms.names) + " |",
             "|---|---|" + "---|" * len(terms.names)]
    for row in terms.rows:
        lines.append(f"| {row.term} | {row.category} | " +
                     " | ".join(row.cell(i).replace("|", "\\|") for i in range(len(terms.names))) + " |")
    return lines


def terms_section(tokenizers: Sequence[BiotokTokenizer], terms: Sequence[tuple[str, str]]) -> Section:
    """The page's section: one row per (term, category), one column of pieces per tokenizer."""
    return Section(
        "terms", "Segmentation of the term list",
        "Each term alone, one column per tokenizer; the number is its count of pieces." + shown_note(len(terms)),
        segmented=segmented_texts(tokenizers, [t for t, _ in terms], [c for _, c in terms]),
        segmented_layout="grid")


__all__ = ["terms_markdown", "terms_section"]
