"""benchmarks/experiments/table9_minilm.py: its own flags are checked before any work.

A bad --seeds or --steps was refused only after the pretraining text was built (13 s), and in
ablate's words (``--budget``, a list of ``--seeds``), not the flag the user typed.
"""

from __future__ import annotations

import pytest

from benchmarks import corpora as C, keyed as K
from benchmarks.experiments import table9_minilm as T


@pytest.fixture
def no_work(monkeypatch):
    """Any step of the recipe's work fails the test: a refusal must come before them."""
    def work(*a, **k):
        raise AssertionError("the recipe started its work")

    monkeypatch.setattr(C, "english_pretraining_text", work)
    for step in ("fetch_minilm", "run_ablation"):
        monkeypatch.setattr(T, step, work)
    monkeypatch.setattr(K, "trained", work)


@pytest.mark.parametrize("args, named", [
    (["--seeds", "0"], "--seeds 0"), (["--seeds", "-2"], "--seeds -2"), (["--seeds", "1000000000"], "--seeds"),
    (["--steps", "0"], "--steps 0"), (["--steps", "-5"], "--steps -5"),
    (["--steps", "100", "--curve", "250,500"], "--steps 100"), (["--curve", "a,b"], "--curve 'a,b'"),
    (["--curve", "0"], "--curve 0"), (["--vocab-size", "-1"], "--vocab-size -1"), (["--workers", "-1"], "--workers -1"),
])
def test_bad_numbers_are_refused_before_any_work_naming_the_flag(tmp_path, capsys, no_work, args, named):
    code = T.main([*args, "--base", str(tmp_path), "--work", str(tmp_path / "w"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("table9_minilm: error: ") and named in lines[0], err
    assert "--budget" not in err
    assert not (tmp_path / "w").exists() and not (tmp_path / "out").exists()
