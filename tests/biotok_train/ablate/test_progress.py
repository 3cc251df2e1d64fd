"""The driver's line per finished job (issue 39 item 3): the same lines whatever the engine, since
they hang on ``on_done``, which every engine calls in the driver's process."""

from __future__ import annotations

import logging
import re

import pytest

from biotok_train.ablate import engines
from biotok_train.ablate.graph import content_keys
from biotok_train.ablate.run import _Progress
from biotok_train.ablate.config import EngineConfig, Pretraining
from tests.biotok_train.ablate import toyjobs as T

LINE = re.compile(r"^job (\d)/5 done: ([a-e]) in [\d.]+ s; (\d) left(, ETA .+)?$")


def progress_lines(caplog, engine: EngineConfig, tmp_path, plan=None) -> tuple[list, list]:
    jobs, heard = plan or T.plan(), []
    said = _Progress(len(jobs), heard.append)
    with caplog.at_level(logging.INFO, logger="biotok_train.ablate.run"):
        engines.run(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)), engine, on_done=said)
        said.summary()
    return [r.getMessage() for r in caplog.records if r.name == "biotok_train.ablate.run"], heard


@pytest.mark.parametrize("engine", ["local", "processes"])
def test_a_line_per_finished_job_then_a_summary(caplog, tmp_path, engine):
    lines, heard = progress_lines(caplog, EngineConfig(engine=engine, workers=2 if engine != "local" else 0), tmp_path)
    found = [LINE.match(line) for line in lines[:-1]]
    assert all(found) and len(found) == 5, lines
    assert sorted(m.group(2) for m in found) == list("abcde") and [m.group(1) for m in found] == list("12345")
    assert [m.group(3) for m in found] == list("43210") and found[-1].group(4) is None
    assert re.fullmatch(r"5 jobs run in [\d.]+ s \(5 done\)", lines[-1]), lines[-1]
    assert sorted(o.key for o in heard) == list("abcde")  # the caller's on_done still hears each job


def test_failed_and_skipped_jobs_are_counted_in_the_summary(caplog, tmp_path):
    lines, _ = progress_lines(caplog, EngineConfig(), tmp_path, T.plan(bad=True))
    assert [line.split(":")[1].split()[0] for line in lines[:-1]] == ["a", "d"]  # done ones only: a failure is its own line
    assert re.fullmatch(r"5 jobs run in [\d.]+ s \(2 done, 1 failed, 2 skipped\)", lines[-1]), lines[-1]


# --- the ETA per kind of job (issue 45 item 4): a 13-minute pretraining is not a 10-second fine-tune ---
from biotok_train.ablate.eta import job_kind, kind_eta  # noqa: E402
from biotok_train.ablate.graph import DONE, FAILED, Job, Outcome  # noqa: E402
from biotok_train.ablate.config import AblationConfig  # noqa: E402


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
    kinds = [job_kind(j) for j in _grid_jobs()[:6]]
    assert kinds == ["prepare", "pretrain tiny", "evaluate tiny"] + ["finetune tiny mytask"] * 3


def test_the_eta_weighs_each_job_by_the_measured_seconds_of_its_kind(caplog):
    jobs = _grid_jobs()
    costs = {"prepare/tokA": {"wall_s": 4.0}, "pretrain/tiny/tokA/p0": {"wall_s": 780.0},
             "evaluate/tiny/tokA/p0": {"wall_s": 6.0}}
    done = set(costs)
    eta = kind_eta(_cfg(), jobs, done, costs, throughput=None)
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
    eta = kind_eta(_cfg(), jobs, set(), {}, throughput=Throughput(1000.0, "a test rate"))
    # tokens_per_arm positions at 1000/s, plus the estimate's start-up of a job
    from biotok_train.ablate.estimate import JOB_OVERHEAD_S

    assert eta.seconds("pretrain tiny") == _cfg().tokens_per_arm / 1000.0 + JOB_OVERHEAD_S
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
            R._announce(cfg, kind_eta(cfg, jobs, set(), {}), len(jobs), EngineConfig())
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
    eta = kind_eta(_cfg(), jobs, set(), {}, named, throughput=None)
    assert sorted(eta.kinds.values()) == ["finetune tiny a/task", "finetune tiny b/task"]


def test_the_cpu_table_counts_a_fine_tune_by_its_sentences_length_not_the_padded_max_length():
    """A batch is padded to its longest sentence: a task of 5-word sentences costs far fewer positions than
    max_length each (issue 45: the table said 6 min 58 s for a 35 s QUAERO fine-tune)."""
    from types import SimpleNamespace

    from biotok_train.ablate.estimate import JOB_OVERHEAD_S
    from biotok_train.ablate.eta import PIECES_PER_WORD, _table

    def task(words: int):
        split = {"train": [SimpleNamespace(words=["w"] * words)] * 100, "dev": [], "test": []}
        return SimpleNamespace(split=lambda name: split[name])

    cfg = _cfg()
    short, unknown = _table(cfg, {"t": task(5)}, 1000.0, {})["finetune tiny t"], _table(
        cfg, {"t": SimpleNamespace(split=lambda n: [SimpleNamespace()] * (100 if n == "train" else 0))}, 1000.0, {})
    work = (short - JOB_OVERHEAD_S) * 1000.0 / (cfg.finetuning.recipe.epochs * 100)
    assert work == pytest.approx(PIECES_PER_WORD * 5 + 2)  # positions per sentence: its pieces and the two special tokens
    padded = (unknown["finetune tiny t"] - JOB_OVERHEAD_S) * 1000.0 / (cfg.finetuning.recipe.epochs * 100)
    assert padded == pytest.approx(cfg.finetune_config(0).max_length)  # no words to count: the padded worst case
