"""Issue 46, item 6: thread and worker counts above the machine's cores are capped with one warning
line (``probe --threads 1024`` once ended in a MemoryError traceback under a memory limit)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from biotok_train.cli import main
from biotok_train.threads import Threads, available_cores, capped

SMALL = ("--batch-size", "2", "--seq-len", "16", "--layers", "1", "--hidden", "16", "--heads", "1",
         "--n-resamples", "20", "--steps", "2")


@pytest.fixture(scope="module")
def inputs(rel_base):
    return rel_base


def test_probe_threads_1024_is_capped_to_the_cores_with_one_warning(tmp_path, inputs):
    out = tmp_path / "p"
    r = CliRunner().invoke(main, ["probe", str(inputs / "tok"), "--corpus", str(inputs / "c.txt"), "--heldout",
                                  str(inputs / "h.txt"), *SMALL, "--threads", "1024", "--out", str(out), "-q"],
                           prog_name="biotok-train")
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    warned = [line for line in r.stderr.splitlines() if "capped at" in line]
    assert warned == [f"1024 torch threads capped at {available_cores()}, the cores this process may use"]
    assert (out / "probe.json").is_file()


def test_threads_and_workers_above_the_cores_are_capped(caplog):
    import torch

    cores = available_cores()
    before = torch.get_num_threads()
    with Threads(cores + 7):
        assert torch.get_num_threads() == cores
    assert torch.get_num_threads() == before
    assert capped(cores + 9, "workers") == cores
    assert capped(0, "workers") == 0 and capped(1, "workers") == 1


def test_a_stopped_staging_folder_is_removed_unless_it_holds_finished_runs(tmp_path, caplog):
    """Issue 46, item 8 (the unit under probe --force): nothing hidden is left for nothing."""
    import logging

    from biotok.output import settle_staging

    empty = tmp_path / ".p.probe-next"
    (empty / "runs" / "arm").mkdir(parents=True)
    (empty / "probe-config.json").write_text("{}", encoding="utf-8")
    settle_staging(empty, "runs/*/seed*.json")
    assert not empty.exists()

    kept = tmp_path / ".q.probe-next"
    (kept / "runs" / "arm").mkdir(parents=True)
    (kept / "runs" / "arm" / "seed0.json").write_text("{}", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        settle_staging(kept, "runs/*/seed*.json")
    assert kept.is_dir()
    assert [r.getMessage() for r in caplog.records if ".q.probe-next" in r.getMessage()][0].endswith(
        "the same command continues from it (remove it to discard)")
