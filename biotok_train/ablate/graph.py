"""The plan as data: :class:`Job` (key, needs, a module-level function and its plain, picklable
arguments: an engine may ship it to another process or machine), the content key of each job and
:func:`execute`, which every engine calls. A job's *content key* hashes its own inputs (contents
and settings, never a path) and its needs' content keys, so a changed input makes exactly the jobs
downstream of it stale; a job is *done* when ``OUT/jobs/KEY.json`` holds a record of that key. A
killed job's files are resumed when it was started with the same content key, removed otherwise.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from biotok_train.ablate.keys import digest
from biotok_train.ablate.store import read_costs as costs, read_record, record_path, start_over_if_stale, write_json, \
    write_record

log = logging.getLogger(__name__)

DONE, FAILED, SKIPPED = "done", "failed", "skipped"


@dataclass(frozen=True)
class Job:
    """One unit of work. ``run(env, *args, needs={key: result})`` returns a JSON value.

    ``inputs``: a digest of the job's own inputs (contents and settings, no paths); ``owns``:
    folders under OUT it writes (removed before it starts over); ``gpus``: GPUs it asks of an
    engine that schedules them; ``shares_gpu``: it asks for the engine's per-job share instead
    (``--gpus-per-job``: several small fine-tunings on one GPU)."""

    key: str
    run: Callable[..., Any]
    args: tuple = ()
    needs: tuple[str, ...] = ()
    inputs: str = ""
    owns: tuple[str, ...] = ()
    gpus: float = 0.0
    shares_gpu: bool = False


@dataclass(frozen=True)
class Outcome:
    """What happened to a job: done (its result), failed (one line) or skipped (a need did not finish).
    ``seconds``: its wall time where it ran; ``fatal``: it failed on a full, read-only or forbidden
    disk, which every other job would meet too (an engine stops there, its message naming the file)."""

    key: str
    status: str
    result: Any = None
    message: str = ""
    seconds: float = 0.0
    fatal: bool = False


def content_keys(jobs: Sequence[Job]) -> dict[str, str]:
    """Each job's content key: its key, its own inputs, and its needs' content keys (in plan order)."""
    keys: dict[str, str] = {}
    for job in jobs:
        missing = [n for n in job.needs if n not in keys]
        if missing:
            raise ValueError(f"job {job.key} needs {missing[0]}, which is not planned before it")
        keys[job.key] = digest(job.key, job.inputs, [keys[n] for n in job.needs])
    return keys


def select(jobs: Sequence[Job], patterns: Iterable[str]) -> list[Job]:
    """The jobs whose keys match one of ``patterns`` (fnmatch; ``*`` spans slashes) and every job
    they need, in plan order (all of them when ``patterns`` is empty)."""
    import fnmatch  # lazy: one use

    patterns = list(patterns)
    if not patterns:
        return list(jobs)
    by_key, wanted = {j.key: j for j in jobs}, set()
    todo = [j.key for j in jobs if any(fnmatch.fnmatchcase(j.key, p) for p in patterns)]
    while todo:
        key = todo.pop()
        if key not in wanted:
            wanted.add(key)
            todo += by_key[key].needs
    return [j for j in jobs if j.key in wanted]


def one_line(e: BaseException) -> str:
    """An exception as one line: its message (a biotok error says it all) or its type and message."""
    from biotok.errors import BiotokError  # lazy: keeps the error classes out of job pickles

    text = " ".join(str(e).split()) or type(e).__name__
    return text if isinstance(e, (BiotokError, OSError)) else f"{type(e).__name__}: {text}"


DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES)  # every job would meet them: stop


def disk_error(e: BaseException) -> OSError | None:
    """The OSError of a full, read-only or forbidden disk behind ``e`` (itself, one it wraps or was
    raised from, or one a Rust library spelled out), else None."""
    from biotok.output import as_os_error  # lazy: keeps job pickles small

    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        oe = as_os_error(e)
        if oe is not None and oe.errno in DISK_ERRORS:
            return oe
        e = e.__cause__ or e.__context__
    return None


def execute(env: Any, job: Job, content: str, *upstream: Outcome) -> Outcome:
    """Run ``job`` (unless a need did not finish), write its record and its cost; never raises for
    the job's own failure: a failed job is an :class:`Outcome` with one line (``fatal`` on a disk
    error, said by the engine that stops, not here)."""
    bad = next((u for u in upstream if u.status != DONE), None)
    if bad is not None:
        return Outcome(job.key, SKIPPED, message=f"needs {bad.key}, which {bad.status}")
    out = Path(env.out)
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        start_over_if_stale(out, job.key, job.owns, content)
        result = job.run(env, *job.args, needs={u.key: u.result for u in upstream})
        write_record(out, job.key, content, result, {"cpu_s": round(time.process_time() - cpu, 2),
                                                     "wall_s": round(time.perf_counter() - wall, 2), "device": _device(job)})
    except Exception as e:  # noqa: BLE001  (any failure of one job is reported, the others go on)
        seconds, message = time.perf_counter() - wall, one_line(e)
        where = out / job.owns[0] if job.owns else record_path(out, job.key)
        if isinstance(e, OSError) and not e.filename:  # a write that failed without naming its file
            message += f" (writing {where})"
        from biotok.errors import BiotokError, OutputWriteError  # lazy: keeps job pickles small
        from biotok.output import os_error_message  # lazy: as above

        oe = disk_error(e)
        if oe is not None or isinstance(e, OutputWriteError):  # the disk: every job would fail so, stop
            # a biotok error names its file already; an OSError names its own, else the job's
            text = one_line(e) if isinstance(e, BiotokError) else os_error_message(oe, oe.filename or where)
            return Outcome(job.key, FAILED, message=f"job {job.key}: {text}", seconds=seconds, fatal=True)
        log.error("job %s failed: %s", job.key, message)
        return Outcome(job.key, FAILED, message=message, seconds=seconds)
    return Outcome(job.key, DONE, result, seconds=time.perf_counter() - wall)


def _device(job: Job) -> str:
    """Where a job ran, in words: cpu, or the GPU this process sees (a job that used torch)."""
    import sys  # lazy: one use

    torch = sys.modules.get("torch")  # never imported here: a job that did not use torch ran on the CPU
    if job.gpus <= 0 or torch is None or not torch.cuda.is_available():
        return "cpu"
    return torch.cuda.get_device_name(0)


def pending(out: str | os.PathLike[str], jobs: Sequence[Job], keys: Mapping[str, str]) -> dict[str, Outcome]:
    """The jobs already done (their outcome, read from their records): an engine runs the others."""
    done = {}
    for job in jobs:
        ok, result = read_record(out, job.key, keys[job.key])
        fits = getattr(job.run, "fits", None)  # a job's own check of what its record holds (its inputs)
        if ok and fits is not None and not fits(*job.args, result=result):
            log.warning("%s was not made of the inputs its key names: its job is run again", record_path(out, job.key))
            ok = False
        if ok:
            done[job.key] = Outcome(job.key, DONE, result)
    return done


__all__ = ["DISK_ERRORS", "DONE", "FAILED", "SKIPPED", "Job", "Outcome", "content_keys", "costs", "digest",
           "disk_error", "execute", "pending",
           "read_record", "record_path", "select", "write_json"]
