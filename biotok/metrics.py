"""Fragmentation metrics: how many pieces each tokenizer spends on the same words.

Words are defined once, by biotok's own pre-tokenization (:func:`biotok.normalize.words`:
normalize with punctuation spacing, then split on whitespace), so every tokenizer is measured
on identical units. Each tokenizer encodes the *raw* line with its own normalization
(``encode_batch``); every piece is assigned to the biotok word holding its first character
(a piece starting between words, such as a lone '▁', goes to the next word of its line).

Counting (:class:`PieceCounter`) is vectorized with numpy over whole batches; the metrics
themselves are pure functions of the counts (:class:`Counts` -> :class:`Fragmentation`).
The formulas are in docs/compare.md.
"""

from __future__ import annotations

import math
import re
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from itertools import chain, islice
from operator import itemgetter
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from biotok.config import BATCH_SIZE, NormalizeConfig
from biotok.corpus import batches
from biotok.errors import ConfigError
from biotok.normalize import CONTROL_CHARS, FOLD_TABLE, normalizer_steps
from biotok.tokenizer import BiotokTokenizer
from biotok.zipf import zipf_fit

RENYI_ALPHA = 2.5  # Zouhar et al. (2023), "Tokenization and the noiseless channel"


# --- pure maths on counts ------------------------------------------------------------------
def ratio(num: float, den: float) -> float:
    """num / den, NaN when den is 0 (a metric that is undefined, never a fake 0)."""
    return num / den if den else float("nan")


def renyi_entropy(freqs: Iterable[int], alpha: float = RENYI_ALPHA) -> float:
    """Rényi entropy (nats) of the unigram distribution given by token frequencies."""
    f = np.asarray([x for x in freqs if x > 0], dtype=np.float64)
    if f.size == 0:
        return float("nan")
    p = f / f.sum()
    if alpha == 1.0:
        return float(-(p * np.log(p)).sum())
    return float(np.log((p**alpha).sum()) / (1.0 - alpha))


def renyi_efficiency(freqs: Iterable[int], vocab_size: int, alpha: float = RENYI_ALPHA) -> float:
    """H_alpha(p) / log |V|: 1 when the vocabulary is used uniformly, near 0 when a few pieces dominate."""
    if vocab_size <= 1:
        return float("nan")
    return renyi_entropy(freqs, alpha) / math.log(vocab_size)


@dataclass(frozen=True)
class Counts:
    """Raw counts of one tokenizer over a corpus; every metric is a function of these."""

    name: str
    vocab_size: int
    lines: int
    words: int  # biotok words
    chars: int  # characters inside biotok words (raw text)
    pieces: int  # all pieces of all lines (sequence length, specials excluded)
    pieces_in_words: int  # pieces assigned to a biotok word
    split_words: int  # words of 2+ pieces
    pieces_in_split_words: int
    unk: int
    pieces_per_word: Mapping[int, int]  # k -> number of words made of k pieces
    sequence_lengths: Mapping[int, int]  # n -> number of lines of n pieces
    piece_freqs: Mapping[int, int] = field(repr=False)  # id -> occurrences


@dataclass(frozen=True)
class Fragmentation:
    """The fragmentation metrics of one tokenizer on one corpus (see docs/compare.md)."""

    name: str
    vocab_size: int
    lines: int
    words: int
    pieces: int
    fertility: float  # pieces per word
    split_share: float  # share of words cut into 2+ pieces
    pieces_per_split_word: float
    unk_rate: float  # UNK pieces / pieces
    chars_per_piece: float
    utilization: float  # share of the vocabulary seen at least once
    renyi_efficiency: float
    mean_sequence_length: float  # pieces per line

    def as_dict(self) -> dict:
        return asdict(self)


def fragmentation_from_counts(c: Counts, alpha: float = RENYI_ALPHA) -> Fragmentation:
    """All metrics from counts: pure arithmetic, no tokenizer involved."""
    return Fragmentation(
        name=c.name,
        vocab_size=c.vocab_size,
        lines=c.lines,
        words=c.words,
        pieces=c.pieces,
        fertility=ratio(c.pieces_in_words, c.words),
        split_share=ratio(c.split_words, c.words),
        pieces_per_split_word=ratio(c.pieces_in_split_words, c.split_words),
        unk_rate=ratio(c.unk, c.pieces),
        chars_per_piece=ratio(c.chars, c.pieces_in_words),
        utilization=ratio(len(c.piece_freqs), c.vocab_size),
        renyi_efficiency=renyi_efficiency(c.piece_freqs.values(), c.vocab_size, alpha),
        mean_sequence_length=ratio(c.pieces, c.lines),
    )


# --- biotok words on the raw text -----------------------------------------------------------------
class WordSplitter:
    """biotok's word segmentation as character spans of the raw line (via tokenizers pipelines).

    Two equivalent pipelines: the full one (build_normalizer's steps), and a light one with
    only the typographic folds and the punctuation spacing, used for lines on which the other
    steps are the identity (already NFKC, no control character): most lines of a clean corpus.
    """

    def __init__(self, config: NormalizeConfig | None = None) -> None:
        cfg = config or NormalizeConfig()
        self._full = _word_tokenizer(normalizer_steps(cfg))
        # On an NFKC line without control characters the first steps are the identity.
        light_steps = normalizer_steps(replace(cfg, strip_control=False, unicode="none"))
        self._light = _word_tokenizer(light_steps)
        # The word spans of light lines need neither the whitespace steps (collapse runs, strip the
        # ends: half of the normalizer's time) nor their output: they only turn spaces into ' ', so
        # the words are the same once what they turn into ' ' counts as a space (_SEPARATORS too).
        # The folds (one character for one) are a numpy lookup on the code points (_light_arrays).
        numpy_fold = cfg.fold_typography and all(len(rep) == 1 for _, rep in FOLD_TABLE)
        spans_steps = normalizer_steps(replace(cfg, strip_control=False, unicode="none", whitespace=False,
                                               fold_typography=cfg.fold_typography and not numpy_fold))
        self._light_norm = normalizers.Sequence(spans_steps) if spans_steps else None
        self._fold = _fold_arrays() if numpy_fold else None
        # a character class in the re module: 8x faster per line than the alternation in regex
        self._changing = re.compile("[" + "".join(map(re.escape, map(chr, CONTROL_CHARS))) + "]") if (
            cfg.strip_control) else None
        self._form = {"NFKC": "NFKC", "NFC": "NFC"}.get(cfg.unicode)
        self._light_ok = not (cfg.lowercase or cfg.strip_accents)
        # On a light line the steps left change one character into one character (the folds) or
        # insert spaces (the spacing): the non-space characters of the raw and of the normalized
        # line are the same sequence, which gives every word's raw span without offsets.
        # Words are split on Unicode White_Space (Rust's char::is_whitespace, as WhitespaceSplit);
        # the folds only turn some of those into ' '.
        self._space = np.asarray(_WHITE_SPACE + (_SEPARATORS if cfg.whitespace else []), dtype=np.uint32)

    def _is_light(self, line: str) -> bool:
        if not self._light_ok:
            return False
        if self._form is not None and not unicodedata.is_normalized(self._form, line):
            return False
        return self._changing is None or self._changing.search(line) is None

    def arrays(self, lines: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`word_arrays` of ``lines``: word spans, their line index, each line's offset.

        Light lines take one normalizer call for the whole batch and numpy; the others the full
        pipeline with offsets. Same result as ``word_arrays(self.spans(lines), lines)``.
        """
        lines = list(lines)
        lengths = np.fromiter((len(l) + 1 for l in lines), dtype=np.int64, count=len(lines))
        line_base = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        light = [self._is_light(l) for l in lines]
        parts_spans, parts_lines = [], []
        light_idx = [i for i, ok in enumerate(light) if ok]
        got = self._light_arrays([lines[i] for i in light_idx]) if light_idx else None
        if got is None and light_idx:  # not aligned (never seen): the offsets route for all
            light = [False] * len(lines)
        elif got is not None:
            parts_spans.append(got[0])
            parts_lines.append(np.asarray(light_idx, dtype=np.int64)[got[1]])
        rest = [i for i, ok in enumerate(light) if not ok]
        if rest:
            encs = self._full.encode_batch([lines[i] for i in rest], add_special_tokens=False)
            spans, which = _flat_starts([e.offsets for e in encs])
            parts_spans.append(spans)
            parts_lines.append(np.asarray(rest, dtype=np.int64)[which])
        if not parts_spans:
            return np.zeros((0, 2), np.int64), np.zeros(0, np.int64), line_base
        spans = np.concatenate(parts_spans)
        which = np.concatenate(parts_lines)
        order = np.lexsort((spans[:, 0], which))  # by line, then position
        return spans[order], which[order], line_base

    def _light_arrays(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """Word spans (within their line) and line index of light lines; None if not aligned."""
        raw = "\n".join(lines)
        r = np.frombuffer(raw.encode("utf-32-le"), dtype=np.uint32)
        text = raw
        if self._fold is not None:
            keys, values = self._fold
            at = np.minimum(np.searchsorted(keys, r), len(keys) - 1)
            text = np.where(keys[at] == r, values[at], r).astype(np.uint32).tobytes().decode("utf-32-le")
        norm = self._light_norm.normalize_str(text) if self._light_norm is not None else text
        n = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32)
        a = np.flatnonzero(~np.isin(r, self._space, kind="table"))  # raw positions of non-space characters
        b = np.flatnonzero(~np.isin(n, self._space, kind="table"))  # their positions once normalized
        if len(a) != len(b):
            return None
        if len(b) == 0:
            return np.zeros((0, 2), np.int64), np.zeros(0, np.int64)
        first = np.ones(len(b), dtype=bool)
        first[1:] = b[1:] != b[:-1] + 1  # a word starts after a space of the normalized text
        starts = np.flatnonzero(first)
        ends = np.append(starts[1:], len(b)) - 1
        s_raw, e_raw = a[starts].astype(np.int64), a[ends].astype(np.int64) + 1
        lengths = np.fromiter((len(l) + 1 for l in lines), dtype=np.int64, count=len(lines))
        base = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        line = np.searchsorted(base, s_raw, side="right") - 1
        return np.stack([s_raw - base[line], e_raw - base[line]], axis=1), line.astype(np.int64)

    def spans(self, lines: Sequence[str]) -> list[list[tuple[int, int]]]:
        lines = list(lines)
        light = [self._is_light(l) for l in lines]
        out: list[list[tuple[int, int]]] = [[] for _ in lines]
        for tok, want in ((self._light, True), (self._full, False)):
            idx = [i for i, ok in enumerate(light) if ok is want]
            if idx:
                for i, e in zip(idx, tok.encode_batch([lines[i] for i in idx], add_special_tokens=False)):
                    out[i] = e.offsets
        return out


# The Unicode White_Space property: what WhitespaceSplit (Rust's char::is_whitespace) splits on.
_WHITE_SPACE = [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
                0x202F, 0x205F, 0x3000]
# U+001C-U+001F: not White_Space, but biotok's whitespace step turns them into ' ' (as str.split does)
_SEPARATORS = [0x1C, 0x1D, 0x1E, 0x1F]


def _fold_arrays() -> tuple[np.ndarray, np.ndarray]:
    """(code points, what the typographic folds make of each), sorted: FOLD_TABLE's steps in order."""
    out: dict[int, int] = {}
    for cps, _ in FOLD_TABLE:
        for cp in cps:
            ch = chr(cp)
            for group, rep in FOLD_TABLE:  # each step in turn, as the normalizer applies them
                if ord(ch) in group:
                    ch = rep
            out[cp] = ord(ch)
    keys = np.asarray(sorted(out), dtype=np.uint32)
    return keys, np.asarray([out[k] for k in keys.tolist()], dtype=np.uint32)


def _word_tokenizer(steps: list):
    tok = Tokenizer(models.WordLevel({"[W]": 0}, unk_token="[W]"))
    if steps:
        tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tok


# --- counting -----------------------------------------------------------------------------------
def _piece_starts(offsets_per_line: Sequence[Sequence[tuple[int, int]]]) -> tuple[np.ndarray, np.ndarray]:
    """(start of every piece, line index of every piece): only the starts are read (faster)."""
    lens = np.fromiter((len(o) for o in offsets_per_line), dtype=np.int64, count=len(offsets_per_line))
    starts = np.fromiter(map(itemgetter(0), chain.from_iterable(offsets_per_line)), dtype=np.int64,
                         count=int(lens.sum()))
    return starts, np.repeat(np.arange(len(lens), dtype=np.int64), lens)


def _flat_starts(offsets_per_line: Sequence[Sequence[tuple[int, int]]]) -> tuple[np.ndarray, np.ndarray]:
    """(start of every span, line index of every span) for a batch, as flat arrays."""
    lens = np.fromiter((len(o) for o in offsets_per_line), dtype=np.int64, count=len(offsets_per_line))
    flat = np.fromiter(chain.from_iterable(chain.from_iterable(offsets_per_line)), dtype=np.int64,
                       count=2 * int(lens.sum()))
    return flat.reshape(-1, 2), np.repeat(np.arange(len(lens), dtype=np.int64), lens)


def assign_pieces(
    piece_starts: np.ndarray, piece_lines: np.ndarray, word_spans: np.ndarray, word_lines: np.ndarray,
    line_base: np.ndarray,
) -> np.ndarray:
    """Word index of each piece: the first word of its line ending after the piece's start
    (or the line's last word); -1 when its line has no word."""
    n_words = len(word_lines)
    if n_words == 0:
        return np.full(len(piece_starts), -1, dtype=np.int64)
    g_end = word_spans[:, 1] + line_base[word_lines]
    g_start = piece_starts + line_base[piece_lines]
    idx = np.searchsorted(g_end, g_start, side="right")
    idx_c = np.minimum(idx, n_words - 1)
    ok = word_lines[idx_c] == piece_lines
    prev = np.maximum(idx - 1, 0)
    ok_prev = (~ok) & (idx > 0) & (word_lines[prev] == piece_lines)
    return np.where(ok, idx_c, np.where(ok_prev, prev, -1))


class PieceCounter:
    """Accumulates :class:`Counts` for one tokenizer, batch by batch."""

    def __init__(self, tokenizer: BiotokTokenizer) -> None:
        self.tokenizer = tokenizer
        self.vocab_size = tokenizer.vocab_size
        self.unk_id = tokenizer.unk_id
        # special tokens found in raw text are not pieces of words; UNK is (it is counted)
        specials = tokenizer.special_ids - ({self.unk_id} if self.unk_id is not None else set())
        self.special_ids = np.asarray(sorted(specials), dtype=np.int64)
        self.lines = self.words = self.chars = 0
        self.pieces = self.pieces_in_words = self.split_words = self.pieces_in_split_words = self.unk = 0
        self.ppw = np.zeros(64, dtype=np.int64)
        self.seq: dict[int, int] = {}
        self.freqs = np.zeros(self.vocab_size + 1, dtype=np.int64)

    def encode(self, lines: Sequence[str]) -> list:
        return self.tokenizer.backend.encode_batch(list(lines), add_special_tokens=False)

    def add(self, lines: Sequence[str], word_spans: np.ndarray, word_lines: np.ndarray, line_base: np.ndarray,
            encs: list | None = None) -> None:
        """Count one batch (``encs``: this tokenizer's encodings of ``lines``, computed if None)."""
        if encs is None:
            encs = self.encode(lines)
        ids = np.fromiter(chain.from_iterable(e.ids for e in encs), dtype=np.int64)
        starts, piece_lines = _piece_starts([e.offsets for e in encs])
        if self.special_ids.size and ids.size:
            keep = ~np.isin(ids, self.special_ids)
            ids, starts, piece_lines = ids[keep], starts[keep], piece_lines[keep]
        n_lines = len(lines)
        n_words = len(word_lines)
        if not ids.size:
            starts = np.zeros(0, np.int64)
        word_of = assign_pieces(starts, piece_lines, word_spans, word_lines, line_base)
        per_word = np.bincount(word_of[word_of >= 0], minlength=n_words) if n_words else np.zeros(0, np.int64)
        self.lines += n_lines
        self.words += n_words
        self.chars += int((word_spans[:, 1] - word_spans[:, 0]).sum()) if n_words else 0
        self.pieces += int(ids.size)
        self.pieces_in_words += int(per_word.sum())
        split = per_word >= 2
        self.split_words += int(split.sum())
        self.pieces_in_split_words += int(per_word[split].sum())
        if self.unk_id is not None:
            self.unk += int((ids == self.unk_id).sum())
        hist = np.bincount(per_word)
        if hist.size > self.ppw.size:
            self.ppw = np.pad(self.ppw, (0, hist.size - self.ppw.size))
        self.ppw[: hist.size] += hist
        for n, c in zip(*np.unique(np.bincount(piece_lines, minlength=n_lines), return_counts=True)):
            self.seq[int(n)] = self.seq.get(int(n), 0) + int(c)
        if ids.size:
            top = int(ids.max())
            if top >= self.freqs.size:
                self.freqs = np.pad(self.freqs, (0, top + 1 - self.freqs.size))
            self.freqs += np.bincount(ids, minlength=self.freqs.size)

    def counts(self) -> Counts:
        nz = np.nonzero(self.freqs)[0]
        return Counts(
            name=self.tokenizer.name,
            vocab_size=self.vocab_size,
            lines=self.lines,
            words=self.words,
            chars=self.chars,
            pieces=self.pieces,
            pieces_in_words=self.pieces_in_words,
            split_words=self.split_words,
            pieces_in_split_words=self.pieces_in_split_words,
            unk=self.unk,
            pieces_per_word={int(k): int(v) for k, v in enumerate(self.ppw) if v},
            sequence_lengths=dict(sorted(self.seq.items())),
            piece_freqs={int(i): int(self.freqs[i]) for i in nz},
        )


class _Inline:
    """A stand-in executor running jobs at once (``pipeline=False``)."""

    class _Done:
        def __init__(self, value):
            self.value = value

        def result(self):
            return self.value

    def submit(self, fn, *args):
        return self._Done(fn(*args))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def word_arrays(spans: list[list[tuple[int, int]]], lines: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat word spans, their line index, and each line's offset in the concatenated batch."""
    word_spans, word_lines = _flat_starts(spans)
    lengths = np.fromiter((len(l) + 1 for l in lines), dtype=np.int64, count=len(lines))
    line_base = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return word_spans, word_lines, line_base


@dataclass(frozen=True)
class Comparison:
    """Fragmentation of several tokenizers on the same corpus (the first one is the reference)."""

    results: tuple[Fragmentation, ...]
    counts: tuple[Counts, ...] = field(repr=False)
    relative_length: tuple[float, ...]  # total pieces / total pieces of the first tokenizer

    @property
    def zipf(self) -> tuple:
        """The power-law fit of each tokenizer's piece frequencies on the corpus (biotok.zipf; None: too few)."""
        return tuple(zipf_fit(c.piece_freqs) for c in self.counts)

    def as_dict(self) -> dict:
        return {
            "tokenizers": [
                {**r.as_dict(), "relative_length": rel,
                 "zipf": z.as_dict() if z is not None else None,
                 "pieces_per_word_hist": dict(c.pieces_per_word),
                 "sequence_length_hist": dict(c.sequence_lengths)}
                for r, c, rel, z in zip(self.results, self.counts, self.relative_length, self.zipf)
            ]
        }


def count(
    tokenizers: Sequence[BiotokTokenizer],
    lines: Iterable[str],
    *,
    batch_size: int = BATCH_SIZE,
    progress: bool = False,
    normalize_config: NormalizeConfig | None = None,
    max_lines: int | None = None,
    pipeline: bool = True,
) -> tuple[Counts, ...]:
    """Stream the corpus once, in batches, and count pieces for every tokenizer."""
    if not tokenizers:
        raise ConfigError("no tokenizer to measure")
    if batch_size < 1:
        raise ConfigError(f"batch size must be >= 1, not {batch_size}")
    splitter = WordSplitter(normalize_config)
    counters = [PieceCounter(t) for t in tokenizers]
    if max_lines is not None:
        lines = islice(lines, max_lines)
    from biotok.progress import Progress  # lazy: tqdm behind it, only when measuring

    bar = Progress(max_lines, "measuring", unit="line", enabled=progress, leave=False)
    # Pipeline: a worker thread runs the next encode_batch (Rust, GIL released) while this
    # thread counts the previous one, so the counting mostly hides behind the encoding.
    def jobs() -> Iterator[tuple[list[str], int]]:
        for batch in batches(lines, batch_size):
            for k in range(-1, len(counters)):  # -1: biotok word spans
                yield batch, k

    def run(job: tuple[list[str], int]):
        batch, k = job
        return splitter.arrays(batch) if k < 0 else counters[k].encode(batch)

    with ThreadPoolExecutor(max_workers=1) if pipeline else _Inline() as pool:
        it = jobs()
        pending = None
        first = next(it, None)
        if first is not None:
            pending = (first, pool.submit(run, first))
        words_of_batch = None
        while pending is not None:
            (batch, k), fut = pending
            nxt = next(it, None)
            pending = (nxt, pool.submit(run, nxt)) if nxt is not None else None
            out = fut.result()
            if k < 0:
                words_of_batch = out
            else:
                counters[k].add(batch, *words_of_batch, encs=out)  # type: ignore[misc]
                if k == len(counters) - 1:
                    bar.update(len(batch))
    bar.close()
    return tuple(c.counts() for c in counters)


def compare(tokenizers: Sequence[BiotokTokenizer], lines: Iterable[str], **kwargs) -> Comparison:
    """Fragmentation of every tokenizer on the same lines; sequence length relative to the first."""
    counts = count(tokenizers, lines, **kwargs)
    results = tuple(fragmentation_from_counts(c) for c in counts)
    ref = counts[0].pieces
    return Comparison(results=results, counts=counts, relative_length=tuple(ratio(c.pieces, ref) for c in counts))


def fragmentation(tokenizer: BiotokTokenizer, lines: Iterable[str], **kwargs) -> Fragmentation:
    """Fragmentation metrics of one tokenizer on a stream of lines."""
    return compare([tokenizer], lines, **kwargs).results[0]
