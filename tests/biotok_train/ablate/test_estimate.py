"""biotok_train/ablate/estimate.py: an ablation's GPU-minutes from a measured throughput (plain numbers), and
its ETA per kind of job on this machine."""

from __future__ import annotations

import dataclasses
import json
import logging

import pytest

from biotok_train.ablate import estimate as E
from biotok_train.ablate.engines import DONE, FAILED, Outcome
from biotok_train.ablate.jobs import Job
from biotok_train.ablate.run import _Progress
from biotok_train.ablate.config import AblationConfig, Finetuning, Pretraining, Statistics
from tests.biotok_train.ablate import toyjobs as T


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


# --- the ETA per kind of job (issue 45 item 4): a 13-minute pretraining is not a 10-second fine-tune ---


def _grid_jobs() -> list:
    """Two arms: a preparation, a pretraining, a held-out evaluation and three fine-tunes each."""
    jobs = []
    for arm in ("tokA", "tokB"):
        jobs += [Job(f"prepare/{arm}", T.add), Job(f"pretrain/tiny/{arm}/p0", T.add),
                 Job(f"evaluate/tiny/{arm}/p0", T.add)]
        jobs += [Job(f"finetune/tiny/{arm}/p0/file-c56c7923/f{f}", T.add, ("mytask", "model", f)) for f in range(3)]
    return jobs


def _cfg() -> AblationConfig:
    return AblationConfig(tokenizers=("tokA", "tokB"), corpus=("c.txt",), tasks=("mytask",))


def test_job_kinds_name_the_size_and_the_task():
    kinds = [E.job_kind(j) for j in _grid_jobs()[:6]]
    assert kinds == ["prepare", "pretrain tiny", "evaluate tiny"] + ["finetune tiny mytask"] * 3


def test_the_eta_weighs_each_job_by_the_measured_seconds_of_its_kind(caplog):
    jobs = _grid_jobs()
    costs = {"prepare/tokA": {"wall_s": 4.0}, "pretrain/tiny/tokA/p0": {"wall_s": 780.0},
             "evaluate/tiny/tokA/p0": {"wall_s": 6.0}}
    done = set(costs)
    eta = E.kind_eta(_cfg(), jobs, done, costs, throughput=None)
    left_keys = [j.key for j in jobs if j.key not in done]
    said = _Progress(len(left_keys), None, eta)
    with caplog.at_level(logging.INFO, logger="biotok_train.ablate.run"):
        said(Outcome("finetune/tiny/tokA/p0/file-c56c7923/f0", DONE, seconds=10.0))
    line = caplog.records[-1].getMessage()
    # left: prepare tokB (4 s), pretrain tokB (780 s), evaluate tokB (6 s), 5 fine-tunes at 10 s: 840 s = 14 min,
    # where counting jobs (10 s for each of the 8 left) would say 1 min 20 s
    assert line.endswith("; 8 left, ETA 14 min 00 s"), line
    said(Outcome("prepare/tokB", FAILED, message="x"))  # a failed job is no longer waited for, nor measured
    assert eta.remaining() == (836.0, 0) and eta.measured["prepare"] == [4.0]


def test_a_kind_not_yet_measured_is_said_so_and_the_cpu_table_fills_a_tiny_pretraining():
    from biotok.cost import Throughput

    jobs = _grid_jobs()
    eta = E.kind_eta(_cfg(), jobs, set(), {}, throughput=Throughput(1000.0, "a test rate"))
    # tokens_per_arm positions at 1000/s, plus the estimate's start-up of a job
    assert eta.seconds("pretrain tiny") == _cfg().tokens_per_arm / 1000.0 + E.JOB_OVERHEAD_S
    assert eta.seconds("evaluate tiny") is None and eta.remaining()[1] == 4 + 6  # prepare, evaluate, fine-tunes
    line = eta.plan(len(jobs), lambda s: f"{s:.0f}s")
    assert line.startswith("ablate: 12 of 12 jobs to run (0 already done): estimated ")
    assert "plus 10 jobs of kinds not yet measured" in line and "2 pretrain tiny x " in line
    assert "(CPU table)" in line and "a test rate" in line and "2 evaluate tiny (not yet measured)" in line


def test_a_from_scratch_budget_on_the_plateau_gets_one_warning_line(caplog, monkeypatch):
    from biotok.decide import DecideConfig
    from biotok_train.ablate import run as R
    from biotok_train.ablate.config import EngineConfig

    monkeypatch.setattr(R, "_has_cuda", lambda: False)
    jobs = _grid_jobs()
    threshold = f"{DecideConfig().plateau_positions:,}"
    for budget, warned in ((100, True), (DecideConfig().plateau_positions // (32 * 128) + 1, False)):
        cfg = AblationConfig(tokenizers=("tokA", "tokB"), corpus=("c.txt",), tasks=("mytask",),
                             pretraining=Pretraining(budget=budget, batch_size=32, seq_len=128))
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="biotok_train.ablate.run"):
            R._announce(cfg, E.kind_eta(cfg, jobs, set(), {}), len(jobs), EngineConfig())
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == int(warned), warnings
        if warned:
            assert threshold in warnings[0] and f"{cfg.tokens_per_arm:,} token positions per arm" in warnings[0]
        assert caplog.records[0].getMessage().startswith("ablate: 12 of 12 jobs to run")


def test_two_tasks_of_one_name_are_two_kinds():
    from types import SimpleNamespace

    jobs = [Job(f"finetune/tiny/tokA/p0/task-{i}/f0", T.add, (t, "model", 0))  # the key's folder: the name + a hash
            for i, t in enumerate(("a/task", "b/task"))]
    data = SimpleNamespace(name="task", split=lambda name: ["example"] * 4)  # both folders named "task"
    named = {"a/task": data, "b/task": data}
    eta = E.kind_eta(_cfg(), jobs, set(), {}, named, throughput=None)
    assert sorted(eta.kinds.values()) == ["finetune tiny a/task", "finetune tiny b/task"]


def test_the_cpu_table_counts_a_fine_tune_by_its_sentences_length_not_the_padded_max_length():
    """A batch is padded to its longest sentence: a task of 5-word sentences costs far fewer positions than
    max_length each (issue 45: the table said 6 min 58 s for a 35 s QUAERO fine-tune)."""
    from types import SimpleNamespace


    def task(words: int):
        split = {"train": [SimpleNamespace(words=["w"] * words)] * 100, "dev": [], "test": []}
        return SimpleNamespace(split=lambda name: split[name])

    cfg = _cfg()
    short, unknown = E._table(cfg, {"t": task(5)}, 1000.0, {})["finetune tiny t"], E._table(
        cfg, {"t": SimpleNamespace(split=lambda n: [SimpleNamespace()] * (100 if n == "train" else 0))}, 1000.0, {})
    work = (short - E.JOB_OVERHEAD_S) * 1000.0 / (cfg.finetuning.recipe.epochs * 100)
    assert work == pytest.approx(E.PIECES_PER_WORD * 5 + 2)  # positions per sentence: its pieces and the two special tokens
    padded = (unknown["finetune tiny t"] - E.JOB_OVERHEAD_S) * 1000.0 / (cfg.finetuning.recipe.epochs * 100)
    assert padded == pytest.approx(cfg.finetune_config(0).max_length)  # no words to count: the padded worst case
