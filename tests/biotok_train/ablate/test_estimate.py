"""biotok_train/ablate/estimate.py: an ablation's GPU-minutes from a measured throughput (plain numbers)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from biotok_train.ablate import estimate as E
from biotok_train.config import AblationConfig


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
                         budget=1000, batch_size=60, seq_len=100, pretrain_seeds=(0, 1), seeds=(0, 1, 2))
    rows = E.gpu_plan(cfg, {"e3c": (300, 30, 60, 1), "frenchmedmcqa": (300, 30, 60, 5)}, 100_000)
    pre, e3c, mcq = rows
    assert [r["job"] for r in rows] == ["pretrain", "finetune e3c", "finetune frenchmedmcqa"]
    assert pre["count"] == 4 and pre["minutes"] == pytest.approx((6_000_000 / 100_000 + E.JOB_OVERHEAD_S) / 60)
    assert e3c["count"] == mcq["count"] == 2 * 2 * 3 * 2  # arms x pretraining seeds x fine-tuning seeds x (arm, floor)
    work = 200 * (cfg.finetune.epochs * (300 + 30 / 3) + 60 / 3)  # max length capped at 2 x seq_len
    assert e3c["minutes"] == pytest.approx((work / 100_000 + E.JOB_OVERHEAD_S) / 60)
    assert mcq["minutes"] == pytest.approx((5 * work / 100_000 + E.JOB_OVERHEAD_S) / 60)
    assert all(r["fits_a_piece"] for r in rows) and pre["total_minutes"] == pytest.approx(4 * pre["minutes"])
    slow = E.gpu_plan(cfg, {}, 10_000)[0]
    assert slow["minutes"] > E.PIECE_MINUTES and not slow["fits_a_piece"]
    no_floor = E.gpu_plan(dataclasses.replace(cfg, floor=False), {"e3c": (300, 30, 60, 1)}, 100_000)
    assert no_floor[1]["count"] == 2 * 2 * 3


def test_task_sizes_read_each_task_and_its_sequences_per_example(shared_data):
    sizes = E.task_sizes(("e3c", "frenchmedmcqa"), str(shared_data / "corpora"))
    assert sizes["e3c"][3] == 1 and sizes["frenchmedmcqa"][3] == 5  # a question: one sequence per option
    assert all(min(s[:3]) > 0 for s in sizes.values())
