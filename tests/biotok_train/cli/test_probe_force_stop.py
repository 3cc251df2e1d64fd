"""``biotok-train probe --force`` stopped by SIGTERM leaves the previous probe byte for byte, and
nothing hidden beside it when the new probe had finished no run (its staging folder is removed;
with finished runs it is kept, named in a warning, and the same command continues from it).

The run took OUT's lock by writing its pid into OUT/.biotok.lock (and created that file in a probe
that had none): the previous probe changed although the new one was built aside. A real process
gets a real SIGTERM here, partway through its training.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from biotok_train.cli import main
from tests._contract import tree_digest

REPO = Path(__file__).resolve().parents[3]
SMALL = ("--batch-size", "2", "--seq-len", "16", "--layers", "1", "--hidden", "16", "--heads", "1",
         "--n-resamples", "20")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, sample_lines):
    from biotok.cli import main as biotok_main

    base = tmp_path_factory.mktemp("probe-stop")
    (base / "c.txt").write_text("\n".join(sample_lines[:60]) + "\n", encoding="utf-8")
    (base / "h.txt").write_text("\n".join(sample_lines[-12:]) + "\n", encoding="utf-8")
    r = CliRunner().invoke(biotok_main, ["train", str(base / "c.txt"), "--algo", "wordpiece", "--vocab-size", "400",
                                         "--out", str(base / "tok"), "-q"])
    assert r.exit_code == 0, r.output
    return base


def probe_args(base: Path, out: Path, steps: int, *extra: str) -> list[str]:
    return ["probe", str(base / "tok"), "--corpus", str(base / "c.txt"), "--heldout", str(base / "h.txt"),
            "--steps", str(steps), *SMALL, "--out", str(out), *extra]


@pytest.mark.parametrize("before", ["probe", "probe then --force"])
def test_probe_force_stopped_by_sigterm_leaves_the_previous_probe_whole(tmp_path, inputs, before):
    out = tmp_path / "p"
    r = CliRunner().invoke(main, probe_args(inputs, out, 2, "-q"), prog_name="biotok-train")
    assert r.exit_code == 0, r.output
    if before == "probe then --force":  # the probe in OUT was built aside and swapped in
        r = CliRunner().invoke(main, probe_args(inputs, out, 3, "-q", "--force"), prog_name="biotok-train")
        assert r.exit_code == 0, r.output
    previous = tree_digest(out)
    assert ".biotok.lock" in previous

    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "biotok_train", *probe_args(inputs, out, 100_000, "--force")],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:  # the new probe has started training (OUT's lock taken, the text encoded)
            if "training" in line:
                break
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert "terminated (SIGTERM)" in err and "Traceback" not in err
    assert tree_digest(out) == previous  # every byte, the lock file included
    # issue 46: the staging folder held no finished run, so nothing hidden is left beside the probe
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]
