"""An ablation run in short slots on machines that keep nothing (a GPU lent for minutes): its units,
one slot planned to fit a time limit from estimated job seconds, run with its records rewritten
into an archive after every job, and which units the records at home or in an archive complete.

A *unit* merges home all or none: a job that trains a model on the GPU (a pretraining: not
bit-reproducible there) with every job that needs it, directly or not (its evaluation, its
fine-tunes); any other job (a preparation, a random-init model, a floor's fine-tune) is a unit of
its own. A slot cut inside a unit still returns its finished jobs, but only whole units merge: the
next slot trains that model again with everything that needs it, so no record conflicts.
"""

from __future__ import annotations

import dataclasses
import heapq
import os
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from biotok_train.ablate.jobs import Job
from biotok_train.ablate.keys import Key
from biotok_train.ablate.plan import select
from biotok_train.ablate.store import home_records
from biotok_train.ablate.config import AblationConfig, EngineConfig

HOME = "home.json"  # beside --pack's files: {job key: content key} of every record at home


@dataclass(frozen=True)
class Unit:
    """Jobs that merge home together (plan order, the model's job first); ``model``: it holds a
    job that trains a model on the GPU."""

    jobs: tuple[str, ...]
    model: bool

    @property
    def name(self) -> str:
        return self.jobs[0]


def units(jobs: Sequence[Job]) -> list[Unit]:
    """The units of a plan (see the module): every job that asks a whole GPU of its own (``gpus``
    > 0, not ``shares_gpu``) with all its dependents; two such jobs with a dependent in common make
    one unit. In plan order of their first job."""
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        while parent[k] != k:
            k = parent[k]
        return k

    owner: dict[str, str] = {}
    order = {j.key: i for i, j in enumerate(jobs)}
    for j in jobs:
        ids = {find(owner[n]) for n in j.needs if n in owner}
        if j.gpus > 0 and not j.shares_gpu:
            parent[j.key] = j.key
            ids.add(j.key)
        if ids:
            first, *rest = sorted(ids, key=order.__getitem__)
            for r in rest:
                parent[r] = first
            owner[j.key] = first
    groups: dict[str, list[str]] = {}
    for j in jobs:
        groups.setdefault(find(owner[j.key]) if j.key in owner else j.key, []).append(j.key)
    return [Unit(tuple(keys), gid in parent) for gid, keys in groups.items()]


def seed_of(key: str) -> int | None:
    """The pretraining seed a job key names; None: none (a preparation)."""
    return Key.parse(key).pseed


def select_seed(jobs: Sequence[Job], seed: int) -> list[Job]:
    """Every job of pretraining seed ``seed`` and the jobs they need (the preparations), in plan order."""
    return select(jobs, [j.key for j in jobs if seed_of(j.key) == seed])


def device_name() -> str:
    """This machine's GPU in words, or cpu."""
    import torch  # lazy: the device in words

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"


def unit_seed(u: Unit) -> int | None:
    seeds = {seed_of(k) for k in u.jobs} - {None}
    return min(seeds) if seeds else None


def _fine_seed(key: str) -> int:
    f = Key.parse(key).fseed
    return -1 if f is None else f


def simulate(jobs: Sequence[Job], seconds: Mapping[str, float], asks: Mapping[str, float], gpus: float,
             workers: int) -> float:
    """The wall seconds of ``jobs`` run as the process engine runs them: in plan order, a job starts
    once its needs are done (a need not among ``jobs`` counts as done), a worker is free and its
    GPU share (``asks``) fits in ``gpus``."""
    planned, done, todo = {j.key for j in jobs}, set(), list(jobs)
    running: list[tuple[float, str]] = []
    t = 0.0
    while todo or running:
        busy = sum(asks.get(k, 0.0) for _, k in running)
        for j in list(todo):
            if len(running) >= workers:
                break
            if all(n in done or n not in planned for n in j.needs) and busy + asks.get(j.key, 0.0) <= gpus + 1e-9:
                heapq.heappush(running, (t + seconds[j.key], j.key))
                busy += asks.get(j.key, 0.0)
                todo.remove(j)
        if not running:
            raise ValueError(f"job {todo[0].key} can never start (its GPU share or its needs)")
        t, key = heapq.heappop(running)
        done.add(key)
        while running and running[0][0] <= t:
            done.add(heapq.heappop(running)[1])
    return t


@dataclass(frozen=True)
class SlotPlan:
    """One slot: the jobs it names (``EngineConfig.only``; their needs run too), the units it
    completes, those not done that it leaves to a later slot, and its estimated seconds
    (start-up included) against ``limit_s``."""

    limit_s: float
    seconds: float
    run: tuple[str, ...]
    units: tuple[Unit, ...]
    left: tuple[Unit, ...]
    jobs: int

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(sorted({s for u in self.units if (s := unit_seed(u)) is not None}))


def done_units(jobs: Sequence[Job], keys: Mapping[str, str], records: Mapping[str, str]) -> tuple[list[Unit], list[Unit]]:
    """(the units whose every job has a record of its content key in ``records``: {key: content
    key}, the units with only some)."""
    whole, part = [], []
    for u in units(jobs):
        have = [records.get(k) == keys[k] for k in u.jobs]
        (whole if all(have) else part if any(have) else []).append(u)
    return whole, part


def plan_slot(jobs: Sequence[Job], keys: Mapping[str, str], home: Mapping[str, str], seconds: Mapping[str, float],
              asks: Mapping[str, float], gpus: float, workers: int, limit_s: float, startup_s: float) -> SlotPlan:
    """The next slot: the units of the lowest pretraining seed not done at home (``home``: {job key:
    content key} of its records), taken greedily in order while the slot's simulated wall time
    (:func:`simulate`, plus ``startup_s``) stays within ``limit_s``: the models first (each with its evaluation and fine-tunes), then the other jobs breadth-first (every task
    and arm at fine-tuning seed 0 before seed 1). Needs done at home but absent from a bare machine
    (a preparation, a random-init model) run again there; their records are the same."""
    whole, _ = done_units(jobs, keys, home)
    done = {u.name for u in whole}
    order = {j.key: i for i, j in enumerate(jobs)}
    todo = [u for u in units(jobs) if u.name not in done]
    seed = min((s for u in todo if (s := unit_seed(u)) is not None), default=None)
    todo = sorted((u for u in todo if unit_seed(u) in (None, seed)),
                  key=lambda u: (unit_seed(u) is not None, not u.model, 0 if u.model else _fine_seed(u.name),
                                 order[u.name]))
    chosen: list[Unit] = []
    best = startup_s
    for u in todo:
        trial = [*chosen, u]
        t = simulate(select(jobs, [k for c in trial for k in c.jobs]), seconds, asks, gpus, workers) + startup_s
        if t <= limit_s:
            chosen, best = trial, t
    run = tuple(k for c in chosen for k in c.jobs)
    return SlotPlan(limit_s, best, run, tuple(chosen), tuple(u for u in todo if u not in chosen),
                    len(select(jobs, run)) if run else 0)


def plan_jobs(cfg: AblationConfig, precision: str | None = None) -> tuple[list[Job], dict[str, str]]:
    """Every job of the ablation ``cfg`` and its content key (``precision``: the models' arithmetic,
    default this machine's), as :func:`~biotok_train.ablate.run.run_ablation` plans them; nothing written."""
    from biotok_train.ablate import run as R  # lazy: the driver's planning
    from biotok_train.ablate.keys import corpus_key  # lazy: corpus readers
    from biotok_train.ablate.tasks import task_data  # lazy: the driver's planning

    _, plan, keys = R._plan(cfg, task_data(cfg), corpus_key(cfg), precision)
    return plan.jobs, keys


def merge_filter(jobs: Sequence[Job], keys: Mapping[str, str], records: Mapping[str, str]) -> tuple[Callable[[str], bool], list[Unit]]:
    """(the job keys of ``records`` to merge: those of whole units, of this plan's content keys;
    the units that came back incomplete, left out)."""
    whole, part = done_units(jobs, keys, records)
    keep = {k for u in whole for k in u.jobs}
    return keep.__contains__, part


def run_slot(cfg: AblationConfig, out: str | os.PathLike[str], plan: SlotPlan, engine: EngineConfig,
             write_archive: Callable[[dict], dict], seconds: Mapping[str, float], started: float) -> dict:
    """Run ``plan`` (``engine`` with ``only`` its jobs) in OUT; after every job that settles,
    ``write_archive(manifest)`` (the records so far, rewritten whole); a job is no longer started
    once even the shortest left could not finish within ``plan.limit_s`` of ``started``
    (``time.monotonic()``), and the slot ends when the running ones have. Returns the last manifest."""
    from biotok_train.ablate.run import run_ablation  # lazy: the driver

    settled: set[str] = set()
    info = {"slot": {"limit_s": plan.limit_s, "estimated_s": round(plan.seconds, 1), "seeds": list(plan.seeds),
                     "units": [u.name for u in plan.units], "jobs": plan.jobs}}

    def manifest(stopped: bool = False) -> dict:
        return {**info, "wall_s": round(time.monotonic() - started, 1), "stopped_early": stopped,
                "piece": f"slot {plan.limit_s:g} s, pretraining seed{'s' if len(plan.seeds) != 1 else ''} "
                         f"{', '.join(map(str, plan.seeds)) or 'none'}"}

    class _Over(Exception):
        pass

    def on_done(outcome) -> None:
        settled.add(outcome.key)
        write_archive(manifest())
        left = [seconds.get(k, 0.0) for k in plan.run if k not in settled]
        if left and time.monotonic() - started + min(left) > plan.limit_s:
            raise _Over()

    if not plan.run:
        return write_archive(manifest())
    try:
        run_ablation(cfg, out, progress=False, engine=dataclasses.replace(engine, only=plan.run), force=True,
                     on_done=on_done)
    except _Over:
        return write_archive(manifest(stopped=True))
    return write_archive(manifest())


def status_lines(jobs: Sequence[Job], keys: Mapping[str, str], home: Mapping[str, str],
                 seeds: Iterable[int]) -> list[str]:
    """What the records at home complete, per pretraining seed: each model's unit, and the other
    jobs by kind (k of n done), as a Markdown table."""
    whole, part = done_units(jobs, keys, home)
    done = {u.name for u in whole}
    lines = ["| seed | unit | jobs | done |", "|---|---|---:|---|"]
    for s in [None, *seeds]:
        mine = [u for u in units(jobs) if unit_seed(u) == s]
        for u in (u for u in mine if u.model):
            lines.append(f"| {s} | {u.name} with what needs it | {len(u.jobs)} | "
                         f"{'yes' if u.name in done else 'no' + (' (partial records are not merged)' if u in part else '')} |")
        kinds: dict[str, list[Unit]] = {}
        for u in (u for u in mine if not u.model):
            kinds.setdefault(Key.parse(u.name).group if s is not None else Key.parse(u.name).kind, []).append(u)
        for kind, us in kinds.items():
            n = sum(u.name in done for u in us)
            lines.append(f"| {'-' if s is None else s} | {kind}{'/...' if len(us) > 1 else ''} | {len(us)} | "
                         f"{'yes' if n == len(us) else f'{n} of {len(us)}'} |")
    return lines


def complete_seeds(jobs: Sequence[Job], keys: Mapping[str, str], home: Mapping[str, str],
                   seeds: Iterable[int]) -> tuple[int, ...]:
    """The pretraining seeds whose every job (and every preparation) has its record at home."""
    ok = {k for k in keys if home.get(k) == keys[k]}
    prep = all(k in ok for k in keys if seed_of(k) is None)
    return tuple(s for s in seeds if prep and all(k in ok for k in keys if seed_of(k) == s))


__all__ = ["HOME", "SlotPlan", "Unit", "complete_seeds", "device_name", "done_units", "home_records",
           "merge_filter", "plan_jobs", "plan_slot", "run_slot", "seed_of", "select_seed", "simulate", "status_lines", "unit_seed",
           "units"]
