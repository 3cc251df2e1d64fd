"""Issue 46, item 4: a closed stdout or stderr never kills a run, and a run that did die before its
first checkpoint leaves a folder that ``--resume`` continues."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from biotok.pipes import SafeStream
from biotok_train.cli import main

REPO = Path(__file__).resolve().parents[3]
MLM = ("--batch-size", "2", "--device", "cpu")


def test_mlm_piped_into_head_finishes_its_run(tmp_path, rel_data):
    out = tmp_path / "run"
    cmd = (f"{sys.executable} -m biotok_train mlm {rel_data} --steps 20 {' '.join(MLM)} --out {out} 2>&1 | head -1; "
           "exit ${PIPESTATUS[0]}")
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(proc.stdout.splitlines()) == 1  # head took its line and closed the pipe
    assert (out / "model.safetensors").is_file() and (out / "biotok_pretrain.json").is_file()


def test_a_run_killed_before_its_first_checkpoint_is_resumed(tmp_path, rel_data):
    out = tmp_path / "run"  # what a run killed at its first step leaves
    (out / "tensorboard").mkdir(parents=True)
    (out / "metrics.jsonl").write_text('{"step": 1, "loss": 6.0}\n', encoding="utf-8")
    args = ["mlm", str(rel_data), "--steps", "2", *MLM, "--out", str(out), "--no-progress"]
    r = CliRunner().invoke(main, args, prog_name="biotok-train")
    assert r.exit_code == 2 and "pass --resume" in r.stderr
    r = CliRunner().invoke(main, [*args, "--resume"], prog_name="biotok-train")
    assert r.exit_code == 0, r.output
    assert (out / "model.safetensors").is_file()
    assert '"step": 1, "loss": 6.0' not in (out / "metrics.jsonl").read_text(encoding="utf-8")


def test_a_write_to_a_closed_pipe_is_dropped_and_the_descriptor_points_to_devnull():
    read, write = os.pipe()
    os.close(read)
    stream = os.fdopen(write, "w", buffering=1)
    safe = SafeStream(stream)
    try:
        safe.write("a line\n")  # EPIPE: dropped, not raised
        safe.flush()
        assert safe.gone
        safe.write("more\n")
        safe.flush()
        os.write(write, b"a C library's write\n")  # the descriptor is /dev/null now
    finally:
        stream.close()
