"""biotok's process pools work from a plain script, guarded by ``if __name__ == "__main__":`` or not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from biotok.spawning import _guarded_lines, unguarded_main

REPO = Path(__file__).resolve().parents[2]

_COUNT = """
import json, sys
from biotok.counting import count_corpus
from biotok.spawning import unguarded_main

def count():
    where = unguarded_main()
    c = count_corpus([sys.argv[1]], workers=2)
    print(json.dumps({"unguarded": where, "counts": sorted(c.counts.items()), "lines": c.lines}))
"""

SCRIPTS = {
    "top_level": _COUNT + "\ncount()\n",
    "main_function_called_at_top_level": _COUNT + "\ndef main():\n    count()\n\nmain()\n",
    "guarded": _COUNT + '\nif __name__ == "__main__":\n    count()\n',
    "guarded_reversed": _COUNT + '\nif "__main__" == __name__:\n    print("start")\n    count()\n',
}


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, sample_corpus) -> Path:
    p = tmp_path_factory.mktemp("spawn") / "c.txt"
    p.write_text("\n".join(sample_corpus.read_text(encoding="utf-8").splitlines()[:300]) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_counts_on_workers_or_in_one_process_without_a_traceback(tmp_path, corpus, name):
    """Run as ``python script.py``: an unguarded script counts in one process (one warning line
    says why and how to get the cores back), a guarded one on the pool; same counts either way."""
    script = tmp_path / f"{name}.py"
    script.write_text(SCRIPTS[name], encoding="utf-8")
    r = _run([str(script), str(corpus)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "bootstrapping" not in r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    from biotok.counting import count_corpus

    assert got["counts"] == [list(kv) for kv in sorted(count_corpus([corpus], workers=1).counts.items())]
    if name.startswith("guarded"):
        assert got["unguarded"] is None and "one process" not in r.stderr
    else:
        assert got["unguarded"] == str(script)
        assert r.stderr.count("counting words in one process, not 2") == 1
        assert "__main__" in r.stderr


def test_python_c_and_the_running_tests_may_spawn(tmp_path, corpus):
    """No script to import again (``python -c``), or a guarded entry point (pytest here)."""
    r = _run(["-c", _COUNT + "\ncount()", str(corpus)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["unguarded"] is None
    assert unguarded_main() is None


def test_the_guard_is_read_from_the_script(tmp_path):
    p = tmp_path / "s.py"
    p.write_text(textwrap.dedent('''\
        import os
        x = 1
        if __name__ == "__main__":
            print(x)
            print(2)
        if __name__ != "__main__":
            pass
        if x == "__main__":
            pass
    '''), encoding="utf-8")
    assert _guarded_lines(str(p)) == ((4, 5),)
    bad = tmp_path / "bad.py"
    bad.write_text("if __name__ == '__main__'\n", encoding="utf-8")
    assert _guarded_lines(str(bad)) == ()


def _deaf_to_sigterm() -> None:
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _mark_then_sleep(folder: str, seconds: float) -> None:
    """Say which worker runs this (a file named after its pid), then stay busy, away from the call queue."""
    import time

    Path(folder, str(os.getpid())).touch()
    time.sleep(seconds)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_broken_pool_whose_worker_missed_the_sigterm_ends_once_its_workers_are_killed(tmp_path):
    """CPython's pool, when a worker dies, SIGTERMs the workers it knows, then waits for each: one
    that never got the signal (here: ignores it, busy in a task; in a run: started by a submit racing
    the pool's check) keeps its shutdown waiting forever, until end_broken_pool kills it."""
    import multiprocessing
    import signal
    import threading
    import time
    from concurrent.futures import ProcessPoolExecutor

    from biotok.spawning import end_broken_pool

    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"), initializer=_deaf_to_sigterm)
    end_broken_pool(pool)  # not broken: nothing killed
    for _ in range(2):  # both workers busy, so neither reads the shutdown's sentinels off the queue
        pool.submit(_mark_then_sleep, str(tmp_path), 600.0)
    for _ in range(12000):
        if len(list(tmp_path.iterdir())) == 2:
            break
        time.sleep(0.01)
    pids = sorted(int(f.name) for f in tmp_path.iterdir())
    assert len(pids) == 2 and all(p.is_alive() for p in pool._processes.values())
    dead, other = pids
    os.kill(dead, signal.SIGKILL)
    for _ in range(3000):
        if getattr(pool, "_broken", False):
            break
        time.sleep(0.01)
    assert pool._broken
    closing = threading.Thread(target=pool.shutdown, kwargs={"wait": True}, daemon=True)
    closing.start()
    closing.join(3.0)
    assert closing.is_alive() and Path(f"/proc/{other}").exists()  # waiting on the worker that ignored SIGTERM
    end_broken_pool(pool)
    closing.join(120)
    assert not closing.is_alive()
    assert not Path(f"/proc/{other}").exists() or "Z" in Path(f"/proc/{other}/stat").read_text().split(")")[1][:3]
