"""benchmarks/experiments/transfer_cpu.py: a recipe over ablate (a general model as --base, the
transfer arms fvt and random, the held-out curve without fine-tuning); --quick end to end (slow;
needs the reference data)."""

from __future__ import annotations

import json

import pytest

from benchmarks import _common as C
from benchmarks.experiments import transfer_cpu as P
from biotok_train.ablate.keys import content_keys
from biotok_train.ablate.plan import leg_names, make_plan, plan_legs


def test_the_recipe_is_the_two_transfer_arms_on_a_heldout_curve():
    cfg = P.recipe("w/general", "w/tok-clinical-8000", quick=False)
    legs = plan_legs(cfg, dict(zip(cfg.tokenizers, leg_names(cfg.tokenizers))))
    assert [leg.name for leg in legs] == ["transfer-fvt.tok-clinical-8000", "transfer-random.tok-clinical-8000"]
    fp = {"corpus": "C", "base": "B", "tok": {"tok-clinical-8000": "T"}, "task": {"e3c": "K"}, "precision": "cpu"}
    keys = content_keys(make_plan(cfg, legs, fp).jobs)
    steps = (0, 10, 25, 50, 100, 150, 200)
    assert {k for k in keys if k.startswith("evaluate/")} == {
        f"evaluate/as-base/{leg.name}/p0{f'/k{k}' if k is not None else ''}" for leg in legs for k in (*steps, None)}
    assert not any(k.startswith(("curve/", "init/", "floor")) for k in keys)  # no fine-tuning on the curve


@pytest.mark.slow  # a few minutes on a shared 2-core CPU
def test_quick_runs_end_to_end(tmp_path, monkeypatch):
    if not (C.DATA / "MANIFEST.md").is_file():
        pytest.skip(f"needs the reference data ({C.DATA})")
    monkeypatch.setattr(P, "WORK", tmp_path)
    assert P.main(["--quick"]) == 0
    published = tmp_path / "quick" / "page"  # a dry run's page
    readme = (published / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(f"# {P.TITLE}") and "General model: BERT-tiny, 4 steps" in readme
    assert "transfer-random.tok-clinical-8000's [MASK] loss against transfer-fvt.tok-clinical-8000's" in readme
    data = json.loads((published / "ablation.json").read_text(encoding="utf-8"))
    assert {(g["step"], g["candidate_arm"]) for g in data["heldout_curve_gaps"]} == {
        (k, "transfer-random.tok-clinical-8000") for k in (0, 2, 4)}
    assert (published / "heldout_curve.png").is_file() and data["curve"] == []
