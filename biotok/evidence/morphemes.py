"""Morpheme alignment for medical French: do a tokenizer's cuts fall on Greek/Latin morpheme edges?

A lexicon of medical morphemes (``biotok/data/morphemes_fr.tsv``, written for biotok: prefixes
such as *hépato-*, suffixes such as *-ectomie*, roots such as *néphr*) gives *gold* boundaries
inside the words of a terminology that contain them; each tokenizer's cuts inside the same word
are scored against them (boundary precision, recall, F1) and we count how many morpheme
occurrences stay uncut. The analysis (:func:`analyse`) is deterministic:

1. the word is lower-cased; one *suffix*, the longest that leaves a stem of 3+ letters, is
   matched at its end;
2. *prefixes* are matched from the start, longest first, one after another (*hépato|spléno*),
   as long as they end at or before the suffix (or leave 3+ letters when there is none);
3. *roots* are searched in what remains between the last prefix and the suffix; a long
   prefix (5+ letters, *neuro*) is recognised there too, a short one only right after another
   morpheme. A morpheme never leaves a single letter before the suffix.

Gold boundaries are the edges of the matched morphemes strictly inside the word. The gold is
partial (unlisted morphemes have no boundary), so precision is a lower bound; what this can and
cannot tell is discussed in docs/compare.md ("Morpheme alignment"). The result
(:class:`MorphemeReport`) is rendered here too: report.md section, page section, summary cards.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from importlib import resources
from typing import Iterable, Sequence

import regex

from biotok.errors import ConfigError, CorpusError
from biotok.metrics import ratio
from biotok.page import Card, Column, Examples, Section, Table, colour_index, num, pct
from biotok.segment import Segmentation, segment
from biotok.tokenizer import BiotokTokenizer

TYPES = ("prefix", "suffix", "root")
MIN_STEM = 3  # letters a suffix (or a prefix, without suffix) must leave
LONG_PREFIX = 5  # prefixes this long are recognised anywhere, shorter ones only in a chain


def _fits(stop: int, end: int, n: int) -> bool:
    """A morpheme ending at ``stop`` leaves nothing or 2+ letters before the suffix at ``end``,
    and 3+ letters before the word's end when there is no suffix."""
    if end < n:
        return stop == end or end - stop >= 2
    return n - stop >= MIN_STEM
_LETTERS = regex.compile(r"\p{L}+")


@dataclass(frozen=True)
class Morpheme:
    form: str
    type: str
    gloss: str = ""


@dataclass(frozen=True)
class Lexicon:
    """Morphemes by type, each list longest first, and the words never analysed."""

    prefixes: tuple[str, ...]
    suffixes: tuple[str, ...]
    roots: tuple[str, ...]
    exclude: frozenset[str]
    entries: tuple[Morpheme, ...]
    exclude_prefixes: tuple[str, ...] = ()  # 'isol*' entries, without the star

    def __len__(self) -> int:
        return len(self.entries)

    def excluded(self, word: str) -> bool:
        """An excluded word, its plural ('limites'), or a word starting with an 'isol*' entry."""
        return (word in self.exclude or (word[-1:] in ("s", "x") and word[:-1] in self.exclude)
                or word.startswith(self.exclude_prefixes))


def parse_lexicon(lines: Iterable[str]) -> Lexicon:
    """Read 'morpheme<TAB>type[<TAB>gloss]' lines ('#' comments); type: prefix|suffix|root|exclude."""
    entries: list[Morpheme] = []
    exclude: set[str] = set()
    exclude_prefixes: set[str] = set()
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 2:
            raise CorpusError(f"morpheme list line {n}: expected 'morpheme<TAB>type', got {line.strip()[:40]!r}")
        form, kind = parts[0].strip().lower(), parts[1].strip()
        if kind == "exclude":
            (exclude_prefixes if form.endswith("*") else exclude).add(form.rstrip("*"))
            continue
        if kind not in TYPES or not form.isalpha():
            raise CorpusError(f"morpheme list line {n}: {form!r} {kind!r}: type must be one of {', '.join(TYPES)}"
                              f" and the morpheme letters only")
        entries.append(Morpheme(form, kind, parts[2].strip() if len(parts) > 2 else ""))

    def of(kind: str) -> tuple[str, ...]:
        return tuple(sorted({m.form for m in entries if m.type == kind}, key=lambda f: (-len(f), f)))

    return Lexicon(of("prefix"), of("suffix"), of("root"), frozenset(exclude), tuple(entries),
                   tuple(sorted(exclude_prefixes)))


@lru_cache(maxsize=1)
def french_lexicon() -> Lexicon:
    """The shipped French medical lexicon (biotok/data/morphemes_fr.tsv)."""
    text = resources.files("biotok").joinpath("data/morphemes_fr.tsv").read_text(encoding="utf-8")
    return parse_lexicon(text.splitlines())


@dataclass(frozen=True)
class Analysis:
    """A word's matched morphemes ((start, end, form, type)) and its gold boundaries."""

    word: str
    morphemes: tuple[tuple[int, int, str, str], ...]
    boundaries: tuple[int, ...]
    kinds: tuple[str, ...]  # for each boundary: 'prefix', 'suffix' or 'root' (the morpheme that set it)


def analyse(word: str, lexicon: Lexicon | None = None) -> Analysis:
    """Gold morpheme boundaries of one word of letters (see the module docstring)."""
    lex = lexicon or french_lexicon()
    w = word.lower()
    if len(w) != len(word) or not w.isalpha() or lex.excluded(w):
        return Analysis(word, (), (), ())
    n = len(w)
    found: list[tuple[int, int, str, str]] = []
    end = n
    # the plural 's' / 'x' stays with the suffix: arthroses = arthr|oses
    stems = (w, w[:-1]) if w[-1] in "sx" else (w,)
    for s in lex.suffixes:
        x = next((x for x in stems if x.endswith(s) and len(x) - len(s) >= MIN_STEM), None)
        if x is not None:
            end = len(x) - len(s)
            found.append((end, n, s, "suffix"))
            break
    # prefixes and roots, left to right in [0, end): a short prefix only right after the word
    # start or another morpheme (a chain: hépato|spléno), a long one (5+ letters) anywhere
    i, chained = 0, True
    while i < end:
        hit = None
        for p in lex.prefixes:
            if (chained or len(p) >= LONG_PREFIX) and w.startswith(p, i) and _fits(i + len(p), end, n):
                hit = (i, i + len(p), p, "prefix")
                break
        if hit is None:
            for r in lex.roots:
                # a root must be followed by something: 'neur' ending 'planeur' is no root
                if w.startswith(r, i) and _fits(i + len(r), end, n) and i + len(r) < n:
                    hit = (i, i + len(r), r, "root")
                    break
        if hit is None:
            i, chained = i + 1, False
        else:
            found.append(hit)
            i, chained = hit[1], True
    found.sort()
    # every edge of a morpheme inside the word is a boundary; its kind: a suffix's start, else a
    # prefix's end, else a root edge (or a long prefix's start)
    suffix_starts = {a for a, _, _, k in found if k == "suffix"}
    prefix_ends = {b for _, b, _, k in found if k == "prefix"}
    kinds: dict[int, str] = {}
    for a, b, _, _ in found:
        for x in (a, b):
            if 0 < x < n:
                kinds[x] = "suffix" if x in suffix_starts else "prefix" if x in prefix_ends else "root"
    bounds = tuple(sorted(kinds))
    return Analysis(word, tuple(found), bounds, tuple(kinds[b] for b in bounds))


def terminology_words(texts: Iterable[str], lexicon: Lexicon | None = None, min_length: int = 5) -> list[Analysis]:
    """Distinct lower-cased letter runs of ``texts`` that have at least one gold boundary, sorted.

    Runs written in capitals (brand names such as 'DOLIPRANE') are skipped: they are names,
    not composed words.
    """
    lex = lexicon or french_lexicon()
    seen: set[str] = set()
    for t in texts:
        for m in _LETTERS.finditer(t):
            raw = m.group()
            if len(raw) >= min_length and not raw.isupper():
                seen.add(raw.lower())
    out = []
    for w in sorted(seen):
        a = analyse(w, lex)
        if a.boundaries:
            out.append(a)
    return out


# --- scoring ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AlignmentCounts:
    words: int = 0
    whole: int = 0  # words kept as one known piece
    cuts: int = 0  # tokenizer cuts inside the words
    gold: int = 0  # gold boundaries
    hits: int = 0  # cuts on a gold boundary
    morphemes: int = 0  # matched morpheme occurrences
    intact: int = 0  # of which no cut falls strictly inside
    gold_prefix: int = 0
    hits_prefix: int = 0
    gold_suffix: int = 0
    hits_suffix: int = 0
    gold_root: int = 0
    hits_root: int = 0

    def __add__(self, o: "AlignmentCounts") -> "AlignmentCounts":
        return AlignmentCounts(**{f.name: getattr(self, f.name) + getattr(o, f.name) for f in fields(self)})


def word_alignment(seg: Segmentation, a: Analysis) -> AlignmentCounts:
    """Score one word's segmentation (the word encoded alone) against its gold boundaries."""
    n = len(a.word)
    cuts = set(seg.cuts(0, n))
    gold = set(a.boundaries)
    hits = cuts & gold
    intact = sum(1 for s, e, _, _ in a.morphemes if not any(s < c < e for c in cuts))
    per = {k: (sum(1 for b, t in zip(a.boundaries, a.kinds) if t == k),
               sum(1 for b, t in zip(a.boundaries, a.kinds) if t == k and b in cuts)) for k in TYPES}
    return AlignmentCounts(
        words=1, whole=int(seg.whole(0, n)), cuts=len(cuts), gold=len(gold), hits=len(hits),
        morphemes=len(a.morphemes), intact=intact,
        gold_prefix=per["prefix"][0], hits_prefix=per["prefix"][1],
        gold_suffix=per["suffix"][0], hits_suffix=per["suffix"][1],
        gold_root=per["root"][0], hits_root=per["root"][1],
    )


@dataclass(frozen=True)
class MorphemeAlignment:
    """Boundary precision / recall of one tokenizer's cuts against gold morpheme boundaries."""

    name: str
    words: int
    whole_share: float
    precision: float  # hits / cuts
    recall: float  # hits / gold boundaries
    f1: float
    intact_share: float  # morpheme occurrences not cut inside
    recall_prefix: float
    recall_suffix: float
    recall_root: float
    examples: tuple[tuple[str, str, str], ...]  # (word, gold 'hépato|spléno|mégalie', cut 'hépa|tos|plé...')

    @classmethod
    def from_counts(cls, name: str, c: AlignmentCounts, examples=()) -> "MorphemeAlignment":
        p, r = ratio(c.hits, c.cuts), ratio(c.hits, c.gold)
        f1 = 2 * p * r / (p + r) if p == p and r == r and (p + r) > 0 else (0.0 if p == 0 and r == 0 else float("nan"))
        return cls(
            name=name, words=c.words, whole_share=ratio(c.whole, c.words), precision=p, recall=r, f1=f1,
            intact_share=ratio(c.intact, c.morphemes), recall_prefix=ratio(c.hits_prefix, c.gold_prefix),
            recall_suffix=ratio(c.hits_suffix, c.gold_suffix), recall_root=ratio(c.hits_root, c.gold_root),
            examples=tuple(examples),
        )


@dataclass(frozen=True)
class MorphemeReport:
    source: str
    lexicon_size: int
    words: int
    tokenizers: tuple[MorphemeAlignment, ...]

    def as_dict(self) -> dict:
        return asdict(self)


def split_at(word: str, cuts: Iterable[int]) -> str:
    """'hépato|spléno|mégalie' from a word and cut positions."""
    out, prev = [], 0
    for c in sorted(set(cuts)):
        out.append(word[prev:c])
        prev = c
    out.append(word[prev:])
    return "|".join(out)


def shown_cuts(seg: Segmentation) -> str:
    """A word as cut by a tokenizer, 'hépa|tos|plé', UNK pieces as the UNK token."""
    return "|".join(s for s, (a, b), u in zip(seg.surfaces(), seg.spans, seg.unknown) if u or a < b)


def morpheme_alignment(
    tokenizers: Sequence[BiotokTokenizer], analyses: Sequence[Analysis], *, source: str = "",
    lexicon: Lexicon | None = None, examples: int = 12,
) -> MorphemeReport:
    """Score every tokenizer on the analysed words (each word encoded alone, as a word)."""
    if not tokenizers:
        raise ConfigError("no tokenizer to measure")
    if not analyses:
        raise CorpusError(f"no word of {source or 'the terms'} contains a listed morpheme")
    words = [a.word for a in analyses]
    # examples: long words with several gold boundaries, chosen the same way for every tokenizer
    show = sorted(range(len(analyses)), key=lambda i: (-len(analyses[i].boundaries), -len(words[i]), words[i]))[:examples]
    show = sorted(show, key=lambda i: words[i])
    out = []
    for tok in tokenizers:
        segs = segment(tok, words)
        total = sum((word_alignment(s, a) for s, a in zip(segs, analyses)), AlignmentCounts())
        ex = [(words[i], split_at(words[i], analyses[i].boundaries), shown_cuts(segs[i])) for i in show]
        out.append(MorphemeAlignment.from_counts(tok.name, total, ex))
    lex = lexicon or french_lexicon()
    return MorphemeReport(source=source, lexicon_size=len(lex), words=len(analyses), tokenizers=tuple(out))


# --- rendering: report.md lines, the page's section and summary cards -------------------------------
def morphemes_markdown(r: MorphemeReport) -> list[str]:
    """report.md section: boundary precision, recall and F1 per tokenizer."""
    out = ["## Morpheme alignment", "",
           f"{r.words:,} words of {r.source} hold a listed morpheme ({r.lexicon_size} in biotok's lexicon).", "",
           "| tokenizer | kept whole | precision | recall | F1 | morphemes intact |", "|---|---|---|---|---|---|"]
    for a in r.tokenizers:
        out.append(f"| {a.name} | {pct(a.whole_share)} | {num(a.precision, 3)} | {num(a.recall, 3)} | "
                   f"{num(a.f1, 3)} | {pct(a.intact_share)} |")
    out.append("")
    return out


def morphemes_cards(r: MorphemeReport) -> list[Card]:
    return [(a.name, ("morpheme boundary F1", num(a.f1, 3))) for a in r.tokenizers]


def morphemes_provenance(r: MorphemeReport) -> tuple[str, str]:
    return "morphemes", f"{r.lexicon_size} in biotok/data/morphemes_fr.tsv, {r.words:,} words of {r.source}"


def morphemes_section(rep: MorphemeReport, names: Sequence[str]) -> Section:
    """The page's section: boundary precision and recall, and each tokenizer's cut of example words."""
    ix = colour_index(names)
    cols = (Column("tokenizer", "text"), Column("words", "int"), Column("kept whole", "pct", None),
            Column("precision", "num", "high", "tokenizer cuts on a gold morpheme boundary / all its cuts"),
            Column("recall", "num", "high", "gold boundaries cut / all gold boundaries"),
            Column("F1", "num", "high"), Column("morphemes intact", "pct", "high"),
            Column("recall prefix", "num", "high"), Column("recall suffix", "num", "high"),
            Column("recall root", "num", "high"))
    t = Table("Boundary precision and recall", cols, tuple(
        (a.name, a.words, a.whole_share, a.precision, a.recall, a.f1, a.intact_share, a.recall_prefix,
         a.recall_suffix, a.recall_root) for a in rep.tokenizers), "", tuple(ix.get(a.name) for a in rep.tokenizers))
    rows = []
    if rep.tokenizers:
        for j, (word, gold, _) in enumerate(rep.tokenizers[0].examples):
            per = [(None, "gold morphemes", tuple(gold.split("|")))] + [
                (ix.get(a.name), a.name, tuple(a.examples[j][2].split("|"))) for a in rep.tokenizers]
            rows.append((word, tuple(per)))
    ex = Examples("Examples: gold morphemes, then each tokenizer's cut", tuple(rows), columns=2)
    return Section("morphemes", "Morpheme alignment",
                   f"{rep.words:,} words of {rep.source or 'the terms'} hold a morpheme of biotok's lexicon of "
                   f"{rep.lexicon_size} Greek and Latin medical morphemes; gold boundaries are their edges. "
                   "Precision is a lower bound (the lexicon is partial), and alignment alone explains little of "
                   "downstream variance: read it as a diagnosis of how a vocabulary cuts medical words.",
                   tables=(t,), examples=(ex,))
