"""Term lists and how tokenizers cut them: the one home of terms in biotok.

- A short list (``compare --terms``): :func:`read_terms_file` and :func:`segment_terms`, the
  PubMedBERT paper's Table 1 (each term's pieces per tokenizer, :class:`TermTable`).
- A terminology at scale (``--terminology``): the same idea over tens of thousands of terms,
  :func:`load_terminology` and :func:`terminology_coverage`, as below.

Each term is segmented alone by every tokenizer. A term's *words* are its biotok words holding
a letter or digit (punctuation marks are not counted); a word *stays whole* when exactly one
known (non-UNK) piece covers it. Reported per tokenizer, overall and per category (CIM-10
chapter, ATC anatomical group, or the category column of a user file): the share of words
kept whole, the share of terms whose words all stay whole, the share of terms that are one
piece, pieces per term and per word, and the worst-fragmented terms. Formulas are in
docs/compare.md ("Terminology coverage").

Shipped terminologies (read from the shared corpora folder, ``edsnlp-fr-terminology``):
``cim10`` (42,886 French ICD-10 labels, the ``long`` column) and ``atc`` (French drug and brand
names by ATC code, one term per distinct name and anatomical group).
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Iterable, Sequence

from biotok.datadir import corpora_dir
from biotok.errors import ConfigError, CorpusError
from biotok.io import open_compressed
from biotok.metrics import ratio
from biotok.segment import EMPTY_PIECE, Segmentation, content_words, segment, word_spans
from biotok.tokenizer import BiotokTokenizer

TERMINOLOGY_DIR = "edsnlp-fr-terminology"
NAMED = ("cim10", "atc")

# CIM-10 chapters: first code of each chapter, in code order (a code belongs to the last
# chapter starting at or before it); XXII (U00-U99) sits between XIX and XX in code order.
CIM10_CHAPTERS: tuple[tuple[str, str, str], ...] = (
    ("A00", "I", "Certaines maladies infectieuses et parasitaires"),
    ("C00", "II", "Tumeurs"),
    ("D50", "III", "Maladies du sang et des organes hématopoïétiques, troubles immunitaires"),
    ("E00", "IV", "Maladies endocriniennes, nutritionnelles et métaboliques"),
    ("F00", "V", "Troubles mentaux et du comportement"),
    ("G00", "VI", "Maladies du système nerveux"),
    ("H00", "VII", "Maladies de l'œil et de ses annexes"),
    ("H60", "VIII", "Maladies de l'oreille et de l'apophyse mastoïde"),
    ("I00", "IX", "Maladies de l'appareil circulatoire"),
    ("J00", "X", "Maladies de l'appareil respiratoire"),
    ("K00", "XI", "Maladies de l'appareil digestif"),
    ("L00", "XII", "Maladies de la peau et du tissu cellulaire sous-cutané"),
    ("M00", "XIII", "Maladies du système ostéo-articulaire, des muscles et du tissu conjonctif"),
    ("N00", "XIV", "Maladies de l'appareil génito-urinaire"),
    ("O00", "XV", "Grossesse, accouchement et puerpéralité"),
    ("P00", "XVI", "Certaines affections dont l'origine se situe dans la période périnatale"),
    ("Q00", "XVII", "Malformations congénitales et anomalies chromosomiques"),
    ("R00", "XVIII", "Symptômes, signes et résultats anormaux d'examens"),
    ("S00", "XIX", "Lésions traumatiques, empoisonnements, conséquences de causes externes"),
    ("U00", "XXII", "Codes d'utilisation particulière"),
    ("V00", "XX", "Causes externes de morbidité et de mortalité"),
    ("Z00", "XXI", "Facteurs influant sur l'état de santé et recours aux services de santé"),
)

ATC_GROUPS: dict[str, str] = {
    "A": "Voies digestives et métabolisme",
    "B": "Sang et organes hématopoïétiques",
    "C": "Système cardio-vasculaire",
    "D": "Médicaments dermatologiques",
    "G": "Système génito-urinaire et hormones sexuelles",
    "H": "Hormones systémiques (hors hormones sexuelles et insulines)",
    "J": "Anti-infectieux généraux à usage systémique",
    "L": "Antinéoplasiques et immunomodulateurs",
    "M": "Muscle et squelette",
    "N": "Système nerveux",
    "P": "Antiparasitaires, insecticides et répulsifs",
    "R": "Système respiratoire",
    "S": "Organes sensoriels",
    "V": "Divers",
}


@dataclass(frozen=True)
class Term:
    """One term, its category (chapter, group, or a free label) and its source code."""

    text: str
    category: str = ""
    code: str = ""


@dataclass(frozen=True)
class Terminology:
    """A named list of terms; ``categories`` maps a category to its readable label."""

    name: str
    terms: tuple[Term, ...]
    categories: dict[str, str]


def cim10_chapter(code: str) -> str:
    """The CIM-10 chapter (roman numeral) of a code such as 'A000' or 'K35'."""
    key = code[:3].upper()
    chapter = CIM10_CHAPTERS[0][1]
    for start, numeral, _ in CIM10_CHAPTERS:
        if key >= start:
            chapter = numeral
        else:
            break
    return chapter


def read_cim10(stream: Iterable[str]) -> list[Term]:
    """CIM-10 rows (CSV with columns code, ..., long) -> one term per row, by chapter."""
    reader = csv.DictReader(stream)
    if reader.fieldnames is None or not {"code", "long"} <= set(reader.fieldnames):
        raise CorpusError("CIM-10 file: expected a CSV header with 'code' and 'long' columns")
    return [Term(r["long"].strip(), cim10_chapter(r["code"]), r["code"]) for r in reader if r["long"].strip()]


def read_atc(mapping: dict[str, list[str]]) -> list[Term]:
    """ATC code -> names, as one term per distinct (name, anatomical group), in code order."""
    seen: set[tuple[str, str]] = set()
    out = []
    for code in sorted(mapping):
        group = code[:1].upper()
        for name in mapping[code]:
            name = name.strip()
            if name and (name, group) not in seen:
                seen.add((name, group))
                out.append(Term(name, group, code))
    return out


def read_term_lines(lines: Iterable[str]) -> list[Term]:
    """'term[TAB category]' lines; '#' comments and blank lines skipped."""
    return [Term(t, c) for t, c in read_terms(lines)]


def load_terminology(name_or_path: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None) -> Terminology:
    """``cim10`` or ``atc`` (under the shared corpora folder), or a 'term[TAB category]' file."""
    name = str(name_or_path)
    if name in NAMED:
        base = Path(data_dir) if data_dir is not None else _default_corpora()
        folder = base / TERMINOLOGY_DIR if base is not None else None
        if folder is None or not folder.is_dir():
            raise CorpusError(
                f"terminology {name!r} needs the shared corpora folder holding {TERMINOLOGY_DIR}/ "
                f"(set BIOTOK_SHARED_DATA or pass --data-dir)"
            )
        if name == "cim10":
            path = folder / "cim10.csv.gz"
            with _open(path) as f:
                terms = read_cim10(f)
            cats = {n: label for _, n, label in CIM10_CHAPTERS}
            return Terminology("CIM-10", tuple(terms), cats)
        path = folder / "drugs.json.gz"
        with _open(path) as f:
            try:
                mapping = json.load(f)
            except json.JSONDecodeError as e:
                raise CorpusError(f"{path}: not JSON ({e})") from None
        return Terminology("ATC", tuple(read_atc(mapping)), dict(ATC_GROUPS))
    p = Path(name)
    if not p.is_file():
        raise CorpusError(f"unknown terminology {name!r}: not a file, nor one of {', '.join(NAMED)}")
    try:
        with _open(p) as f:
            terms = read_term_lines(f)
    except UnicodeDecodeError as e:
        raise CorpusError(f"{p}: not UTF-8 ({e.reason} at byte {e.start})") from None
    if not terms:
        raise CorpusError(f"terminology file {p} has no term")
    return Terminology(p.stem, tuple(terms), {})


def _open(path: Path) -> io.TextIOBase:
    if not path.is_file():
        raise CorpusError(f"terminology file not found: {path}")
    return open_compressed(path)


def _default_corpora() -> Path | None:
    return corpora_dir()


# --- a term list, each term's pieces (the PubMedBERT paper's Table 1) --------------------------
@dataclass(frozen=True)
class TermRow:
    """One term: its category and, per tokenizer, its pieces (raw) and their surface spellings."""

    term: str
    category: str
    pieces: tuple[tuple[str, ...], ...]
    surfaces: tuple[tuple[str, ...], ...]  # the term's characters under each piece; UNK as itself
    unknown: tuple[bool, ...]  # per tokenizer: some piece is the UNK token

    def whole(self, i: int) -> bool:
        """True when tokenizer i keeps the term as one known piece."""
        return len(self.pieces[i]) == 1 and not self.unknown[i]

    def cell(self, i: int) -> str:
        """'✓' when the term is one known piece, else the surface pieces joined by '-'."""
        return "✓" if self.whole(i) else "-".join(self.surfaces[i])


@dataclass(frozen=True)
class TermTable:
    names: tuple[str, ...]
    rows: tuple[TermRow, ...]

    def one_piece_share(self, i: int) -> float:
        return ratio(sum(r.whole(i) for r in self.rows), len(self.rows))

    def mean_pieces(self, i: int) -> float:
        return ratio(sum(len(r.pieces[i]) for r in self.rows), len(self.rows))

    def as_dict(self) -> dict:
        return {
            "tokenizers": list(self.names),
            "terms": [
                {"term": r.term, "category": r.category,
                 "segmentations": {n: {"pieces": list(p), "cell": r.cell(i), "one_piece": r.whole(i)}
                                   for i, (n, p) in enumerate(zip(self.names, r.pieces))}}
                for r in self.rows
            ],
            "one_piece_share": {n: self.one_piece_share(i) for i, n in enumerate(self.names)},
            "mean_pieces": {n: self.mean_pieces(i) for i, n in enumerate(self.names)},
        }


def read_terms(lines: Iterable[str]) -> list[tuple[str, str]]:
    """(term, category) pairs from 'term[TAB category]' lines; '#' comments and blanks skipped."""
    out = []
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        term, _, cat = line.rstrip("\n").partition("\t")
        out.append((term.strip(), cat.strip()))
    return out


def read_terms_file(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """:func:`read_terms` of a UTF-8 file, with one clear error when it is missing or empty."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as e:
        raise CorpusError(f"terms file not found: {path}") from e
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusError(f"cannot read terms file {path}: {e}") from e
    pairs = read_terms(lines)
    if not pairs:
        raise CorpusError(f"terms file {path} has no term")
    return pairs


def _surface(term: str, piece: str, span: tuple[int, int], unk: str | None) -> str:
    """The characters of ``term`` under a piece; UNK as itself, a bare marker ('▁', 'Ġ') or any
    piece covering no character as :data:`~biotok.segment.EMPTY_PIECE` (markers never show)."""
    a, b = span
    if piece == unk:
        return piece
    if piece in ("▁", "Ġ") or b <= a:
        return EMPTY_PIECE
    return term[a:b]


def segment_terms(tokenizers: Sequence[BiotokTokenizer], terms: Sequence[tuple[str, str]]) -> TermTable:
    """Segment each term alone with every tokenizer (no special tokens)."""
    texts = [t for t, _ in terms]
    per_tok = [tok.backend.encode_batch(texts, add_special_tokens=False) for tok in tokenizers]
    unks = [tok.specials.get("unk") for tok in tokenizers]
    rows = []
    for j, (term, cat) in enumerate(terms):
        encs = [encs[j] for encs in per_tok]
        rows.append(TermRow(
            term=term,
            category=cat,
            pieces=tuple(tuple(e.tokens) for e in encs),
            surfaces=tuple(tuple(_surface(term, p, s, u) for p, s in zip(e.tokens, e.offsets))
                           for e, u in zip(encs, unks)),
            unknown=tuple(u is not None and u in e.tokens for e, u in zip(encs, unks)),
        ))
    return TermTable(names=tuple(t.name for t in tokenizers), rows=tuple(rows))


# --- measuring ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TermCounts:
    """Raw counts over a set of terms for one tokenizer; every metric derives from these."""

    terms: int = 0
    words: int = 0
    pieces: int = 0  # all pieces of the terms
    word_pieces: int = 0  # pieces covering each word, summed over words
    words_whole: int = 0
    terms_whole: int = 0  # terms whose words all stay whole
    one_piece: int = 0  # terms that are one known piece
    unk_terms: int = 0  # terms holding an UNK piece

    def __add__(self, o: "TermCounts") -> "TermCounts":
        return TermCounts(**{f.name: getattr(self, f.name) + getattr(o, f.name) for f in fields(self)})


@dataclass(frozen=True)
class TermStats:
    """Coverage metrics of one tokenizer on one group of terms (a category, or all)."""

    category: str
    label: str
    terms: int
    words: int
    words_whole_share: float
    terms_whole_share: float
    one_piece_share: float
    mean_pieces: float  # pieces per term
    pieces_per_word: float
    unk_share: float

    @classmethod
    def from_counts(cls, category: str, label: str, c: TermCounts) -> "TermStats":
        return cls(
            category=category,
            label=label,
            terms=c.terms,
            words=c.words,
            words_whole_share=ratio(c.words_whole, c.words),
            terms_whole_share=ratio(c.terms_whole, c.terms),
            one_piece_share=ratio(c.one_piece, c.terms),
            mean_pieces=ratio(c.pieces, c.terms),
            pieces_per_word=ratio(c.word_pieces, c.words),
            unk_share=ratio(c.unk_terms, c.terms),
        )


@dataclass(frozen=True)
class WorstTerm:
    """A badly fragmented term: its pieces as spelled in the term."""

    term: str
    category: str
    words: int
    word_pieces: int  # pieces covering its words
    pieces: tuple[str, ...]

    @property
    def pieces_per_word(self) -> float:
        return ratio(self.word_pieces, self.words)


@dataclass(frozen=True)
class TermCoverage:
    """One tokenizer: overall, per-category metrics and its worst-fragmented terms."""

    name: str
    overall: TermStats
    by_category: tuple[TermStats, ...]
    worst: tuple[WorstTerm, ...]


@dataclass(frozen=True)
class TerminologyReport:
    terminology: str
    terms: int
    tokenizers: tuple[TermCoverage, ...]

    def as_dict(self) -> dict:
        return asdict(self)


def term_counts(seg: Segmentation, words: Sequence[tuple[int, int]]) -> tuple[TermCounts, int]:
    """Counts of one term (``words``: its biotok word spans); also returns its word-pieces sum."""
    inside = content_words(seg.text, words)
    per_word = [seg.cover(a, b) for a, b in inside]
    whole = [len(ix) == 1 and not seg.unknown[ix[0]] for ix in per_word]
    n = len(seg)
    wp = sum(len(ix) for ix in per_word)
    return TermCounts(
        terms=1,
        words=len(inside),
        pieces=n,
        word_pieces=wp,
        words_whole=sum(whole),
        terms_whole=int(all(whole)),
        one_piece=int(n == 1 and not seg.unknown[0]),
        unk_terms=int(any(seg.unknown)),
    ), wp


def terminology_coverage(
    tokenizers: Sequence[BiotokTokenizer], terminology: Terminology | Sequence[Term], *, worst: int = 20,
) -> TerminologyReport:
    """Segment every term with every tokenizer and aggregate overall and per category."""
    if not tokenizers:
        raise ConfigError("no tokenizer to measure")
    if isinstance(terminology, Terminology):
        name, terms, labels = terminology.name, list(terminology.terms), terminology.categories
    else:
        name, terms, labels = "terms", list(terminology), {}
    if not terms:
        raise CorpusError("no term to measure")
    texts = [t.text for t in terms]
    words = word_spans(texts)
    # categories in the terminology's own order (CIM-10 chapters, ATC groups), else as first met
    first = list(dict.fromkeys(t.category for t in terms))
    cats = sorted(first, key=lambda c: (_cat_order(c, labels), first.index(c)))
    out = []
    for tok in tokenizers:
        segs = segment(tok, texts)
        per_cat = {c: TermCounts() for c in cats}
        rows: dict[str, WorstTerm] = {}
        for term, seg, ws in zip(terms, segs, words):
            c, wp = term_counts(seg, ws)
            per_cat[term.category] = per_cat[term.category] + c
            if term.text not in rows and c.words:
                rows[term.text] = WorstTerm(term.text, term.category, c.words, wp, seg.surfaces())
        total = sum(per_cat.values(), TermCounts())
        ranked = sorted(rows.values(), key=lambda w: (-w.pieces_per_word, -len(w.pieces), w.term))
        out.append(TermCoverage(
            name=tok.name,
            overall=TermStats.from_counts("all", "all terms", total),
            by_category=tuple(TermStats.from_counts(c, labels.get(c, c), per_cat[c]) for c in cats) if any(cats) else (),
            worst=tuple(ranked[:worst]),
        ))
    return TerminologyReport(terminology=name, terms=len(terms), tokenizers=tuple(out))


def _cat_order(cat: str, labels: dict[str, str]) -> int:
    keys = list(labels)
    return keys.index(cat) if cat in labels else len(keys)
