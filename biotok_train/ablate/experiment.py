"""A recipe as configuration plus one call: :class:`Experiment` names its ablation, its CPU-side
phases and its page; :func:`main` gives every recipe one command line::

    python -m benchmarks.experiments.NAME               the CPU side, then the page
    ... --dry-run (--quick)                             every job at toy size on a CPU
    ... --gpu                                           also the GPU ablation here (resumable)
    ... --publish                                       only the page, from what is finished
    ... --pack                                          the ablation's inputs into .gpu/NAME/ for a GPU machine
    ... --slots                                         what is done, and the next GPU slot's command
    ... --slot SECONDS --archive FILE [--home SHA]      on the GPU machine: run that slot
    ... --merge FILE...                                 the slots' archives home; a complete seed: the page

A GPU slot (a bare machine lent for minutes, only small files back): ``--pack`` puts the inputs
that live in the work folder in .gpu/NAME/ (each xz-compressed with its sha256), beside
``../shared/gpu/pack.sh``'s; ``--slots`` says what the records here complete and plans the next
slot (:mod:`biotok_train.ablate.slots`) from measured costs; ``--slot`` runs it there, its
archive rewritten after every job; ``--merge`` brings archives home, whole units only. Slot
arguments are checked before any work, and a refused slot leaves nothing in OUT.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import math
import os
import re
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from biotok.errors import BiotokError, ConfigError
from biotok.output import atomic_file
from biotok_train.ablate import estimate as E
from biotok_train.ablate import slots as S
from biotok_train.ablate import store
from biotok_train.ablate.keys import Key, digest, files_sha256
from biotok_train.ablate.config import AblationConfig, EngineConfig

PACKED = "pack.json"  # in .gpu/NAME/: {path under the work folder: sha256} of every packed input


@dataclass(frozen=True)
class Slot:
    """The GPU machine a slot is planned for: a command's seconds, its cores, each GPU job's share,
    the measured costs the estimate reads (:func:`~biotok_train.ablate.estimate.slot_costs`), and
    the arithmetic its records are made in."""

    limit_s: float = 540.0
    cores: int = 16
    share: float = 0.125
    costs: Path | None = None
    precision: str = "cuda:bf16"


@dataclass(frozen=True)
class Experiment:
    """A recipe. ``config(work, tasks)``: its ablation (``tasks``: the dry run's, at toy size);
    ``cpu_side(work, dest, command, args)``: its phases; ``page(work, dest, command, downstream)``:
    its page from what is finished; ``lacks(work)``: what the page still needs from the CPU side
    (None: nothing); ``plan(work)``: the lines of ``--plan``; ``options(parser)``: its own options."""

    name: str
    doc: str
    config: Callable[[Path, tuple[str, ...] | None], AblationConfig]
    cpu_side: Callable[..., None]
    page: Callable[..., None]
    work_root: Path
    pack_root: Path
    published: Path
    tasks: tuple[str, ...]
    lacks: Callable[[Path], str | None] = lambda work: None
    plan: Callable[[Path], list[str]] | None = None
    options: Callable[[argparse.ArgumentParser], None] = lambda ap: None
    require: Callable[[], None] = lambda: None  # the shared data there, or one line (exits)
    slot: Slot = field(default_factory=Slot)
    pack_corpora: str = ""  # the corpora pack.sh must carry
    gpu_by_default: bool = False  # the plain command runs the ablation too (a CPU-sized recipe)
    workdir: Callable[[bool], Path] | None = None  # the work folder, dry run or not (default: WORK_ROOT/NAME[_dry])
    out: str = "gpu"  # the ablation's OUT in the work folder
    threads: int = 1  # the local engine's torch threads (0: torch's; 1 makes the same bytes as a slot's workers)
    verbose: bool = False  # the engine's progress lines on stderr

    @property
    def command(self) -> str:
        return f"python -m benchmarks.experiments.{self.name}"

    def work(self, dry: bool) -> Path:
        return self.workdir(dry) if self.workdir else self.work_root / (self.name + ("_dry" if dry else ""))


# --- content-keyed phases ---------------------------------------------------------------------------
PHASES = "phases.json"  # in the work folder: {phase: the digest of the inputs it was made from}


def sha(path: Path) -> str:
    """A file's or a folder's sha256 (an input of a phase; a folder: its files and their names)."""
    return files_sha256([path])


def phase(work: Path, name: str, inputs, make: Callable[[], object]):
    """``make()`` unless work/NAME was made from the same ``inputs`` (their digest in phases.json):
    a phase is redone when what it is made from changes, not kept because a file exists. A NAME
    ending in .json holds ``make()``'s result (returned); any other is a folder ``make`` writes. One
    made before phases.json existed is taken as it is, its inputs recorded."""
    path, key = work / name, digest(inputs)
    try:
        keys = json.loads((work / PHASES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        keys = {}
    if path.exists() and keys.get(name, key) == key:
        result = json.loads(path.read_text(encoding="utf-8")) if name.endswith(".json") else None
    else:
        result = make()
        if name.endswith(".json"):
            store.write_json(path, result)
    if keys.get(name) != key:
        store.write_json(work / PHASES, {**keys, name: key})
    return result


def baselines(work: Path, tasks: tuple[str, ...], data_dir: Path) -> dict[str, dict]:
    """work/baselines.json: each task's trivial baseline (a page shows it before the ablation's own);
    {} without the task data."""
    from biotok_train.tasks import load  # lazy: the task readers
    from biotok_train.tasks.baseline import trivial_baseline

    keep = ("metric", "rule", "prediction", "train", "dev", "test")
    make = lambda: {t: {k: v for k, v in trivial_baseline(load(t, data_dir)).to_dict().items() if k in keep}  # noqa: E731
                    for t in tasks}
    return phase(work, "baselines.json", list(tasks), make) if Path(data_dir).is_dir() else {}


# --- inputs ------------------------------------------------------------------------------------------
def _inputs(cfg: AblationConfig, work: Path) -> list[Path]:
    """The ablation's inputs that live in the work folder (the rest is shared data, carried by pack.sh)."""
    found = []
    for p in map(Path, (*cfg.corpus, *cfg.tokenizers)):
        if p.resolve().is_relative_to(work.resolve()):
            found += sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
    return found


def need_inputs(exp: Experiment, work: Path, cfg: AblationConfig) -> None:
    """Every input of the ablation there, or one line saying how to make it."""
    missing = [p for p in map(Path, (*cfg.corpus, *cfg.tokenizers)) if not p.exists()]
    if missing:
        raise BiotokError(f"no {missing[0]}: run the CPU side first ({exp.command}), or --pack it for a GPU machine")


def pack(exp: Experiment, work: Path, cfg: AblationConfig) -> Path:
    """.gpu/NAME/: each input under the work folder xz-compressed, and pack.json of their sha256."""
    dest = exp.pack_root / work.name
    if not (dest.parent / "run.sh").is_file():
        raise BiotokError(f"no {dest.parent / 'run.sh'}: run PACK_CORPORA='{exp.pack_corpora}' bash "
                          "../shared/gpu/pack.sh from the checkout's root first (it empties .gpu/), then --pack")
    missing = [c for c in exp.pack_corpora.split() if not (dest.parent / "data" / "corpora" / c).is_dir()]
    if missing:
        raise BiotokError(f".gpu/data/corpora lacks {', '.join(missing)}: run PACK_CORPORA='{exp.pack_corpora}' "
                          "bash ../shared/gpu/pack.sh, then --pack")
    need_inputs(exp, work, cfg)
    shas = {}
    for f in _inputs(cfg, work):
        rel = f.relative_to(work).as_posix()
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shas[rel] = store.pack_file(f, dest / f"{rel}.xz")
    store.write_json(dest / PACKED, shas)
    return dest


def unpack(exp: Experiment, work: Path) -> None:
    """On the GPU machine: every packed input back into the work folder (checked), unless there."""
    src = exp.pack_root / work.name
    try:
        shas = json.loads((src / PACKED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise BiotokError(f"no {src / PACKED}: run --pack where the CPU side ran, and carry .gpu") from None
    for rel, sha in shas.items():
        if not (work / rel).is_file():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            store.unpack_file(src / f"{rel}.xz", work / rel, sha)


# --- slots -------------------------------------------------------------------------------------------
def slot_plan(exp: Experiment, work: Path, cfg: AblationConfig, home: dict[str, str], precision: str | None,
              limit: float | None = None) -> tuple[S.SlotPlan, list, dict, dict]:
    """The next slot of ``cfg`` from the records ``home`` ({job key: content key}), estimated for the
    GPU machine from the measured costs: the plan, the jobs, their content keys and their seconds."""
    need_inputs(exp, work, cfg)
    jobs, keys = S.plan_jobs(cfg, precision)
    costs = json.loads(exp.slot.costs.read_text(encoding="utf-8"))
    seconds = {j.key: E.job_seconds(costs, j.key, len(cfg.tokenizers), cfg.tokens_per_arm, exp.slot.cores)
               for j in jobs}
    plan = S.plan_slot(jobs, keys, home, seconds, _asks(exp, jobs), 1.0, exp.slot.cores,
                       exp.slot.limit_s if limit is None else limit, E.STARTUP_S)
    return plan, jobs, keys, seconds


def _asks(exp: Experiment, jobs) -> dict[str, float]:
    """Each job's share of the slot's GPU: the GPU share rule (engines.gpu_share) at the slot's share."""
    from biotok_train.ablate.engines import gpu_share  # lazy: the engines

    return {j.key: gpu_share(j, exp.slot.share, exp.slot.share) for j in jobs}


def home_precision(exp: Experiment, work: Path, dry: bool) -> str | None:
    """The arithmetic of the records at home, or before any the GPU machine's (a dry run's: this machine's)."""
    return store.recorded_precision(work / exp.out) or (None if dry else exp.slot.precision)


def write_home(exp: Experiment, work: Path, home: dict[str, str]) -> str | None:
    """``home`` into .gpu/WORK/home.json for the next slot's machine (after --pack); its short sha256."""
    dest = exp.pack_root / work.name
    if not dest.is_dir():
        return None
    data = (json.dumps(home, indent=0, sort_keys=True) + "\n").encode("utf-8")
    with atomic_file(dest / S.HOME, force=True) as tmp:
        tmp.write_bytes(data)
    return hashlib.sha256(data).hexdigest()[:12]


def device_command(exp: Experiment, home_hash: str | None, tasks: tuple[str, ...] | None = None,
                   limit: float | None = None) -> str:
    """The command that runs the next slot on the GPU machine (``.gpu`` carried), its records into
    $OUT (``tasks``: the dry run's). The engine is the process pool: Ray's wheel (79 MB) cannot travel."""
    return (f"bash .gpu/run.sh {exp.command} " + (f"--dry-run --tasks {','.join(tasks)} " if tasks else "")
            + f"--slot {exp.slot.limit_s if limit is None else limit:g} "
            + (f"--home {home_hash} " if home_hash else "")
            + f"--archive \"$OUT/slot.tar.xz\" --engine processes --gpus-per-job {exp.slot.share:g}")


def slots_section(exp: Experiment, work: Path, cfg: AblationConfig, tasks: tuple[str, ...] | None = None,
                  write: bool = True) -> list[str]:
    """What the records at home complete, the estimate of one seed's whole slot with its
    calculation, and the next slot's command with its estimate (``write``: home.json into .gpu)."""
    home = store.home_records(work / exp.out)
    plan, jobs, keys, seconds = slot_plan(exp, work, cfg, home, home_precision(exp, work, tasks is not None))
    home_hash = write_home(exp, work, home) if write else None
    lines = estimate_lines(exp, cfg, jobs, seconds)
    lines += ["", "What the records at home complete (a unit is a pretraining with every job that needs it, merged "
              "all or none: a unit cut in a slot is pretrained again by the next; other jobs merge one by one):", "",
              *S.status_lines(jobs, keys, home, cfg.pretraining.seeds), ""]
    if not plan.units:
        return lines + ["Every job of the GPU side has its record here.", ""]
    return lines + _next_slot(exp, work, plan, home_hash, tasks, write)


def _next_slot(exp: Experiment, work: Path, plan: S.SlotPlan, home_hash: str | None, tasks, write: bool) -> list[str]:
    left = [u for u in plan.left if S.unit_seed(u) in (None, *plan.seeds)]
    dry = f" --dry-run --tasks {','.join(tasks)}" if tasks else ""
    lines = [f"Next slot: pretraining seed{'s' if len(plan.seeds) > 1 else ''} {', '.join(map(str, plan.seeds))}, "
             f"{len(plan.units)} units ({plan.jobs} jobs with the preparations they need), estimated "
             f"{plan.seconds:.0f} s of its {plan.limit_s:g} s"
             + (f"; it leaves {len(left)} units of that seed to the slot after ({_names(left)}): they do not fit"
                if left else "") + ". On the GPU machine, with `.gpu` carried (`--pack` here once, then "
             "`--slots` or `--merge` here before each slot: they write `.gpu/" + work.name + "/home.json`), "
             "the run's timeout 600 s:", "", "    " + device_command(exp, home_hash, tasks), "",
             f"then here: `{exp.command}{dry} --merge slot.tar.xz` (the archive from $OUT).", ""]
    if not write:
        lines += ["(`--slots` prints it with `--home SHA`: the records at home it was planned from, which it writes "
                  "into .gpu for the slot's machine.)", ""]
    elif home_hash is None:
        lines += ["(`.gpu/" + work.name + "/` does not exist yet: run pack.sh and `--pack` first; the command's "
                  "`--home` then names the records it was planned from.)", ""]
    return lines


def _kind(key: str) -> str:
    k = Key.parse(key)
    return k.kind + (" (floors)" if k.floor else "")


def _names(us) -> str:
    kinds: dict[str, int] = {}
    for u in us:
        kind = "pretraining units" if u.model else _kind(u.name)
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in kinds.items())


def estimate_lines(exp: Experiment, cfg: AblationConfig, jobs: list, seconds: dict) -> list[str]:
    """Item 7 of issue 38: one pretraining seed's whole slot, job kind by job kind from the measured
    costs, simulated as the process engine runs it on the GPU machine, against the slot's limit."""
    seed, d = cfg.pretraining.seeds[0], exp.slot
    mine = S.select_seed(jobs, seed)
    costs = json.loads(d.costs.read_text(encoding="utf-8"))
    kinds: dict[str, list[float]] = {}
    for j in mine:
        kinds.setdefault(_kind(j.key), []).append(seconds[j.key])
    wall = S.simulate(mine, seconds, _asks(exp, mine), 1.0, d.cores) + E.STARTUP_S
    share = d.cores // len(cfg.tokenizers)
    lines = ["### One pretraining seed a slot: the estimate", "",
             f"A slot is one command on one H200 with {d.cores} cores, at most {d.limit_s:g} s "
             "(10 minutes a command, less the minute run.sh and the margin take). It runs everything one pretraining "
             f"seed needs side by side: every vocabulary's preparation ({share} cores each), its pretraining (all "
             f"{len(cfg.tokenizers)} at once, each asking {d.share:g} of the GPU), its held-out evaluation and "
             f"fine-tunes, and the seed's random-init floors (whose fine-tunes fill the GPU during the pretrainings); "
             f"at most {int(round(1 / d.share))} GPU jobs at once. Each kind of job, from the first slot's "
             f"measured cost records (`{_shown(d.costs)}`, two pieces side by side on one H200):", "",
             "| job | count | seconds each | from |", "|---|---:|---:|---|"]
    why = _why(cfg, costs, share)
    for kind, secs in kinds.items():
        each = f"{min(secs):.0f}-{max(secs):.0f}" if max(secs) - min(secs) >= 0.5 else f"{secs[0]:.0f}"
        lines.append(f"| {kind} | {len(secs)} | {each} | {why.get(kind, '')} |")
    fits = wall <= d.limit_s
    lines += ["", f"Start-up {E.STARTUP_S:.0f} s (run.sh, imports, the text unpacked and split; the pieces' wall time "
              f"beyond their jobs was 15-21 s). Assumed, not measured: four pretrainings side by side get no more of "
              "the GPU than the two measured did, and the fine-tunes beside them slow them no more than the measured ones "
              "did (the first slot's cost records will tell: `--merge` keeps them, and costs.json can be made again from "
              f"its archive). Run as the process engine runs them: **pretraining seed {seed}'s whole "
              f"slot takes an estimated {wall:.0f} s = {wall / 60:.1f} minutes**, "
              + ("within the 9 minutes of one command." if fits else
                 f"more than the {d.limit_s / 60:g} minutes of one command. Cut, and why: a slot takes whole units "
                 "in order (the preparations, the pretraining units with their evaluations and fine-tunes, then the "
                 "floors' fine-tunes breadth-first, fine-tuning seed 0 of every task and arm before seed 1) while the "
                 "estimate fits, and leaves the rest of the seed to the next slot, which takes it first (below). Nothing "
                 "is dropped from the recipe: every floor keeps its 3 fine-tuning seeds and every task stays.")]
    return lines


def _shown(path: Path) -> str:
    """A path as the page names it: from the checkout's root when it lies in it."""
    root, path = Path(__file__).resolve().parents[2], Path(path).resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def _why(cfg: AblationConfig, costs: dict, share: int) -> dict[str, str]:
    """Where each kind of job's estimated seconds come from, in words."""
    rate = sum(costs["pretrain_positions"] / s for s in costs["pretrain_s"].values())
    prep = max(costs["prepare_s"].values())
    return {"prepare": f"{prep:.0f} s on one thread (the slowest measured) / "
                       f"{max(1.0, share * E.PREPARE_SPEEDUP_2_CORES / 2):.1f} ({share} workers at "
                       f"{E.PREPARE_SPEEDUP_2_CORES:g}x per 2 cores: the parallel prepare's measured ratio, "
                       "benchmarks/results/prepare_speed.json)",
            "pretrain": f"{cfg.tokens_per_arm / 1e6:.1f} M positions each; the two measured side by side made "
                        f"{rate / 1e3:,.0f} k positions/s together, assumed shared by all {len(cfg.tokenizers)} "
                        "(CUDA graphs, +60-70 % alone, not counted)",
            "evaluate": "the slowest measured", "floor-model": f"{E.FLOOR_MODEL_S:g} s, an assumption (CPU, not measured)",
            "finetune": "each task's mean measured wall (4-8 fine-tunes and a pretraining on the GPU)",
            "finetune (floors)": "as the arms' (same task, model size and steps)"}


# --- the GPU side and merging ------------------------------------------------------------------------
def gpu_side(exp: Experiment, work: Path, engine: EngineConfig, tasks: tuple[str, ...] | None,
             seeds: tuple[int, ...] | None = None, precision: str | None = None) -> dict:
    """Run (or resume) the ablation; its result, its costs and the pieces merged (``seeds``: over these pretraining seeds only, the slots merged so far). With
    force: the work folder is this recipe's, whose config.json may hold fewer seeds from a merge."""
    from biotok_train.ablate.run import run_ablation  # lazy: the driver

    cfg = exp.config(work, tasks)
    if seeds is not None:
        cfg = dataclasses.replace(cfg, pretraining=dataclasses.replace(cfg.pretraining, seeds=seeds))
    report = run_ablation(cfg, work / exp.out, engine=engine, force=True, precision=precision)
    result = json.loads(report.json_path.read_text(encoding="utf-8"))
    costs = json.loads(report.json_path.with_name("costs.json").read_text(encoding="utf-8"))
    down = {**result, "costs": costs, "pretrain_seeds": list(cfg.pretraining.seeds),
            "pieces": store.read_pieces(work / exp.out)}
    with atomic_file(work / "downstream.json", force=True) as tmp:
        tmp.write_text(json.dumps(down, indent=1) + "\n", encoding="utf-8")
    return down


def merge_archives(exp: Experiment, work: Path, archives: list[Path], tasks: tuple[str, ...] | None) -> dict | None:
    """The slots' records into work/gpu, whole units only (a unit cut in its slot is left out and
    said); then, with every job of some pretraining seeds done, the ablation over those seeds from
    the records alone. Before the CPU side: refused before anything is imported."""
    cfg = exp.config(work, tasks)
    need_inputs(exp, work, cfg)
    lacking = exp.lacks(work)
    if lacking is not None:
        raise BiotokError(f"{lacking}: the CPU side stopped before it; run {exp.command}"
                          f"{' --dry-run' if tasks else ''} first, then --merge again (nothing merged)")
    read = [(a, store.read_archive(a)) for a in archives]  # every archive checked before any is imported
    for a, got in read:
        jobs, keys = S.plan_jobs(cfg, got.manifest.get("precision"))
        records = got.contents()
        keep, part = S.merge_filter(jobs, keys, records)
        m = store.import_records(a, work / exp.out, select=keep)
        print(f"{exp.name}: merged {a}: {sum(1 for k in records if keep(k))} of {len(records)} records "
              f"({m.get('piece')}, {m.get('device')}, {m.get('precision')})"
              + (f"; left out, incomplete (the next slot runs them again): {', '.join(u.name for u in part)}"
                 if part else ""), file=sys.stderr)
    print("\n".join(slots_section(exp, work, cfg, tasks)))
    jobs, keys = S.plan_jobs(cfg, home_precision(exp, work, tasks is not None))
    seeds = S.complete_seeds(jobs, keys, store.home_records(work / exp.out), cfg.pretraining.seeds)
    if not seeds:
        return None
    return gpu_side(exp, work, EngineConfig(), tasks, seeds, store.recorded_precision(work / exp.out))


# --- a slot on the GPU machine -----------------------------------------------------------------------
def check_slot(a: argparse.Namespace) -> tuple[float, Path]:
    """The slot's arguments, before any work: finite positive seconds, a home hash of 12 hex
    digits, an archive path whose folder may be written and where no file stands (unless --force)."""
    try:
        limit = float(a.slot)
    except ValueError:
        limit = math.nan
    if not math.isfinite(limit) or limit <= 0:
        raise ConfigError(f"--slot {a.slot}: give the slot's seconds, a finite number above 0 (e.g. 540)")
    if a.home is not None and not re.fullmatch(r"[0-9a-f]{12}", a.home):
        raise ConfigError(f"--home {a.home}: not the 12 hex digits --slots prints (the sha256 of the home.json it wrote)")
    if a.archive is None:
        raise ConfigError("--slot SECONDS needs --archive FILE (where its records go)")
    archive = Path(a.archive)
    folder = archive.parent
    if archive.is_dir():
        raise ConfigError(f"--archive {a.archive}: a folder; name the archive's file (e.g. {archive / 'slot.tar.xz'})")
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"--archive {a.archive}: {folder} is not a folder this user may write to; choose another")
    if (archive.exists() or archive.is_symlink()) and not a.force:
        raise ConfigError(f"--archive {a.archive} exists: choose another file, or --force to replace it")
    return limit, archive


def run_slot(exp: Experiment, work: Path, a: argparse.Namespace, engine: EngineConfig,
             tasks: tuple[str, ...] | None, started: float) -> dict:
    """On the GPU machine: the next slot (:func:`biotok_train.ablate.slots.run_slot`) from --pack's
    inputs and the records at home that --slots or --merge wrote into .gpu; its records into the
    archive, rewritten after every job. Everything is checked before the archive is first written:
    a refused slot leaves nothing there."""
    from biotok_train.ablate import engines  # lazy: torch

    limit, archive = check_slot(a)
    engines.check(engine)  # a GPU to share: one line before any work
    path = exp.pack_root / work.name / S.HOME
    data = path.read_bytes() if path.is_file() else b"{}"
    if a.home is not None and hashlib.sha256(data).hexdigest()[:12] != a.home:
        raise BiotokError(f"{path} is not the one this command was planned from (--home {a.home}): run --slots "
                          "where the records are, and carry .gpu again")
    unpack(exp, work)
    cfg = exp.config(work, tasks)
    plan, jobs, keys, seconds = slot_plan(exp, work, cfg, json.loads(data.decode("utf-8")), None, limit)
    write = lambda m: store.export_records(work / exp.out, archive, {"device": S.device_name(), **m})  # noqa: E731
    write({"piece": "slot starting", "slot": {"limit_s": limit}})
    print(f"{exp.name}: slot of {limit:g} s: pretraining seed(s) {', '.join(map(str, plan.seeds)) or 'none'}, "
          f"{len(plan.units)} units, {plan.jobs} jobs, estimated {plan.seconds:.0f} s", file=sys.stderr)
    engine = dataclasses.replace(engine, pretrain_gpus=engine.gpus_per_job)  # the pretrainings side by side
    return S.run_slot(cfg, work / exp.out, plan, engine, write, seconds, started)


# --- the command line --------------------------------------------------------------------------------
def parser(exp: Experiment) -> argparse.ArgumentParser:
    """Every recipe's options, and the recipe's own (``exp.options``)."""
    ap = argparse.ArgumentParser(prog=exp.command, description=exp.doc.split("\n")[0])
    ap.add_argument("--dry-run", "--quick", dest="dry_run", action="store_true",
                    help=f"every job at toy size on the CPU (a few minutes), into {exp.work(True)}/")
    ap.add_argument("--gpu", action="store_true", help="also run (or resume) the ablation here")
    ap.add_argument("--publish", action="store_true", help="only write the page from the phases already finished")
    if exp.plan is not None:
        ap.add_argument("--plan", action="store_true", help="only print the ablation's estimated GPU-minutes")
    ap.add_argument("--slots", action="store_true",
                    help="what the slots merged here complete, one seed's estimate, and the next slot's device command")
    ap.add_argument("--pack", action="store_true",
                    help=f"put the ablation's inputs in .gpu/{exp.name}/ for a GPU machine (after pack.sh)")
    ap.add_argument("--slot", metavar="SECONDS",
                    help="on the GPU machine: run the next slot (see --slots), starting no job that would not end in time")
    ap.add_argument("--home", metavar="SHA", help="with --slot: the home.json (in .gpu) the command was planned from")
    ap.add_argument("--archive", metavar="FILE", type=Path,
                    help="with --slot: where its job records go (.tar.xz, a new file), rewritten after every job")
    ap.add_argument("--force", action="store_true", help="with --slot: replace a file at --archive")
    ap.add_argument("--merge", metavar="FILE", nargs="+", type=Path,
                    help="bring slots' archives home (whole units only); with every job of a pretraining seed done, "
                         "write the page")
    ap.add_argument("--tasks", default=",".join(exp.tasks), help="with --dry-run: the tasks to fine-tune")
    ap.add_argument("--engine", default="local", choices=("local", "ray", "processes"),
                    help="who runs the ablation's jobs (biotok-train ablate --engine); processes where Ray is missing")
    ap.add_argument("--workers", type=int, default=0,
                    help="local: torch threads (0: one, as each worker of the other engines, so that records made "
                         "here and merged from a slot are the same bytes); ray, processes: jobs at a time "
                         "(0: one per CPU)")
    ap.add_argument("--gpus-per-job", type=float, default=0.0,
                    help="with --engine ray or processes: e.g. 0.25, four fine-tunes a GPU")
    exp.options(ap)
    return ap


def main(exp: Experiment, argv: list[str] | None = None) -> int:
    """The recipe's command line (see the module): one error line and exit 2 for a bad input."""
    a = parser(exp).parse_args(argv)
    started = time.monotonic()
    if exp.verbose:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    if a.slot is None:  # a slot runs on a GPU machine with .gpu/data (pack.sh's), not the whole shared data
        exp.require()
    work = exp.work(a.dry_run)
    dest = work / "page" if a.dry_run else exp.published
    args = [x for x in (argv if argv is not None else sys.argv[1:]) if x != "--publish"]  # the page: what makes it
    command = " ".join([exp.command, *map(shlex.quote, args)])
    try:
        _dispatch(exp, a, work, dest, command, started)
    except (BiotokError, OSError) as e:  # a bad input, a full or read-only disk: one line
        print(f"{exp.name}: error: {e}", file=sys.stderr)
        return 2
    return 0


def _dispatch(exp: Experiment, a: argparse.Namespace, work: Path, dest: Path, command: str, started: float) -> None:
    from biotok_train.tasks import get_task  # lazy: the registry

    if getattr(a, "plan", False):
        print("\n".join(exp.plan(work)))
        return
    for t in a.tasks.split(","):  # a task it cannot use is refused before any work
        get_task(t)
    workers = a.workers or (exp.threads if a.engine == "local" else 0)  # float sums split over threads differ
    engine, tasks = EngineConfig(a.engine, workers, a.gpus_per_job), tuple(a.tasks.split(",")) if a.dry_run else None
    if a.slot is not None:
        m = run_slot(exp, work, a, engine, tasks, started)
        print(f"{exp.name}: {m['piece']}: {m['records']} records in {m['wall_s']:.0f} s on {m['device']}"
              + (" (stopped early: no job left could end in time)" if m.get("stopped_early") else "")
              + f" -> {a.archive}", file=sys.stderr)
    elif a.merge:
        if merge_archives(exp, work, a.merge, tasks) is not None:
            exp.page(work, dest, f"{exp.command}{' --dry-run' if a.dry_run else ''} --merge slot-*.tar.xz   "
                     "# the slots' archives (--slots says what is done)", _downstream(work))
    elif a.slots or a.pack:
        if a.pack:
            print(f"{exp.name}: {pack(exp, work, exp.config(work, tasks))}", file=sys.stderr)
        print("\n".join(slots_section(exp, work, exp.config(work, tasks), tasks)))
    elif a.publish:
        exp.page(work, dest, command, _downstream(work))
    else:
        exp.cpu_side(work, dest, command, a)
        if a.gpu or a.dry_run or exp.gpu_by_default:
            exp.page(work, dest, command, gpu_side(exp, work, engine, tasks))
        print(f"{exp.name}: {dest / 'README.md'}", file=sys.stderr)


def _downstream(work: Path) -> dict | None:
    """The ablation's result with every pair compared (downstream.json), once one was written."""
    path = work / "downstream.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


__all__ = ["Experiment", "Slot", "baselines", "check_slot", "phase", "sha", "device_command", "estimate_lines", "gpu_side", "main",
           "merge_archives", "need_inputs", "pack", "parser", "run_slot", "slot_plan", "slots_section", "unpack"]
