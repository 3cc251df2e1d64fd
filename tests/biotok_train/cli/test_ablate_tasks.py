"""``ablate``'s user tasks (issue 45 item 7): named by the user (``--task NAME=PATH``, the name on
the page and nowhere in a key) and given as ``finetune`` takes them (``--task-type/--train/--dev/
--test``). The jobs are fakes (tests.biotok_train.ablate.test_run._fake_ablation); the driver, keys,
records and report are the real ones."""

from __future__ import annotations

import json
import shlex

import pytest
from click.testing import CliRunner

from biotok_train.ablate.command import ablate_options, ablation_config, command_line
from biotok_train.cli import main
from biotok_train.ablate.config import AblationConfig, Finetuning, Statistics
from tests.biotok_train.ablate.test_run import _bio_task, _fake_ablation, leg_names


@pytest.fixture()
def setup(tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece, monkeypatch):
    task = _bio_task(tmp_path / "task", n_test=10)
    toks = (str(tiny_unigram), str(tiny_wordpiece))
    cfg = AblationConfig(tokenizers=toks, corpus=(str(sample_corpus),), tasks=(str(task),),
                         finetuning=Finetuning(seeds=(0,)), statistics=Statistics(n_words=10))
    names = leg_names(toks)
    ran = _fake_ablation(monkeypatch, cfg, {("tiny", n): (lambda i, f: i % 2 == 0) for n in names},
                         {("tiny", n): (lambda i, f: False) for n in names}, {("tiny", n): [1, 0] * 5 for n in names})
    common = ["ablate", "--tokenizers", *toks, "--corpus", str(sample_corpus), "--seeds", "0", "--n-words", "10",
              "--n-resamples", "100", "--out", str(tmp_path / "out")]
    return {"task": task, "ran": ran, "common": common, "out": tmp_path / "out"}


def _run(args):
    r = CliRunner().invoke(main, args, prog_name="biotok-train")
    return r


def _page(s) -> str:
    return (s["out"] / "ablation.md").read_text(encoding="utf-8")


def test_a_task_named_by_the_user_shows_its_name_and_keeps_its_keys(setup):
    s = setup
    assert _run([*s["common"], "--task", str(s["task"]), "-q"]).exit_code == 0
    assert "| task entity_f1 |" in _page(s)  # unnamed: the folder's name
    s["ran"].clear()
    r = _run([*s["common"], "--task", f"quaero-mine={s['task']}", "-q"])
    assert r.exit_code == 0, r.output
    assert s["ran"] == []  # the name keys nothing: every job's record is kept, none runs again
    page = _page(s)
    assert "| quaero-mine entity_f1 |" in page and "| task entity_f1 |" not in page
    named = shlex.quote(f"quaero-mine={s['task']}")
    assert f"--task {named} " in page  # the command line as typed
    data = json.loads((s["out"] / "ablation.json").read_text(encoding="utf-8"))
    assert [t["name"] for t in data["tasks"].values()] == ["quaero-mine"]


def test_task_type_train_dev_test_as_finetune_takes_them(setup):
    s, t = setup, setup["task"]
    files = ["--task-type", "ner", "--train", str(t / "train.txt"), "--dev", str(t / "dev.txt"),
             "--test", str(t / "test.txt")]
    r = _run([*s["common"], *files, "-q"])
    assert r.exit_code == 0, r.output
    page = _page(s)
    assert "| task entity_f1 |" in page  # the train file's folder name, as finetune names such a task
    assert " ".join(shlex.quote(x) for x in files) in page and "--task e3c" not in page  # no default task added
    cfg = json.loads((s["out"] / "config.json").read_text(encoding="utf-8"))["recipe"]
    assert len(cfg["tasks"]) == 1


def _config_of(args: list[str]) -> AblationConfig:
    """The config ``ablate`` makes of ``args`` (its own options and reading, nothing run)."""
    import click

    got = {}
    cmd = click.command()(ablate_options(lambda **options: got.update(options)))
    r = CliRunner().invoke(cmd, args)
    assert r.exit_code == 0, r.output
    return ablation_config(**{k: v for k, v in got.items() if k not in ("out", "quiet")})


def test_the_command_line_reads_back_as_the_same_config_with_user_tasks(tmp_path):
    t = _bio_task(tmp_path / "task", n_test=4)
    args = ["--tokenizers", "x", "--corpus", "c.txt", "--task", "e3c", f"mine={t}", "--task-type", "classify",
            "--train", "a.tsv", "--dev", "b.tsv", "--test", "c.tsv", "--out", "OUT"]
    cfg = _config_of(args)
    assert cfg.tasks[:2] == ("e3c", f"mine={t}") and cfg.tasks[2].startswith('classify:["a.tsv"')
    line = command_line(cfg, "OUT")
    assert f"--task e3c {shlex.quote(f'mine={t}')} " in line
    assert "--task-type classify --train a.tsv --dev b.tsv --test c.tsv" in line
    assert _config_of(shlex.split(line)[2:]) == cfg
    only = _config_of(["--tokenizers", "x", "--corpus", "c.txt", *args[7:]])  # --task-type alone: no default task
    assert len(only.tasks) == 1 and "--task " not in command_line(only) and _config_of(shlex.split(
        command_line(only))[2:]) == only
    assert _config_of(["--tokenizers", "x", "--corpus", "c.txt", "--out", "O"]).tasks == AblationConfig(
        tokenizers=("x",), corpus=()).tasks  # neither: the default task


def test_user_task_files_errors_are_one_line(setup):
    s = setup
    r = _run([*s["common"], "--train", str(s["task"] / "train.txt")])
    assert r.exit_code == 2 and "--train/--dev/--test go with --task-type" in r.output and "Traceback" not in r.output
    r = _run([*s["common"], "--task-type", "ner", "--train", str(s["task"] / "train.txt")])
    assert r.exit_code == 2 and "--task-type needs --dev, --test" in r.output
    r = _run([*s["common"], "--task", "mine=e3c"])
    assert r.exit_code == 2 and "a registered task keeps its name" in r.output


def test_the_cost_and_the_plateau_warning_come_first_on_stderr(setup):
    """Issue 45 item 4: before the long part, the estimate per kind of job; the default budget of a
    tiny model from scratch (819,200 positions) is below the measured plateau threshold: one warning."""
    from biotok.decide import DecideConfig

    s = setup
    r = _run([*s["common"], "--task", f"mine={s['task']}"])
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("ablate: "))
    assert lines[first].startswith("ablate: 12 of 12 jobs to run (0 already done): estimated ")
    assert "2 pretrain tiny x " in lines[first] and "finetune tiny mine x " in lines[first]  # the task by its name
    warned = [line for line in lines if line.startswith("warning: 819,200 token positions per arm")]
    assert len(warned) == 1 and f"{DecideConfig().plateau_positions:,}" in warned[0]
    assert lines.index(warned[0]) < next(i for i, line in enumerate(lines) if line.startswith("job 1/12 done"))
