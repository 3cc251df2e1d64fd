"""The driver of an ablation: inputs checked at the door, OUT opened (one run at a time, the same
recipe, the corpus split), the jobs planned (:mod:`~biotok_train.ablate.plan`) and run by an
engine (:mod:`~biotok_train.ablate.engines`), then, once every job is done, the report written
from their records (:func:`run_ablation`)."""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

from biotok.errors import BiotokError, ConfigError, OutputExistsError
from biotok.output import LOCK_NAME, atomic_directory, run_lock
from biotok_train.ablate import engines, render
from biotok_train.ablate.analysis import Evidence, analyze
from biotok_train.ablate.command import command_line
from biotok_train.ablate.estimate import KindEta, kind_eta
from biotok_train.ablate.engines import DONE, FAILED, pending
from biotok_train.ablate.jobs import Env
from biotok_train.ablate.keys import content_keys, corpus_key, fingerprints, keep_tasks
from biotok_train.ablate.plan import Plan, leg_names, make_plan, plan_legs, select
from biotok_train.ablate.results import AblationReport, load
from biotok_train.ablate.store import Layout, read_costs, read_json, write_json
from biotok_train.ablate.tasks import task_data
from biotok_train.config import MAX_SEQ_LEN
from biotok_train.ablate.config import AblationConfig, EngineConfig, check_precision

log = logging.getLogger(__name__)


def split_corpus(cfg: AblationConfig, out: Path) -> tuple[Path, Path, int]:
    """corpus/pretrain.txt and corpus/heldout.txt, written once (each Nth non-blank line held
    out); returns them and the characters of pretraining text (newlines excluded)."""
    from biotok.corpus import corpus_names, iter_lines  # lazy: corpus readers

    d = Path(Layout(out).corpus())
    train, held = d / "pretrain.txt", d / "heldout.txt"
    key = corpus_key(cfg)
    if _split_key(d) != key:
        with atomic_directory(d, force=True) as tmp:  # an unfinished split (no 'done') is replaced
            n = chars = 0
            with open(tmp / train.name, "w", encoding="utf-8") as ft, open(tmp / held.name, "w", encoding="utf-8") as fh:
                for i, line in enumerate(iter_lines(list(cfg.corpus), cfg.field_name), 1):
                    if i % cfg.statistics.heldout_every == 0:
                        fh.write(line + "\n")
                    else:
                        ft.write(line + "\n")
                        chars += len(line)
                    n = i
            if n < cfg.statistics.heldout_every:
                raise ConfigError(f"the corpus {corpus_names(cfg.corpus)} has {n} lines: too few to hold out every "
                                  f"{cfg.statistics.heldout_every}th")
            (tmp / "done").write_text(f"{n}\n{chars}\n{key}\n", encoding="utf-8")
    return train, held, int((d / "done").read_text(encoding="utf-8").split()[1])


def _split_key(d: Path) -> str | None:
    """The corpus key a finished split was made from (None: no split, an unfinished or damaged one)."""
    try:
        parts = (d / "done").read_text(encoding="utf-8").split()
        int(parts[1])
        return parts[2]
    except (OSError, ValueError, IndexError):
        return None


def same_recipe(old: dict, new: dict) -> bool:
    """Whether a saved recipe is ``new``: an option added to biotok since it was saved counts as
    equal when ``new`` keeps its default (an upgrade does not orphan a finished ablation)."""
    paths = ("corpus", "base", "data_dir")  # inputs are compared by content (ablate.keys), not by path
    defaults = AblationConfig(tokenizers=("x",), corpus=()).recipe()
    old = _tasks_by_identity({k: v for k, v in AblationConfig.saved_recipe(old).items() if k not in paths})
    new = _tasks_by_identity({k: v for k, v in new.items() if k not in paths})
    return all(old[k] == v if k in old else k in defaults and defaults[k] == v for k, v in new.items()) and \
        set(old) <= set(new)


def _tasks_by_identity(recipe: dict) -> dict:
    """A recipe whose user task files read as "a user's file" (their bytes key their jobs, not
    their path: moved or relative, the same recipe); registered task names as they are."""
    from biotok_train.ablate.keys import task_identity  # lazy: the task registry

    for field in ("tasks", "curve_tasks"):
        if isinstance(recipe.get(field), (list, tuple)):
            recipe = {**recipe, field: [task_identity(t) if isinstance(t, str) else t for t in recipe[field]]}
    return recipe


def _is_ablation(out: Path) -> bool:
    """Whether ``out`` holds an ablation this command started: its arms/, its corpus split
    (:func:`split_corpus`, run first by the published ablation scripts), or a config.json with the
    recipe (a model folder's config.json, or a user's, has none)."""
    if (out / "arms").is_dir() or (out / "jobs").is_dir() or (out / "corpus" / "done").is_file():
        return True
    try:
        return isinstance(read_json(out / "config.json").get("recipe"), dict)
    except (OSError, ValueError, AttributeError):
        return False


def _check_inputs(cfg: AblationConfig, out: Path) -> dict:
    """Every input of the run checked at the door, before any job: the output folder, the corpus,
    the tokenizers, the base, the tasks (each split non-empty). Returns the tasks' data."""
    from biotok.corpus import resolve  # lazy: corpus readers
    from biotok.formats import load  # lazy: tokenizers
    from biotok.output import check_can_create, check_inputs  # lazy: one use

    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"{out} exists and is not a folder; choose another --out")
    # never into what it reads; a folder with files is continued only when it is an ablation
    from biotok_train.tasks.named import input_paths  # lazy: one use

    tasks = [p for t in cfg.tasks for p in input_paths(t)]  # NAME=PATH, --task-type's files: the files themselves
    check_inputs(out, [p for p in (*cfg.tokenizers, *cfg.corpus, *tasks, cfg.base.model)
                       if p is not None and Path(p).exists()])
    if out.is_dir() and any(p.name != LOCK_NAME for p in out.iterdir()) and not _is_ablation(out):
        raise OutputExistsError(f"{out} is not empty and is not an ablation (no arms/, corpus split or config.json "
                                "holding its recipe); choose another --out")
    check_can_create(out / "config.json")
    command_line(cfg, out)  # the report's command line (spelled by the CLI's options): any problem shows before the runs
    if not 8 <= cfg.pretraining.seq_len <= MAX_SEQ_LEN:
        raise ConfigError(f"--seq-len {cfg.pretraining.seq_len}: the models take 8 to {MAX_SEQ_LEN} tokens")
    resolve(list(cfg.corpus))
    toks = [load(t) for t in cfg.tokenizers]
    if cfg.base.model is not None:  # a masked LM with its tokenizer, and candidates it can move to
        from biotok_train.hf_models import load_model_tokenizer  # lazy: torch
        from biotok_train.pretrain.init import check_init_from  # lazy: torch
        from biotok_train.transfer import check_specials  # lazy: torch

        check_init_from(cfg.base.model, load_model_tokenizer(cfg.base.model), "mlm")
        for t, tok in zip(cfg.tokenizers, toks):
            check_specials(tok, f"--tokenizers {t}")
    return task_data(cfg)


class Incomplete(BiotokError):
    """Some jobs failed or were skipped: the report waits for them (a rerun resumes)."""


def run_ablation(cfg: AblationConfig, out: str | os.PathLike[str], progress: bool = True,
                 engine: EngineConfig = EngineConfig(), force: bool = False,
                 on_done: engines.OnDone = None, precision: str | None = None) -> AblationReport | None:
    """Run (or resume) every job of the ablation with ``engine``; once all are done, write
    ablation.md, ablation.json, ablation.png and costs.json from their records. Some job not done:
    :class:`Incomplete` (what failed, what waits). ``force``: continue an OUT holding another
    recipe (the jobs whose inputs changed are run again). With ``engine.only``, just those jobs
    and what they need: None while other jobs of the plan have no record (a piece ran).
    ``on_done(outcome)``: called here as each job settles (a slot rewrites its archive there).
    ``precision``: key the models' jobs by this arithmetic ("cuda:bf16") instead of this machine's,
    to report from records made on another machine (a job without such a record is refused, never
    run here in other arithmetic)."""
    out = Path(out)
    datasets = _check_inputs(cfg, out)  # a wrong input fails here, before anything is written
    engines.check(engine)  # Ray there, its cluster answering, a GPU to share: before any work
    legs, plan, keys = _plan(cfg, datasets, corpus_key(cfg), check_precision(precision))
    keep_tasks(datasets)  # read once: this process's jobs use these examples, never the files again
    jobs = _selected(plan.jobs, engine.only)  # an --only that matches nothing: before any work too
    _refuse_other_arithmetic(jobs, keys, out, precision)  # records only read: before OUT is opened
    created = not out.exists()
    try:
        with run_lock(out, "ablate"):
            _open(cfg, out, force)
            done = pending(out, jobs, keys)
            eta = kind_eta(cfg, jobs, set(done), read_costs(out, keys), datasets)
            if progress:  # --quiet: nothing but errors (the probe's plan line likewise)
                _announce(cfg, eta, len(jobs), engine)
            said = _Progress(len(jobs) - len(done), on_done, eta)
            outcomes = engines.run(jobs, keys, Env(cfg, str(out.resolve()), progress, (engine.compile, engine.compile_mode)), engine, said)
            said.summary()
            _check_done(outcomes, out)
            if len(jobs) < len(plan.jobs):
                outcomes = pending(out, plan.jobs, keys)
                if len(outcomes) < len(plan.jobs):
                    log.info("%d of %d jobs of %s done: the report waits for the others", len(outcomes),
                             len(plan.jobs), out)
                    return None
            records = {k: o.result for k, o in outcomes.items()}
            return _report(Evidence(cfg, out, legs, plan, records, datasets, read_costs(out, keys)))
    except BaseException:
        if created and not (out / "jobs").is_dir():  # nothing worth resuming yet: leave no partial folder
            shutil.rmtree(out, ignore_errors=True)
        raise


def _announce(cfg: AblationConfig, eta: KindEta, total: int, engine: EngineConfig) -> None:
    """Before the long part: the jobs to run and their estimated time on this machine, per kind
    (:mod:`~biotok_train.ablate.estimate`); a from-scratch budget known to stay on the plateau at that
    size on a CPU, one warning line naming the measured threshold (:func:`biotok.decide.plateau_warning`)."""
    from biotok.decide import plateau_warning  # lazy: one use

    if not eta.left:
        return
    log.info("%s", eta.plan(total, _duration))
    device = "cuda" if engine.gpus_per_job > 0 or _has_cuda() else "cpu"
    for size in cfg.sizes:
        if "scratch" in cfg.arms:
            line = plateau_warning(size, cfg.tokens_per_arm, from_base=cfg.base.model is not None, device=device)
            if line:
                log.warning("%s", line)


def _has_cuda() -> bool:
    """Whether this machine's torch sees a GPU (the pretrainings then run there)."""
    try:
        import torch  # lazy: the jobs import it anyway
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


class _Progress:
    """``on_done`` of the driver: one line per job finished, whatever the engine (its key, seconds,
    jobs done and left, an ETA from the measured seconds of each kind of job, ``eta``; without it,
    from the mean so far), on the library's log (stderr from the CLI, terminal or not; off with
    --quiet); then calls the caller's ``on_done``."""

    def __init__(self, total: int, then: engines.OnDone = None, eta: KindEta | None = None) -> None:
        self.total, self.then, self.start, self.eta = total, then, time.monotonic(), eta
        self.settled: dict[str, int] = {}

    def __call__(self, o) -> None:
        self.settled[o.status] = self.settled.get(o.status, 0) + 1
        n = sum(self.settled.values())
        if self.eta is not None:
            self.eta.done(o.key, o.seconds if o.status == DONE else None)
        if o.status == DONE:
            left = max(0, self.total - n)
            if self.eta is not None:
                eta = self.eta.eta(_duration) if left else ""
            else:
                eta = f", ETA {_duration((time.monotonic() - self.start) / n * left)}" if left else ""
            log.info("job %d/%d done: %s in %s; %d left%s", n, self.total, o.key, _duration(o.seconds), left, eta)
        if self.then is not None:
            self.then(o)

    def summary(self) -> None:
        """One line once the engine has settled every job it ran (none: nothing said)."""
        if self.settled:
            counts = ", ".join(f"{v} {k}" for k, v in sorted(self.settled.items()))
            log.info("%d job%s run in %s (%s)", sum(self.settled.values()), "s" * (sum(self.settled.values()) != 1),
                     _duration(time.monotonic() - self.start), counts)


def _duration(seconds: float) -> str:
    """3.2 s, 4 min 05 s, 2 h 07 min."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    m, s = divmod(int(round(seconds)), 60)
    return f"{m} min {s:02d} s" if m < 60 else f"{m // 60} h {m % 60:02d} min"


def _plan(cfg: AblationConfig, datasets: dict, corpus: str, precision: str | None) -> tuple[list, Plan, dict]:
    """The arms, every job (:func:`~biotok_train.ablate.plan.make_plan`) and their content keys."""
    tokenizers = list(cfg.tokenizers)
    legs = plan_legs(cfg, dict(zip(tokenizers, leg_names(tokenizers))))
    plan = make_plan(cfg, legs, fingerprints(cfg, legs, datasets, corpus, precision))
    return legs, plan, content_keys(plan.jobs)


def _selected(jobs: list, only: tuple[str, ...]) -> list:
    """The jobs ``only`` names and those they need (every job without ``only``); none: one line."""
    chosen = select(jobs, only)
    if not chosen:
        examples = ", ".join(j.key for j in jobs if j.key.startswith(("pretrain/", "finetune/")))
        raise ConfigError(f"--only {' '.join(only)} matches no job of this ablation (its jobs read like "
                          f"{examples[:160]}...)")
    return chosen


def _refuse_other_arithmetic(jobs: list, keys: dict, out: Path, precision: str | None) -> None:
    """Records keyed by another machine's arithmetic are reported from, never completed here."""
    if precision is None:
        return
    from biotok_train.ablate.keys import precision_key  # lazy: torch

    here = precision_key()
    if precision == here:
        return
    done = pending(out, jobs, keys)
    missing = [j.key for j in jobs if j.key not in done]
    if missing:
        raise Incomplete(f"{len(missing)} of {len(jobs)} jobs of {out} have no record made in {precision}, and this "
                         f"machine computes in {here}: run them where the others ran (first: {', '.join(missing[:3])})")


def _check_done(outcomes: dict, out: Path) -> None:
    """Nothing to report until every job is done: say which failed (one line each) and how many wait."""
    failed = [o for o in outcomes.values() if o.status == FAILED]
    waiting = [o for o in outcomes.values() if o.status not in (DONE, FAILED)]
    if failed or waiting:
        lines = [f"{len(failed) + len(waiting)} of {len(outcomes)} jobs of {out} are not done, so no report yet "
                 f"({len(failed)} failed, {len(waiting)} skipped because a job they need did not finish); "
                 "the same command resumes:"]
        lines += [f"  {o.key}: {o.message}" for o in failed]
        raise Incomplete("\n".join(lines))


def _report(ev: Evidence) -> AblationReport:
    """The results, from the records only, written as ablation.json and costs.json; then the page
    (ablation.md and its plots) rendered from those files alone."""
    analyze(ev).write(ev.out)
    res = load(ev.out)
    md, curve_png = render.write(res, ev.out)
    return AblationReport(ev.cfg, res, md, ev.out, curve_png)


def _open(cfg: AblationConfig, out: Path, force: bool) -> None:
    """Start or resume OUT: config.json (a resumed run must have the same recipe unless ``force``),
    the corpus split (redone when the corpus changed)."""
    cfg_file = out / "config.json"
    if cfg_file.is_file():
        try:
            old = read_json(cfg_file)
            recipe = old["recipe"]
            ok = same_recipe(recipe, cfg.recipe())
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            if not force:
                raise ConfigError(f"{cfg_file} is damaged (not an ablation's recipe); pass --force to start "
                                  "this ablation over it (jobs whose inputs did not change are kept)") from None
            ok = True
        if not ok and not force:
            raise ConfigError(f"{out} holds an ablation with another recipe (see {cfg_file}); use another --out, or "
                              "--force to run this recipe there (jobs whose inputs did not change are kept)")
    write_json(cfg_file, {"recipe": cfg.recipe(), "tokenizers": list(cfg.tokenizers)}, indent=2)
    split_corpus(cfg, out)


