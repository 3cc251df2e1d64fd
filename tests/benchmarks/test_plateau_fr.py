"""benchmarks/experiments/plateau_fr.py: a recipe over ablate whose pretraining jobs are those of
``ablation_cpu --budget`` at the same budget, its intro computed from the held-out curve, and
``--quick`` end to end (slow; needs the reference data)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from benchmarks import _common as C
from benchmarks.experiments import plateau_fr as P
from biotok_train.ablate.keys import content_keys
from biotok_train.ablate.plan import leg_names, make_plan, plan_legs


def _keys(cfg) -> dict[str, str]:
    """The content keys of ``cfg``'s plan, with the same (fake) fingerprints for every recipe."""
    legs = plan_legs(cfg, dict(zip(cfg.tokenizers, leg_names(cfg.tokenizers))))
    fp = {"corpus": "C", "base": None, "tok": {leg.vocab: leg.vocab for leg in legs}, "task": {"e3c": "K"},
          "precision": "cpu:fp32"}
    return content_keys(make_plan(cfg, legs, fp).jobs)


def test_the_plateau_search_shares_its_pretraining_with_the_ablation_at_its_budget():
    plateau = _keys(P.recipe("w/Unigram_L-8k", False, 16000, 2000))
    ablation = _keys(C.ablation_cpu_recipe("w/Unigram_L-8k", False, 16000))
    shared = {k for k in plateau if plateau[k] == ablation.get(k)}
    pretrain = {f"pretrain/tiny/{n}/p0" for n in ("camemberta-base", "Unigram_L-8k")}
    assert pretrain <= shared  # the same models: whichever runs second reuses them
    assert {f"evaluate/tiny/Unigram_L-8k/p0/k{k}" for k in range(2000, 16000, 2000)} <= shared
    assert "finetune/tiny/Unigram_L-8k/p0/e3c/f0" in shared and "finetune/tiny/Unigram_L-8k/p0/e3c/f1" not in plateau
    assert not any(k.startswith(("curve/", "floor-model/", "probe")) for k in plateau)  # pretraining and evaluation
    other = _keys(P.recipe("w/Unigram_L-8k", False, 16000, 4000))  # another curve: other pretraining jobs
    assert not pretrain & {k for k in other if other[k] == ablation.get(k)}


def _report(gaps: dict[str, list[float]], sentences=("On the held-out curve, a leaves the plateau by step 2,000.",)):
    cfg = SimpleNamespace(pretraining=SimpleNamespace(batch_size=8, seq_len=128, lr=2e-3, budget=4000),
                          curve=SimpleNamespace(steps=(2000,)))
    held = [{"arm": arm, "step": k, "left_plateau": g < 0} for arm, gs in gaps.items() for k, g in zip((2000, 4000), gs)]
    return SimpleNamespace(config=cfg, costs={"total_cpu_s": 600.0}, heldout_curve=held,
                           sentences=["At size tiny, a verdict.", *sentences])


def test_the_intro_gives_the_budget_only_when_every_arm_left_the_plateau():
    text = "\n".join(P.intro(_report({"a": [-0.1, -0.2], "b": [0.1, -0.1]})))
    assert "10 CPU-minutes in all" in text and "evaluated every 2,000 steps" in text
    assert "- On the held-out curve, a leaves the plateau by step 2,000." in text and "a verdict" not in text
    assert "`python -m benchmarks.experiments.ablation_cpu --budget 4000`" in text  # b left at 4,000
    text = "\n".join(P.intro(_report({"a": [-0.1, -0.2], "b": [0.1, 0.1]})))
    assert "--budget" not in text


@pytest.mark.slow  # a few minutes on a shared 2-core CPU
def test_quick_runs_end_to_end(tmp_path, monkeypatch):
    if not (C.DATA / "MANIFEST.md").is_file():
        pytest.skip(f"needs the reference data ({C.DATA})")
    monkeypatch.setattr(C, "CACHE", tmp_path)
    assert P.main(["--quick"]) == 0
    readme = (tmp_path / "ablation_cpu_quick" / "page" / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(f"# {P.TITLE}") and "## The held-out curve" in readme
    assert sum(line.startswith("- On the held-out curve, ") for line in readme.splitlines()) >= 2
    published = tmp_path / "ablation_cpu_quick" / "page"
    assert (published / "heldout_curve.png").is_file() and (published / "ablation.json").is_file()
    jobs = (tmp_path / "ablation_cpu_quick" / "run" / "jobs")
    assert (jobs / "evaluate" / "tiny" / "Unigram_L-8k" / "p0" / "k10.json").is_file()
    assert not (jobs / "curve").exists()
