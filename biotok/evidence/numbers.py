"""Numbers and units: how each tokenizer cuts doses, lab values and vital signs.

A case is a short written form (``2,5 mg/kg``, ``10^9/L``, ``37,5 °C``) with its numbers and
units marked. For each tokenizer: pieces per case, the share of numbers and of units kept as
one known piece, and the share of cases where a piece glues a number to a unit (``5mg``),
overall and per category (dose, lab, vital, time, size). The built-in cases are in
``biotok/data/numbers_fr.tsv``; formulas in docs/compare.md ("Numbers and units"). The result
(:class:`NumbersReport`) is rendered here too: report.md section, page section, summary cards.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from importlib import resources
from typing import Iterable, Sequence

from biotok.errors import ConfigError, CorpusError
from biotok.metrics import ratio
from biotok.page import Card, Column, PieceView, Section, SegmentedText, Table, colour_index, num, pct
from biotok.segment import Segmentation, segment
from biotok.tokenizer import BiotokTokenizer


@dataclass(frozen=True)
class NumberCase:
    """A written quantity, its category, and the character spans of its numbers and units."""

    category: str
    text: str
    numbers: tuple[tuple[int, int], ...]
    units: tuple[tuple[int, int], ...]


def _find_all(text: str, parts: Sequence[str], where: str) -> tuple[tuple[int, int], ...]:
    out, pos = [], 0
    for p in parts:
        i = text.find(p, pos)
        if i < 0:
            raise CorpusError(f"{where}: {p!r} is not in {text!r} (after character {pos})")
        out.append((i, i + len(p)))
        pos = i + len(p)
    return tuple(out)


def parse_cases(lines: Iterable[str], name: str = "cases") -> list[NumberCase]:
    """Read 'category<TAB>text<TAB>numbers<TAB>units' lines (parts separated by ' | ', '-' for none)."""
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cols = line.rstrip("\n").split("\t")
        if len(cols) != 4:
            raise CorpusError(f"{name}:{n}: expected 4 TAB-separated columns (category, text, numbers, units)")
        cat, text, nums, units = cols

        def parts(col: str) -> list[str]:
            return [] if col.strip() in ("", "-") else [p.strip() for p in col.split(" | ")]

        out.append(NumberCase(cat.strip(), text, _find_all(text, parts(nums), f"{name}:{n}"),
                              _find_all(text, parts(units), f"{name}:{n}")))
    return out


@lru_cache(maxsize=1)
def builtin_cases() -> tuple[NumberCase, ...]:
    """The shipped French cases (biotok/data/numbers_fr.tsv)."""
    text = resources.files("biotok").joinpath("data/numbers_fr.tsv").read_text(encoding="utf-8")
    return tuple(parse_cases(text.splitlines(), "numbers_fr.tsv"))


@dataclass(frozen=True)
class NumberCounts:
    cases: int = 0
    pieces: int = 0
    numbers: int = 0
    numbers_whole: int = 0
    units: int = 0
    units_whole: int = 0
    glued: int = 0  # cases where one piece holds characters of a number and of a unit

    def __add__(self, o: "NumberCounts") -> "NumberCounts":
        return NumberCounts(**{f.name: getattr(self, f.name) + getattr(o, f.name) for f in fields(self)})


def case_counts(seg: Segmentation, case: NumberCase) -> NumberCounts:
    """Counts of one case under one segmentation."""
    num_pieces = {i for a, b in case.numbers for i in seg.cover(a, b) if seg.spans[i][0] < seg.spans[i][1]}
    unit_pieces = {i for a, b in case.units for i in seg.cover(a, b) if seg.spans[i][0] < seg.spans[i][1]}
    return NumberCounts(
        cases=1,
        pieces=len(seg),
        numbers=len(case.numbers),
        numbers_whole=sum(seg.whole(a, b) for a, b in case.numbers),
        units=len(case.units),
        units_whole=sum(seg.whole(a, b) for a, b in case.units),
        glued=int(bool(num_pieces & unit_pieces)),
    )


@dataclass(frozen=True)
class NumberStats:
    category: str
    cases: int
    mean_pieces: float
    numbers_whole_share: float
    units_whole_share: float
    glued_share: float

    @classmethod
    def from_counts(cls, category: str, c: NumberCounts) -> "NumberStats":
        return cls(category, c.cases, ratio(c.pieces, c.cases), ratio(c.numbers_whole, c.numbers),
                   ratio(c.units_whole, c.units), ratio(c.glued, c.cases))


@dataclass(frozen=True)
class NumberSegmentation:
    """One tokenizer on all cases: overall and per-category stats, and each case's pieces."""

    name: str
    overall: NumberStats
    by_category: tuple[NumberStats, ...]
    segmentations: tuple[tuple[str, ...], ...]  # pieces as spelled, one tuple per case


@dataclass(frozen=True)
class NumbersReport:
    cases: tuple[NumberCase, ...]
    tokenizers: tuple[NumberSegmentation, ...]

    def as_dict(self) -> dict:
        d = asdict(self)
        d["cases"] = [{"category": c.category, "text": c.text,
                       "numbers": [c.text[a:b] for a, b in c.numbers], "units": [c.text[a:b] for a, b in c.units]}
                      for c in self.cases]
        return d


def number_segmentation(tokenizers: Sequence[BiotokTokenizer], cases: Sequence[NumberCase] | None = None) -> NumbersReport:
    """Cut every case with every tokenizer (each case encoded alone)."""
    if not tokenizers:
        raise ConfigError("no tokenizer to measure")
    cases = tuple(cases) if cases is not None else builtin_cases()
    if not cases:
        raise CorpusError("no number case to measure")
    cats = list(dict.fromkeys(c.category for c in cases))
    out = []
    for tok in tokenizers:
        segs = segment(tok, [c.text for c in cases])
        per = {k: NumberCounts() for k in cats}
        for seg, case in zip(segs, cases):
            per[case.category] = per[case.category] + case_counts(seg, case)
        total = sum(per.values(), NumberCounts())
        shown = tuple(tuple(s for s, (a, b), u in zip(seg.surfaces(), seg.spans, seg.unknown) if u or a < b)
                      for seg in segs)
        out.append(NumberSegmentation(tok.name, NumberStats.from_counts("all", total),
                                      tuple(NumberStats.from_counts(k, per[k]) for k in cats), shown))
    return NumbersReport(cases, tuple(out))


# --- rendering: report.md lines, the page's section and summary cards -------------------------------
def numbers_markdown(r: NumbersReport) -> list[str]:
    """report.md section: pieces per case and whole numbers / units per tokenizer."""
    out = ["## Numbers and units", "", f"{len(r.cases)} written quantities.", "",
           "| tokenizer | pieces/case | numbers whole | units whole | number glued to unit |", "|---|---|---|---|---|"]
    for n in r.tokenizers:
        o = n.overall
        out.append(f"| {n.name} | {num(o.mean_pieces)} | {pct(o.numbers_whole_share)} | {pct(o.units_whole_share)} | "
                   f"{pct(o.glued_share)} |")
    out.append("")
    return out


def numbers_cards(r: NumbersReport) -> list[Card]:
    return [(n.name, ("numbers whole", pct(n.overall.numbers_whole_share))) for n in r.tokenizers]


def numbers_provenance(r: NumbersReport) -> tuple[str, str]:
    return "numbers", f"{len(r.cases)} cases of biotok/data/numbers_fr.tsv"


def numbers_section(rep: NumbersReport, names: Sequence[str]) -> Section:
    """The page's section: the metrics table, then every case cut by every tokenizer (a grid)."""
    ix = colour_index(names)
    cols = (Column("tokenizer", "text"), Column("cases", "int"), Column("pieces / case", "num2", "low"),
            Column("numbers whole", "pct", "high"), Column("units whole", "pct", "high"),
            Column("number glued to unit", "pct", None))
    t = Table("Doses, lab values, vital signs", cols, tuple(
        (n.name, n.overall.cases, n.overall.mean_pieces, n.overall.numbers_whole_share, n.overall.units_whole_share,
         n.overall.glued_share) for n in rep.tokenizers), "", tuple(ix.get(n.name) for n in rep.tokenizers))
    order = [ix.get(n.name) for n in rep.tokenizers]
    if all(k is not None for k in order) and sorted(order) == list(range(len(names))):
        seg = tuple(SegmentedText(c.text, c.category, tuple(
            tuple(PieceView(p, p) for p in rep.tokenizers[order.index(k)].segmentations[i]) for k in range(len(names))))
            for i, c in enumerate(rep.cases))
    else:
        seg = ()
    return Section("numbers", "Numbers and units",
                   f"{len(rep.cases)} written quantities (biotok/data/numbers_fr.tsv). A number or unit is whole when "
                   "one known piece covers it; each case is segmented alone.", tables=(t,), segmented=seg,
                   segmented_layout="grid", grid_label="case")
