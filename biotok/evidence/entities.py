"""Entity-aware fragmentation: how each tokenizer cuts the gold mentions of an NER corpus.

A tokenizer that shatters disease names or cuts across the edge of a drug name makes the NER
head's work harder (AliBERT's weak Pathology F1 for CamemBERT is the motivating case). On
gold mentions (text + character spans with types) this module counts, per tokenizer and per
entity type: pieces per entity, the share of entities kept in one piece, the share whose
words all stay whole, and how often a piece crosses an entity boundary. Formulas are in
docs/compare.md ("Entity-aware fragmentation").

Input is plain data (:class:`EntityDoc`); :func:`load_entity_docs` reads a named dataset
(through the torch-free readers of :mod:`biotok.datasets`), a BRAT folder or archive
(.txt + .ann), or a CoNLL/BIO column file. The result (:class:`EntityReport`) is rendered here
too: its report.md section (:func:`entities_markdown`), its page section and summary cards.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Iterable, Sequence

from biotok.datadir import corpora_dir
from biotok.datasets import named
from biotok.datasets.bio import bio_spans, read_bio
from biotok.datasets.brat import read_brat
from biotok.errors import ConfigError, CorpusError
from biotok.metrics import ratio
from biotok.page import Card, Column, Examples, Section, Table, colour_index, num, pct
from biotok.segment import Segmentation, content_words, segment, word_spans
from biotok.tokenizer import BiotokTokenizer


@dataclass(frozen=True)
class Mention:
    """A gold entity mention: [start, end) characters of its document, and its type."""

    start: int
    end: int
    type: str


@dataclass(frozen=True)
class EntityDoc:
    """A text and its gold mentions (nested mentions allowed, each is measured on its own)."""

    text: str
    mentions: tuple[Mention, ...]
    source: str = ""
    unit: str = "document"  # what the text is: a "document" (BRAT) or a "sentence" (a CoNLL/BIO file)

    def __post_init__(self) -> None:
        for m in self.mentions:
            if not 0 <= m.start < m.end <= len(self.text):
                raise CorpusError(
                    f"{self.source or 'document'}: mention {m.start}-{m.end} ({m.type}) is outside "
                    f"the text ({len(self.text)} characters)"
                )


@dataclass(frozen=True)
class EntityCounts:
    """Raw counts for one tokenizer over a set of mentions; every metric derives from these."""

    entities: int = 0
    words: int = 0  # content words (holding a letter or digit) inside the mentions
    pieces: int = 0  # pieces holding characters of a mention (summed over mentions)
    word_pieces: int = 0  # pieces per content word, summed
    one_piece: int = 0  # mentions covered by exactly one known piece
    words_whole: int = 0  # mentions whose content words are each one known piece
    boundaries_crossed: int = 0  # mention edges (start or end) that fall strictly inside a piece
    entities_crossed: int = 0  # mentions with at least one crossed edge

    def __add__(self, o: "EntityCounts") -> "EntityCounts":
        return EntityCounts(**{f.name: getattr(self, f.name) + getattr(o, f.name) for f in fields(self)})


@dataclass(frozen=True)
class EntityStats:
    """The entity metrics of one tokenizer on one group of mentions (a type, or all)."""

    group: str
    entities: int
    mean_pieces: float  # pieces per entity
    pieces_per_word: float  # fertility inside entities
    one_piece_share: float
    words_whole_share: float
    boundary_crossing_rate: float  # crossed edges / (2 x entities)
    crossed_share: float  # entities with a crossed edge / entities

    @classmethod
    def from_counts(cls, group: str, c: EntityCounts) -> "EntityStats":
        return cls(
            group=group,
            entities=c.entities,
            mean_pieces=ratio(c.pieces, c.entities),
            pieces_per_word=ratio(c.word_pieces, c.words),
            one_piece_share=ratio(c.one_piece, c.entities),
            words_whole_share=ratio(c.words_whole, c.entities),
            boundary_crossing_rate=ratio(c.boundaries_crossed, 2 * c.entities),
            crossed_share=ratio(c.entities_crossed, c.entities),
        )


@dataclass(frozen=True)
class FragmentedEntity:
    """An example of a badly cut mention: its text, type and the pieces as spelled."""

    text: str
    type: str
    words: int
    pieces: tuple[str, ...]
    crossed: bool


@dataclass(frozen=True)
class EntityFragmentation:
    """One tokenizer: overall metrics, metrics per entity type, and the worst-cut mentions."""

    name: str
    overall: EntityStats
    by_type: tuple[EntityStats, ...]
    worst: tuple[FragmentedEntity, ...]


@dataclass(frozen=True)
class EntityReport:
    """Entity-aware fragmentation of several tokenizers on the same mentions."""

    dataset: str
    documents: int  # the texts measured: those with a mention
    types: tuple[str, ...]
    type_counts: tuple[int, ...]
    tokenizers: tuple[EntityFragmentation, ...]
    unit: str = "documents"  # "sentences" for CoNLL/BIO files
    left_out: int = 0  # texts without any mention, not measured

    @property
    def measured(self) -> str:
        """'2,345 gold mentions in 1,418 sentences (249 without a mention left out)': the one count."""
        left = f" ({self.left_out:,} without a mention left out)" if self.left_out else ""
        return f"{sum(self.type_counts):,} gold mentions in {self.documents:,} {self.unit}{left}"

    def as_dict(self) -> dict:
        return asdict(self)


def mention_counts(seg: Segmentation, words: Sequence[tuple[int, int]], m: Mention) -> tuple[EntityCounts, int]:
    """Counts of one mention under one segmentation (``words``: the document's biotok word spans).

    Returns the counts and the number of pieces of the mention.
    """
    idx = seg.cover(m.start, m.end)
    n = len(idx)
    inside = content_words(seg.text, [(max(a, m.start), min(b, m.end)) for a, b in words if a < m.end and b > m.start])
    per_word = [len(seg.cover(a, b)) for a, b in inside]
    whole_words = all(seg.whole(a, b) for a, b in inside)
    crossed = int(seg.crosses(m.start)) + int(seg.crosses(m.end))
    return EntityCounts(
        entities=1,
        words=len(inside),
        pieces=n,
        word_pieces=sum(per_word),
        one_piece=int(n == 1 and not seg.unknown[idx[0]]),
        words_whole=int(whole_words),
        boundaries_crossed=crossed,
        entities_crossed=int(crossed > 0),
    ), n


def _words_of(docs: Sequence[EntityDoc]) -> list[list[tuple[int, int]]]:
    return word_spans([d.text for d in docs])


def entity_fragmentation(
    tokenizers: Sequence[BiotokTokenizer], docs: Sequence[EntityDoc], *, dataset: str = "", worst: int = 15,
) -> EntityReport:
    """Entity-aware fragmentation of every tokenizer on the mentions of ``docs``."""
    if not tokenizers:
        raise ConfigError("no tokenizer to measure")
    given = len(docs)
    docs = [d for d in docs if d.mentions]
    if not docs:
        raise CorpusError(f"no entity mention in {dataset or 'the documents'}")
    unit = text_unit(docs)
    words = _words_of(docs)
    type_counter = Counter(m.type for d in docs for m in d.mentions)
    types = tuple(sorted(type_counter))
    results = []
    for tok in tokenizers:
        segs = segment(tok, [d.text for d in docs])
        per_type = {t: EntityCounts() for t in types}
        examples: dict[tuple[str, str], FragmentedEntity] = {}
        for doc, seg, ws in zip(docs, segs, words):
            surf = None
            for m in doc.mentions:
                c, n = mention_counts(seg, ws, m)
                per_type[m.type] = per_type[m.type] + c
                key = (doc.text[m.start : m.end], m.type)
                if key not in examples:
                    surf = surf or seg.surfaces()
                    examples[key] = FragmentedEntity(key[0], m.type, c.words,
                                                     tuple(surf[i] for i in seg.cover(m.start, m.end)),
                                                     c.entities_crossed > 0)
        total = sum(per_type.values(), EntityCounts())
        ranked = sorted(examples.values(), key=lambda e: (-len(e.pieces) / max(1, e.words), -len(e.pieces),
                                                         e.text, e.type))
        results.append(EntityFragmentation(
            name=tok.name,
            overall=EntityStats.from_counts("all", total),
            by_type=tuple(EntityStats.from_counts(t, per_type[t]) for t in types),
            worst=tuple(ranked[:worst]),
        ))
    return EntityReport(
        dataset=dataset, documents=len(docs), types=types, type_counts=tuple(type_counter[t] for t in types),
        tokenizers=tuple(results), unit=unit, left_out=given - len(docs),
    )


def text_unit(docs: Sequence[EntityDoc]) -> str:
    """'sentences' when every text is a CoNLL/BIO sentence, else 'documents'."""
    return "sentences" if docs and all(d.unit == "sentence" for d in docs) else "documents"


# --- reading mentions ---------------------------------------------------------------------------
def docs_from_sentences(sentences: Iterable, source: str = "") -> list[EntityDoc]:
    """Word-level IOB2 sentences (``.words``, ``.tags``) as texts: words joined by one space."""
    out = []
    for s in sentences:
        starts, pos = [], 0
        for w in s.words:
            starts.append(pos)
            pos += len(w) + 1
        text = " ".join(s.words)
        mentions = tuple(Mention(starts[i], starts[j - 1] + len(s.words[j - 1]), t) for t, i, j in bio_spans(s.tags))
        out.append(EntityDoc(text, mentions, getattr(s, "source", "") or source, unit="sentence"))
    return out


def docs_from_brat(documents: Iterable) -> list[EntityDoc]:
    """BRAT documents (``.text``, ``.entities``) as texts with mentions; a discontinuous mention
    keeps its first fragment (the flattening policy of docs/evaluation.md), nested ones all stay."""
    out = []
    for d in documents:
        ms = tuple(Mention(e.fragments[0][0], e.fragments[0][1], e.label) for e in d.entities)
        out.append(EntityDoc(d.text, ms, d.name))
    return out


def entity_dataset_names() -> tuple[str, ...]:
    """The dataset names ``--entities`` accepts (besides a path)."""
    return named.DATASETS


def load_entity_docs(name_or_path: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None) -> tuple[str, list[EntityDoc]]:
    """(label, documents) of a named dataset (all its splits) or of a path.

    A path is a BRAT folder or .tar(.gz/.xz) archive of .txt + .ann files, or one CoNLL/BIO
    column file ('token ... tag' lines, blank line between sentences).
    """
    name = str(name_or_path)
    if name in named.DATASETS:
        base = Path(data_dir) if data_dir is not None else _default_corpora()
        if base is None or not base.is_dir():
            raise CorpusError(
                f"entity dataset {name!r} needs the shared corpora folder (set BIOTOK_SHARED_DATA or pass --data-dir)"
            )
        # corpora read as BRAT keep their original text; the others come from their BIO files
        if name in named.BRAT_NAMED:
            rel, prefixes = named.BRAT_NAMED[name]
            tar = base / rel
            if not tar.is_file():
                raise CorpusError(f"entity dataset {name!r}: {tar} not found")
            return name, docs_from_brat(read_brat(tar, prefixes, label_from="auto"))
        train, dev, test = named.named_splits(name, base)
        return name, docs_from_sentences([*train, *dev, *test])
    p = Path(name)
    if p.is_dir() or (p.is_file() and ".tar" in p.name):
        return p.name, docs_from_brat(read_brat(p, "", label_from="auto"))
    if p.is_file():
        return p.name, docs_from_sentences(read_bio(p))
    raise CorpusError(
        f"unknown entity dataset {name!r}: not a BRAT folder, a BIO file, nor one of {', '.join(named.DATASETS)}"
    )


def _default_corpora() -> Path | None:
    return corpora_dir()


# --- rendering: report.md lines, the page's section and summary cards -------------------------------
def entities_markdown(r: EntityReport) -> list[str]:
    """report.md section: overall metrics per tokenizer, then one-piece share per entity type."""
    out = [f"## Entities: {r.dataset}", "",
           f"{r.measured}.", "",
           "| tokenizer | pieces/entity | pieces/word | one piece | words whole | boundary crossings |",
           "|---|---|---|---|---|---|"]
    for f in r.tokenizers:
        o = f.overall
        out.append(f"| {f.name} | {num(o.mean_pieces)} | {num(o.pieces_per_word)} | {pct(o.one_piece_share)} | "
                   f"{pct(o.words_whole_share)} | {pct(o.boundary_crossing_rate, 2)} |")
    out += ["", "| type | mentions | " + " | ".join(f"{f.name} one piece" for f in r.tokenizers) + " |",
            "|---|---|" + "---|" * len(r.tokenizers)]
    for j, t in enumerate(r.types):
        out.append(f"| {t} | {r.type_counts[j]:,} | " +
                   " | ".join(pct(f.by_type[j].one_piece_share) for f in r.tokenizers) + " |")
    out.append("")
    return out


def entities_cards(r: EntityReport) -> list[Card]:
    return [(f.name, line) for f in r.tokenizers
            for line in (("entities in one piece", pct(f.overall.one_piece_share)),
                         ("pieces / entity", f"{f.overall.mean_pieces:.2f}"))]


def entities_provenance(r: EntityReport) -> tuple[str, str]:
    return "entities", f"{r.dataset}: {sum(r.type_counts):,} mentions"


def _entity_tables(rep: EntityReport, ix: dict[str, int]) -> tuple[Table, Table]:
    cols = (Column("tokenizer", "text"), Column("entities", "int"),
            Column("pieces / entity", "num2", "low"), Column("pieces / word", "num2", "low"),
            Column("one piece", "pct", "high", "entities kept in one known piece"),
            Column("words whole", "pct", "high", "entities whose words are each one known piece"),
            Column("boundary crossings", "pct2", "low", "entity edges falling inside a piece, over 2 x entities"))
    overall = Table("All entity types", cols, tuple(
        (f.name, f.overall.entities, f.overall.mean_pieces, f.overall.pieces_per_word, f.overall.one_piece_share,
         f.overall.words_whole_share, f.overall.boundary_crossing_rate) for f in rep.tokenizers),
        "", tuple(ix.get(f.name) for f in rep.tokenizers))
    tcols = (Column("type", "text"), Column("entities", "int")) + tuple(
        c for f in rep.tokenizers for c in (Column("pieces", "num2", None, group=f.name),
                                             Column("one piece", "pct", None, group=f.name)))
    trows = []
    for j, t in enumerate(rep.types):
        row: list = [t, rep.type_counts[j]]
        for f in rep.tokenizers:
            s = f.by_type[j]
            row += [s.mean_pieces, s.one_piece_share]
        trows.append(tuple(row))
    return overall, Table("By entity type", tcols, tuple(trows), "Click a column to rank the types.")


def entities_section(rep: EntityReport, names: Sequence[str]) -> Section:
    """The page's section: overall, per type, worst mentions."""
    ix = colour_index(names)
    ex_rows = []
    if rep.tokenizers:
        for w in rep.tokenizers[0].worst[:10]:
            per = []
            for f in rep.tokenizers:
                match = next((x for x in f.worst if x.text == w.text and x.type == w.type), None)
                if match is not None:
                    per.append((ix.get(f.name), f.name, match.pieces))
            ex_rows.append((f"{w.text} ({w.type})", tuple(per)))
    ex = Examples(f"Most fragmented mentions for {rep.tokenizers[0].name}", tuple(ex_rows),
                  "Pieces as spelled in the text; the other tokenizers are shown where the same mention is also among their worst.")
    return Section("entities", f"Entities: {rep.dataset}",
                   f"{rep.measured}, each measured in its own {rep.unit[:-1]}'s segmentation. A boundary crossing is a piece straddling the first or last character "
                   f"of a mention: the NER head cannot label it cleanly.",
                   tables=_entity_tables(rep, ix), examples=(ex,) if ex_rows else ())
