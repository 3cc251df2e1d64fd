"""benchmarks/experiments/study.py: verdicts follow the numbers, and the cache key follows the inputs."""

from __future__ import annotations

import copy

import pytest

from biotok.config import TrainConfig


@pytest.fixture(scope="module")
def study():
    from benchmarks.experiments import study

    return study


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
    return {"leaflets_mb": 1, "training_text": {"train": {"lines": 10, "mb": 1.0}},
            "heldout": {"heldout_quaero": {"lines": 5, "mb": 0.1, "metrics": m},
                        "heldout_e3c": {"lines": 5, "mb": 0.1, "metrics": copy.deepcopy(m)}},
            "vocab": vocab,
            "terms": {"tokenizers": ["camemberta"], "terms": [{"term": "x", "category": "",
                      "segmentations": {"camemberta": {"cell": "✓"}}}],
                      "one_piece_share": {"camemberta": 1.0}, "mean_pieces": {"camemberta": 1.0}}}


def _both(res: dict, name: str, key: str, value: float) -> None:
    for text in ("heldout_quaero", "heldout_e3c"):
        res["heldout"][text]["metrics"][name][key] = value


def test_every_verdict_is_supported_then_flips_with_the_numbers(study, res):
    assert all("**supported**" in v for v in study.verdicts(res)[:3])
    res["vocab"]["Unigram"]["duplicates"] = 5000  # spacing no longer reduces duplicates
    _both(res, "Unigram_L", "fertility", 1.5)  # lowercasing no longer helps
    _both(res, "Unigram_L", "relative_length", 1.1)  # in-domain no longer shorter
    flipped = study.verdicts(res)
    assert all("**not supported**" in v for v in flipped[:3])


def test_trainer_verdict_names_the_better_trainer_and_checks_the_default(study, res):
    assert "comes from `sentencepiece`" in study.verdict_trainers(res)
    assert "is not that trainer" in study.verdict_trainers(res, default_backend="tokenizers")
    _both(res, "Unigram_L-hf", "fertility", 1.0)
    assert "comes from `tokenizers`" in study.verdict_trainers(res)
    assert "is not that trainer" in study.verdict_trainers(res, default_backend=TrainConfig().backend)
    res["heldout"]["heldout_e3c"]["metrics"]["Unigram_L-hf"]["fertility"] = 9.0
    assert "Neither trainer" in study.verdict_trainers(res)


def test_pubmedbert_reduction_and_shared_pieces_are_computed(study, res):
    text = study.verdict_in_domain(res)
    assert "reached against English BERT" in text and "not reached against CamemBERTa" in text
    _both(res, "bert", "relative_length", 0.86)
    assert "not reached against English BERT" in study.verdict_in_domain(res)
    assert "consistent with" in study.verdict_shared(res)
    res["vocab"]["Unigram_L"]["shared_with_camemberta"] = 20_000
    assert "unlike" in study.verdict_shared(res)


def test_punctuation_and_spacing_findings_follow_the_numbers(study, res):
    assert "**supported**" in study.verdict_punct_pieces(res)
    assert "not in the plain Unigram_L vocabulary and in BPE's" in study.verdict_punct_pieces(res)
    _both(res, "Unigram_L-plain", "mean_sequence_length", 20.0)
    assert "**not supported**" in study.verdict_punct_pieces(res)
    assert "opposite" not in study.verdict_spacing_length(res)
    res["heldout"]["heldout_e3c"]["metrics"]["Unigram_N_N"]["mean_sequence_length"] = 21.0
    assert "opposite directions" in study.verdict_spacing_length(res)


def test_markdown_holds_the_verdicts_and_no_fixed_conclusion(study, res):
    md = study.write_markdown(res)
    assert "## What the data say" in md and "Hence" not in md
    assert md.count("\n1. ") == 1 and "\n7. " in md


def test_cache_keys_follow_the_inputs(study):
    a = study.cache_key({"recipe": 2, "leaflets_mb": 120, "sources": {"x": "ab"}})
    assert a == study.cache_key({"sources": {"x": "ab"}, "leaflets_mb": 120, "recipe": 2})  # order-free
    assert a != study.cache_key({"recipe": 2, "leaflets_mb": 40, "sources": {"x": "ab"}})
    assert a != study.cache_key({"recipe": 2, "leaflets_mb": 120, "sources": {"x": "cd"}})
    full, smoke = study.variant_configs(), study.variant_configs(0.1)
    assert full["Unigram_L"].vocab_size == 32000 and smoke["Unigram_L"].vocab_size == 3200
    keys = {n: study.cache_key(c.to_dict()) for n, c in full.items()}
    assert len(set(keys.values())) == len(keys)  # each variant is cached on its own
