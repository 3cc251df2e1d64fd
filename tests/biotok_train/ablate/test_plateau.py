"""ablate's honest masked-LM numbers (held-out [MASK] loss beside the unigram floor: did each arm
leave the plateau?) and the causal-LM probe as one more arm metric (--probe)."""

from __future__ import annotations

import json

import pytest

from biotok_train.ablate import leg_names, run_ablation
from biotok_train.config import FinetuneConfig
from biotok_train.ablate.config import AblationConfig, Curve, Finetuning, Pretraining, Statistics
from tests.biotok_train.ablate.test_run import _bio_task, _fake_ablation


def test_report_says_which_arm_left_the_plateau_and_adds_the_probe(tmp_path, sample_corpus, tiny_unigram,
                                                                   tiny_wordpiece, monkeypatch):
    task = _bio_task(tmp_path / "task", n_test=20)
    toks = (str(tiny_unigram), str(tiny_wordpiece))
    cfg = AblationConfig(tokenizers=toks, corpus=(str(sample_corpus),), tasks=(str(task),),
                         pretraining=Pretraining(batch_size=8, seq_len=64), finetuning=Finetuning(seeds=(0,)),
                         statistics=Statistics(n_words=20, n_resamples=200))
    ref, cand = leg_names(toks)
    out = tmp_path / "out"
    _fake_ablation(monkeypatch, cfg, {("tiny", n): (lambda i, f: True) for n in (ref, cand)},
                   {("tiny", n): (lambda i, f: False) for n in (ref, cand)},
                   {("tiny", n): [1, 0] * 10 for n in (ref, cand)}, left={ref: True, cand: False})

    report = run_ablation(cfg, out, progress=False)
    md = report.markdown
    assert "## Did the masked LMs leave the plateau?" in md and "pretrain loss" not in md
    assert f"{ref} left the plateau: held-out [MASK] loss 5.200 vs unigram floor 6.000" in md
    assert f"{cand} did not leave the plateau" in md and "say nothing about the vocabulary" in md
    assert "## Causal-LM probe" not in md and not report.probe_rankings

    # --probe: one GPT-2 per vocabulary on the same split; it changes no arm, so nothing is retrained
    probed = run_ablation(AblationConfig(**{**cfg.__dict__, "probe": 25}), out, progress=False)
    assert "## Causal-LM probe" in probed.markdown and (out / "probe" / "probe.md").is_file()
    assert "Fair mode" in (out / "probe" / "probe.md").read_text(encoding="utf-8")  # like for like
    for arm in probed.arms:
        assert arm.probe["bits_per_char"]["n"] == 1 and arm.probe["unigram_floor"] > 0
    assert probed.arms[0].probe["versus_reference"] is None and probed.arms[1].probe["versus_reference"]["verdict"]
    tasks = {r["task"] for r in probed.probe_rankings}
    assert tasks == {str(task), "heldout_mlm"}
    by_task = {r["task"]: r["sentence"] for r in probed.probe_rankings}
    assert "Kendall τ" in by_task["heldout_mlm"] and "2 vocabularies" in by_task["heldout_mlm"]
    assert "tied scores" in by_task[str(task)]  # both arms score the same F1: no ranking to compare
    assert by_task["heldout_mlm"] in probed.sentences
    assert "--probe 25" in probed.markdown
    data = json.loads(probed.json_path.read_text(encoding="utf-8"))
    assert data["probe_rankings"] and data["arms"][0]["probe"]["bits_per_char"]["mean"] > 0


@pytest.mark.slow  # a few minutes on a shared 2-core CPU
def test_real_arms_report_their_heldout_mask_numbers(tmp_path, sample_corpus, tiny_wordpiece, tiny_unigram):
    task = _bio_task(tmp_path / "task", n_test=8)
    cfg = AblationConfig(tokenizers=(str(tiny_wordpiece), str(tiny_unigram)), corpus=(str(sample_corpus),),
                         tasks=(str(task),), pretraining=Pretraining(budget=2, batch_size=2, seq_len=32),
                         finetuning=Finetuning(seeds=(0,), recipe=FinetuneConfig(epochs=1, max_steps=2, batch_size=4)),
                         statistics=Statistics(n_words=10, heldout_every=50, n_resamples=100, floor=False))
    report = run_ablation(cfg, tmp_path / "out", progress=False)
    for arm in report.arms:
        h = arm.heldout_mlm
        assert h["positions"] > 0 and not h["left_plateau"] and h["loss"] > h["floor_loss"]  # 2 steps: near log V
        assert arm.pretrain_loss is None
    assert (tmp_path / "out" / "data" / "wordpiece.heldout" / "meta.json").is_file()
    assert "did not leave the plateau" in report.markdown


def _rows(gap: float) -> list[list[float]]:
    """40 held-out sequences of 10 [MASK] positions whose loss sits ``gap`` nats from a unigram floor
    of 6.0 (±0.05 per sequence), top-1 0.2 against the most-frequent piece's 0.05."""
    return [[10 * (6.0 + gap) + (0.5 if i % 2 else -0.5), 60.0, 2.0, 0.5, 10.0] for i in range(40)]


def test_the_heldout_curve_without_fine_tuning_says_when_each_arm_left_the_plateau(
        tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece, monkeypatch):
    """--curve 10,20 --curve-tasks none: an evaluation per arm and checkpoint and no curve fine-tuning;
    the table, the plot and the sentences come from the evaluations' records (one arm leaves the plateau
    by step 20, the other never does)."""
    from biotok_train.ablate import jobs

    task = _bio_task(tmp_path / "task", n_test=20)
    toks = (str(tiny_unigram), str(tiny_wordpiece))
    cfg = AblationConfig(tokenizers=toks, corpus=(str(sample_corpus),), tasks=(str(task),),
                         pretraining=Pretraining(budget=30), finetuning=Finetuning(seeds=(0,)),
                         curve=Curve(steps=(10, 20), tasks=()),
                         statistics=Statistics(n_words=20, n_resamples=200, floor=False))
    ref, cand = leg_names(toks)
    gaps = {ref: {10: 0.2, 20: -0.1, 30: -0.2}, cand: {10: 0.3, 20: 0.1, 30: 0.05}}
    ran = _fake_ablation(monkeypatch, cfg, {("tiny", n): (lambda i, f: True) for n in (ref, cand)}, {},
                         {("tiny", n): [1, 0] * 10 for n in (ref, cand)})
    fake = jobs.evaluate

    def evaluate(env, vocab, rel_model, needs):  # arms/tiny/ARM/p0/model or .../curve/step-K
        res = fake(env, vocab, rel_model, needs)
        step = int(rel_model.rsplit("step-", 1)[1]) if "/curve/step-" in rel_model else cfg.pretraining.budget
        return {**res, "heldout": {"rows": _rows(gaps[rel_model.split("/")[2]][step])}}

    monkeypatch.setattr(jobs, "evaluate", evaluate)
    out = tmp_path / "out"
    report = run_ablation(cfg, out, progress=False)
    assert not any("/k10/" in r or "/k20/" in r for r in ran)  # no fine-tuning on the curve
    assert sum("/curve/step-" in r for r in ran) == 4  # an evaluation per arm and checkpoint
    costs = json.loads((out / "costs.json").read_text(encoding="utf-8"))["jobs"]
    assert {k for k in costs if k.startswith("evaluate/")} == {
        f"evaluate/tiny/{n}/p0{k}" for n in (ref, cand) for k in ("", "/k10", "/k20")}
    assert not any(k.startswith("curve/") for k in costs) and report.curve == []
    pts = {(p["arm"], p["step"]): p for p in report.heldout_curve}
    assert set(pts) == {(n, k) for n in (ref, cand) for k in (10, 20, 30)}  # scratch without a base: no k = 0
    assert [pts[(ref, k)]["left_plateau"] for k in (10, 20, 30)] == [False, True, True]
    assert pts[(ref, 20)]["gap"] == pytest.approx(-0.1) and pts[(ref, 20)]["token_positions"] == 20 * 32 * 128
    assert pts[(ref, 30)]["gap"] == report.arms[0].heldout_mlm["gap"]  # the budget's point is the final evaluation
    assert (f"On the held-out curve, {ref} leaves the plateau by step 20 (81,920 token positions; measured at "
            "k = 10, 20, 30): [MASK] loss 5.900 vs unigram floor 6.000") in " ".join(report.sentences)
    assert any(s.startswith(f"On the held-out curve, {cand} does not leave the plateau within 30 steps")
               and "+0.050 [" in s for s in report.sentences)
    assert not any(s.startswith("Every arm") for s in report.sentences)  # one arm never left
    md = report.markdown
    assert "## The held-out curve" in md and f"| {ref} | 20 | 81,920 | 5.900 | 6.000 | -0.100 [" in md
    assert "![held-out curve](heldout_curve.png)" in md and "--curve-tasks none" in md
    data = json.loads(report.json_path.read_text(encoding="utf-8"))
    assert data["heldout_curve"] == json.loads(json.dumps(report.heldout_curve))
    png = (out / "heldout_curve.png").read_bytes()
    assert report.curve_png == out / "heldout_curve.png" and b"Software" not in png

    gaps[cand][30] = -0.05  # both leave by the budget: the sentence that gives the budget
    again = run_ablation(cfg, tmp_path / "out2", progress=False)
    assert "Every arm has left the plateau by step 30 (122,880 token positions)" in " ".join(again.sentences)
