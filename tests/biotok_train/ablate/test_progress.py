"""The driver's line per finished job (issue 39 item 3): the same lines whatever the engine, since
they hang on ``on_done``, which every engine calls in the driver's process."""

from __future__ import annotations

import logging
import re

import pytest

from biotok_train.ablate import engines
from biotok_train.ablate.keys import content_keys
from biotok_train.ablate.run import _Progress
from biotok_train.ablate.config import EngineConfig
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
