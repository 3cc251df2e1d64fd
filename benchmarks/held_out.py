"""SentencePiece models trained side by side on a corpus' training lines and measured on its held-out
lines: pieces per word, how some words are cut, the most frequent piece and how many common training
words are split; one row of a Markdown table each (benchmarks/experiments/spm_counts.py's page)."""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import sentencepiece as spm

from benchmarks import recipe as R
from benchmarks.corpora import held_out_split
from biotok.backends.spm import spm_options, spm_user_symbols
from biotok.normalize import normalize


@dataclass(frozen=True)
class Split:
    """A corpus split once (each ``every``-th line held out, :func:`benchmarks.corpora.held_out_split`),
    both parts normalized, with the training words' counts and the ``common`` commonest of them."""

    train_file: Path
    train: list[str]
    held: list[str]
    counts: Counter
    common: list[str]

    @classmethod
    def of(cls, lines: Iterable[str], folder: Path, every: int, norm, common: int) -> "Split":
        files = held_out_split((line for line in lines if line.strip()), folder, every)
        train, held = ([normalize(line, norm) for line in f.read_text(encoding="utf-8").splitlines()] for f in files)
        counts = Counter(w for line in train for w in line.split())
        return cls(files[0], train, held, counts, [w for w, _ in counts.most_common(common)])


def spm_model(cfg, counts: Counter, **source) -> bytes:
    """SentencePiece's model trained with biotok's options (``cfg``, a TrainConfig, and the user symbols
    of ``counts``) on ``source``: ``input=`` a file, or ``sentence_iterator=`` the lines."""
    model = io.BytesIO()
    spm.set_random_generator_seed(cfg.seed)
    spm.SentencePieceTrainer.train(model_writer=model, **source, **spm_options(cfg, spm_user_symbols(counts, cfg)))
    return model.getvalue()


def measure(model: bytes, held: list[str], common: list[str], words: Sequence[str]) -> dict:
    """Held-out pieces per word, the cut of each of ``words``, the most frequent piece and its share,
    and how many of the ``common`` words are cut in two or more pieces (the first 8 named)."""
    sp, pieces = spm.SentencePieceProcessor(model_proto=model), Counter()
    for line in held:
        pieces.update(sp.encode(line, out_type=str))
    split, (top, top_n) = [w for w in common if len(sp.encode(w, out_type=str)) > 1], pieces.most_common(1)[0]
    return {"vocab_size": sp.get_piece_size(),
            "pieces_per_word": round(pieces.total() / sum(len(line.split()) for line in held), 4),
            "cuts": {w: " ".join(sp.encode(w, out_type=str)) for w in words}, "most_frequent_piece": top,
            "most_frequent_share": round(top_n / pieces.total(), 4), "common_words_split": len(split),
            "split_examples": split[:8]}


def compare(split: Split, makers: dict[str, Callable[[], bytes]], words: Sequence[str]) -> dict:
    """Each maker's model, trained one after the other and timed, then measured on the held-out lines."""
    models = R.timed_each(makers)
    return {"train_lines": len(split.train), "held_out_lines": len(split.held),
            "held_out_words": sum(len(line.split()) for line in split.held),
            "rows": {row: {**measure(model, split.held, split.common, words), "seconds": round(s, 1)}
                     for row, (model, s) in models.items()}}


def table(rows: dict[str, dict], words: Sequence[str]) -> list[str]:
    """The rows of :func:`compare` as a Markdown table, the fewest held-out pieces per word in bold."""
    best = min(m["pieces_per_word"] for m in rows.values())
    ppw = lambda m: (f"**{m['pieces_per_word']:.4f}**" if m["pieces_per_word"] == best  # noqa: E731
                     else f"{m['pieces_per_word']:.4f}")
    return R.table(("trained from", "pieces", "held-out pieces/word", *(f"`{w}`" for w in words), "most frequent piece",
                    "common words split", "seconds"), "lrr" + "l" * len(words) + "lrr",
                   ((row, f"{m['vocab_size']:,}", ppw(m), *(f"`{m['cuts'][w]}`" for w in words),
                     f"`{m['most_frequent_piece']}` ({100 * m['most_frequent_share']:.1f} %)", m["common_words_split"],
                     m["seconds"]) for row, m in rows.items()))


__all__ = ["Split", "compare", "measure", "spm_model", "table"]
