"""Prompt stops of the engines (issue 40, items 3 and 5): a job failing on a full, read-only or
forbidden disk stops the engine at the first such error, naming the file (the other jobs are not
attempted, those running are stopped); SIGTERM to the driver stops its pool workers instead of
waiting for their jobs; a driver killed with SIGKILL takes its workers with it. Before: every job
was tried (one line each), SIGTERM waited for the running jobs, and the workers outlived their
driver. Toy jobs (toyjobs.py), markers instead of timings."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from biotok.errors import OutputWriteError
from biotok_train.ablate.engines import run_local, run_processes
from biotok_train.ablate.jobs import Job
from biotok_train.ablate.keys import content_keys
from biotok_train.ablate.config import EngineConfig
from tests.biotok_train.ablate import toyjobs as T

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
@pytest.mark.parametrize("engine", ["local", "processes"])
def test_a_disk_error_stops_at_the_first_one_naming_the_file(tmp_path, engine, code):
    jobs, heard = T.plan(disk=code), []
    env = T.ToyEnv(str(tmp_path))
    with pytest.raises(OutputWriteError) as e:
        if engine == "local":
            run_local(jobs, content_keys(jobs), env, on_done=heard.append)
        else:  # one worker: b is the next job to start once a is done, before d
            run_processes(jobs, content_keys(jobs), env, EngineConfig(engine="processes", workers=1),
                          on_done=heard.append)
    message = str(e.value)
    assert "\n" not in message and message.startswith("job b: cannot write ")
    assert str(tmp_path / "jobs" / "b.json") in message  # the file it was writing (the job's record)
    assert (tmp_path / "order.log").read_text(encoding="utf-8").split() == ["a"]  # d, c, e never tried
    assert [o.key for o in heard] == ["a", "b"] and heard[1].fatal
    assert not (tmp_path / "jobs" / "d.json").exists() and not (tmp_path / "jobs" / "c.json").exists()


def test_a_disk_error_stops_the_jobs_running_beside_it(tmp_path):
    """processes, two workers: 'slow' runs until a file that never comes; 'bad' fails on a full
    disk once 'slow' has started: the engine stops 'slow' too instead of waiting for it."""
    jobs = [Job("slow", T.wait_for, ("slow", "never", 300.0)),
            Job("bad", T.fail_on_disk_when, ("bad", "slow.start", errno.ENOSPC))]
    with pytest.raises(OutputWriteError, match="job bad: cannot write"):
        run_processes(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)), EngineConfig(engine="processes", workers=2))
    assert (tmp_path / "slow.start").exists() and not (tmp_path / "slow.end").exists()
    assert not _alive(int((tmp_path / "slow.start").read_text(encoding="utf-8")))


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False


DRIVER = """
import signal, sys
from biotok.errors import Terminated
from biotok_train.ablate.engines import run
from biotok_train.ablate.jobs import Job
from biotok_train.ablate.keys import content_keys
from biotok_train.ablate.config import EngineConfig
from tests.biotok_train.ablate import toyjobs as T

def on_term(signum, frame):
    raise Terminated()

if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_term)  # as the CLI does
    jobs = [Job("slow", T.wait_for, ("slow", "never", 300.0))]
    try:
        run(jobs, content_keys(jobs), T.ToyEnv(sys.argv[1]), EngineConfig(engine=sys.argv[2], workers=1))
    except Terminated:
        sys.exit(143)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("engine,sig", [
    ("processes", "SIGTERM"), ("processes", "SIGKILL"),
    pytest.param("ray", "SIGTERM", marks=pytest.mark.slow),  # a Ray instance of its own: half a minute to start
])
def test_the_workers_stop_with_their_driver(tmp_path, engine, sig):
    """SIGTERM: the driver stops its worker and exits 143 (before: processes waited for the job,
    here 300 s; Ray's own handler dumped a stack and aborted); SIGKILL: the worker notices its
    driver is gone and ends (before: it ran on)."""
    if engine == "ray":
        pytest.importorskip("ray")
    script = tmp_path / "driver.py"
    script.write_text(DRIVER, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen([sys.executable, str(script), str(out), engine], cwd=REPO, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"})
    worker = None
    try:
        while proc.poll() is None and not (out / "slow.start").exists():
            time.sleep(0.05)
        worker = int((out / "slow.start").read_text(encoding="utf-8"))
        proc.send_signal(getattr(signal, sig))
        proc.wait(timeout=120)  # a bound for a hung test, not a measure: it takes seconds
        err = proc.stderr.read() if sig == "SIGTERM" else ""  # (after SIGKILL, a live worker would hold the pipe)
        assert proc.returncode == (143 if sig == "SIGTERM" else -signal.SIGKILL), err
        if sig == "SIGTERM":
            assert "Traceback" not in err and "SIGTERM received" not in err, err
        deadline = time.monotonic() + 60  # the watchdog polls twice a second; 60 s only bounds a hung test
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(worker) and not (out / "slow.end").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
        if worker is not None and _alive(worker):
            os.kill(worker, signal.SIGKILL)
