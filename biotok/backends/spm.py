"""SentencePiece Unigram and BPE, trained from word counts.

biotok normalizes and counts words (:mod:`biotok.counting`, every core), writes
``word<TAB>count`` and lets SentencePiece train from that TSV (its ``input_format=tsv``). For
Unigram, each word's last occurrence goes into a line of distinct words instead
(:func:`write_spm_tsv`): SentencePiece seeds a whole word only where the text continues
differently after it, so from one word a line it never seeded ``▁avec``.
SentencePiece's own normalization is off (``identity``) because the words are already
normalized; the saved tokenizer.json carries biotok's normalizer, and the ``spm.model`` beside it
expects normalized input.

Memory: from counts, the Unigram trainer builds its seed pieces from a text holding every word
*count* times (about 13 bytes of RSS per byte, in chunks of 512 MiB), so its memory follows the
sum of the counts, not the distinct words. The counts are scaled to keep that text under
``TrainConfig.seed_text_mb`` (:func:`scale_counts`: every count times one factor, rounded, at
least 1; docs/training.md gives the measured effect on the vocabulary); the BPE trainer's memory
follows the distinct words and needs no scaling.

Sizes: a size below what the characters need is refused before training
(:func:`required_pieces`, :class:`~biotok.errors.VocabSizeError`); SentencePiece trains with a soft
size limit, so a size above what the text supports gives a smaller model, which
:func:`biotok.train.train_tokenizer` reports as a ``VocabSizeError`` like the HF trainers'.
"""

from __future__ import annotations

import io
import logging
import os
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass

import sentencepiece as spm

from biotok.backends.base import Trained, finish
from biotok.config import TrainConfig
from biotok.counting import sorted_counts, write_counts
from biotok.errors import TrainingError, VocabSizeError
from biotok.formats.sentencepiece import read_model_proto, spm_to_tokenizer
from biotok.normalize import build_normalizer, is_spaced_punctuation

logger = logging.getLogger(__name__)

# Fixed so that the same corpus gives the same model on any machine (EM sums per thread).
SPM_THREADS = 4
# Bytes SentencePiece adds to each copy of a word in its seed text: '▁' (3) and a separator (1).
SPM_BYTES_PER_WORD = 4
# Longest line of distinct words in SentencePiece's TSV input (its max_sentence_length is 4,192 bytes).
SPM_LINE_BYTES = 4000
# SentencePiece's unknown-character mark: it skips every input line holding one.
_SPM_RESERVED = "\u2585"
# Resolution of the scaling factor: counts are multiplied by p / 2**24 in integer arithmetic.
_SCALE_BITS = 24


# --- count scaling: SentencePiece's memory ------------------------------------------------------
@dataclass(frozen=True)
class CountScaling:
    """How counts were scaled before SentencePiece: recorded in biotok.json's provenance."""

    budget_bytes: int | None  # None: scaling off
    factor: float  # every count multiplied by this (then rounded, at least 1)
    seed_text_bytes: int  # SentencePiece's seed text with the true counts
    scaled_seed_text_bytes: int  # ... with the scaled counts
    sum_counts: int
    scaled_sum_counts: int
    floored_words: int  # words whose scaled count was raised to 1

    def as_dict(self) -> dict:
        return asdict(self)


def spm_seed_bytes(counts: dict[str, int]) -> int:
    """Bytes of the text SentencePiece's Unigram trainer builds its suffix array on, from counts."""
    return sum(c * (len(w.encode("utf-8")) + SPM_BYTES_PER_WORD) for w, c in counts.items())


def _scaled(c: int, p: int) -> int:
    q = 1 << _SCALE_BITS
    return max(1, (c * p + q // 2) >> _SCALE_BITS)


def scale_counts(counts: dict[str, int], budget_bytes: int | None) -> tuple[Counter[str], CountScaling]:
    """Counts times one factor (rounded, at least 1) so SentencePiece's seed text fits the budget.

    The factor is the largest of the form p / 2**24 that fits (exact integer arithmetic, so the
    same counts give the same result everywhere). When one copy of every distinct word already
    exceeds the budget, the bound becomes twice that (memory then follows distinct words).
    Counts already within the budget are returned unchanged (factor 1).
    """
    weight: dict[int, int] = {}  # count -> bytes of one copy of all the words with that count
    for w, c in counts.items():
        weight[c] = weight.get(c, 0) + len(w.encode("utf-8")) + SPM_BYTES_PER_WORD
    full = sum(c * b for c, b in weight.items())
    total = sum(counts.values())
    if budget_bytes is None or full <= budget_bytes:
        return Counter(counts), CountScaling(budget_bytes, 1.0, full, full, total, total, 0)
    floor = sum(weight.values())
    target = max(budget_bytes, 2 * floor)

    def size(p: int) -> int:
        return sum(_scaled(c, p) * b for c, b in weight.items())

    lo, hi = 0, 1 << _SCALE_BITS  # size(lo) <= target < size(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if size(mid) <= target:
            lo = mid
        else:
            hi = mid
    p = max(lo, 1)
    scaled = Counter({w: _scaled(c, p) for w, c in counts.items()})
    floored = sum(1 for c in counts.values() if (c * p + (1 << (_SCALE_BITS - 1))) >> _SCALE_BITS < 1)
    return scaled, CountScaling(
        budget_bytes=budget_bytes,
        factor=p / (1 << _SCALE_BITS),
        seed_text_bytes=full,
        scaled_seed_text_bytes=size(p),
        sum_counts=total,
        scaled_sum_counts=sum(scaled.values()),
        floored_words=floored,
    )


def required_pieces(counts: Counter[str], user_symbols: list[str], coverage: float, n_meta: int = 4) -> int:
    """The smallest vocabulary SentencePiece accepts for these word counts (its ``required_chars``).

    SentencePiece keeps the most frequent characters (``▁`` included, once per word) until
    ``coverage`` of all character occurrences is reached; those, the ``n_meta`` control pieces and
    the user-defined symbols must fit. Words that are a user symbol (``▁,``) are not counted.
    Computed here so that a too-small size is refused with numbers before any training.
    """
    user = set(user_symbols)
    chars: Counter[str] = Counter()
    for word, c in counts.items():
        if "▁" + word in user:
            continue
        chars["▁"] += c
        for ch in word:
            chars[ch] += c
    total = sum(chars.values())
    covered = needed = 0
    for _, c in sorted(chars.items(), key=lambda kv: -kv[1]):
        if total and covered / total >= coverage:
            break
        covered += c
        needed += 1
    return needed + n_meta + len(user_symbols)


def _line_bytes(word: str) -> int:
    return len(word.encode("utf-8")) + 1


def write_spm_tsv(counts: Counter[str] | dict[str, int], out: io.TextIOBase, line_bytes: int = SPM_LINE_BYTES) -> int:
    """Write the counts as SentencePiece's TSV input so that its seeds are those of running text.

    SentencePiece's Unigram trainer seeds its pieces from a suffix array over its "sentences",
    each repeated as many times as its TSV count, and keeps a substring only where the text
    continues in two ways after it. A whole word written alone (``avec<TAB>2191``) is always
    followed by the separator and the next copy's ``▁``, so it is never seeded unless it begins
    another word: the frequent words that begin none (``avec``, ``vous``) end up split. So each
    word is written alone with its count minus one, and once more inside lines of distinct words
    (count 1, at most ``line_bytes`` bytes) where a space follows it: its occurrences are its
    count exactly (the EM's word counts and the size of the seed text are unchanged). Each line
    ends on the rarest word left (a word seen once is never seeded: it needs no space after it).
    Words SentencePiece would skip (holding its reserved ``▅``) or longer than half a line stay
    alone. Returns the number of lines written.
    """
    items = sorted_counts(counts)
    n = 0
    for word, c in items:
        if c > 1:
            out.write(f"{word}\t{c - 1}\n")
            n += 1
    shared = []
    for word, _ in items:
        if _SPM_RESERVED in word or _line_bytes(word) > line_bytes // 2:
            out.write(f"{word}\t1\n")
            n += 1
        else:
            shared.append(word)
    head, tail = 0, len(shared)  # the commonest words left, then the rarest left
    while head < tail:
        line = [shared[head]]
        size = _line_bytes(shared[head])
        head += 1
        while head < tail - 1 and size + _line_bytes(shared[head]) + _line_bytes(shared[tail - 1]) <= line_bytes:
            line.append(shared[head])
            size += _line_bytes(shared[head])
            head += 1
        if head < tail:
            tail -= 1
            line.append(shared[tail])
        out.write(" ".join(line) + "\t1\n")
        n += 1
    return n


def _reproducible(data: bytes) -> bytes:
    """The model without the temporary input path SentencePiece records (same run, same bytes)."""
    proto = read_model_proto(data)
    proto.trainer_spec.input[:] = ["counts.tsv"]
    return proto.SerializeToString()


def spm_user_symbols(counts: Counter[str] | dict[str, int], cfg: TrainConfig) -> list[str]:
    """The pieces SentencePiece must keep: the mask token, then (Unigram, ``--punct-pieces``) ``▁,``
    and every other spaced mark seen at least twice."""
    symbols = [cfg.specials.mask]
    if cfg.algo == "unigram" and cfg.punct_pieces and cfg.normalize.space_punctuation:
        symbols += sorted(f"▁{w}" for w, c in counts.items() if c >= 2 and is_spaced_punctuation(w))
    return symbols


def spm_options(cfg: TrainConfig, user_symbols: list[str]) -> dict:
    """Every option biotok gives SentencePiece's trainer besides its input: one place, so that a
    benchmark training SentencePiece on text uses exactly the same ones."""
    specials = cfg.specials
    return dict(
        model_type=cfg.algo,
        vocab_size=cfg.vocab_size,
        character_coverage=cfg.character_coverage,
        max_sentencepiece_length=cfg.max_piece_length,
        normalization_rule_name="identity",
        add_dummy_prefix=True,
        remove_extra_whitespaces=False,
        split_digits=False,
        bos_id=0,
        pad_id=1,
        eos_id=2,
        unk_id=3,
        bos_piece=specials.bos,
        pad_piece=specials.pad,
        eos_piece=specials.eos,
        unk_piece=specials.unk,
        user_defined_symbols=user_symbols,
        byte_fallback=cfg.byte_fallback,
        num_threads=SPM_THREADS,
        hard_vocab_limit=False,  # fewer pieces than asked: reported by train_tokenizer
        # its C++ log (60-140 lines on stderr) only with `biotok train --verbose` / --debug
        minloglevel=0 if logger.isEnabledFor(logging.DEBUG) else 2,
    )


def train_spm(counts: Counter[str], cfg: TrainConfig, progress: bool = False) -> Trained:
    """Train ``cfg.algo`` (unigram or bpe) with the sentencepiece library from word counts."""
    specials = cfg.specials
    user_symbols = spm_user_symbols(counts, cfg)
    scaling = None
    if cfg.algo == "unigram":
        counts, scaling = scale_counts(counts, cfg.seed_text_mb << 20 if cfg.seed_text_mb else None)
    n_meta = 4 + (256 if cfg.byte_fallback else 0)
    needed = required_pieces(counts, user_symbols, cfg.character_coverage, n_meta)
    if needed > cfg.vocab_size:
        raise VocabSizeError(cfg.vocab_size, needed, cfg.label)
    model = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="biotok-spm-") as tmp:
        tsv = os.path.join(tmp, "counts.tsv")
        with open(tsv, "w", encoding="utf-8") as f:
            # BPE splits its input into words before anything else: one word a line is enough
            (write_spm_tsv if cfg.algo == "unigram" else write_counts)(counts, f)
        spm.set_random_generator_seed(cfg.seed)
        try:
            spm.SentencePieceTrainer.train(input=tsv, input_format="tsv", model_writer=model,
                                           **spm_options(cfg, user_symbols))
        except RuntimeError as e:  # sizes are checked above: this is SentencePiece failing
            last = (str(e).strip().splitlines() or ["unknown error"])[-1]
            raise TrainingError(f"sentencepiece training failed: {last}") from e
    data = _reproducible(model.getvalue())
    tok = spm_to_tokenizer(data, normalizer=build_normalizer(cfg.normalize))
    notes: dict[str, object] = {"distinct_words": len(counts), "spm_threads": SPM_THREADS,
                                "punctuation_pieces": user_symbols[1:]}
    if scaling is not None:
        notes["count_scaling"] = scaling.as_dict()
    return Trained(finish(tok, specials, cfg.byte_fallback), extra_files={"spm.model": data}, notes=notes)
