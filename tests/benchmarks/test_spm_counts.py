"""benchmarks.experiments.spm_counts: its page is computed from the numbers it measured."""

from __future__ import annotations

from benchmarks.experiments.spm_counts import ROWS, render


def _row(ppw: float, avec: str) -> dict:
    return {"vocab_size": 800, "pieces_per_word": ppw, "cuts": {"avec": avec, "vous": "▁vous"},
            "most_frequent_piece": "s", "most_frequent_share": 0.06, "common_words_split": 3,
            "split_examples": [], "seconds": 0.1}


def _results(now: float) -> dict:
    rows = {ROWS[0]: _row(1.52, "▁a vec"), ROWS[1]: _row(now, "▁avec"), ROWS[2]: _row(1.34, "▁avec")}
    return {"versions": {"sentencepiece": "0.2.3"},
            "corpora": {"dialogues": {"vocab_asked": 800, "train_lines": 9, "held_out_lines": 1,
                                      "held_out_words": 10, "rows": rows}}}


def test_the_verdict_follows_the_numbers():
    page = render(_results(1.14))
    assert "biotok train / text: 0.851 pieces per word (no worse)" in page
    assert "one word a line / text: 1.134" in page
    assert "| counts (biotok train) | 800 | **1.1400** | `▁avec` | `▁vous` |" in page
    assert "(worse)" in render(_results(1.40))


def test_from_json_rewrites_the_published_page_byte_identical(tmp_path):
    from benchmarks import recipe as R
    from benchmarks.experiments.spm_counts import PAGE
    from tests.conftest import REPO

    pub = REPO / "docs" / "results" / "spm-counts-fr"
    assert R.page_main(PAGE, ["--from-json", str(pub / "results.json"), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "README.md").read_bytes() == (pub / "README.md").read_bytes()
    assert not (tmp_path / "results.json").exists()  # the JSON is the input, left where it is
