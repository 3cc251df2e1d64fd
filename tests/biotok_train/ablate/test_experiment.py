"""ablate.experiment: a recipe's one command line. Slot arguments are checked before any work and a
refused slot leaves nothing in OUT (issue 46, item 2); --merge before the CPU side finished is one
line; data phases are keyed by their inputs. The toy-size slot workflow on real recipes:
tests/benchmarks/test_ablation_gpu_fr.py and test_ablation_cpu.py."""

from __future__ import annotations

import json

import pytest

from biotok_train.ablate import experiment as X
from biotok_train.ablate.config import AblationConfig
from tests._contract import tree_digest


@pytest.fixture
def toy(tmp_path, tiny_unigram):
    """A recipe whose ablation reads a corpus in its work folder; its page lacks a file of the CPU side."""
    root = tmp_path / "cache"
    (root / "toy" / "text").mkdir(parents=True)
    (root / "toy" / "text" / "text.txt").write_text("Le patient a de la fièvre.\n" * 40, encoding="utf-8")

    def config(work, tasks):
        return AblationConfig(tokenizers=(str(tiny_unigram),), corpus=(str(work / "text" / "text.txt"),), tasks=("e3c",))

    pages = []
    exp = X.Experiment("toy", "A toy recipe.", config, lambda *a: None, lambda *a: pages.append(a), root,
                       tmp_path / ".gpu", tmp_path / "published", ("e3c",),
                       lacks=lambda work: None if (work / "probe.json").is_file() else f"no {work / 'probe.json'}")
    return exp


def _one_line(capsys, *fragments) -> str:
    res = capsys.readouterr()
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.err and not res.out, res
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("seconds", ["nan", "1e400", "-inf", "0", "-5", "ten"])
def test_slot_seconds_must_be_finite_and_positive(toy, tmp_path, capsys, seconds):
    out = tmp_path / "out"
    out.mkdir()
    assert X.main(toy, [f"--slot={seconds}", "--archive", str(out / "slot.tar.xz")]) == 2
    _one_line(capsys, f"toy: error: --slot {seconds}: ", "a finite number above 0")
    assert not any(out.iterdir()) and not toy.work(False).joinpath("gpu").exists()


@pytest.mark.parametrize("home", ["xyz", "0123456789abcdef", "ABCDEF012345", "../../etc/pa"])
def test_a_malformed_home_is_refused(toy, tmp_path, capsys, home):
    out = tmp_path / "out"
    out.mkdir()
    assert X.main(toy, ["--slot", "540", "--home", home, "--archive", str(out / "slot.tar.xz")]) == 2
    _one_line(capsys, f"--home {home}: not the 12 hex digits")
    assert not any(out.iterdir())


def test_an_archive_where_no_file_may_be_written_is_refused(toy, tmp_path, capsys):
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    for archive, said in ((tmp_path / "a-file" / "a.tar.xz", "is not a folder this user may write to"),
                          (tmp_path / "nowhere" / "a.tar.xz", "is not a folder this user may write to"),
                          (tmp_path, "a folder; name the archive's file")):
        assert X.main(toy, ["--slot", "540", "--archive", str(archive)]) == 2
        _one_line(capsys, f"--archive {archive}", said)
    assert X.main(toy, ["--slot", "540"]) == 2
    _one_line(capsys, "--slot SECONDS needs --archive FILE")


def test_an_existing_file_at_the_archive_is_never_overwritten(toy, tmp_path, capsys):
    mine = tmp_path / "notes.txt"
    mine.write_text("my notes, not an archive\n", encoding="utf-8")
    assert X.main(toy, ["--slot", "540", "--archive", str(mine)]) == 2
    _one_line(capsys, f"--archive {mine} exists", "--force")
    # --force passes the check, but this slot is refused later (no pack): the file is still untouched
    assert X.main(toy, ["--slot", "540", "--archive", str(mine), "--force"]) == 2
    _one_line(capsys, "pack.json: run --pack where the CPU side ran")
    assert mine.read_text(encoding="utf-8") == "my notes, not an archive\n"


def test_a_refused_slot_leaves_nothing_in_out(toy, tmp_path, capsys):
    """No pack on the device, or a home.json other than the command was planned from: no slot.tar.xz."""
    out = tmp_path / "out"
    out.mkdir()
    args = ["--slot", "540", "--archive", str(out / "slot.tar.xz")]
    assert X.main(toy, args) == 2
    _one_line(capsys, "run --pack where the CPU side ran")
    (tmp_path / ".gpu" / "toy").mkdir(parents=True)
    (tmp_path / ".gpu" / "toy" / "home.json").write_text("{}\n", encoding="utf-8")
    assert X.main(toy, args + ["--home", "0123456789ab"]) == 2
    _one_line(capsys, "is not the one this command was planned from (--home 0123456789ab)")
    assert not any(out.iterdir())


def test_gpus_per_job_without_a_gpu_is_one_line(toy, tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    out = tmp_path / "out"
    out.mkdir()
    assert X.main(toy, ["--slot", "540", "--archive", str(out / "slot.tar.xz"), "--engine", "processes",
                        "--gpus-per-job", "0.25"]) == 2
    _one_line(capsys, "--gpus-per-job", "no GPU")
    assert not any(out.iterdir())


def test_merge_before_the_cpu_side_finished_is_one_line_with_advice(toy, tmp_path, capsys):
    """The CPU side stopped before the probe: nothing is merged, nothing said on stdout, exit 2."""
    work = toy.work(False)
    before = tree_digest(work)
    assert X.main(toy, ["--merge", str(tmp_path / "slot.tar.xz")]) == 2
    _one_line(capsys, "probe.json: the CPU side stopped before it; run python -m benchmarks.experiments.toy first, "
                      "then --merge again (nothing merged)")
    assert tree_digest(work) == before


def test_a_phase_is_redone_when_its_inputs_change_not_kept_because_a_file_exists(tmp_path):
    made = []
    make = lambda: made.append(1) or {"n": len(made)}  # noqa: E731
    assert X.phase(tmp_path, "m.json", ["a"], make) == {"n": 1}
    assert X.phase(tmp_path, "m.json", ["a"], make) == {"n": 1} and len(made) == 1  # the same inputs: kept
    assert X.phase(tmp_path, "m.json", ["b"], make) == {"n": 2}  # another input: made again
    (tmp_path / "old.json").write_text('{"made": "before phases.json"}', encoding="utf-8")
    assert X.phase(tmp_path, "old.json", ["c"], make) == {"made": "before phases.json"}  # taken, its inputs recorded
    assert X.phase(tmp_path, "old.json", ["d"], make) == {"n": 3}
    assert json.loads((tmp_path / X.PHASES).read_text())["m.json"] != json.loads((tmp_path / X.PHASES).read_text())["old.json"]


def test_every_recipe_gets_the_same_options(toy):
    text = X.parser(toy).format_help()
    for option in ("--quick", "--dry-run", "--slots", "--slot SECONDS", "--merge", "--pack", "--publish", "--home",
                   "--archive", "--force", "--gpus-per-job"):
        assert option in text
