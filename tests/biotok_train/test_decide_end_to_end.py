"""biotok decide over what the real writers wrote: a tiny ablation (two pretraining seeds, a BIO
task of the user's own, floors) and a tiny probe, as the "From evidence to a decision" steps run
them; the ablation's arms never leave the plateau, and the decision says so."""

from __future__ import annotations

import json

from click.testing import CliRunner

from biotok.cli import main
from biotok.decide import decide
from biotok_train.config import FinetuneConfig, ProbeConfig
from biotok_train.ablate.config import AblationConfig, Finetuning, Pretraining, Statistics
from tests.biotok_train.ablate.test_run import _bio_task


def test_decision_over_a_real_tiny_ablation_and_probe(tmp_path, sample_corpus, sample_lines, tiny_wordpiece,
                                                      tiny_unigram):
    from biotok_train.ablate import run_ablation
    from biotok_train.probe import run_probe

    toks = (str(tiny_wordpiece), str(tiny_unigram))
    task = _bio_task(tmp_path / "task", n_test=8)
    cfg = AblationConfig(tokenizers=toks, corpus=(str(sample_corpus),), tasks=(str(task),),
                         pretraining=Pretraining(budget=2, batch_size=2, seq_len=32, seeds=(0, 1)),
                         finetuning=Finetuning(seeds=(0,), recipe=FinetuneConfig(epochs=1, max_steps=2, batch_size=4)),
                         statistics=Statistics(pairs="all", n_words=10, heldout_every=50, n_resamples=100))
    run_ablation(cfg, tmp_path / "ablation", progress=False)
    (tmp_path / "train.txt").write_text("\n".join(sample_lines[:200]) + "\n", encoding="utf-8")
    (tmp_path / "held.txt").write_text("\n".join(sample_lines[-20:]) + "\n", encoding="utf-8")
    pcfg = ProbeConfig(tokenizers=toks, corpus=(str(tmp_path / "train.txt"),), heldout=(str(tmp_path / "held.txt"),),
                       steps=5, batch_size=4, seq_len=32, hidden=32, heads=2, layers=1, seeds=(0, 1), fair=True,
                       pairs="all", n_resamples=100)
    run_probe(pcfg, tmp_path / "probe", progress=False)

    d = decide([tmp_path / "ablation", tmp_path / "probe"])
    abl = json.loads((tmp_path / "ablation" / "ablation.json").read_text(encoding="utf-8"))
    assert set(d.arms) == {a["name"] for a in abl["arms"]}
    mlm = [f for f in d.findings if "masked-word" in f.instrument]
    assert mlm and all("never left the plateau" in f.void for f in mlm)  # 2 steps: on the plateau
    reasons = " ".join(x.reason for x in d.discarded)
    assert "plateau" in reasons
    assert d.certainty != "firm" and len(d.settle) == 3
    # two toy steps measure start-up, not a rate: the costs come from biotok's measured CPU table
    assert "pretrain_throughput" in d.settle[0].basis and "--budget 14000 --batch-size 8 --seq-len 128" in d.settle[0].command
    out = tmp_path / "decision.html"
    run = CliRunner().invoke(main, ["decide", str(tmp_path / "ablation"), str(tmp_path / "probe"), "--out", str(out)],
                             prog_name="biotok")
    assert run.exit_code == 0, run.output
    page = out.read_text(encoding="utf-8")
    assert "<h2>Decision</h2>" in page and "never left the plateau" in page and "What would settle it" in page
