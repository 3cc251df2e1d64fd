"""The GPU slot's speed script (benchmarks.speed.gpu_suite.slot_speed): its dry run on the CPU
writes the two small files a slot brings back, and its watchdog catches a process that does not
exit after its summary line (the 2026-11-28 ELECTRA run), with the waiting threads' stacks."""

import json
import signal
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from benchmarks.speed.gpu_suite import slot_speed as S  # noqa: E402


def test_dry_run_writes_two_small_files(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.speed.gpu_suite.slot_speed", "--dry-run", "--out", str(out),
                           "--only", "mlm-eager,profile-compile"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    files = sorted(p.name for p in out.iterdir())
    assert files == ["slot_speed.json", "slot_speed.txt"]  # a slot brings back at most 8 files
    assert all((out / f).stat().st_size < 64_000 for f in files)
    r = json.loads((out / "slot_speed.json").read_text(encoding="utf-8"))
    assert r["schema"] == S.SCHEMA and r["dry_run"] and r["device"] == "cpu"
    mlm = r["runs"]["mlm-eager"]
    assert mlm["returncode"] == 0 and mlm["rows"] == 3 and mlm["tokens_per_s_median"] > 0
    assert mlm["exit_after_summary_s"] is not None and "hung" not in mlm
    prof = r["runs"]["profile-compile"]
    assert prof["returncode"] == 0 and prof["steps"] == 2 and prof["top_ops"] and "table" not in prof
    assert "aten::" in (out / "slot_speed.txt").read_text(encoding="utf-8")  # the profile table, in the text file
    assert set(r["runs"]) == {"mlm-eager", "profile-compile"}


def test_the_real_commands_compile_as_asked():
    data, run = S.Path("d"), S.Path("r")
    eager, graphs = (S.command(p, data, run, 150, False) for p in (S.PARTS[0], S.PARTS[2]))
    assert "--no-compile" in eager and "--compile" not in eager
    assert graphs[graphs.index("--compile-mode") + 1] == "reduce-overhead"
    assert graphs[graphs.index("--batch-size") + 1] == "64" and graphs[graphs.index("--size") + 1] == "small"
    assert [p.name for p in S.PARTS] == [k for k in S.ESTIMATE_S if k != "data"]


def test_a_process_that_hangs_after_its_summary_is_stopped_with_its_stacks():
    hang = [sys.executable, "-c", "import time; print('done, 5 tokens/s', flush=True); time.sleep(600)"]
    row = S.watched(hang, limit_s=120, grace_s=1.0, summary="tokens/s")
    assert row["hung"] == "after its summary line"
    assert row["returncode"] == -signal.SIGABRT
    assert "time.sleep" in row["stderr_tail"] or "<module>" in row["stderr_tail"]  # faulthandler's stack dump
    assert row["exit_after_summary_s"] is not None


def test_a_process_that_exits_is_not_stopped():
    row = S.watched([sys.executable, "-c", "print('5 tokens/s')"], limit_s=120, grace_s=60.0, summary="tokens/s")
    assert row["returncode"] == 0 and "hung" not in row and row["stdout_tail"] == ["5 tokens/s"]


def test_dry_run_times_a_fine_tune_of_the_runs_model(shared_data, tmp_path):
    """The fine-tune part takes the eager MLM run's saved model to E3C, two seeds in one process."""
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.speed.gpu_suite.slot_speed", "--dry-run", "--out", str(out),
                           "--only", "mlm-eager,finetune-e3c"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ft = json.loads((out / "slot_speed.json").read_text(encoding="utf-8"))["runs"]["finetune-e3c"]
    assert ft["returncode"] == 0 and set(ft["summary"]) == {"seed 0", "seed 1"} and ft["imports_s"] >= 0
    assert all(s["load model+tokenizer"] > 0 for s in ft["seconds"]) and ft["seconds"][0]["encode"] > 0
    assert "finetune-e3c: imports" in (out / "slot_speed.txt").read_text(encoding="utf-8")


def test_the_fine_tune_part_is_skipped_without_a_model(tmp_path):
    row = S.run_finetune(tmp_path / "mlm-eager", tmp_path, True, 60, 5)
    assert row == {"skipped": "no model in mlm-eager (its run was skipped or failed)"}
