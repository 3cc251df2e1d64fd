"""The Table 9 arms in one ablation (general, continual, several transfer methods, scratch, the
floors), the learning curve from intermediate checkpoints, and one cost record per job."""

from __future__ import annotations

import json

import pytest

from biotok_train.ablate import run_ablation
from biotok_train.config import FinetuneConfig
from biotok_train.ablate.config import AblationConfig, Base, Curve, Finetuning, Pretraining, Statistics
from tests.biotok_train.ablate.test_run import _bio_task, base_model  # noqa: F401 (a fixture)


def test_general_transfer_methods_and_the_curve(tmp_path, sample_corpus, tiny_unigram, base_model):  # noqa: F811
    task = _bio_task(tmp_path / "task", n_test=8)
    cfg = AblationConfig(tokenizers=(str(tiny_unigram),), corpus=(str(sample_corpus),), tasks=(str(task),),
                         arms=("general", "continual", "transfer", "scratch"),
                         pretraining=Pretraining(budget=2, batch_size=2, seq_len=32),
                         finetuning=Finetuning(seeds=(0, 1), recipe=FinetuneConfig(epochs=1, max_steps=2, batch_size=4)),
                         curve=Curve(steps=(1,)),
                         base=Base(model=str(base_model), transfer_methods=("fvt", "random")),
                         statistics=Statistics(n_words=10, heldout_every=50, n_resamples=100))
    out = tmp_path / "out"
    report = run_ablation(cfg, out, progress=False)
    names = [a.name for a in report.arms]
    assert names == ["general.general", "continual.general", "transfer-fvt.unigram-lower",
                     "transfer-random.unigram-lower", "scratch.unigram-lower"]
    general = report.arms[0]
    assert general.steps == 0 and general.mlm == {} and general.metrics[str(task)]["n"] == 2  # fine-tuned only
    pairs = {(c["reference_arm"], c["candidate_arm"]) for c in report.comparisons if c["task"] == str(task)}
    assert ("general.general", "continual.general") in pairs  # every arm against the first
    assert ("continual.general", "transfer-fvt.unigram-lower") in pairs  # the vocabulary at equal pretraining
    assert ("transfer-fvt.unigram-lower", "transfer-random.unigram-lower") in pairs  # what FVT buys
    # the curve: every pretrained arm at k = 0, 1 (a checkpoint) and 2 (the budget), 2 seeds each
    steps = {(p["arm"], p["step"]): p["n"] for p in report.curve}
    assert steps == {(n, k): 2 for n in names[1:] for k in (0, 1, 2)}
    assert (out / "arms" / "as-base" / "transfer-fvt.unigram-lower" / "p0" / "curve" / "step-1" / "config.json").is_file()
    at0 = {p["arm"]: p["mean"] for p in report.curve if p["step"] == 0}
    assert at0["continual.general"] == general.metrics[str(task)]["mean"]  # k = 0 of continual is the base as is
    assert at0["scratch.unigram-lower"] == report.arms[4].floors[str(task)]["mean"]  # and of scratch its floor
    assert {g["reference_arm"] for g in report.curve_gaps} == {"continual.general"}
    assert sum("On the curve, transfer-fvt.unigram-lower" in s for s in report.sentences) == 1
    md = report.markdown
    assert "## The curve" in md and "k = 1" in md and "## Costs" in md and "--curve 1" in md
    assert "--transfer-methods fvt,random" in md
    costs = json.loads((out / "costs.json").read_text(encoding="utf-8"))
    jobs = list(costs["jobs"])
    assert costs["format"] == "biotok-costs/1" and "pretrain/as-base/transfer-random.unigram-lower/p0" in jobs
    assert all(set(c) == {"cpu_s", "wall_s", "device"} for c in costs["jobs"].values())
    assert not any(k.startswith("curve/as-base/continual.general/k0") for k in jobs)  # general's runs serve
    data = json.loads(report.json_path.read_text(encoding="utf-8"))
    assert "cpu_s" not in json.dumps(data) and data["curve"] == report.curve  # costs never in ablation.json
    # the held-out curve: every pretrained arm evaluated where it starts (the base, the transferred base, the
    # random init) and at each checkpoint; the budget's point is its final evaluation
    assert {f"evaluate/as-base/{n}/p0/k{k}" for n in names[1:] for k in (0, 1)} <= set(jobs)
    held = {(p["arm"], p["step"]): p for p in report.heldout_curve}
    assert set(held) == {(n, k) for n in names[1:] for k in (0, 1, 2)}
    for n in names[1:]:
        assert held[(n, 2)]["gap"] == report.arm("as-base", n).heldout_mlm["gap"]
        assert sum(s.startswith(f"On the held-out curve, {n} ") for s in report.sentences) == 1
    fvt, rnd = held[("transfer-fvt.unigram-lower", 0)], held[("transfer-random.unigram-lower", 0)]
    assert fvt["floor_loss"] == rnd["floor_loss"] and fvt["loss"] != rnd["loss"]  # same positions, other rows
    assert data["heldout_curve"] == json.loads(json.dumps(report.heldout_curve)) and report.curve_png.is_file()
    assert "| continual.general | 0 | 0 |" in md
    # the transfer methods of one vocabulary on the same held-out positions, paired at each step
    pairs = {(g["reference_arm"], g["candidate_arm"], g["step"]) for g in report.heldout_curve_gaps}
    assert pairs == {("transfer-fvt.unigram-lower", "transfer-random.unigram-lower", k) for k in (0, 1, 2)}
    at0 = next(g for g in report.heldout_curve_gaps if g["step"] == 0)
    assert at0["difference"] == pytest.approx(rnd["loss"] - fvt["loss"]) and not at0["higher_is_better"]
    assert sum("transfer-random.unigram-lower's [MASK] loss against transfer-fvt.unigram-lower's" in s
               for s in report.sentences) == 1 and data["heldout_curve_gaps"]
