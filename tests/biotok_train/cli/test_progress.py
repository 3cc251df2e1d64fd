"""Long training work talks (issue 39): progress lines off a terminal, the bar on one, TensorBoard
holding what users compare, ELECTRA's losses named. The commands run as users run them:
``python -m biotok_train`` in a subprocess whose stderr is a pipe (nohup, SLURM) or a terminal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("torch")

from biotok_train.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]  # the checkout: what PYTHONPATH points the subprocess at
LINE = re.compile(r"^mlm/bert: step (\d+)/6 \(\d+%\), loss (\d+\.\d+), acc \S+, tokens/s [\d,]+, steps/s \S+, "
                  r"elapsed \d+:\d\d:\d\d, ETA \d+:\d\d:\d\d$", re.M)


@pytest.fixture(scope="module")
def data(sample_lines, tiny_wordpiece, tmp_path_factory):
    corpus = tmp_path_factory.mktemp("pcorpus") / "c.txt"
    corpus.write_text("\n".join(sample_lines[:60]) + "\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("pdata") / "data"
    r = CliRunner().invoke(main, ["prepare", str(corpus), "--tokenizer", str(tiny_wordpiece),
                                  "--seq-len", "32", "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    return out


def _env(**extra) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **extra}


def _mlm(data, out, *extra) -> list[str]:
    return [sys.executable, "-m", "biotok_train", "mlm", str(data), "--size", "tiny", "--steps", "6",
            "--batch-size", "2", "--device", "cpu", "--log-every", "2", "--out", str(out), *extra]


@pytest.fixture(scope="module")
def piped_run(data, tmp_path_factory):
    """``biotok-train mlm ... 2> log`` (stderr a pipe, as under nohup or SLURM), with a held-out
    evaluation and TensorBoard; a line at every logged step ($BIOTOK_PROGRESS_SECONDS=0)."""
    out = tmp_path_factory.mktemp("prun") / "run"
    p = subprocess.run(_mlm(data, out, "--heldout", str(data), "--report-to", "tensorboard"), capture_output=True,
                       text=True, env=_env(BIOTOK_PROGRESS_SECONDS="0"), timeout=600, cwd=out.parent)
    assert p.returncode == 0, p.stderr
    return out, p.stderr


def test_mlm_off_a_terminal_logs_step_loss_tokens_per_second_and_eta(piped_run):
    out, err = piped_run
    found = LINE.findall(err)
    assert [int(s) for s, _ in found] == [2, 4, 6], err
    rows = [json.loads(l) for l in (out / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [f"{r['loss']:.3f}" for r in rows] == [loss for _, loss in found]  # the logged rows' losses
    assert re.search(r"^held-out \[MASK\] loss: sequence [\d,]+/[\d,]+ \(100%\), .*ETA 0:00:00$", err, re.M), err
    assert "\r" not in err  # lines, no bar redrawn in a log file


def test_mlm_off_a_terminal_with_the_default_interval_still_logs_first_and_last(data, tmp_path):
    p = subprocess.run(_mlm(data, tmp_path / "run", "--report-to", "none"), capture_output=True, text=True,
                       env=_env(), timeout=600)
    assert p.returncode == 0, p.stderr
    assert [int(s) for s, _ in LINE.findall(p.stderr)] == [2, 6], p.stderr  # first logged step, then the end
    quiet = subprocess.run(_mlm(data, tmp_path / "q", "--report-to", "none", "--no-progress"), capture_output=True,
                           text=True, env=_env(), timeout=600)
    assert quiet.returncode == 0 and not LINE.search(quiet.stderr)


def test_on_a_terminal_the_tensorboard_line_is_not_on_the_bar(data, tmp_path):
    """The 'TensorBoard:' line printed onto the bar's line; now it comes first, on a line of its own."""
    pty = pytest.importorskip("pty")
    import select

    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a terminal 120 columns wide
    p = subprocess.Popen(_mlm(data, tmp_path / "run", "--report-to", "tensorboard"), stdout=subprocess.DEVNULL,
                         stderr=slave, env=_env(), close_fds=True)
    os.close(slave)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 600)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
        assert p.wait(timeout=600) == 0
    screen = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    line = next(l for l in screen.split("\n") if "TensorBoard:" in l)
    assert line.startswith("TensorBoard:") and "%|" not in line and "\r" not in line, repr(line)
    assert "6/6" in screen and "%|" in screen  # a tqdm bar was drawn, not lines


def test_tensorboard_holds_heldout_loss_and_floors_and_no_counters(piped_run):
    """Read back with tensorboard's EventAccumulator: the held-out [MASK] loss beside its floors,
    the training curves, and no counter drawn as a curve."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out, _ = piped_run
    tags: dict[str, list] = {}
    for events in sorted((out / "tensorboard").glob("events.out.tfevents.*")):
        acc = EventAccumulator(str(events))
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            tags.setdefault(tag, []).extend((e.step, e.value) for e in acc.Scalars(tag))
    held = json.loads((out / "heldout.json").read_text(encoding="utf-8"))
    for tag, key in (("heldout/mask_loss", "loss"), ("heldout/unigram_floor_loss", "floor_loss"),
                     ("heldout/gap_to_floor", "gap"), ("heldout/top1", "top1"),
                     ("heldout/most_frequent_top1", "floor_top1")):
        assert [(s, round(v, 4)) for s, v in tags[tag]] == [(6, round(held[key], 4))], tag
    assert [s for s, _ in tags["train/loss"]] == [2, 4, 6] and "train/tokens_per_s" in tags
    assert not {"train/tokens", "train/steps_averaged", "train/time", "train/graphs"} & set(tags)


def test_electra_summary_names_its_two_losses(data, tmp_path):
    r = CliRunner().invoke(main, ["electra", str(data), "--steps", "2", "--batch-size", "2", "--device", "cpu",
                                  "--out", str(tmp_path / "e"), "--no-progress", "--report-to", "none"])
    assert r.exit_code == 0, r.output
    m = re.search(r"training losses of the last 2 steps: generator MLM loss (\d+\.\d+) \+ 50 x discriminator RTD "
                  r"loss (\d+\.\d+) = weighted total (\d+\.\d+)", r.stdout)
    assert m, r.stdout
    mlm, rtd, total = map(float, m.groups())
    assert total == pytest.approx(mlm + 50 * rtd, abs=0.06)
    row = json.loads((tmp_path / "e" / "metrics.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert f"{row['loss']:.3f}" == m.group(3) and f"{row['rtd_loss']:.3f}" == m.group(2)


def test_finetune_off_a_terminal_logs_step_lines(data, tmp_path, monkeypatch):
    """finetune's bar becomes lines off a terminal (CliRunner's stderr): step, loss, dev score, ETA."""
    model = tmp_path / "m"
    r = CliRunner().invoke(main, ["mlm", str(data), "--steps", "1", "--batch-size", "2", "--device", "cpu",
                                  "--out", str(model), "--no-progress", "--report-to", "none"])
    assert r.exit_code == 0, r.output
    sent = "Le\tO\npatient\tO\nprésente\tO\nune\tO\nfièvre\tB-SIGN\nélevée\tI-SIGN\n.\tO\n\n"
    for split, n in (("train", 8), ("dev", 2), ("test", 2)):
        (tmp_path / f"{split}.tsv").write_text(sent * n, encoding="utf-8")
    monkeypatch.setenv("BIOTOK_PROGRESS_SECONDS", "0")
    r = CliRunner().invoke(main, ["finetune", str(model), "--task-type", "ner", "--train", str(tmp_path / "train.tsv"),
                                  "--dev", str(tmp_path / "dev.tsv"), "--test", str(tmp_path / "test.tsv"),
                                  "--epochs", "2", "--batch-size", "4", "--report-to", "none"])
    assert r.exit_code == 0, r.output
    steps = re.findall(r"seed \d+: step (\d)/4 \(\d+%\), loss \d\.\d{4}(?:, dev \S+ \d\.\d{4})?, steps/s \S+, "
                       r"elapsed \S+, ETA \S+$", r.stderr, re.M)
    assert steps == ["1", "2", "3", "4"], r.stderr
    assert re.search(r"step 3/4 .*, dev \S+ \d\.\d{4}", r.stderr)  # the dev score of epoch 1 shown after it
