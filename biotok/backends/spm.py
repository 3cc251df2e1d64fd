"""SentencePiece Unigram and BPE, trained from word counts.

biotok normalizes and counts words in one streaming pass, writes ``word<TAB>count`` and lets
SentencePiece train from that TSV (its ``input_format=tsv``): memory grows with distinct words,
not corpus size. SentencePiece's own normalization is off (``identity``) because the text is
already normalized; the saved tokenizer.json carries biotok's normalizer, and the ``spm.model``
beside it expects normalized input.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from typing import Callable, Iterator

from biotok.backends.base import Trained, finish
from biotok.config import TrainConfig
from biotok.corpus import count_words, write_counts
from biotok.errors import ConfigError, TrainingError
from biotok.normalize import build_normalizer, is_spaced_punctuation
from biotok.spm_convert import spm_to_tokenizer

# Fixed so that the same corpus gives the same model on any machine (EM sums per thread).
SPM_THREADS = 4


def _vocab_error(message: str, cfg: TrainConfig) -> Exception:
    """SentencePiece's refusals, in the words the HF path uses (one line, what to change)."""
    msg = message.strip().splitlines()[-1] if message.strip() else "unknown error"
    if m := re.search(r"Vocabulary size too high \(\d+\)\. Please set it to a value <= (\d+)", msg):
        n = int(m.group(1))
        return ConfigError(
            f"asked for {cfg.vocab_size} pieces but this corpus supports only {n} with {cfg.algo}; "
            f"lower --vocab-size to at most {n} or train on more text"
        )
    if m := re.search(r"smaller than required_chars\. (\d+) vs (\d+)", msg):
        return ConfigError(
            f"vocab size {cfg.vocab_size} is too small: the corpus' characters and the special "
            f"tokens alone need {m.group(2)} pieces with {cfg.algo}; use --vocab-size {m.group(2)} or more"
        )
    if "vocab" in msg.lower():
        return ConfigError(f"sentencepiece refused vocab size {cfg.vocab_size}: {msg}")
    return TrainingError(f"sentencepiece training failed: {msg}")


def _normalized(open_lines: Callable[[], Iterator[str]], cfg: TrainConfig) -> Iterator[str]:
    normalizer = build_normalizer(cfg.normalize)
    for line in open_lines():
        yield normalizer.normalize_str(line) if normalizer is not None else line


def train_spm(
    open_lines: Callable[[], Iterator[str]], cfg: TrainConfig, progress: bool = False
) -> Trained:
    """Train ``spm-unigram`` or ``spm-bpe`` with the sentencepiece library."""
    import sentencepiece as spm

    counts = count_words(_normalized(open_lines, cfg))
    specials = cfg.specials
    user_symbols = [specials.mask]
    if cfg.algo == "spm-unigram" and cfg.punct_pieces and cfg.normalize.space_punctuation:
        # see biotok.backends.hf.add_punctuation_pieces: Unigram never learns "▁," on its own
        user_symbols += sorted(f"▁{w}" for w, c in counts.items() if c >= 2 and is_spaced_punctuation(w))
    model = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="biotok-spm-") as tmp:
        tsv = os.path.join(tmp, "counts.tsv")
        with open(tsv, "w", encoding="utf-8") as f:
            write_counts(counts, f)
        spm.set_random_generator_seed(cfg.seed)
        try:
            spm.SentencePieceTrainer.train(
                input=tsv,
                input_format="tsv",
                model_writer=model,
                model_type=cfg.algo.removeprefix("spm-"),
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
                num_threads=SPM_THREADS,
                minloglevel=0 if progress else 2,
            )
        except RuntimeError as e:
            raise _vocab_error(str(e), cfg) from None
    data = model.getvalue()
    tok = spm_to_tokenizer(data, normalizer=build_normalizer(cfg.normalize))
    return Trained(
        finish(tok, specials),
        extra_files={"spm.model": data},
        notes={"distinct_words": len(counts), "spm_threads": SPM_THREADS,
               "punctuation_pieces": user_symbols[1:]},
    )
