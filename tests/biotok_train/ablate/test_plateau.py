"""ablate's honest masked-LM numbers (held-out [MASK] loss beside the unigram floor: did each arm
leave the plateau?) and the causal-LM probe as one more arm metric (--probe)."""

from __future__ import annotations

import json

import pytest

from biotok_train.ablate import leg_names, run_ablation
from biotok_train.config import AblationConfig, FinetuneConfig
from tests.biotok_train.test_ablate import _bio_task, _fake_ablation


def test_report_says_which_arm_left_the_plateau_and_adds_the_probe(tmp_path, sample_corpus, tiny_unigram,
                                                                   tiny_wordpiece, monkeypatch):
    task = _bio_task(tmp_path / "task", n_test=20)
    toks = (str(tiny_unigram), str(tiny_wordpiece))
    cfg = AblationConfig(tokenizers=toks, corpus=(str(sample_corpus),), tasks=(str(task),), seeds=(0,), n_words=20,
                         n_resamples=200, batch_size=8, seq_len=64)
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
                         tasks=(str(task),), budget=2, batch_size=2, seq_len=32, seeds=(0,),
                         finetune=FinetuneConfig(epochs=1, max_steps=2, batch_size=4), n_words=10, heldout_every=50,
                         n_resamples=100, floor=False)
    report = run_ablation(cfg, tmp_path / "out", progress=False)
    for arm in report.arms:
        h = arm.heldout_mlm
        assert h["positions"] > 0 and not h["left_plateau"] and h["loss"] > h["floor_loss"]  # 2 steps: near log V
        assert arm.pretrain_loss is None
    assert (tmp_path / "out" / "data" / "wordpiece.heldout" / "meta.json").is_file()
    assert "did not leave the plateau" in report.markdown
