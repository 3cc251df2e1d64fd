"""biotok.progress: a bar on a terminal, Trainer-like lines off it (nohup, SLURM, a pipe), nothing when off."""

from __future__ import annotations

import io
import re

import pytest

from biotok.progress import EVERY, EVERY_ENV, Phases, Progress, duration, every_seconds


def test_lines_off_a_terminal_name_step_fields_rate_and_eta(capsys):
    """pytest's captured stderr is no terminal: lines; ``with_fields``: only when numbers are set
    (a training loop's logged steps), one per set with ``every=0``, the last at the end with ETA 0."""
    with Progress(10, "mlm/bert", every=0, with_fields=True) as p:
        p.update(1)  # no loss yet: no line
        p.set(loss="6.812", **{"tokens/s": 5210.4})
        for step in range(2, 11):
            p.update(1)  # no line: the loop sets its numbers every 3 steps
            if step % 3 == 0:
                p.set(loss="6.5")
    lines = capsys.readouterr().err.splitlines()
    assert [l.split(" (")[0] for l in lines] == [f"mlm/bert: step {n}/10" for n in (1, 3, 6, 9, 10)]
    first, last = lines[0], lines[-1]
    assert re.fullmatch(r"mlm/bert: step 1/10 \(10%\), loss 6\.812, tokens/s 5,210, steps/s \S+, "
                        r"elapsed \d+:\d\d:\d\d, ETA \d+:\d\d:\d\d", first), first
    assert last.startswith("mlm/bert: step 10/10 (100%), loss 6.5") and last.endswith("ETA 0:00:00")


def test_lines_are_spaced_by_the_interval(capsys):
    """With the default 30 s, a fast job prints its first line and its last one, not one per step."""
    with Progress(1000, "job", every=EVERY) as p:
        for _ in range(1000):
            p.update(1)
    lines = capsys.readouterr().err.splitlines()
    assert [l.split(", ")[0] for l in lines] == ["job: step 1/1,000 (0%)", "job: step 1,000/1,000 (100%)"]


def test_disabled_prints_nothing_and_resumed_counts_from_initial(capsys):
    with Progress(5, "x", enabled=False, every=0) as p:
        p.update(3, loss=1.0)
        p.write("hidden")
    assert capsys.readouterr().err == ""
    with Progress(10, "x", initial=6, every=0) as p:
        p.update(1)
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("x: step 7/10 (70%)")


def test_a_bar_on_a_terminal_keeps_written_lines_apart(monkeypatch):
    """On a terminal, tqdm draws the bar and write() puts a line above it, never on the bar's line."""
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    with Progress(4, "bar", bar=True) as p:
        p.update(1, loss=2.0)
        p.write("TensorBoard: somewhere")
        p.update(3)
    out = err.getvalue()
    assert "\nTensorBoard: somewhere\n" in "\n" + out.replace("\r", "\n")
    assert "4/4" in out and "loss=2" in out


def test_phases_print_a_line_as_each_part_starts_and_ends(capsys):
    with Phases(["entities", "corpus"], "report") as ph:
        with ph.run("entities"):
            pass
        with ph.run("corpus"):
            pass
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "report: entities (1/2)..." and lines[2] == "report: corpus (2/2)..."
    assert re.fullmatch(r"report: corpus done in \d+\.\d s", lines[3]) and len(lines) == 4


@pytest.mark.parametrize("raw, expected", [("", EVERY), ("5", 5.0), ("0", 0.0), ("-1", EVERY), ("nan", EVERY),
                                           ("x", EVERY)])
def test_interval_from_the_environment(monkeypatch, raw, expected):
    monkeypatch.setenv(EVERY_ENV, raw)
    assert every_seconds() == expected


def test_duration():
    assert duration(0) == "0:00:00" and duration(3725.4) == "1:02:05" and duration(float("inf")) == "0:00:00"


def test_log_lines_go_above_a_running_bar(monkeypatch):
    """A library log line (e.g. 'entities: 3,000 mentions') written while a bar runs gets its own line."""
    import logging

    from biotok.progress import BarSafeHandler

    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    handler = BarSafeHandler(err)
    logger = logging.getLogger("biotok.test_progress")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        with Progress(3, "bar", bar=True) as p:
            p.update(1)
            logger.info("entities: 3,000 mentions")
            p.update(2)
        logger.info("after the bar")
    finally:
        logger.removeHandler(handler)
    screen = err.getvalue().replace("\r", "\n")
    assert "\nentities: 3,000 mentions\n" in "\n" + screen and screen.endswith("after the bar\n")
