"""benchmarks/held_out.py: a corpus split once and normalized, SentencePiece models trained side by
side and measured on the held-out lines, and their table with the best pieces per word in bold."""

from __future__ import annotations

from benchmarks import held_out as H
from biotok.config import NormalizeConfig, TrainConfig

NORM = NormalizeConfig(lowercase=True)


def test_split_holds_each_nth_line_out_normalized(tmp_path):
    lines = [f"Ligne {i} du Patient" for i in range(20)] + ["   "]
    s = H.Split.of(lines, tmp_path, 5, NORM, common=3)
    assert len(s.train) == 16 and len(s.held) == 4 and s.held[0] == "ligne 4 du patient"
    assert s.counts["patient"] == 16 and s.common[:2] == ["ligne", "du"] and len(s.common) == 3


def test_models_side_by_side_are_measured_on_the_held_out_lines(tmp_path, sample_lines):
    s = H.Split.of(sample_lines, tmp_path, 10, NORM, common=50)
    cfg = TrainConfig(algo="unigram", vocab_size=400, normalize=NORM)
    text = lambda size: lambda: H.spm_model(  # noqa: E731
        TrainConfig(algo="unigram", vocab_size=size, normalize=NORM), s.counts, sentence_iterator=iter(s.train),
        max_sentence_length=max(len(line.encode("utf-8")) for line in s.train) + 1)
    got = H.compare(s, {"small": text(300), "large": text(cfg.vocab_size)}, ("avec", "patient"))
    assert (got["train_lines"], got["held_out_lines"]) == (len(s.train), len(s.held))
    small, large = got["rows"]["small"], got["rows"]["large"]
    assert small["vocab_size"] < large["vocab_size"]
    assert small["pieces_per_word"] >= large["pieces_per_word"] > 1  # fewer pieces cut words more
    assert set(large["cuts"]) == {"avec", "patient"} and large["split_examples"] == large["split_examples"][:8]
    assert 0 < large["most_frequent_share"] < 1 and large["common_words_split"] <= 50
    assert H.spm_model(cfg, s.counts, sentence_iterator=iter(s.train),  # same inputs and seed, same model
                       max_sentence_length=4096) == H.spm_model(cfg, s.counts, sentence_iterator=iter(s.train),
                                                                max_sentence_length=4096)


def _row(ppw: float) -> dict:
    return {"vocab_size": 8000, "pieces_per_word": ppw, "cuts": {"avec": "▁avec"}, "most_frequent_piece": "s",
            "most_frequent_share": 0.058, "common_words_split": 3, "seconds": 1.5}


def test_table_bolds_the_fewest_pieces_per_word():
    lines = H.table({"a": _row(1.5), "b": _row(1.25)}, ("avec",))
    assert lines[:2] == ["| trained from | pieces | held-out pieces/word | `avec` | most frequent piece | common words "
                         "split | seconds |", "|---|---:|---:|---|---|---:|---:|"]
    assert lines[2] == "| a | 8,000 | 1.5000 | `▁avec` | `s` (5.8 %) | 3 | 1.5 |"
    assert lines[3] == "| b | 8,000 | **1.2500** | `▁avec` | `s` (5.8 %) | 3 | 1.5 |"
