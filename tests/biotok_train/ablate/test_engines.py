"""ablate.engines: execute and the local engine: dependency order, content keys, skip-when-done, a
failed job isolated, damaged records recomputed (toy jobs, no training)."""

from __future__ import annotations

import json

import pytest

from biotok_train.ablate.engines import DONE, FAILED, SKIPPED, run_local
from biotok_train.ablate.jobs import Job
from biotok_train.ablate.keys import content_keys, digest
from biotok_train.ablate.store import record_path
from tests.biotok_train.ablate import toyjobs as T


def _order(tmp_path) -> list[str]:
    f = tmp_path / "order.log"
    return f.read_text(encoding="utf-8").split() if f.exists() else []


def test_jobs_run_after_their_needs_and_get_their_results(tmp_path):
    jobs = T.plan()
    out = run_local(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)))
    assert _order(tmp_path) == ["a", "b", "c", "d", "e"]
    assert {k: o.result["value"] for k, o in out.items()} == {"a": 1, "b": 2, "c": 4, "d": 1, "e": 5}
    assert all(o.status == DONE for o in out.values())
    rec = json.loads(record_path(tmp_path, "c").read_text(encoding="utf-8"))
    assert rec["result"]["value"] == 4 and rec["inputs"] == content_keys(jobs)["c"]
    cost = json.loads((tmp_path / "jobs" / "c.cost.json").read_text(encoding="utf-8"))
    assert set(cost) == {"cpu_s", "wall_s", "device"} and cost["device"] == "cpu"


def test_done_jobs_are_skipped_and_a_changed_input_reruns_what_depends_on_it(tmp_path):
    jobs = T.plan()
    run_local(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)))
    (tmp_path / "order.log").unlink()
    again = run_local(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)))
    assert _order(tmp_path) == [] and again["e"].result["value"] == 5  # all done: nothing ran
    changed = [j if j.key != "c" else Job("c", T.add, ("c",), ("a", "b"), inputs=digest("new corpus")) for j in jobs]
    run_local(changed, content_keys(changed), T.ToyEnv(str(tmp_path)))
    assert _order(tmp_path) == ["c", "e"]  # c's input changed: c and what needs it, nothing else


def test_a_failed_job_is_one_line_its_dependents_skip_and_the_others_go_on(tmp_path):
    jobs = T.plan(bad=True)
    out = run_local(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)))
    assert out["b"].status == FAILED and out["b"].message == "ValueError: b cannot work second line of the error"
    assert out["c"].status == SKIPPED and "needs b" in out["c"].message
    assert out["e"].status == SKIPPED and "needs c" in out["e"].message
    assert out["d"].status == DONE and _order(tmp_path) == ["a", "d"]
    assert not record_path(tmp_path, "b").exists()
    (tmp_path / "order.log").unlink()
    fixed = T.plan()
    run_local(fixed, content_keys(fixed), T.ToyEnv(str(tmp_path)))
    assert _order(tmp_path) == ["b", "c", "e"]  # the rerun resumes: a and d were done


@pytest.mark.parametrize("damage", ["", "{\"key\": ", "[]", "{\"key\": \"other\", \"result\": 1}"])
def test_a_damaged_record_is_recomputed(tmp_path, damage, caplog):
    jobs = T.plan()
    run_local(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)))
    record_path(tmp_path, "d").write_text(damage, encoding="utf-8")
    (tmp_path / "order.log").unlink()
    out = run_local(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)))
    assert _order(tmp_path) == ["d"] and out["d"].result["value"] == 1
    assert str(record_path(tmp_path, "d")) in caplog.text


def test_a_job_started_with_other_inputs_starts_over(tmp_path):
    """A job's folders are kept for a resume when it was started with the same content key, and
    removed when it was started with other inputs."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "partial").write_text("old", encoding="utf-8")
    job = Job("w", T.add, ("w",), owns=("work",))
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "w.started").write_text(content_keys([job])["w"], encoding="utf-8")
    job_b = Job("w", T.add, ("w",), owns=("work",), inputs=digest("changed"))
    run_local([job], content_keys([job]), T.ToyEnv(str(tmp_path)))
    assert (tmp_path / "work" / "partial").exists()  # same inputs: kept (a resume)
    run_local([job_b], content_keys([job_b]), T.ToyEnv(str(tmp_path)))
    assert not (tmp_path / "work").exists()  # other inputs: started over


def test_without_ray_the_ray_engine_is_one_line(tmp_path, monkeypatch):
    import sys

    from biotok.errors import ConfigError
    from biotok_train.ablate.engines import run_ray
    from biotok_train.ablate.config import EngineConfig

    monkeypatch.setitem(sys.modules, "ray", None)  # not installed: importing it fails
    with pytest.raises(ConfigError, match=r"pip install 'biotok\[ray\]'"):
        run_ray(T.plan(), content_keys(T.plan()), T.ToyEnv(str(tmp_path)), EngineConfig(engine="ray"))
    with pytest.raises(ConfigError, match="--address needs --engine ray"):
        EngineConfig(address="auto")
    with pytest.raises(ConfigError, match="--gpus-per-job needs --engine ray or processes"):
        EngineConfig(gpus_per_job=0.5)


def test_gpus_per_job_on_a_machine_without_a_gpu_is_refused_before_ray_starts(tmp_path):
    pytest.importorskip("ray")
    import torch

    from biotok.errors import ConfigError
    from biotok_train.ablate.engines import start_ray
    from biotok_train.ablate.config import EngineConfig

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    import ray

    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process")
    with pytest.raises(ConfigError, match="no GPU"):
        start_ray(EngineConfig(engine="ray", gpus_per_job=0.5))
    assert not ray.is_initialized()
