"""``biotok-train ablate``: its engine options checked before any work, a disk error that stops the
run in one line, and a line per finished job (issue 40 items 3 and 6, issue 39 item 3).

The jobs are the fakes of tests.biotok_train.ablate.test_run (through the ``setup`` fixture of
test_contract_ablate): the driver, the engine, the records and the report are the real ones.
"""

from __future__ import annotations

import errno
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests._contract import assert_contract, tree_digest
from tests.biotok_train.cli.test_contract_ablate import PROG, run, setup  # noqa: F401  (setup: a fixture)

REPO = Path(__file__).resolve().parents[3]


def _with(setup, *extra, quiet=True) -> list:
    """The setup's command with ``extra`` options (before --out), with or without -q."""
    args = [a for a in setup["args"] if a != "-q"]
    return [*args, *extra, *(["-q"] if quiet else [])]


# --- engine options: one line, exit 2, before any job and before OUT is made ---------------------
@pytest.mark.parametrize("options,fragment", [
    (["--workers", "-1"], "--workers must be between 0"),
    (["--engine", "processes", "--workers", "1000000"], "--workers must be between 0 (one per CPU) and 1024"),
    (["--engine", "processes", "--gpus-per-job", "1.5"], "0 < f <= 1"),
    (["--engine", "processes", "--gpus-per-job", "-0.5"], "0 < f <= 1"),
    (["--engine", "processes", "--gpus-per-job", "nan"], "not a finite number"),
    (["--engine", "processes", "--gpus-per-job", "inf"], "not a finite number"),
    (["--engine", "ray", "--address", "cluster"], "--address must read HOST:PORT"),
    (["--engine", "ray", "--address", "head:99999"], "--address must read HOST:PORT"),
    (["--precision", "cuda:fp16"], "--precision must read DEVICE:bf16 or DEVICE:fp32"),
    (["--only", "finetune/nothing/*"], "--only finetune/nothing/* matches no job"),
])
def test_engine_options_are_refused_before_any_work(setup, options, fragment):
    """Before: --workers 1000000 started a million processes, --gpus-per-job 1.5 was taken (up to
    64), a malformed --address reached ray.init; --only was refused after the corpus was split."""
    r = run(*_with(setup, *options))
    assert_contract(r, PROG, fragment)
    assert setup["ran"] == [] and not setup["out"].exists()


@pytest.mark.parametrize("engine", ["processes", "ray"])
def test_a_gpu_share_on_a_machine_without_gpu_is_refused_before_any_work(setup, engine):
    """Before: refused once the corpus was split and the engine started (Ray: after its start-up)."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    if engine == "ray":
        pytest.importorskip("ray")
    r = run(*_with(setup, "--engine", engine, "--gpus-per-job", "0.5"))
    assert_contract(r, PROG, "--gpus-per-job: this machine has no GPU")
    assert setup["ran"] == [] and not setup["out"].exists()


def test_only_matching_nothing_writes_nothing_in_a_finished_ablation(setup):
    """Before: OUT's recipe (config.json) and corpus split were rewritten, then --only refused."""
    assert run(*setup["args"]).exit_code == 0
    setup["ran"].clear()
    before = tree_digest(setup["out"])
    with open(setup["corpus"], "a", encoding="utf-8") as f:  # a grown corpus: the split would be redone
        f.write("Une ligne de plus pour le corpus.\n" * 20)
    r = run(*_with(setup, "--only", "nothing/*"))
    assert_contract(r, PROG, "--only nothing/* matches no job")
    assert setup["ran"] == [] and tree_digest(setup["out"]) == before


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_ray_cluster_is_one_line_at_once(setup, tmp_path):
    """Before: ray.init retried for minutes (deaf to SIGTERM). The 120 s bound is only for a hung
    test: the probe gives up within seconds."""
    pytest.importorskip("ray")
    address = f"127.0.0.1:{_closed_port()}"
    args = [str(a) for a in _with(setup, "--engine", "ray", "--address", address)]
    try:
        r = subprocess.run([sys.executable, "-m", "biotok_train", *args], cwd=REPO, capture_output=True, text=True,
                           timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    except subprocess.TimeoutExpired:
        pytest.fail(f"--address {address}: still trying after 120 s")
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"{PROG}: error: --address {address}: no Ray cluster answers there"), r.stderr
    assert not setup["out"].exists()


# --- a disk error stops the run in one line -----------------------------------------------------
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_disk_error_stops_the_ablation_in_one_line_naming_the_file(setup, monkeypatch, code):
    """Before: every other job was tried, each printing its own line, then a summary."""
    from biotok_train.ablate import jobs

    real, ran_before = jobs.evaluate, []

    def failing(env, vocab, rel_model, needs):
        if "unigram" in rel_model:
            ran_before.append(len(setup["ran"]))
            raise OSError(code, os.strerror(code))
        return real(env, vocab, rel_model, needs)

    monkeypatch.setattr(jobs, "evaluate", failing)
    r = run(*setup["args"])
    record = setup["out"] / "jobs" / "evaluate" / "tiny" / "unigram" / "p0.json"
    line = assert_contract(r, PROG, "job evaluate/tiny/unigram/p0: cannot write", record)
    assert "resumes" in line
    assert len(setup["ran"]) == ran_before[0]  # no job after it was attempted
    monkeypatch.setattr(jobs, "evaluate", real)
    setup["ran"].clear()
    assert run(*setup["args"]).exit_code == 0  # the same command resumes
    assert "arms/tiny/unigram/p0/model" in setup["ran"]


# --- a line per finished job, off a terminal too -----------------------------------------------
LINE = re.compile(r"^job (\d+)/(\d+) done: (\S+) in [\d.]+ s; (\d+) left(, ETA .+)?$")


def test_a_line_per_finished_job_and_a_summary_off_a_terminal(setup):
    """CliRunner's stderr is not a terminal (as under nohup or '| cat'). Before: one 'job KEY done'
    INFO line from the engine, without counts or ETA."""
    r = run(*_with(setup, quiet=False))
    assert r.exit_code == 0, r.output
    lines = [m.groups() for m in map(LINE.match, r.stderr.splitlines()) if m]
    keys = [g[2] for g in lines]
    total = int(lines[0][1])
    assert len(keys) == total == len(set(keys)) and total > 5
    assert [int(g[0]) for g in lines] == list(range(1, total + 1))
    assert [int(g[3]) for g in lines] == list(range(total - 1, -1, -1))
    assert all(g[4] for g in lines[:-1]) and lines[-1][4] is None  # an ETA while jobs are left
    assert re.search(rf"^{total} jobs run in [\d.]+ s \({total} done\)$", r.stderr, re.M), r.stderr
    r = run(*_with(setup, quiet=False))  # nothing left to run: no job line
    assert r.exit_code == 0 and not LINE.search(r.stderr)
    r = run(*_with(setup, "--force", quiet=True))
    assert r.exit_code == 0 and "job " not in r.stderr  # --quiet: none
