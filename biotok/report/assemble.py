"""Results -> the page (:class:`biotok.page.Page`): summary cards, sample segmentations, metric
tables, figures, the evidence sections and the vocabulary diff (:func:`report_page`)."""

from __future__ import annotations

from typing import Sequence

from biotok.evidence import Evidence
from biotok.evidence.terms import terms_section
from biotok.io import versions as library_versions
from biotok.metrics import Comparison
from biotok.pathology import Pathologies
from biotok.page import (Card, Column, Figure, Page, Section, Table, TokenizerInfo, VocabData, pct, segmented_texts,
                         shown_note)
from biotok.tokenizer import BiotokTokenizer
from biotok.vocab import Vocab


def vocab_data(vocabs: Sequence[Vocab]) -> VocabData:
    """Union of marker-free forms of :class:`biotok.vocab.Vocab` objects, with membership bits."""
    masks: dict[str, int] = {}
    for k, v in enumerate(vocabs):
        for f in v.forms:
            masks[f] = masks.get(f, 0) | (1 << k)
    forms = sorted(masks)
    return VocabData(tuple(v.name for v in vocabs), tuple(forms), tuple(masks[f] for f in forms))


def fragmentation_table(cmp: Comparison) -> Table:
    """The corpus fragmentation metrics (:class:`biotok.metrics.Comparison`) as a sortable table."""
    cols = (
        Column("tokenizer", "text"), Column("vocab", "int"),
        Column("fertility", "num", "low", "pieces per biotok word"),
        Column("split words", "pct", "low", "share of words cut into 2+ pieces"),
        Column("pieces / split word", "num2", "low"),
        Column("relative length", "num", "low", "total pieces / pieces of the first tokenizer"),
        Column("UNK rate", "pct", "low"), Column("chars / piece", "num2", "high"),
        Column("vocab used", "pct", "high"), Column("Rényi eff. (α=2.5)", "num", "high"),
        Column("pieces / line", "num1", "low"),
    )
    rows = tuple(
        (r.name, r.vocab_size, r.fertility, r.split_share, r.pieces_per_split_word, rel, r.unk_rate,
         r.chars_per_piece, r.utilization, r.renyi_efficiency, r.mean_sequence_length)
        for r, rel in zip(cmp.results, cmp.relative_length)
    )
    return Table("Fragmentation on the corpus", cols, rows,
                 f"{cmp.results[0].lines:,} lines, {cmp.results[0].words:,} biotok words. Formulas: docs/compare.md.",
                 tuple(range(len(rows))))


def vocab_table(vocabs: Sequence[Vocab], duplicates: Sequence[int]) -> Table:
    cols = (Column("tokenizer", "text"), Column("marker", "text"), Column("entries", "int"),
            Column("marker-free forms", "int"), Column("duplicates", "int", "low", "forms with and without the word marker"))
    rows = tuple((v.name, v.marker, v.size, len(v.forms), d) for v, d in zip(vocabs, duplicates))
    return Table("Vocabularies", cols, rows, "", tuple(range(len(rows))))


def versions() -> tuple[tuple[str, str], ...]:
    """biotok, Python and the libraries that decide the numbers."""
    return tuple(library_versions(("biotok", "python", "tokenizers", "sentencepiece", "numpy", "matplotlib")).items())


def summary_cards(tokenizers: Sequence[BiotokTokenizer], comparison: Comparison | None,
                  evidence: Evidence | None) -> list[Card]:
    """Card lines (tokenizer name, (label, value)): vocabulary, fragmentation, then the evidence's."""
    out: list[Card] = [(t.name, ("vocabulary", f"{t.vocab_size:,}")) for t in tokenizers]
    if comparison is not None:
        for r, rel in zip(comparison.results, comparison.relative_length):
            out += [(r.name, ("fertility", f"{r.fertility:.3f}")), (r.name, ("split words", pct(r.split_share))),
                    (r.name, ("relative length", f"{rel:.3f}"))]
    if evidence is not None:
        out += evidence.cards()
    return out


def sample_sections(tokenizers: Sequence[BiotokTokenizer], sentences: Sequence[tuple[str, str]],
                    terms: Sequence[tuple[str, str]]) -> list[Section]:
    """The segmentations of the sample sentences and of the term list (each present when given)."""
    out = []
    if sentences:
        out.append(Section(
            "segmentation", "Segmentation of sample sentences",
            "Each coloured box is one piece, drawn with the characters it covers in the text; ▁ marks a piece "
            "that starts a word in the tokenizer's own convention (after it for end-of-word vocabularies), red "
            "boxes are unknown pieces. Hover a piece to see it as stored in the vocabulary."
            + shown_note(len(sentences)),
            segmented=segmented_texts(tokenizers, [s for s, _ in sentences], [l for _, l in sentences])))
    if terms:
        out.append(terms_section(tokenizers, terms))
    return out


def metric_sections(comparison: Comparison | None, vocabs: Sequence[Vocab], duplicates: Sequence[int],
                    figures: Sequence[Figure]) -> list[Section]:
    """The metric tables (fragmentation, vocabularies) and the figures."""
    out = []
    tables = []
    if comparison is not None:
        tables.append(fragmentation_table(comparison))
    if vocabs:
        tables.append(vocab_table(vocabs, duplicates or [0] * len(vocabs)))
    if tables:
        out.append(Section("metrics", "Metrics", "Click a column header to sort; the best value of a column "
                           "is in green.", tables=tuple(tables)))
    if figures:
        out.append(Section("figures", "Figures", figures=tuple(figures)))
    return out


def report_page(
    tokenizers: Sequence[BiotokTokenizer],
    *,
    title: str = "Tokenizer decision report",
    subtitle: str = "",
    comparison: Comparison | None = None,
    vocabs: Sequence[Vocab] = (),
    duplicates: Sequence[int] = (),
    sentences: Sequence[tuple[str, str]] = (),
    terms: Sequence[tuple[str, str]] = (),
    figures: Sequence[Figure] = (),
    evidence: Evidence | None = None,
    command: str = "",
    inputs: Sequence[tuple[str, str]] = (),
    pathologies: Pathologies | None = None,
) -> Page:
    """Assemble the page from biotok's results (each part optional)."""
    names = [t.name for t in tokenizers]
    cards: dict[str, list[tuple[str, str]]] = {n: [] for n in names}
    for name, line in summary_cards(tokenizers, comparison, evidence):
        cards[name].append(line)
    sections = sample_sections(tokenizers, sentences, terms) + metric_sections(comparison, vocabs, duplicates, figures)
    if pathologies is not None:
        sections.append(pathologies.section())
    if evidence is not None:
        sections += evidence.sections(names)
    info = tuple(TokenizerInfo(t.name, t.source, t.marker, t.vocab_size, t.lowercase) for t in tokenizers)
    return Page(
        title=title, subtitle=subtitle, tokenizers=info,
        cards=tuple((n, tuple(cards[n])) for n in names), sections=tuple(sections),
        vocab=vocab_data(vocabs) if vocabs else None, command=command, versions=versions(), inputs=tuple(inputs),
    )


__all__ = ["fragmentation_table", "report_page", "summary_cards", "versions", "vocab_data", "vocab_table"]
