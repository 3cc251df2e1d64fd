"""--engine processes: the same graph in a process pool of this machine (no Ray): the same records
as the local engine, failures per job, a worker that dies, and GPU fractions."""

from __future__ import annotations

import pytest

from biotok_train.ablate.engines import run_local, run_processes
from biotok_train.ablate.engines import DONE, FAILED, SKIPPED
from biotok_train.ablate.jobs import Job
from biotok_train.ablate.keys import content_keys
from biotok_train.ablate.config import EngineConfig
from tests.biotok_train.ablate import toyjobs as T

POOL = EngineConfig(engine="processes", workers=2)


def test_processes_run_the_graph_like_the_local_engine(tmp_path):
    jobs = T.plan()
    (tmp_path / "l").mkdir()
    (tmp_path / "p").mkdir()
    local = run_local(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path / "l")))
    pool = run_processes(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path / "p")), POOL)
    assert T.report(tmp_path / "p", pool) == T.report(tmp_path / "l", local)
    for key in "abcde":
        assert (tmp_path / "p" / "jobs" / f"{key}.json").read_bytes() == (tmp_path / "l" / "jobs" / f"{key}.json").read_bytes()
    order = (tmp_path / "p" / "order.log").read_text(encoding="utf-8").split()
    assert order.index("a") < order.index("b") < order.index("c") < order.index("e")  # needs first
    ran = (tmp_path / "p" / "order.log").read_text(encoding="utf-8")
    assert run_processes(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path / "p")), POOL)["e"].status == DONE
    assert (tmp_path / "p" / "order.log").read_text(encoding="utf-8") == ran  # done jobs are not run again


def test_a_failed_job_and_a_dead_worker_are_one_line_each(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "killed").mkdir()
    out = run_processes(T.plan(bad=True), content_keys(T.plan(bad=True)), T.ToyEnv(str(tmp_path / "bad")), POOL)
    assert out["b"].status == FAILED and out["b"].message == "ValueError: b cannot work second line of the error"
    assert (out["c"].status, out["e"].status) == (SKIPPED, SKIPPED) and out["d"].status == DONE
    jobs = T.plan(kill=True)
    first = run_processes(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path / "killed")), POOL)
    assert first["b"].status == FAILED and "\n" not in first["b"].message
    assert first["c"].status == SKIPPED and first["a"].status == DONE
    again = run_processes(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path / "killed")), POOL)
    assert all(o.status == DONE for o in again.values()) and again["e"].result["value"] == 5


@pytest.mark.parametrize("fraction,overlap", [(0.5, True), (1.0, False)])
def test_gpu_fractions_are_respected(tmp_path, fraction, overlap):
    """Two jobs asking 0.5 of the one GPU run at the same time; two asking 1.0 never do (markers, not timings)."""
    wait = 120.0 if overlap else 5.0
    jobs = [Job("x", T.rendezvous, ("x", "y", wait), gpus=1.0, shares_gpu=True),
            Job("y", T.rendezvous, ("y", "x", wait), gpus=1.0, shares_gpu=True)]
    out = run_processes(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)),
                        EngineConfig(engine="processes", workers=2, gpus_per_job=fraction), gpus=1)
    assert [out[k].result["saw_other_running"] for k in "xy"] == [overlap, overlap]


def test_more_gpus_than_the_machine_has_is_refused(tmp_path):
    from biotok.errors import ConfigError

    jobs = [Job("x", T.add, ("x",), gpus=1.0, shares_gpu=True)]
    with pytest.raises(ConfigError, match=r"--gpus-per-job 0.5: this machine has 0 GPU\(s\)"):
        run_processes(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)),
                      EngineConfig(engine="processes", gpus_per_job=0.5), gpus=0)


def test_a_need_that_is_neither_planned_nor_done_is_refused(tmp_path):
    from biotok.errors import ConfigError

    jobs = [Job("a", T.add, ("a",)), Job("b", T.add, ("b",), ("ghost",))]
    keys = {"a": "1", "b": "2"}
    with pytest.raises(ConfigError, match="job b needs a job that is neither planned nor done"):
        run_processes(jobs, keys, T.ToyEnv(str(tmp_path)), POOL)


@pytest.mark.parametrize("runner", ["local", "processes"])
def test_on_done_hears_every_job_that_settles_here_once(tmp_path, runner):
    jobs, heard = T.plan(bad=True), []
    env = T.ToyEnv(str(tmp_path))
    tmp_path.mkdir(exist_ok=True)
    if runner == "local":
        out = run_local(jobs, content_keys(jobs), env, on_done=heard.append)
    else:
        out = run_processes(jobs, content_keys(jobs), env, POOL, on_done=heard.append)
    assert sorted(o.key for o in heard) == sorted(out) and {o.key: o.status for o in heard} == {k: o.status for k, o in out.items()}
    again = []
    run_local(jobs, content_keys(jobs), env, on_done=again.append)  # the done ones are not announced again
    assert sorted(o.key for o in again) == sorted(k for k, o in out.items() if o.status != DONE)
