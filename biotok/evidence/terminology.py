"""Terminology coverage on the page and in report.md: how whole each tokenizer keeps a terminology's terms.

The terms are read and measured by :mod:`biotok.terminology` (:func:`~biotok.terminology.load_terminology`,
:func:`~biotok.terminology.terminology_coverage`); this module renders a
:class:`~biotok.terminology.TerminologyReport`: its report.md section, its page section and cards.
"""

from __future__ import annotations

from typing import Sequence

from biotok.page import Card, Column, Examples, Section, Table, colour_index, num, pct
from biotok.terminology import TerminologyReport


def terminology_markdown(r: TerminologyReport) -> list[str]:
    """report.md section: overall coverage per tokenizer, then each one's worst-fragmented terms."""
    out = [f"## Terminology: {r.terminology}", "", f"{r.terms:,} terms, each segmented alone.", "",
           "| tokenizer | words whole | terms whole | one piece | pieces/term | pieces/word |",
           "|---|---|---|---|---|---|"]
    for c in r.tokenizers:
        o = c.overall
        out.append(f"| {c.name} | {pct(o.words_whole_share)} | {pct(o.terms_whole_share)} | {pct(o.one_piece_share)} | "
                   f"{num(o.mean_pieces)} | {num(o.pieces_per_word)} |")
    for c in r.tokenizers:
        worst = ", ".join(f"{w.term} ({'-'.join(p for p in w.pieces if p.strip('▁Ġ'))})" for w in c.worst[:5])
        out.append(f"\nWorst-fragmented for {c.name}: {worst}")
    out.append("")
    return out


def terminology_cards(r: TerminologyReport) -> list[Card]:
    return [(c.name, line) for c in r.tokenizers
            for line in ((f"{r.terminology} words whole", pct(c.overall.words_whole_share)),
                         (f"{r.terminology} terms whole", pct(c.overall.terms_whole_share)))]


def terminology_provenance(r: TerminologyReport) -> tuple[str, str]:
    return "terminology", f"{r.terminology}: {r.terms:,} terms"


def _category_table(rep: TerminologyReport) -> Table:
    ccols = (Column("category", "text"), Column("terms", "int")) + tuple(
        c for t in rep.tokenizers for c in (Column("words whole", "pct", None, group=t.name),
                                            Column("pieces / word", "num2", None, group=t.name)))
    rows = []
    for j, cat in enumerate(rep.tokenizers[0].by_category):
        label = cat.category if cat.label == cat.category else f"{cat.category} · {cat.label}"
        row: list = [label, cat.terms]
        for t in rep.tokenizers:
            s = t.by_category[j]
            row += [s.words_whole_share, s.pieces_per_word]
        rows.append(tuple(row))
    return Table("By category", ccols, tuple(rows), "Click a column to rank the categories.")


def terminology_section(rep: TerminologyReport, names: Sequence[str], worst: int = 12) -> Section:
    """The page's section: overall coverage, coverage by category, worst terms per tokenizer."""
    ix = colour_index(names)
    cols = (Column("tokenizer", "text"), Column("terms", "int"),
            Column("words whole", "pct", "high", "words of the terms kept as one known piece"),
            Column("terms whole", "pct", "high", "terms whose words all stay whole"),
            Column("one piece", "pct", "high", "terms that are a single piece"),
            Column("pieces / term", "num2", "low"), Column("pieces / word", "num2", "low"),
            Column("with UNK", "pct", "low"))
    overall = Table(f"{rep.terminology}: all {rep.terms:,} terms", cols, tuple(
        (c.name, c.overall.terms, c.overall.words_whole_share, c.overall.terms_whole_share, c.overall.one_piece_share,
         c.overall.mean_pieces, c.overall.pieces_per_word, c.overall.unk_share) for c in rep.tokenizers),
        "", tuple(ix.get(c.name) for c in rep.tokenizers))
    tables = [overall]
    if rep.tokenizers and rep.tokenizers[0].by_category:
        tables.append(_category_table(rep))
    examples = []
    for c in rep.tokenizers:
        rows = tuple((w.term, ((ix.get(c.name), c.name, tuple(p for p in w.pieces if p.strip("▁Ġ"))),))
                     for w in c.worst[:worst])
        examples.append(Examples(f"Worst-fragmented: {c.name}", rows, "ranked by pieces per word"))
    return Section("terminology", f"Terminology: {rep.terminology}",
                   "Each term is segmented alone. A word stays whole when one known piece covers it; a term is whole "
                   "when all its words are.", tables=tuple(tables), examples=tuple(examples), examples_layout="columns")


__all__ = ["terminology_cards", "terminology_markdown", "terminology_provenance", "terminology_section"]
