"""report.md: the fragmentation table, the vocabularies, the term table, the evidence sections
and the figures with their captions."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Sequence

from biotok.evidence import Evidence
from biotok.evidence.terms import terms_markdown
from biotok.metrics import Comparison
from biotok.pathology import Pathologies
from biotok.terminology import TermTable
from biotok.page import num
from biotok.report.figures import CAPTIONS
from biotok.vocab import Vocab, diff_vocab, duplicates


def metrics_table(cmp: Comparison) -> list[str]:
    head = "| tokenizer | vocab | fertility | split words | pieces/split word | rel. length | UNK rate | chars/piece | vocab used | Rényi eff. (α=2.5) |"
    rows = [head, "|" + "---|" * 10]
    for r, rel in zip(cmp.results, cmp.relative_length):
        rows.append(
            f"| {r.name} | {r.vocab_size:,} | {num(r.fertility, 3)} | {num(100 * r.split_share, 1)}% | "
            f"{num(r.pieces_per_split_word, 2)} | {num(rel, 3)} | {num(100 * r.unk_rate, 2)}% | "
            f"{num(r.chars_per_piece, 2)} | {num(100 * r.utilization, 1)}% | {num(r.renyi_efficiency, 3)} |"
        )
    return rows


def zipf_table(cmp: Comparison) -> list[str]:
    """How closely each tokenizer's piece frequencies follow a power law (biotok.zipf, docs/compare.md)."""
    rows = ["| tokenizer | Zipf exponent | R² of the log-log fit | ranks fitted (count >= 5) | distinct pieces |",
            "|---|---|---|---|---|"]
    for r, z in zip(cmp.results, cmp.zipf):
        if z is None:
            rows.append(f"| {r.name} | - | - | too few pieces seen 5 times | - |")
        else:
            rows.append(f"| {r.name} | {z.exponent:.3f} | {z.r2:.4f} | {z.first_rank:,}-{z.last_rank:,} | {z.types:,} |")
    return rows


def vocab_markdown(vocabs: Sequence[Vocab]) -> list[str]:
    """The vocabularies' sizes and duplicates, then their pairwise overlap."""
    lines = ["| tokenizer | marker | entries | marker-free forms | duplicates (with and without marker) |",
             "|---|---|---|---|---|"]
    for v in vocabs:
        lines.append(f"| {v.name} | `{v.marker}` | {v.size:,} | {len(v.forms):,} | {duplicates(v):,} |")
    lines += ["", "| pair | shared | only first | only second | Jaccard |", "|---|---|---|---|---|"]
    for a, b in combinations(vocabs, 2):
        d = diff_vocab(a, b, examples=0)
        lines.append(f"| {a.name} / {b.name} | {d.shared:,} | {d.only_a:,} | {d.only_b:,} | {d.jaccard:.3f} |")
    return lines


def write_markdown(path: Path, cmp: Comparison, vocabs: Sequence[Vocab], figures: Sequence[Path], corpus: str,
                   terms: TermTable | None = None, evidence: Evidence | None = None, html: bool = False,
                   pathologies: Pathologies | None = None) -> None:
    """Write report.md (``html``: link to report.html, written beside it)."""
    r0 = cmp.results[0]
    lines = [
        "# Tokenizer comparison",
        "",
        f"Corpus: `{corpus}`: {r0.lines:,} lines, {r0.words:,} biotok words. "
        f"Reference for relative length: **{r0.name}**. Metrics are defined in biotok's docs/compare.md.",
        *(["", "The same numbers, with segmentations to look at and a searchable vocabulary diff: "
               "[report.html](report.html)."] if html else []),
        "",
        "## Fragmentation",
        "",
        *metrics_table(cmp),
        "",
        "## Zipf fit of piece frequencies",
        "",
        "A power law fitted to each tokenizer's piece counts on this corpus (R² = 1: a perfect power law; "
        "He et al. 2025 find downstream scores peak where it fits best).",
        "",
        *zipf_table(cmp),
        "",
        "## Vocabularies",
        "",
        *vocab_markdown(vocabs),
    ]
    if pathologies is not None:
        lines += ["", *pathologies.markdown()]
    if terms is not None:
        lines += ["", *terms_markdown(terms)]
    if evidence is not None:
        lines += ["", *evidence.markdown()]
    lines += ["", "## Figures", ""]
    for f in figures:
        lines += [f"![{f.stem}]({f.name})", "", CAPTIONS.get(f.stem, ""), ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


__all__ = ["metrics_table", "vocab_markdown", "write_markdown"]
