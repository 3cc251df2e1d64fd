"""The report's figures, drawn with matplotlib's Agg backend (no display needed), each titled with
labelled axes: fragmentation, pieces per word, sequence length, vocabulary overlap, piece length,
pieces per term; and :func:`plot_comparison`, the one figure of ``compare --plot``."""

from __future__ import annotations

import os
from itertools import combinations
from pathlib import Path
from typing import Sequence

import numpy as np

from biotok.metrics import Comparison
from biotok.terminology import TermTable
from biotok.output import atomic_file
from biotok.report.compare import CompareResult
from biotok.vocab import Vocab, diff_vocab, piece_lengths

MAX_PIECES_BIN = 8  # words of 8+ pieces share one bar

TITLES = {"fertility": "Fertility", "pieces_per_word": "Pieces per word", "sequence_length": "Sequence length",
          "vocab_overlap": "Vocabulary overlap", "piece_length": "Piece length"}
CAPTIONS = {
    "fertility": "Pieces per biotok word, and the share of words cut into 2+ pieces: the lower, the more "
                 "whole words the vocabulary holds for this text.",
    "pieces_per_word": "How words are cut: a good domain vocabulary moves mass from the 3+ bars to the 1 bar.",
    "sequence_length": "Pieces per line: what a model pays in sequence length (and attention cost) for the same text.",
    "vocab_overlap": "Jaccard of marker-free vocabularies: low overlap means the vocabularies spend their "
                     "entries on different pieces.",
    "piece_length": "Length of the vocabulary's pieces: many 1-2 character pieces are alphabets and "
                    "fragments, longer ones are whole words and morphemes.",
}


def _plt():
    # lazy: matplotlib (100-600 ms) only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: as above, once the Agg backend is chosen

    return plt


def plot_fertility(cmp: Comparison, path: Path) -> Path:
    """Two bar panels: fertility (pieces per word) and share of words split into 2+ pieces."""
    plt = _plt()
    names = [r.name for r in cmp.results]
    fig, axes = plt.subplots(1, 2, figsize=(max(7, 1.6 * len(names) + 4), 4.2))
    for ax, key, title, ylabel in (
        (axes[0], "fertility", "Fertility (lower is better)", "pieces per word"),
        (axes[1], "split_share", "Words split into 2+ pieces", "share of words (%)"),
    ):
        vals = [getattr(r, key) * (100 if key == "split_share" else 1) for r in cmp.results]
        bars = ax.bar(names, vals, color=[f"C{i}" for i in range(len(names))])
        ax.bar_label(bars, fmt="%.2f" if key == "fertility" else "%.1f", padding=2)
        ax.set_title(title)
        ax.set_xlabel("tokenizer")
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, max(vals) * 1.18 if vals and max(vals) > 0 else 1)
        ax.tick_params(axis="x", rotation=20)
    fig.suptitle(f"Fragmentation on {cmp.results[0].words:,} biotok words")
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
    return path


def plot_pieces_per_word(cmp: Comparison, path: Path) -> Path:
    """Grouped bars: share of words made of 1, 2, ..., 8+ pieces, per tokenizer."""
    plt = _plt()
    n = len(cmp.results)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    width = 0.8 / n
    xs = list(range(1, MAX_PIECES_BIN + 1))
    for i, c in enumerate(cmp.counts):
        total = sum(v for k, v in c.pieces_per_word.items()) or 1
        shares = []
        for k in xs:
            if k < MAX_PIECES_BIN:
                shares.append(100 * c.pieces_per_word.get(k, 0) / total)
            else:
                shares.append(100 * sum(v for kk, v in c.pieces_per_word.items() if kk >= k) / total)
        ax.bar([x + (i - (n - 1) / 2) * width for x in xs], shares, width=width, label=c.name, color=f"C{i}")
    ax.set_xticks(xs, [str(x) if x < MAX_PIECES_BIN else f"{x}+" for x in xs])
    ax.set_title("Distribution of pieces per word")
    ax.set_xlabel("pieces in the word")
    ax.set_ylabel("share of words (%)")
    ax.legend(title="tokenizer")
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
    return path


def plot_sequence_lengths(cmp: Comparison, path: Path) -> Path:
    """Box plot of pieces per line, per tokenizer (the cost in sequence length)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(cmp.results) + 3), 4.2))
    data = []
    for c in cmp.counts:
        ks = np.fromiter(c.sequence_lengths.keys(), dtype=np.int64)
        vs = np.fromiter(c.sequence_lengths.values(), dtype=np.int64)
        data.append(np.repeat(ks, vs))
    ax.boxplot(data, showfliers=False)
    ax.set_xticks(range(1, len(cmp.results) + 1), [r.name for r in cmp.results])
    for i, (d, rel) in enumerate(zip(data, cmp.relative_length), start=1):
        if len(d):
            ax.annotate(f"mean {d.mean():.0f}\n×{rel:.2f}", (i, float(np.percentile(d, 75))),
                        textcoords="offset points", xytext=(18, 4), fontsize=8)
    ax.set_title("Pieces per line (box: quartiles, whiskers: 1.5 IQR; ×r: total vs the first)")
    ax.set_xlabel("tokenizer")
    ax.set_ylabel("pieces per line")
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
    return path


def plot_overlap(vocabs: Sequence[Vocab], path: Path) -> Path:
    """Pairwise Jaccard heatmap of marker-free vocabularies (diagonal: 1)."""
    plt = _plt()
    n = len(vocabs)
    mat = [[1.0] * n for _ in range(n)]
    for i, j in combinations(range(n), 2):
        d = diff_vocab(vocabs[i], vocabs[j], examples=0)
        mat[i][j] = mat[j][i] = d.jaccard
    fig, ax = plt.subplots(figsize=(1.3 * n + 3, 1.1 * n + 2.2))
    im = ax.imshow(mat, vmin=0, vmax=1, cmap="viridis")
    names = [v.name for v in vocabs]
    ax.set_xticks(range(n), names, rotation=30, ha="right")
    ax.set_yticks(range(n), names)
    for i in range(n):
        for j in range(n):
            colour = "white" if mat[i][j] < 0.6 else "black"
            ax.text(j, i, f"{mat[i][j]:.2f}", ha="center", va="center", color=colour)
    ax.set_title("Vocabulary overlap (Jaccard of marker-free pieces)")
    ax.set_xlabel("tokenizer")
    ax.set_ylabel("tokenizer")
    fig.colorbar(im, ax=ax, label="Jaccard")
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
    return path


def plot_piece_lengths(vocabs: Sequence[Vocab], path: Path) -> Path:
    """Histogram (lines) of piece lengths in characters, markers removed, per vocabulary."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for i, v in enumerate(vocabs):
        hist = piece_lengths(v)
        total = sum(hist.values()) or 1
        xs = list(range(1, 21))
        ys = [100 * (hist.get(x, 0) if x < 20 else sum(c for k, c in hist.items() if k >= 20)) / total for x in xs]
        ax.plot(xs, ys, marker="o", ms=3, label=f"{v.name} ({len(v.pieces):,})", color=f"C{i}")
    ax.set_xticks(range(1, 21, 2))
    ax.set_title("Piece length in the vocabulary (markers removed; 20 = 20+)")
    ax.set_xlabel("characters per piece")
    ax.set_ylabel("share of vocabulary (%)")
    ax.legend(title="tokenizer (pieces)")
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
    return path


def plot_terms(table: TermTable, path: Path) -> Path:
    """Bars: mean pieces per term, per tokenizer."""
    plt = _plt()
    names = list(table.names)
    vals = [table.mean_pieces(i) for i in range(len(names))]
    fig, ax = plt.subplots(figsize=(max(6, 1.5 * len(names) + 3), 4))
    bars = ax.bar(names, vals, color=[f"C{i}" for i in range(len(names))])
    ax.bar_label(bars, fmt="%.2f", padding=2)
    ax.set_ylim(0, max(vals) * 1.15 if vals and max(vals) > 0 else 1)
    ax.set_title(f"Mean pieces per term ({len(table.rows)} terms)")
    ax.set_xlabel("tokenizer")
    ax.set_ylabel("pieces per term")
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
    return path


def plot_comparison(result: CompareResult, path: str | os.PathLike[str]) -> Path:
    """The one figure of ``compare --plot``: fertility with a corpus, else pieces per term with
    terms, else vocabulary overlap. Written atomically (an existing file is replaced)."""
    with atomic_file(path, force=True) as tmp:
        if result.comparison is not None:
            plot_fertility(result.comparison, tmp)
        elif result.terms is not None:
            plot_terms(result.terms, tmp)
        else:
            plot_overlap(result.vocabs, tmp)
    return Path(path)


def report_figures(cmp: Comparison, vocabs: Sequence[Vocab], folder: Path) -> list[Path]:
    """The five figures of a report, written into ``folder``."""
    return [
        plot_fertility(cmp, folder / "fertility.png"),
        plot_pieces_per_word(cmp, folder / "pieces_per_word.png"),
        plot_sequence_lengths(cmp, folder / "sequence_length.png"),
        plot_overlap(vocabs, folder / "vocab_overlap.png"),
        plot_piece_lengths(vocabs, folder / "piece_length.png"),
    ]


__all__ = ["CAPTIONS", "MAX_PIECES_BIN", "TITLES", "plot_comparison", "plot_fertility", "plot_overlap",
           "plot_piece_lengths", "plot_pieces_per_word", "plot_sequence_lengths", "plot_terms", "report_figures"]
