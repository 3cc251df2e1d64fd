"""Who runs a plan's jobs: :func:`run_local` (in this process, in plan order, the default),
:func:`run_ray` (Ray Core tasks, on a local instance or a running cluster) or :func:`run_processes`
(a process pool of this machine: a bare GPU machine whose 64 MiB of luggage cannot hold Ray's wheel).
Each skips the jobs already done (:func:`pending`), runs the others with :func:`execute` (the same
records whichever engine) and returns every job's outcome: a failed job is one line, the
jobs that need it are skipped, the others go on. Stops are prompt: a full, read-only or forbidden
disk (:class:`~biotok.errors.OutputWriteError`), SIGTERM or Ctrl-C stops the running jobs too (a
pretraining saves a checkpoint first), and a pool worker dies with its driver.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from biotok.errors import ConfigError, OutputWriteError, Terminated
from biotok.pipes import keep_safe_std_streams
from biotok.spawning import end_broken_pool, exit_with_parent, spawn_context
from biotok_train.ablate.jobs import Job
from biotok_train.ablate.store import read_record, record_path, start_over_if_stale, write_record
from biotok_train.ablate.config import EngineConfig
from biotok_train.threads import Threads, capped, set_threads

log = logging.getLogger(__name__)

DONE, FAILED, SKIPPED = "done", "failed", "skipped"


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


OnDone = Optional[Callable[[Outcome], None]]  # called in the driver's process as each job run here settles


def run(jobs: Sequence[Job], keys: Mapping[str, str], env: Any, engine: EngineConfig,
        on_done: OnDone = None) -> dict[str, Outcome]:
    """Every job's outcome, run by ``engine``; ``on_done(outcome)`` in this process after each job
    that ran (or was skipped) here settles, whatever the engine (jobs already done are not announced)."""
    runner = {"ray": run_ray, "processes": run_processes}.get(engine.engine, run_local)
    return runner(jobs, keys, env, engine, on_done=on_done)


def check(engine: EngineConfig) -> None:
    """What ``engine`` needs, checked before any work: Ray installed and its --address answering
    (within a few seconds, not Ray's minutes of retries), and a GPU to share with --gpus-per-job."""
    if engine.engine == "ray":
        _ray()
        if engine.address and engine.address != "auto":
            _probe(engine.address)
    if engine.gpus_per_job > 0 and not engine.address:  # a local instance or pool shares this machine's GPUs
        _gpu_count()


PROBE_SECONDS = 5.0  # how long --address may take to accept a connection


def _probe(address: str, timeout: float = PROBE_SECONDS) -> None:
    """A TCP connection to a Ray cluster's HOST:PORT (ray://HOST:PORT): a cluster that is not there
    is one ConfigError now, instead of ray.init retrying for minutes and deaf to SIGTERM."""
    from biotok_train.ablate.config import split_address  # lazy: one use

    host, port = split_address(address)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as e:
        why = "no answer within %g s" % timeout if isinstance(e, socket.timeout) else (e.strerror or str(e))
        raise ConfigError(f"--address {address}: no Ray cluster answers there ({why}); start one "
                          "(ray start --head) or leave --address out for a local instance") from None


def run_local(jobs: Sequence[Job], keys: Mapping[str, str], env: Any, engine: EngineConfig = EngineConfig(),
              on_done: OnDone = None) -> dict[str, Outcome]:
    """In this process, in plan order; ``engine.workers`` torch threads (0: torch's default), the
    process's count restored after (a notebook that ran an ablation keeps its threads)."""
    outcomes = pending(env.out, jobs, keys)
    with Threads(engine.workers):
        for job in jobs:
            if job.key not in outcomes:
                outcomes[job.key] = execute(env, job, keys[job.key], *(outcomes[n] for n in job.needs))
                _say(outcomes[job.key], on_done)
    return outcomes


def _say(o: Outcome, on_done: OnDone = None) -> None:
    """Tell ``on_done``; a job failed on the disk stops the engine here (one line naming the file)."""
    if on_done is not None:
        on_done(o)
    if o.fatal:
        raise OutputWriteError(f"{o.message}; the ablation stopped there (the same command resumes)")
    if o.status == SKIPPED:
        log.warning("job %s skipped: %s", o.key, o.message)
    elif o.status == DONE:
        log.debug("job %s done", o.key)


def _ray():
    try:
        import ray  # lazy: an optional dependency (biotok[ray])
    except ImportError:
        raise ConfigError("--engine ray needs Ray: pip install 'biotok[ray]'") from None
    return ray


def _remote_execute(threads: int, env: Any, job: Job, content: str, *upstream: Outcome) -> Outcome:
    """A Ray task: :func:`execute` with torch limited to this worker's share of the CPUs."""
    set_threads(threads)
    return execute(env, job, content, *upstream)


def start_ray(engine: EngineConfig):
    """Connect to ``engine.address`` or start a local instance of ``engine.workers`` CPUs (and, for
    tests, one logical GPU when ``gpus_per_job`` is set on a machine without one)."""
    ray = _ray()
    if ray.is_initialized():
        return ray
    with _keep_signal_handlers():
        _init_ray(ray, engine)
    return ray


class _keep_signal_handlers:
    """Ray's start-up puts its own SIGTERM and SIGINT handlers in place of this process's (a stack
    dump, then abort): put back the ones there were (the CLI's: one line, a prompt stop)."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __enter__(self) -> None:
        main = threading.current_thread() is threading.main_thread()
        self.saved = {s: signal.getsignal(s) for s in self.SIGNALS} if main else {}

    def __exit__(self, *exc) -> None:
        for s, handler in self.saved.items():
            if handler is not None:
                signal.signal(s, handler)


def _init_ray(ray, engine: EngineConfig) -> None:
    """ray.init: to ``engine.address`` (probed first), else a local instance."""
    if engine.address:
        if engine.address != "auto":
            _probe(engine.address)
        try:
            ray.init(address=engine.address, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as e:  # 'auto' with no cluster on this node...
            first = next((x.strip() for x in str(e).splitlines() if x.strip()), type(e).__name__)
            raise ConfigError(f"--address {engine.address}: Ray could not connect ({first[:200]})") from None
    else:
        gpus = _gpu_count() if engine.gpus_per_job > 0 else None  # the GPUs a local instance offers
        ray.init(num_cpus=capped(engine.workers, "workers") or os.cpu_count(), num_gpus=gpus, include_dashboard=False,
                 log_to_driver=False, runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})


def run_ray(jobs: Sequence[Job], keys: Mapping[str, str], env: Any, engine: EngineConfig,
            on_done: OnDone = None) -> dict[str, Outcome]:
    """Ray Core tasks, one per job not done, each submitted once its needs are settled (their
    outcomes passed as values, as the process engine does: no task waits on another inside Ray, so
    a stop cancels only tasks queued or running); each takes one CPU and, for jobs that ask,
    ``gpus_per_job`` GPUs. Results are collected with ``ray.wait`` as they finish, so a failure is
    said at once."""
    ray = start_ray(engine)
    have = ray.cluster_resources().get("GPU", 0)
    if engine.gpus_per_job > have:
        raise ConfigError(f"--gpus-per-job {engine.gpus_per_job:g}: the Ray cluster has {have:g} GPU(s)")
    task = ray.remote(_remote_execute)
    outcomes: dict[str, Any] = dict(pending(env.out, jobs, keys))
    waiting, by_ref = [job for job in jobs if job.key not in outcomes], {}

    def submit() -> None:  # every waiting job whose needs are settled, in plan order
        for job in [j for j in waiting if all(n in outcomes for n in j.needs)]:
            waiting.remove(job)
            options = {"num_cpus": 1, "max_retries": 0}
            if share := gpu_share(job, engine.gpus_per_job, engine.pretrain_gpus):  # only on a machine with GPUs
                options["num_gpus"] = share
            upstream = [outcomes[n] for n in job.needs]
            by_ref[task.options(name=job.key, **options).remote(1, env, job, keys[job.key], *upstream)] = job.key

    heard = _HeardSigterm()
    try:
        with heard:
            submit()
            _wait_ray(ray, by_ref, outcomes, on_done, submit)
    except BaseException as e:  # SIGTERM, Ctrl-C or a full disk: the tasks still running or queued stop too
        # None waits on another inside Ray: cancelling a need that Ray resolves for a dependent hands the
        # dependent to a worker whose reply then aborts this driver (Ray 2.60's "Tried to complete task that
        # was not pending" check), which cancelling dependents first did not always avoid.
        for ref in reversed(list(by_ref)):
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001  (already finished)
                pass
        if heard.yes and isinstance(e, KeyboardInterrupt) and not isinstance(e, Terminated):
            raise Terminated() from None  # Ray's wait turns any signal into a KeyboardInterrupt
        raise
    return {job.key: _settled(job, outcomes) for job in jobs}


def _wait_ray(ray, by_ref: dict, outcomes: dict, on_done: OnDone, submit: Callable[[], None]) -> None:
    """Collect the tasks' outcomes as they finish (``by_ref`` shrinks as they do), submitting the jobs
    each one settles the last need of."""
    while by_ref:
        ready, _ = ray.wait(list(by_ref), num_returns=1, timeout=1.0)  # a second at most: signals are heard
        if not ready:
            continue
        key = by_ref.pop(ready[0])
        try:
            outcomes[key] = ray.get(ready[0])
        except Exception as e:  # noqa: BLE001  (a worker died, or Ray failed the task)
            outcomes[key] = _lost(key, e)
            log.error("job %s failed: %s", key, outcomes[key].message)
        _say(outcomes[key], on_done)
        submit()


class _HeardSigterm:
    """Notes a SIGTERM (then calls the handler there was) while in effect, in the main thread."""

    def __init__(self) -> None:
        self.yes, self.previous = False, None

    def __enter__(self) -> "_HeardSigterm":
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGTERM)
            if callable(previous):
                self.previous = previous
                signal.signal(signal.SIGTERM, self._heard)
        return self

    def _heard(self, signum, frame) -> None:
        self.yes = True
        self.previous(signum, frame)

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)


def run_processes(jobs: Sequence[Job], keys: Mapping[str, str], env: Any, engine: EngineConfig,
                  gpus: int | None = None, on_done: OnDone = None) -> dict[str, Outcome]:
    """Jobs in ``engine.workers`` processes of this machine (0: one per CPU; each with one torch
    thread, as Ray's), each started once its needs are done. GPUs as Ray counts them: a job that
    asks takes ``gpus_per_job`` of one if it shares (fine-tunings), else ``job.gpus`` (a
    pretraining), and starts only when that much is free of the ``gpus`` this machine has (None:
    count them). A worker that dies fails its job; the pool is started again for the others."""
    import concurrent.futures as cf

    ask, gpus = _gpu_asks(jobs, engine, gpus)
    outcomes: dict[str, Outcome] = dict(pending(env.out, jobs, keys))
    todo = [j for j in jobs if j.key not in outcomes]
    workers = capped(engine.workers, "workers") or os.cpu_count() or 1
    while todo:
        running: dict[Any, Job] = {}
        with cf.ProcessPoolExecutor(workers, mp_context=spawn_context(), initializer=_worker_start,
                                    initargs=(1, os.getpid())) as pool, _stopping(pool):
            while todo or running:
                busy, before = sum(ask[j.key] for j in running.values()), len(todo)
                for job in list(todo):
                    if any(n not in outcomes for n in job.needs) or len(running) >= workers:
                        continue
                    upstream = [outcomes[n] for n in job.needs]
                    if any(u.status != DONE for u in upstream):  # settled here: nothing to run
                        outcomes[job.key] = execute(env, job, keys[job.key], *upstream)
                    elif busy + ask[job.key] <= gpus + 1e-9:
                        running[pool.submit(execute, env, job, keys[job.key], *upstream)] = job
                        busy += ask[job.key]
                    else:
                        continue
                    todo.remove(job)
                    if job.key in outcomes:
                        _say(outcomes[job.key], on_done)
                if not running:
                    if todo and len(todo) == before:  # nothing runs and nothing can start: a need never planned
                        raise ConfigError(f"job {todo[0].key} needs a job that is neither planned nor done")
                    continue
                finished, _ = cf.wait(running, timeout=1.0, return_when=cf.FIRST_COMPLETED)
                broken = False
                for f in finished:
                    job = running.pop(f)
                    try:
                        outcomes[job.key] = f.result()
                    except Exception as e:  # noqa: BLE001  (its worker died: the pool is broken)
                        outcomes[job.key], broken = _lost(job.key, e), True
                        log.error("job %s failed: %s", job.key, outcomes[job.key].message)
                    _say(outcomes[job.key], on_done)
                if broken:  # the jobs that were running with it failed too: said, and the pool started again
                    for f, job in running.items():
                        outcomes[job.key] = _lost(job.key, f.exception() or RuntimeError("pool broken"))
                        _say(outcomes[job.key], on_done)
                    running.clear()
                    end_broken_pool(pool)  # the pool's own shutdown could otherwise wait forever
                    break
    return {job.key: _settled(job, outcomes) for job in jobs}


WORKER_GRACE = 10.0  # seconds a stopped worker has to end (a pretraining saves its checkpoint) before SIGKILL


def _worker_start(threads: int, driver: int) -> None:
    """A pool worker: ``threads`` torch threads; Ctrl-C is the driver's to handle (it stops the
    workers with SIGTERM, which a pretraining turns into a checkpoint); and it dies with the driver."""
    set_threads(threads)
    keep_safe_std_streams()  # the driver's stderr closed (| head): a job's progress line never fails it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a pretraining listens again while it runs (loop._Stop)
    exit_with_parent(driver, every=0.5)


class _stopping:
    """Around a process pool: when the driver stops (SIGTERM, Ctrl-C, a full disk...), its workers
    are sent SIGTERM and given :data:`WORKER_GRACE` seconds, then killed, before the pool closes
    (its own exit would wait for every running job to finish)."""

    def __init__(self, pool) -> None:
        self.pool = pool

    def __enter__(self) -> "_stopping":
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if kind is None:
            return
        procs = [p for p in list((getattr(self.pool, "_processes", None) or {}).values()) if p.is_alive()]
        for p in procs:
            p.terminate()
        deadline = time.monotonic() + WORKER_GRACE
        for p in procs:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(1.0)
        self.pool.shutdown(wait=False, cancel_futures=True)


def _gpu_count() -> int:
    """The GPUs this machine has; none: ConfigError (--gpus-per-job shares a GPU that is not there)."""
    import torch  # lazy: only to count the GPUs

    gpus = torch.cuda.device_count()
    if not gpus:
        raise ConfigError("--gpus-per-job: this machine has no GPU (leave it out to fine-tune on the CPUs)")
    return gpus


def gpu_share(job: Job, gpus_per_job: float, pretrain_gpus: float = 0.0) -> float:
    """The one GPU-share rule: what ``job`` asks of a GPU. Nothing without a share (``--gpus-per-job``
    0: every job on the CPUs) or for a job that uses none; a fine-tune (``shares_gpu``) the share; a
    model's training ``pretrain_gpus`` (a slot's pretrainings side by side), else its own ask."""
    if job.gpus <= 0 or gpus_per_job <= 0:
        return 0.0
    return gpus_per_job if job.shares_gpu else pretrain_gpus or job.gpus


def _gpu_asks(jobs: Sequence[Job], engine: EngineConfig, gpus: int | None) -> tuple[dict[str, float], int]:
    """Each job's share of a GPU as Ray reads ``--gpus-per-job``, and the GPUs there are (None:
    this machine's); a share no GPU can give, or a share on a machine without one: ConfigError."""
    if engine.gpus_per_job > 0 and gpus is None:
        gpus = _gpu_count()
    ask = {j.key: gpu_share(j, engine.gpus_per_job, engine.pretrain_gpus) for j in jobs}
    if max(ask.values(), default=0.0) > (gpus or 0):
        raise ConfigError(f"--gpus-per-job {engine.gpus_per_job:g}: this machine has {gpus or 0} GPU(s)")
    return ask, gpus or 0


def _lost(key: str, e: BaseException) -> Outcome:
    """A task Ray could not finish (its worker died, or a need's did): one line."""
    first = next((line.strip() for line in str(e).splitlines() if line.strip()), type(e).__name__)
    return Outcome(key, FAILED, message=f"{type(e).__name__}: {first}"[:300])


def _settled(job: Job, outcomes: Mapping[str, Outcome]) -> Outcome:
    """A job whose task failed only because a need's did is reported as skipped."""
    o = outcomes[job.key]
    if o.status == FAILED and any(outcomes[n].status != DONE for n in job.needs):
        bad = next(n for n in job.needs if outcomes[n].status != DONE)
        return Outcome(job.key, SKIPPED, message=f"needs {bad}, which {outcomes[bad].status}")
    return o


__all__ = ["DISK_ERRORS", "DONE", "FAILED", "SKIPPED", "Outcome", "check", "disk_error", "execute", "gpu_share", "pending",
           "run", "run_local", "run_processes", "run_ray", "set_threads", "start_ray"]
