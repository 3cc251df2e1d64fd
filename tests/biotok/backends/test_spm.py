"""SentencePiece Unigram from word counts: its TSV input keeps every count, and the vocabulary is
no worse than SentencePiece's own on the same normalized text (issue 45)."""

from __future__ import annotations

import io
import tarfile
from collections import Counter

import pytest
import sentencepiece as spm

from biotok.backends.spm import SPM_LINE_BYTES, spm_options, spm_user_symbols, write_spm_tsv
from biotok.config import NormalizeConfig, TrainConfig
from biotok.normalize import normalize
from biotok.train import train_tokenizer

NORM = NormalizeConfig(lowercase=True)
COMMON = 100  # the commonest training words: those SentencePiece keeps whole on the text stay whole


def _tsv(counts, **kw) -> list[tuple[str, int]]:
    out = io.StringIO()
    n = write_spm_tsv(Counter(counts), out, **kw)
    rows = [(k, int(c)) for k, c in (line.split("\t") for line in out.getvalue().splitlines())]
    assert n == len(rows)
    return rows


def test_tsv_keeps_every_count_and_puts_each_word_in_a_line_of_words():
    counts = {"avec": 5, "vous": 3, "de": 2, "le": 2, "rare": 1, "once": 1, "x" * 30: 2}
    rows = _tsv(counts, line_bytes=16)
    got = Counter()
    for key, c in rows:
        for w in key.split(" "):
            got[w] += c
    assert got == Counter(counts)  # the EM's word counts and the seed text are the counts
    lines = [key.split(" ") for key, c in rows if " " in key]
    assert all(c == 1 and len(key.encode()) <= 16 for key, c in rows if " " in key)
    assert {w for line in lines for w in line} == set(counts) - {"x" * 30}  # longer than half a line: alone
    # a word seen twice or more is followed by a space once (its other copies by the separator)
    assert all(counts[w] > 1 for line in lines for w in line[:-1]) and {line[-1] for line in lines} == {"rare", "once"}
    assert ("avec", 4) in rows and ("rare", 1) not in rows


def test_tsv_puts_a_word_sentencepiece_would_skip_alone():
    rows = _tsv({"a\u2585b": 3, "de": 2, "le": 2})  # SentencePiece skips a line holding '▅'
    assert ("a\u2585b", 2) in rows and ("a\u2585b", 1) in rows
    assert all("\u2585" not in key for key, _ in rows if " " in key)
    assert max(len(k.encode()) for k, _ in _tsv({f"w{i}": 2 for i in range(2000)})) <= SPM_LINE_BYTES


def _held_out(lines: list[str]) -> tuple[list[str], list[str]]:
    lines = [normalize(l, NORM) for l in lines if l.strip()]
    return [l for i, l in enumerate(lines) if i % 10 != 9], [l for i, l in enumerate(lines) if i % 10 == 9]


def _text_model(train: list[str], counts: Counter, cfg: TrainConfig) -> spm.SentencePieceProcessor:
    model = io.BytesIO()
    spm.set_random_generator_seed(cfg.seed)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_writer=model,
                                   max_sentence_length=max(len(l.encode()) for l in train) + 1,
                                   **spm_options(cfg, spm_user_symbols(counts, cfg)))
    return spm.SentencePieceProcessor(model_proto=model.getvalue())


def _pieces_per_word(sp: spm.SentencePieceProcessor, lines: list[str]) -> float:
    return sum(len(sp.encode(l, out_type=str)) for l in lines) / sum(len(l.split()) for l in lines)


def _compare_with_text(tmp_path, lines: list[str], vocab: int) -> None:
    train, held = _held_out(lines)
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(train) + "\n", encoding="utf-8")
    counts = Counter(w for l in train for w in l.split())
    cfg = TrainConfig(algo="unigram", vocab_size=vocab, normalize=NORM)
    ours = spm.SentencePieceProcessor(
        model_proto=(train_tokenizer([corpus], cfg, tmp_path / "tok", workers=1).path / "spm.model").read_bytes())
    text = _text_model(train, counts, cfg)
    assert ours.get_piece_size() == text.get_piece_size() == vocab
    assert _pieces_per_word(ours, held) <= _pieces_per_word(text, held)
    whole = {w for w, _ in counts.most_common(COMMON) if len(text.encode(w)) == 1}
    assert {w for w in whole if len(ours.encode(w)) > 1} == set()
    top = Counter(p for l in train for p in ours.encode(l, out_type=str)).most_common(1)[0][0]
    assert top.startswith("▁") or len(top) > 1 or not top.isalpha()  # never a bare suffix such as 's'


def test_from_counts_no_worse_than_text_on_the_sample(tmp_path, sample_lines):
    _compare_with_text(tmp_path, sample_lines, 8000)


def test_from_counts_no_worse_than_text_on_dialogues(tmp_path, shared_data):
    archive = shared_data / "corpora" / "labforsims2-fr-dialogues" / "labforsims2-corpus.tar.xz"
    turns = []
    with tarfile.open(archive) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if m.isfile() and m.name.startswith("dialogues/"):
                for line in tar.extractfile(m).read().decode("utf-8").splitlines():
                    if len(parts := line.split(maxsplit=1)) == 2:  # "d39000000 bonjour": the speaker, the turn
                        turns.append(parts[1])
    assert "avec" in Counter(w for t in turns for w in normalize(t, NORM).split())
    _compare_with_text(tmp_path, turns, 800)
