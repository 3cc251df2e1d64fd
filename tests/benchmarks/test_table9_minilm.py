"""benchmarks/table9_minilm.py: the job order, and statistics + README from partial results."""

from __future__ import annotations

import pytest

pytest.importorskip("seqeval")

from benchmarks import table9_minilm as T  # noqa: E402

RECIPE = T.Recipe(tasks=("ncbi-disease", "bc5-chem"), seeds=(0, 1, 2), steps=1000, curve=(250, 500))


def test_plan_puts_the_most_informative_jobs_first():
    keys = [k for k, _ in T.plan(RECIPE)]
    assert len(keys) == len(set(keys))
    first = keys[:12]
    assert {k.split("/")[1] for k in first} == {"general", "floor"}
    order = [keys.index(k) for k in ("pt/continual", "pt/transfer-fvt", "pt/transfer-random",
                                     "ft/continual/ncbi-disease/step1000/s0", "ft/transfer-fvt/ncbi-disease/step1000/s2",
                                     "ft/transfer-random/bc5-chem/step1000/s0",
                                     "ft/transfer-fvt/ncbi-disease/step0/s0", "ft/continual/ncbi-disease/step250/s0")]
    assert order == sorted(order)
    assert keys[-4] == "ft/transfer-fvt/ncbi-disease/step500/s2"
    assert keys[-3:] == ["hm/continual", "hm/transfer-fvt", "hm/transfer-random"]
    # 5 arms x 2 tasks x 3 seeds, 3 pretrainings, the curve: fvt at 0, both arms at 250 and 500, the
    # held-out [MASK] numbers of the 3 pretrained arms
    assert len(keys) == 30 + 3 + 3 + 12 + 3


def _run(gold, pred, score):
    return {"score": score, "cpu_s": 60.0, "wall_s": 90.0, "gold": gold, "pred": pred}


def test_statistics_and_readme_from_partial_results():
    gold = [["B-Disease", "O"], ["O", "B-Disease"], ["B-Disease", "I-Disease"]] * 20
    bad = [["O", "O"]] * 60
    done = {}
    for seed in RECIPE.seeds:
        done[f"ft/general/ncbi-disease/step0/s{seed}"] = _run(gold, gold, 1.0)
        done[f"ft/floor/ncbi-disease/step0/s{seed}"] = _run(gold, bad, 0.0)
    done["ft/general/bc5-chem/step0/s0"] = _run(gold, gold, 1.0)
    comps = {(c["task"], c["candidate"], c["reference"]): c for c in T.comparisons(done, RECIPE)}
    g = comps[("ncbi-disease", "general", "floor")]
    assert g["difference"] == 1.0 and g["low"] > 0 and g["verdict"] == "better" and g["n_seeds"] == 3
    assert comps[("ncbi-disease", "continual", "floor")] == {"task": "ncbi-disease", "candidate": "continual",
                                                              "reference": "floor", "pending": True}
    assert comps[("bc5-chem", "general", "floor")]["pending"]  # no floor run on bc5-chem yet
    corpus = {"chars": 1000, "sources": [{"file": "f.tsv.gz", "lines": 10, "sha256": "a" * 64}], "lines_in": 10,
              "evaluated_sentences": 5, "exclusion": {"excluded": 2, "matched": 1, "kept": 8, "short_exact": 1},
              "lines": 8, "sha256": "b" * 64}
    curve = T.curve(done, RECIPE)
    assert [p["mean"] for p in curve if p["arm"] == "continual" and p["step"] == 0] == [1.0]  # general is step 0
    a = {"recipe": dict(T.dataclasses.asdict(RECIPE)), "corpus": corpus, "vocabulary": {"vocab_size": 30522},
         "base": {"name": "m", "architecture": "BertModel", "layers": 6, "hidden": 384, "parameters": 1, "vocab_size": 3,
                  "wheel": "w.whl", "wheel_sha256": "c" * 64},
         "segmentation": {"general": {"ncbi-disease": {"pieces_per_word": 1.2, "pieces_per_sentence": 30.0}}},
         "arms": T.arms_table(done, RECIPE, corpus), "comparisons": list(comps.values()), "curve": curve,
         "pending": [k for k, _ in T.plan(RECIPE) if k not in done], "jobs": len(T.plan(RECIPE))}
    text = T.readme(a)
    assert "| general | general | 1.000 ± 0.000 | 1.000 (1 seeds) |" in text
    assert "| continual | general | pending | pending |" in text
    assert "general − floor | ncbi-disease | +1.000" in text and "better" in text
    assert "1 of 8 (arm, task) pairs beat the floor" in text and "7 pending" in text
    assert f"{len(a['pending'])} of {a['jobs']} jobs still pending" in text


def test_a_job_is_claimed_once_and_a_dead_workers_lock_is_taken_over(tmp_path):
    import subprocess
    import sys

    lock = T.claim(tmp_path, "ft/general/ncbi-disease/step0/s0")
    assert lock is not None and lock.read_text() == str(T.os.getpid())
    assert T.claim(tmp_path, "ft/general/ncbi-disease/step0/s0") is None  # held by a live process
    lock.unlink()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = T.result_file(tmp_path, "pt/continual").with_suffix(".lock")
    stale.write_text(gone.stdout.strip())  # an interrupted run's lock: its process is gone
    assert T.claim(tmp_path, "pt/continual") == stale and stale.read_text() == str(T.os.getpid())


def test_fine_tuning_waits_for_the_checkpoint_it_needs(tmp_path):
    models = T.Models(tmp_path, tmp_path / "base", tmp_path / "vocab", RECIPE)
    jobs = dict(T.plan(RECIPE))
    assert T.ready(models, jobs["pt/continual"]) and T.ready(models, jobs["ft/general/ncbi-disease/step0/s0"])
    final, mid = jobs["ft/continual/ncbi-disease/step1000/s0"], jobs["ft/continual/ncbi-disease/step250/s0"]
    assert not T.ready(models, final) and not T.ready(models, mid)
    (tmp_path / "pretrain" / "continual" / "step-250").mkdir(parents=True)
    (tmp_path / "pretrain" / "continual" / "step-250" / "config.json").write_text("{}")
    assert T.ready(models, mid) and not T.ready(models, final)  # the final model exists only once pt/ is done
    assert not T.ready(models, jobs["hm/continual"])
    T.write_json(T.result_file(tmp_path, "pt/continual"), {"steps": 1000})
    assert T.ready(models, final) and T.ready(models, jobs["hm/continual"])


def test_the_plateau_sentence_follows_the_interval():
    h = {"loss": 4.2, "floor_loss": 6.3, "gap": -2.1, "gap_low": -2.2, "gap_high": -2.0, "left_plateau": True,
         "top1": 0.31, "floor_top1": 0.05, "positions": 1234}
    assert "it uses context" in T.plateau_sentence(h) and "1,234 masked positions" in T.plateau_sentence(h)
    flat = {**h, "loss": 6.31, "gap": 0.01, "gap_low": -0.01, "gap_high": 0.03, "left_plateau": False}
    assert "does not beat a model that ignores context" in T.plateau_sentence(flat)


def test_costs_add_up_the_cpu_of_every_finished_job():
    done = {"pt/continual": {"cpu_s": 900.0}, "ft/continual/ncbi-disease/step1000/s0": {"cpu_s": 100.0},
            "ft/continual/ncbi-disease/step250/s0": {"cpu_s": 110.0}, "hm/continual": {"cpu_s": 30.0},
            "ft/general/ncbi-disease/step0/s0": {"cpu_s": 95.0}}
    c = T.costs(done)
    assert c["by_arm"]["continual"] == {"pretrain_s": 900.0, "finetune_s": 210.0, "heldout_s": 30.0}
    assert list(c["by_arm"]) == ["general", "continual"] and c["total_cpu_s"] == 1235.0


def test_the_catch_up_sentence_is_computed_from_the_per_step_verdicts():
    def g(step, verdict, diff):
        return {"step": step, "verdict": verdict, "difference": diff, "low": diff - 0.02, "high": diff + 0.02,
                "n_seeds": 3}

    pts = [{"arm": "transfer-fvt", "step": s, "pretrain_cpu_min": m} for s, m in ((0, 0.0), (250, 4.1), (1000, 16.0))]
    later = T.catch_up_sentence([g(0, "worse", -0.1), g(250, "cannot tell", 0.0), g(1000, "better", 0.03)], pts, 1000)
    assert "indistinguishable from continual after 250 MLM steps (4.1 CPU-minutes" in later and "though" not in later
    never = T.catch_up_sentence([g(0, "worse", -0.1), g(1000, "worse", -0.05)], pts, 1000)
    assert "does not catch up" in never and "k = 0, 1,000" in never
    assert "pending" in T.catch_up_sentence([], pts, 1000)
