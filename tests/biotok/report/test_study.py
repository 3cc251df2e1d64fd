"""biotok.report.study: the study's verdicts follow the numbers, study.md is rebuilt from study.json
alone, and the measurements hold what the page reads."""

from __future__ import annotations

import copy
import json

import pytest

from biotok.config import TrainConfig
from biotok.report import study
from tests.conftest import REPO, SAMPLE

COMMAND = "python -m benchmarks.experiments.study"


def _metrics(fertility: float, seq: float, rel: float) -> dict:
    return {"fertility": fertility, "mean_sequence_length": seq, "relative_length": rel, "split_share": 0.3,
            "pieces_per_split_word": 2.5, "unk_rate": 0.0, "chars_per_piece": 4.0, "utilization": 0.5,
            "renyi_efficiency": 0.4}


def _vocab(size: int, dup: int, shared: int | None = None, glued: int = 0, comma: bool | None = None) -> dict:
    return {"size": size, "marker": "▁", "duplicates": dup, "shared_with_camemberta": shared,
            "jaccard_camemberta": None if shared is None else shared / 50_000, "glued_punctuation": glued,
            "spaced_comma_piece": comma}


@pytest.fixture()
def res() -> dict:
    """A small study.json where every claim holds."""
    m = {"camemberta": _metrics(1.5, 25.0, 1.0), "Unigram": _metrics(1.4, 22.0, 0.9),
         "Unigram_L": _metrics(1.3, 21.0, 0.85), "Unigram_N_N": _metrics(1.2, 23.0, 0.92),
         "Unigram_L-plain": _metrics(1.35, 24.0, 0.95), "Unigram_L-hf": _metrics(1.45, 23.5, 0.94),
         "BPE": _metrics(1.3, 19.0, 0.8), "bert": _metrics(2.0, 30.0, 1.2)}
    vocab = {"camemberta": _vocab(32003, 3700), "Unigram": _vocab(32000, 2500, 9400),
             "Unigram_N_N": _vocab(32000, 4100, 9800), "Unigram_L": _vocab(32000, 3600, 8500),
             "Unigram_L-plain": _vocab(32000, 3600, 8600, comma=False), "BPE": _vocab(32000, 2000, 8900, comma=True)}
    return {"leaflets_mb": 1, "inputs": {"held_out_pamj": 42}, "training_text": {"train": {"lines": 10, "mb": 1.0}},
            "heldout": {"heldout_quaero": {"lines": 5, "mb": 0.1, "metrics": m},
                        "heldout_e3c": {"lines": 5, "mb": 0.1, "metrics": copy.deepcopy(m)}},
            "vocab": vocab,
            "terms": {"tokenizers": ["camemberta"], "terms": [{"term": "x", "category": "",
                      "segmentations": {"camemberta": {"cell": "✓"}}}],
                      "one_piece_share": {"camemberta": 1.0}, "mean_pieces": {"camemberta": 1.0}}}


def _both(res: dict, name: str, key: str, value: float) -> None:
    for text in ("heldout_quaero", "heldout_e3c"):
        res["heldout"][text]["metrics"][name][key] = value


def test_every_verdict_is_supported_then_flips_with_the_numbers(res):
    assert all("**supported**" in v for v in study.verdicts(res)[:3])
    res["vocab"]["Unigram"]["duplicates"] = 5000  # spacing no longer reduces duplicates
    _both(res, "Unigram_L", "fertility", 1.5)  # lowercasing no longer helps
    _both(res, "Unigram_L", "relative_length", 1.1)  # in-domain no longer shorter
    flipped = study.verdicts(res)
    assert all("**not supported**" in v for v in flipped[:3])


def test_lowercase_verdict_is_partial_when_one_text_disagrees(res):
    res["heldout"]["heldout_e3c"]["metrics"]["Unigram_L"]["fertility"] = 1.5
    assert "**partly supported** (on one of the two texts)" in study.verdict_lowercase(res)


def test_trainer_verdict_names_the_better_trainer_and_checks_the_default(res):
    assert "comes from `sentencepiece`" in study.verdict_trainers(res)
    assert "is not that trainer" in study.verdict_trainers(res, default_backend="tokenizers")
    _both(res, "Unigram_L-hf", "fertility", 1.0)
    assert "comes from `tokenizers`" in study.verdict_trainers(res)
    assert "is not that trainer" in study.verdict_trainers(res, default_backend=TrainConfig().backend)
    res["heldout"]["heldout_e3c"]["metrics"]["Unigram_L-hf"]["fertility"] = 9.0
    assert "Neither trainer" in study.verdict_trainers(res)


def test_pubmedbert_reduction_and_shared_pieces_are_computed(res):
    text = study.verdict_in_domain(res)
    assert "reached against English BERT" in text and "not reached against CamemBERTa" in text
    _both(res, "bert", "relative_length", 0.86)
    assert "not reached against English BERT" in study.verdict_in_domain(res)
    assert "consistent with" in study.verdict_shared(res)
    res["vocab"]["Unigram_L"]["shared_with_camemberta"] = 20_000
    assert "unlike" in study.verdict_shared(res)


def test_punctuation_and_spacing_findings_follow_the_numbers(res):
    assert "**supported**" in study.verdict_punct_pieces(res)
    assert "not in the plain Unigram_L vocabulary and in BPE's" in study.verdict_punct_pieces(res)
    _both(res, "Unigram_L-plain", "mean_sequence_length", 20.0)
    assert "**not supported**" in study.verdict_punct_pieces(res)
    assert "opposite" not in study.verdict_spacing_length(res)
    res["heldout"]["heldout_e3c"]["metrics"]["Unigram_N_N"]["mean_sequence_length"] = 21.0
    assert "opposite directions" in study.verdict_spacing_length(res)


def test_markdown_holds_the_verdicts_the_command_and_the_recorded_split(res):
    md = study.write_markdown(res, "make study")
    assert "## What the data say" in md and "Hence" not in md
    assert md.count("\n1. ") == 1 and "\n7. " in md
    assert "with `make study`" in md and "all but the last 42 documents" in md
    assert "not recorded in study.json" in md  # no versions nor commit in this res


def test_published_study_md_is_rebuilt_from_its_study_json():
    """docs/study.md is what write_markdown makes of docs/study/study.json, byte for byte."""
    res = json.loads((REPO / "docs" / "study" / "study.json").read_text(encoding="utf-8"))
    assert study.write_markdown(res, COMMAND) == (REPO / "docs" / "study.md").read_text(encoding="utf-8")


class _Vocab:
    def __init__(self, pieces):
        self.pieces = {p: i for i, p in enumerate(pieces)}

    def get_vocab(self):
        return self.pieces


def test_glued_pieces_are_letters_stuck_to_punctuation_most_frequent_first():
    tok = _Vocab(["▁le", "▁jours.", "(patient", "▁,", "mg/l", "▁(", "dose;", "▁3.5"])
    assert study.glued_pieces(tok) == ["▁jours.", "(patient", "dose;"]


def test_measure_records_what_the_page_reads(tiny_unigram, tiny_wordpiece, tmp_path):
    from biotok.formats import load

    lines = [l for l in SAMPLE.read_text(encoding="utf-8").splitlines() if l.strip()]
    paths = {"train": tmp_path / "train.txt", "heldout_quaero": tmp_path / "q.txt", "heldout_e3c": tmp_path / "e.txt"}
    paths["train"].write_text("\n".join(lines[:50]) + "\n", encoding="utf-8")
    paths["heldout_quaero"].write_text("\n".join(lines[50:60]) + "\n", encoding="utf-8")
    paths["heldout_e3c"].write_text("\n".join(lines[60:75]) + "\n", encoding="utf-8")
    toks = {"camemberta": load(tiny_unigram, name="camemberta"), "wp": load(tiny_wordpiece, name="wp")}
    terms = REPO / "corpora" / "terms" / "fr_biomedical.txt"
    got = study.measure(toks, ["camemberta", "wp"], paths, tmp_path / "fig", terms)
    assert got["training_text"]["train"]["lines"] == 50 and got["heldout"]["heldout_e3c"]["lines"] == 15
    assert got["vocab"]["camemberta"]["shared_with_camemberta"] is None
    assert 0 < got["vocab"]["wp"]["shared_with_camemberta"] < got["vocab"]["wp"]["size"]
    for key in study.HELDOUT:
        m = got["heldout"][key]["metrics"]
        assert m["camemberta"]["relative_length"] == 1.0 and m["wp"]["fertility"] >= 1.0
        assert (tmp_path / "fig" / key / "fertility.png").is_file()
    assert got["terms"]["tokenizers"] == ["camemberta", "wp"] and got["terms"]["terms"]
