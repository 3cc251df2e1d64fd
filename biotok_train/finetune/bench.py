"""``biotok-train bench``: fine-tune one model on a suite's tasks over several seeds, and fold the
scores into one number the way BLURB does.

For every task (a :class:`~biotok_train.tasks.TaskSpec`) and seed, :func:`biotok_train.finetune.run`
trains the task's head and scores test with the benchmark's own metric. A task's score is the
mean (± sample standard deviation) over seeds; the suite score is the mean of the task scores
within each family (NER, relation extraction, similarity, classification, QA), then the mean
over families (PubMedBERT's BLURB score). The output folder holds ``bench.md``, ``bench.json``,
``bench.png`` and ``runs/TASK/seed-S/`` (results.json + predictions.jsonl of every run, so every
number can be recomputed); it is built in a temporary sibling and renamed into place at the end.
torch is imported only when training starts.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from biotok.output import atomic_directory, check_writable
from biotok_train.config import BenchConfig, FinetuneConfig
from biotok_train.tasks import UNAVAILABLE, TaskSpec, get_task, load, suite_tasks
from biotok_train.scores import suite_score
from biotok_train.stats import summarize_seeds

log = logging.getLogger(__name__)
PathLike = str | os.PathLike[str]


def bench_tasks(config: BenchConfig) -> list[TaskSpec]:
    """The tasks to run: ``config.tasks`` by name (any registered task), else the suite's."""
    return [get_task(t) for t in config.tasks] if config.tasks else suite_tasks(config.suite)


@dataclass(frozen=True)
class TaskScore:
    """One task's benchmark score over the seeds."""

    task: str
    family: str
    task_type: str
    metric: str
    by_seed: dict[int, float]
    mean: float
    std: float | None  # sample std over seeds; None for one seed (see biotok_train.stats.summarize_seeds)
    setup: str  # the options that shape the task (scheme, nested policy, relation input...)
    description: str = ""


@dataclass(frozen=True)
class BenchResult:
    """A suite's task scores, family means and suite score (see the module doc)."""

    model: str
    suite: str
    seeds: tuple[int, ...]
    config: FinetuneConfig
    tasks: list[TaskScore]
    by_family: dict[str, float]
    score: float
    not_run: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["tasks"] = [{**t, "by_seed": {str(k): v for k, v in t["by_seed"].items()}} for t in d["tasks"]]
        return d


def _setup_note(info: dict) -> str:
    parts = [f"{k.replace('_', ' ')} {info[k]}" for k in ("scheme", "nested", "relation_input", "threshold",
                                                          "train_fraction") if k in info]
    return "; ".join(parts)


def run_bench(model: PathLike, config: BenchConfig = BenchConfig(), out: PathLike | None = None, *,
              data_dir: PathLike | None = None, cache: PathLike | None = None, force: bool = False,
              progress: bool = True, bar: bool | None = None) -> BenchResult:
    """Fine-tune ``model`` on every task of ``config`` for every seed; with ``out``, write
    bench.md, bench.json, bench.png and runs/ there (refused when ``out`` exists without ``force``).

    Every task's data is read (and checked) before any training, so a bad file fails fast.
    ``bar``: a progress bar per run over its optimizer steps (None: with ``progress``, when stderr
    is a terminal).
    """
    from biotok_train.finetune import make_head, run
    from biotok_train.finetune.engine import write_results
    from biotok_train.finetune.relation import can_mark

    inputs = [p for p in (model, data_dir, cache) if p is not None and Path(p).exists()]
    if out is not None:
        check_writable(out, force, inputs, marker="bench.json")
    specs = bench_tasks(config)
    data = {}
    for spec in specs:
        if progress:
            log.info("reading %s", spec.name)
        data[spec.name] = load(spec, data_dir, cache)
    runs = []
    for spec in specs:
        cfg = config.finetune
        note = ""
        if spec.task_type == "relation" and cfg.relation_input == "markers" and not can_mark(data[spec.name].train):
            cfg = dataclasses.replace(cfg, relation_input="mask")
            note = " (no entity spans: masked as shipped)"
        for seed in config.seeds:
            if progress:
                log.info("%s, seed %d", spec.name, seed)
            seeded = dataclasses.replace(cfg, seed=seed)
            runs.append((spec, seed, seeded, note,
                         run(model, spec, data[spec.name], spec.task_type, seeded, None, progress=progress,
                             bar=bar)))
    scores = []
    for spec in specs:
        mine = [(seed, note, res) for s, seed, _, note, res in runs if s is spec]
        values = {seed: float(res.metrics[spec.metric]) for seed, _, res in mine}
        over = summarize_seeds(list(values.values()))
        scores.append(TaskScore(spec.name, spec.family, spec.task_type, spec.metric, values, over.mean, over.std,
                                _setup_note(mine[0][2].task_info) + mine[0][1], spec.description))
    folded = suite_score([(t.task, t.family, t.mean) for t in scores])
    not_run = dict(UNAVAILABLE) if config.suite == "blurb" and not config.tasks else {}  # BLURB tasks not staged
    result = BenchResult(str(model), config.suite, config.seeds, config.finetune, scores, dict(folded.by_family),
                         folded.value, not_run)
    if out is not None:
        with atomic_directory(out, force, inputs, marker="bench.json") as tmp:
            for spec, seed, seeded, _, res in runs:
                write_results(res, make_head(spec.task_type, seeded, spec), data[spec.name].test, res.predictions,
                              tmp / "runs" / spec.name / f"seed-{seed}")
            (tmp / "bench.json").write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
            (tmp / "bench.md").write_text(format_bench(result) + "\n", encoding="utf-8")
            plot_bench(result, tmp / "bench.png")
        if progress:
            log.info("wrote %s", Path(out) / "bench.md")
    return result


def format_bench(result: BenchResult) -> str:
    """bench.md: one row per task (mean ± std over seeds, each seed), the family means and the suite score."""
    seeds = " ".join(str(s) for s in result.seeds)
    lines = [
        f"# bench {result.suite}: {result.model}",
        "",
        f"Suite score **{result.score:.4f}**: the mean of the task scores within each family, then over the "
        f"{len(result.by_family)} families (BLURB). {len(result.tasks)} tasks, seeds {seeds}; each task's metric is "
        "its benchmark's own.",
        "",
        "| task | family | type | metric | score (mean ± std) | per seed | setup |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in result.tasks:
        per = " ".join(f"{t.by_seed[s]:.4f}" for s in result.seeds)
        score = f"{t.mean:.4f}" + (f" ± {t.std:.4f}" if t.std is not None else "")  # one seed: no std
        lines.append(f"| {t.task} | {t.family} | {t.task_type} | {t.metric} | {score} | {per} | {t.setup or '-'} |")
    lines += ["", "| family | tasks | mean |", "|---|---|---|"]
    for fam, v in result.by_family.items():
        names = ", ".join(t.task for t in result.tasks if t.family == fam)
        lines.append(f"| {fam} | {names} | {v:.4f} |")
    c = result.config
    lines += ["", f"Recipe: {c.epochs} epochs, lr {', '.join(f'{x:g}' for x in c.learning_rates())}"
              f"{' (best on dev)' if c.lr_grid else ''}, batch {c.batch_size}, max length {c.max_length}, "
              f"patience {c.patience}, warm-up {c.optim.warmup:g}, weight decay {c.optim.weight_decay:g}, layer decay "
              f"{c.optim.layer_decay:g}, train fraction {c.train_fraction:g}"
              f"{f', max steps {c.max_steps}' if c.max_steps else ''}."]
    if result.not_run:
        lines += ["", "Not run (not in the shared data): " + "; ".join(f"{k}: {v}" for k, v in result.not_run.items())
                  + "."]
    lines += ["", "Every number can be recomputed from `runs/TASK/seed-S/predictions.jsonl` (gold and predicted "
              "per test example) with `biotok_train.scores` (docs/evaluation.md)."]
    return "\n".join(lines)


def plot_bench(result: BenchResult, path: PathLike) -> Path:
    """bench.png: each task's mean score (bar, ± std) and its seeds (dots), coloured by family."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = list(result.by_family)
    colours = {f: plt.get_cmap("tab10")(i) for i, f in enumerate(families)}
    tasks = sorted(result.tasks, key=lambda t: (families.index(t.family), t.task))
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(tasks) + 1.6), dpi=110)
    ys = list(range(len(tasks)))[::-1]
    for y, t in zip(ys, tasks):
        ax.barh(y, t.mean, xerr=t.std or 0, color=colours[t.family], alpha=0.75, capsize=3,
                label=t.family if t is next(x for x in tasks if x.family == t.family) else None)
        ax.plot([t.by_seed[s] for s in result.seeds], [y] * len(result.seeds), "k.", markersize=4)
    ax.set_yticks(ys, [f"{t.task} ({t.metric})" for t in tasks], fontsize=8)
    ax.axvline(result.score, color="k", linestyle="--", linewidth=1, label=f"suite score {result.score:.3f}")
    ax.set_xlabel("test score (mean ± std over seeds; dots: seeds)")
    ax.set_title(f"bench {result.suite}: {Path(result.model).name}", fontsize=10)
    ax.set_xlim(min(0.0, min(min(t.by_seed.values()) for t in tasks)), 1.0)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


__all__ = ["BenchResult", "TaskScore", "bench_tasks", "format_bench", "plot_bench", "run_bench"]
