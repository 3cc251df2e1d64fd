"""biotok_train/ablate/estimate.py: an ablation's GPU-minutes from a measured throughput (plain numbers)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from biotok_train.ablate import estimate as E
from biotok_train.ablate.config import AblationConfig, Finetuning, Pretraining, Statistics


def test_measured_throughput_is_the_suites_positions_over_its_wall_time(tmp_path):
    suite = {"device": {"name": "NVIDIA H200"}, "steps": {"ablation": {
        "size": "small", "wall_s": 100.0, "legs": [{"tokens_seen": 30_000_000}, {"tokens_seen": 30_000_000}]}}}
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "ablation.json").write_text(json.dumps(suite), encoding="utf-8")
    t = E.measured_throughput(tmp_path / "run" / "ablation.json")
    assert t["h200_positions_per_s"] == 600_000 and t["h100_positions_per_s"] == pytest.approx(600_000 * 3.35 / 4.8)
    assert t["source"] == "run/ablation.json" and t["device"] == "NVIDIA H200" and t["positions"] == 60_000_000


def test_the_gpu_plan_counts_and_times_each_kind_of_job():
    cfg = AblationConfig(tokenizers=("a", "b"), corpus=("c.txt",), tasks=("e3c", "frenchmedmcqa"), sizes=("small",),
                         pretraining=Pretraining(budget=1000, batch_size=60, seq_len=100, seeds=(0, 1)),
                         finetuning=Finetuning(seeds=(0, 1, 2)))
    rows = E.gpu_plan(cfg, {"e3c": (300, 30, 60, 1), "frenchmedmcqa": (300, 30, 60, 5)}, 100_000)
    pre, e3c, mcq = rows
    assert [r["job"] for r in rows] == ["pretrain", "finetune e3c", "finetune frenchmedmcqa"]
    assert pre["count"] == 4 and pre["minutes"] == pytest.approx((6_000_000 / 100_000 + E.JOB_OVERHEAD_S) / 60)
    assert e3c["count"] == mcq["count"] == 2 * 2 * 3 * 2  # arms x pretraining seeds x fine-tuning seeds x (arm, floor)
    work = 200 * (cfg.finetuning.recipe.epochs * (300 + 30 / 3) + 60 / 3)  # max length capped at 2 x seq_len
    assert e3c["minutes"] == pytest.approx((work / 100_000 + E.JOB_OVERHEAD_S) / 60)
    assert mcq["minutes"] == pytest.approx((5 * work / 100_000 + E.JOB_OVERHEAD_S) / 60)
    assert all(r["fits_a_piece"] for r in rows) and pre["total_minutes"] == pytest.approx(4 * pre["minutes"])
    slow = E.gpu_plan(cfg, {}, 10_000)[0]
    assert slow["minutes"] > E.PIECE_MINUTES and not slow["fits_a_piece"]
    no_floor = E.gpu_plan(dataclasses.replace(cfg, statistics=Statistics(floor=False)), {"e3c": (300, 30, 60, 1)}, 100_000)
    assert no_floor[1]["count"] == 2 * 2 * 3


def test_task_sizes_read_each_task_and_its_sequences_per_example(shared_data):
    sizes = E.task_sizes(("e3c", "frenchmedmcqa"), str(shared_data / "corpora"))
    assert sizes["e3c"][3] == 1 and sizes["frenchmedmcqa"][3] == 5  # a question: one sequence per option
    assert all(min(s[:3]) > 0 for s in sizes.values())


def test_slot_costs_and_each_jobs_seconds_on_the_gpu_machine(tmp_path):
    """The measured costs of a slot's archives (jobs/*.cost.json) and what a slot's planner reads from them."""
    from biotok_train.ablate.store import export_records

    out = tmp_path / "run"
    for key, wall in (("prepare/a", 120.0), ("pretrain/small/a/p0", 100.0), ("evaluate/small/a/p0", 10.0),
                      ("finetune/small/a/p0/e3c/f0", 20.0), ("finetune/small/a/p0/e3c/f1", 30.0),
                      ("finetune/small/a/floor/p0/e3c/f0", 99.0)):
        (out / "jobs" / key).parent.mkdir(parents=True, exist_ok=True)
        result = {"tokens_seen": 50_000_000} if key.startswith("pretrain") else {}
        (out / "jobs" / f"{key}.json").write_text(json.dumps({"key": key, "inputs": "x", "result": result}))
        (out / "jobs" / f"{key}.cost.json").write_text(json.dumps({"cpu_s": 1, "wall_s": wall, "device": "H200"}))
    export_records(out, tmp_path / "a.tar.xz", {"piece": "a/p0", "wall_s": 300.0, "device": "NVIDIA H200"})
    c = E.slot_costs([tmp_path / "a.tar.xz"])
    assert c["prepare_s"] == {"a": 120.0} and c["pretrain_s"] == {"a": 100.0} and c["pretrain_positions"] == 50_000_000
    assert c["finetune_s"] == {"e3c": [20.0, 30.0]}  # a floor's fine-tune is not an arm's
    assert c["runs"] == [{"archive": "a.tar.xz", "wall_s": 300.0, "device": "NVIDIA H200"}]
    # 16 cores among 4 preparations: 4 workers each at 0.9 of a core
    assert E.job_seconds(c, "prepare/b", 4, 0, 16) == pytest.approx(120 / (4 * E.PREPARE_SPEEDUP_2_CORES / 2))
    assert E.job_seconds(c, "pretrain/small/b/p0", 4, 25_000_000, 16) == pytest.approx(25_000_000 / (500_000 / 4))
    assert E.job_seconds(c, "finetune/small/b/floor/p1/e3c/f2", 4, 0, 16) == 25.0  # the task's mean, a floor's too
    assert E.job_seconds(c, "floor-model/small/b/p0", 4, 0, 16) == E.FLOOR_MODEL_S
