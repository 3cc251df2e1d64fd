"""benchmarks/experiments/study.py: the cache key follows the inputs, and --from-json rewrites
docs/study.md from docs/study/study.json alone (the verdicts: tests/biotok/report/test_study.py)."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def study():
    from benchmarks.experiments import study

    return study


def test_cache_keys_follow_the_inputs(study):
    a = study.cache_key({"recipe": 2, "leaflets_mb": 120, "sources": {"x": "ab"}})
    assert a == study.cache_key({"sources": {"x": "ab"}, "leaflets_mb": 120, "recipe": 2})  # order-free
    assert a != study.cache_key({"recipe": 2, "leaflets_mb": 40, "sources": {"x": "ab"}})
    assert a != study.cache_key({"recipe": 2, "leaflets_mb": 120, "sources": {"x": "cd"}})
    full, smoke = study.variant_configs(), study.variant_configs(0.1)
    assert full["Unigram_L"].vocab_size == 32000 and smoke["Unigram_L"].vocab_size == 3200
    keys = {n: study.cache_key(c.to_dict()) for n, c in full.items()}
    assert len(set(keys.values())) == len(keys)  # each variant is cached on its own


def test_from_json_rewrites_study_md_byte_identical(study, tmp_path, monkeypatch):
    out = tmp_path / "docs"  # not there yet: made
    monkeypatch.setattr(sys, "argv", ["study", "--from-json", str(REPO / "docs" / "study" / "study.json"),
                                      "--docs", str(out)])
    study.main()
    assert (out / "study.md").read_bytes() == (REPO / "docs" / "study.md").read_bytes()


def test_from_json_missing_is_one_line_and_exit_2(study, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["study", "--from-json", str(tmp_path / "none.json"), "--docs", str(tmp_path)])
    with pytest.raises(SystemExit) as e:
        study.main()
    assert e.value.code == 2 and "none.json not found" in capsys.readouterr().err
    assert not (tmp_path / "study.md").exists()
