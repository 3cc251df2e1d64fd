"""Toy jobs for the engine tests: module-level functions of plain data (Ray workers import them),
leaving markers in the run's folder instead of training anything."""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ToyEnv:
    out: str


def add(env: ToyEnv, name: str, needs: dict) -> dict:
    """1 + the sum of its needs' values; appends its name to OUT/order.log (the order jobs ran in)."""
    with open(Path(env.out) / "order.log", "a", encoding="utf-8") as f:
        f.write(name + "\n")
    return {"name": name, "value": 1 + sum(r["value"] for r in needs.values())}


def fail(env: ToyEnv, name: str, needs: dict) -> dict:
    raise ValueError(f"{name} cannot work\nsecond line of the error")


def die_once(env: ToyEnv, name: str, needs: dict) -> dict:
    """Kills its own process (a worker dying mid-job) the first time; works the next."""
    marker = Path(env.out) / f"{name}.died"
    if not marker.exists():
        marker.write_text("x", encoding="utf-8")
        os.kill(os.getpid(), signal.SIGKILL)
    return add(env, name, needs)


def rendezvous(env: ToyEnv, name: str, other: str, wait: float, needs: dict) -> dict:
    """Marks its start and end; while running (up to ``wait`` seconds, until it has seen the other
    one running at the same time), notes whether ``other`` was running too. Where the jobs should
    overlap the wait is long (it ends as soon as the other is seen): on a loaded 2-core machine Ray
    can take more than 12 s to start the second worker."""
    d = Path(env.out)
    (d / f"{name}.start").write_text("x", encoding="utf-8")
    seen, t0 = False, time.monotonic()
    while time.monotonic() - t0 < wait and not seen:
        seen = (d / f"{other}.start").exists() and not (d / f"{other}.end").exists()
        time.sleep(0.05)
    if seen:  # stay running until the other has seen this one too (or ended): no race on who looks last
        (d / f"{name}.saw").write_text("x", encoding="utf-8")
        t1 = time.monotonic()
        while time.monotonic() - t1 < wait and not any((d / f"{other}.{m}").exists() for m in ("saw", "end")):
            time.sleep(0.05)
    (d / f"{name}.end").write_text("x", encoding="utf-8")
    return {"name": name, "saw_other_running": seen, "value": 1}


def disk_error(env: ToyEnv, name: str, code: int, needs: dict) -> dict:
    """Fails as a full (ENOSPC) or read-only (EROFS, EACCES) disk does, naming no file."""
    raise OSError(code, os.strerror(code))


def wait_for(env: ToyEnv, name: str, path: str, wait: float, needs: dict) -> dict:
    """Marks its start, then runs until OUT/PATH exists (or ``wait`` seconds), then marks its end."""
    d = Path(env.out)
    (d / f"{name}.start").write_text(str(os.getpid()), encoding="utf-8")
    t0 = time.monotonic()
    while time.monotonic() - t0 < wait and not (d / path).exists():
        time.sleep(0.05)
    (d / f"{name}.end").write_text("x", encoding="utf-8")
    return add(env, name, needs)


def plan(kill: bool = False, bad: bool = False, disk: int = 0) -> list:
    """a; b needs a (it fails, fails on the disk with errno ``disk``, or kills its worker once);
    c needs a and b; d alone; e needs c."""
    from biotok_train.ablate.jobs import Job  # lazy: Ray workers import this module for the functions only

    if disk:
        b = Job("b", disk_error, ("b", disk), ("a",))
    else:
        b = Job("b", die_once if kill else fail if bad else add, ("b",), ("a",))
    return [Job("a", add, ("a",)), b, Job("c", add, ("c",), ("a", "b")),
            Job("d", add, ("d",)), Job("e", add, ("e",), ("c",))]


def report(out: str | os.PathLike[str], outcomes: dict) -> bytes:
    """A toy report: every job's result, sorted, as JSON bytes."""
    return json.dumps({k: o.result for k, o in sorted(outcomes.items())}, sort_keys=True).encode()


def fail_on_disk_when(env: ToyEnv, name: str, path: str, code: int, needs: dict) -> dict:
    """Waits until OUT/PATH exists (another job runs), then fails as a disk error ``code``."""
    while not (Path(env.out) / path).exists():
        time.sleep(0.05)
    return disk_error(env, name, code, needs)
