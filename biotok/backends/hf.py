"""Unigram, BPE and WordPiece with the Hugging Face ``tokenizers`` trainers, from word counts.

The trainers have no "train from counts" entry point, so each word is fed to
``train_from_iterator`` as many times as it was counted (``"word word word "``, in chunks);
their pre-tokenizers split it back into exactly those counts. The words are already normalized,
so the normalizer is attached only after training. Memory follows the distinct words.
Determinism: the BPE trainer is deterministic; the WordPiece trainer assigns ids to its "##x"
tokens in hash-map order (tokenizers issue #1794), so biotok pre-seeds them in sorted order;
the Unigram trainer's EM sums in hash-map order, so its scores can differ in the 4th decimal
between runs: a warning says so when it runs (docs/training.md; the default Unigram backend,
sentencepiece, is byte-identical).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
from collections import Counter
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from biotok.backends.base import Trained, finish
from biotok.config import TrainConfig
from biotok.errors import BiotokError, TrainingError
from biotok.normalize import build_normalizer, is_spaced_punctuation

METASPACE = dict(replacement="▁", prepend_scheme="always", split=True)
FEED_CHARS = 1 << 16  # characters per string fed to the trainer
logger = logging.getLogger(__name__)
NOT_REPRODUCIBLE = (
    "the tokenizers Unigram trainer is not reproducible: its EM sums in hash-map order, so two runs "
    "give slightly different scores and ids (docs/training.md); the default backend, sentencepiece, "
    "gives byte-identical output"
)


def _unigram(cfg: TrainConfig, progress: bool) -> tuple[Tokenizer, trainers.Trainer]:
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(**METASPACE)
    trainer = trainers.UnigramTrainer(
        vocab_size=cfg.vocab_size,
        special_tokens=cfg.specials.ordered,
        unk_token=cfg.specials.unk,
        max_piece_length=cfg.max_piece_length,
        show_progress=progress,
    )
    return tok, trainer


def _bpe(cfg: TrainConfig, progress: bool) -> tuple[Tokenizer, trainers.Trainer]:
    tok = Tokenizer(models.BPE(unk_token=cfg.specials.unk))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(**METASPACE)
    trainer = trainers.BpeTrainer(
        vocab_size=cfg.vocab_size,
        min_frequency=cfg.min_frequency,
        special_tokens=cfg.specials.ordered,
        limit_alphabet=cfg.limit_alphabet,
        max_token_length=cfg.max_piece_length,
        show_progress=progress,
    )
    return tok, trainer


def _wordpiece_seeds(alphabet: Iterable[str]) -> list[str]:
    return [f"##{c}" for c in sorted(alphabet) if not c.isspace()]


class _Stopped(Exception):
    """Raised inside the feed when SIGINT or SIGTERM arrived: the trainer stops reading."""


@contextmanager
def watch_signals() -> Iterator[Callable[[], bool]]:
    """A check that turns True once SIGINT or SIGTERM arrives, callable from any thread.

    The tokenizers trainers pull the strings they are fed from their own threads, where Python
    never runs signal handlers: only the main thread does, and it waits inside Rust until the
    trainer returns (a BPE run signalled at 4 s exited at 38 s). The C-level handler also writes
    the signal number to the wakeup fd (:func:`signal.set_wakeup_fd`), which the feed reads
    between two strings. Outside the main thread, or when another wakeup fd is set (an event
    loop's), the check stays False."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    try:
        old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except (ValueError, OSError):
        old = None
    if old != -1:  # not installed, or someone else's: left as it was
        if old is not None:
            signal.set_wakeup_fd(old)
        os.close(r)
        os.close(w)
        yield lambda: False
        return
    seen = False
    stops = {int(signal.SIGINT), int(signal.SIGTERM)}

    def stopped() -> bool:
        nonlocal seen
        if not seen:
            try:
                seen = any(b in stops for b in os.read(r, 512))
            except BlockingIOError:
                pass
        return seen

    try:
        yield stopped
    finally:
        signal.set_wakeup_fd(-1)
        os.close(r)
        os.close(w)


def feed(counts: Counter[str], stopped: Callable[[], bool] = lambda: False) -> Iterator[str]:
    """Each word as many times as counted, space-separated, in strings of about FEED_CHARS;
    :class:`_Stopped` once ``stopped()`` (checked before each string)."""
    for word, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        unit = word + " "
        per = max(1, FEED_CHARS // len(unit))
        while c > 0:
            if stopped():
                raise _Stopped()
            k = min(c, per)
            yield unit * k
            c -= k


def train_hf(counts: Counter[str], cfg: TrainConfig, progress: bool = False) -> Trained:
    """Train ``cfg.algo`` in {unigram, bpe, wordpiece} with the tokenizers trainers, from counts."""
    notes: dict[str, object] = {}
    if cfg.algo == "wordpiece":
        # Give the "##c" tokens ids in sorted order before training (see module docstring).
        seeds = _wordpiece_seeds({ch for w in counts for ch in w})
        tok = Tokenizer(models.WordPiece(unk_token=cfg.specials.unk, max_input_chars_per_word=100))
        tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        trainer = trainers.WordPieceTrainer(
            vocab_size=cfg.vocab_size,
            min_frequency=cfg.min_frequency,
            special_tokens=cfg.specials.ordered + seeds,
            continuing_subword_prefix="##",
            show_progress=progress,
        )
        notes["wordpiece_seeded_continuations"] = len(seeds)
    elif cfg.algo == "unigram":
        logger.warning("warning: %s", NOT_REPRODUCIBLE)
        notes["reproducible"] = False
        tok, trainer = _unigram(cfg, progress)
        seeds = []
    elif cfg.algo == "bpe":
        tok, trainer = _bpe(cfg, progress)
        seeds = []
    else:  # pragma: no cover - the registry only routes the three above here
        raise TrainingError(f"the tokenizers backend does not train {cfg.algo}")
    try:
        with watch_signals() as stopped:
            tok.train_from_iterator(feed(counts, stopped), trainer)
    except _Stopped:
        # the signal's own handler runs on the main thread at its next Python step (Terminated,
        # KeyboardInterrupt); should it not raise, the run still stops here
        raise KeyboardInterrupt from None
    except BiotokError:
        raise
    except Exception as e:  # the Rust trainer raises a bare Exception
        raise TrainingError(f"tokenizers trainer failed: {e}") from e
    tok.normalizer = build_normalizer(cfg.normalize)
    if seeds:
        tok = _unmark_seeds(tok, set(seeds))
    if cfg.algo == "unigram" and cfg.punct_pieces and cfg.normalize.space_punctuation:
        tok, added = add_punctuation_pieces(tok, set(cfg.specials.ordered))
        notes["punctuation_pieces"] = added
    notes["distinct_words"] = len(counts)
    return Trained(finish(tok, cfg.specials), notes=notes)


def add_punctuation_pieces(tok: Tokenizer, specials: set[str]) -> tuple[Tokenizer, list[str]]:
    """Give each punctuation piece ``c`` of a Unigram model a ``▁c`` piece, at equal size.

    Punctuation-spaced text makes every mark a word of its own, and both Unigram trainers seed
    multi-character pieces only from substrings repeated across distinct words, so ``▁,`` is
    never learned and each mark costs two pieces (``▁`` + ``,``). A standalone mark's count is
    its piece's count, so ``▁c`` takes the score of ``c`` (Viterbi then prefers it to
    ``▁`` + ``c``); as many of the lowest-scoring multi-character pieces make room for them.
    """
    data = json.loads(tok.to_str())
    vocab: list[list] = data["model"]["vocab"]
    have = {p for p, _ in vocab}
    new = [[f"▁{p}", s] for p, s in vocab if is_spaced_punctuation(p) and f"▁{p}" not in have]
    if not new:
        return tok, []
    removable = sorted(
        (i for i, (p, _) in enumerate(vocab) if len(p) > 1 and p not in specials),
        key=lambda i: (vocab[i][1], vocab[i][0]),
    )[: len(new)]
    drop = set(removable)
    data["model"]["vocab"] = [e for i, e in enumerate(vocab) if i not in drop] + new
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False)), [p for p, _ in new]


def _unmark_seeds(tok: Tokenizer, seeds: set[str]) -> Tokenizer:
    """The seeded "##c" were passed as special tokens to fix their ids; make them plain pieces."""
    data = json.loads(tok.to_str())
    data["added_tokens"] = [t for t in data["added_tokens"] if t["content"] not in seeds]
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False))
