"""Vocabulary pathologies from counts: a suffix as the top piece, common words split where another
tokenizer keeps them whole (biotok.pathology; issue 45)."""

from __future__ import annotations

import random
import string

from tokenizers import Tokenizer, models, pre_tokenizers

from biotok.config import NormalizeConfig, TrainConfig
from biotok.pathology import find_pathologies, piece_frequencies, top_suffix
from biotok.report import compare_tokenizers
from biotok.tokenizer import BiotokTokenizer
from biotok.train import train_tokenizer

LINES = ["avec vous les chats"] * 10


def _unigram(pieces: list[str], name: str) -> BiotokTokenizer:
    vocab = [("<unk>", 0.0)] + [(p, -1.0 - 0.01 * i) for i, p in enumerate(["▁", *string.ascii_lowercase, *pieces])]
    tok = Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    return BiotokTokenizer(tok, name=name, specials={"unk": "<unk>"})


SPLIT = _unigram(["▁a", "vec", "▁vou", "▁le", "▁cha", "ts"], "split")  # 'vous' -> '▁vou s', 'les' -> '▁le s'
WHOLE = _unigram(["▁avec", "▁vous", "▁les", "▁chats"], "whole")


def test_top_suffix_is_a_short_word_internal_piece():
    assert top_suffix("a", "▁", {"s": 30, "▁de": 20}).piece == "s"
    assert top_suffix("a", "▁", {"s": 30, "▁de": 20}).share == 0.6
    assert top_suffix("a", "▁", {"▁de": 30, "s": 20}) is None  # word-initial: no pathology
    assert top_suffix("a", "▁", {"'": 30}) is None  # not letters
    assert top_suffix("a", "▁", {"ment": 30}) is None  # longer than a suffix
    assert top_suffix("a", "##", {"##s": 30, "de": 1}).piece == "##s"
    assert top_suffix("a", "##", {"s": 30}) is None  # WordPiece: 's' starts a word
    assert top_suffix("a", "▁", {}) is None


def test_piece_frequencies_count_each_word_as_often_as_it_occurs():
    freqs = piece_frequencies(SPLIT.backend, {"vous": 7, "les": 2})
    assert freqs == {"▁vou": 7, "s": 9, "▁le": 2}


def test_common_words_split_where_another_keeps_them_whole():
    counts = {"avec": 10, "vous": 10, "les": 10, "chats": 10}
    found = find_pathologies(["split", "whole"], ["▁", "▁"], [SPLIT.backend, WHOLE.backend], counts)
    split, whole = found.split_words
    assert [(s.word, s.pieces, s.whole_in) for s in split] == [
        ("avec", ("▁a", "vec"), ("whole",)), ("chats", ("▁cha", "ts"), ("whole",)),
        ("les", ("▁le", "s"), ("whole",)), ("vous", ("▁vou", "s"), ("whole",))]
    assert whole == ()
    assert found.top_suffix[0].piece == "s" and found.top_suffix[1] is None
    assert any("split splits 4 of the 4 commonest words" in w for w in found.warnings())


def test_compare_shows_the_pathologies_of_the_corpus():
    res = compare_tokenizers([SPLIT, WHOLE], lines=LINES, corpus=["mem"])
    p = res.pathologies
    assert p.top_suffix[0].piece == "s" and p.top_suffix[1] is None
    assert [s.word for s in p.split_words[0]] == ["avec", "chats", "les", "vous"]
    assert res.as_dict()["pathologies"]["tokenizers"][0]["top_suffix"]["piece"] == "s"
    md = "\n".join(p.markdown())
    assert "## Vocabulary pathologies" in md and "| avec | 10 | ▁a vec | whole |" in md
    clean = compare_tokenizers([WHOLE], lines=LINES, corpus=["mem"]).pathologies
    assert not clean.found and "None:" in "\n".join(clean.markdown())


def test_train_warns_when_a_suffix_is_the_top_piece(tmp_path):
    rng = random.Random(0)
    words = ["".join(rng.choice("bcdfghjklmnpqrtvz") for _ in range(rng.randint(3, 6))) + "s" for _ in range(4000)]
    corpus = tmp_path / "plurals.txt"
    corpus.write_text("\n".join(" ".join(words[i:i + 10]) for i in range(0, 4000, 10)) + "\n", encoding="utf-8")
    res = train_tokenizer([corpus], TrainConfig(algo="wordpiece", vocab_size=200), tmp_path / "wp", workers=1)
    assert len(res.warnings) == 1 and "'##s'" in res.warnings[0]


def test_train_does_not_warn_on_the_sample_at_8000_pieces(tmp_path, sample_corpus):
    lower = NormalizeConfig(lowercase=True)
    res = train_tokenizer([sample_corpus], TrainConfig(algo="unigram", vocab_size=8000, normalize=lower), tmp_path / "u",
                          workers=1)
    assert res.warnings == ()  # one word a line (before issue 45), its top piece was 's' (5.8 %)


def test_word_tally_counts_the_first_lines_in_batches_and_passes_every_line_through():
    from biotok.pathology import WordTally

    tally = WordTally(limit=2500)
    lines = ["Avec vous."] * 3000
    assert list(tally.wrap(lines)) == lines
    assert tally.counts == {"Avec": 2500, "vous": 2500, ".": 2500}  # normalized: punctuation spaced
