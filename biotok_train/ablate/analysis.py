"""The statistics of an ablation: each candidate against the reference and each arm against
its floors (paired bootstrap over test examples pooled across seeds), rank agreement between
sizes, and the verdict sentences written from those numbers."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from biotok_train import stats as S
from biotok_train.ablate.plan import MLM, ArmResult, Context, Leg, decode, floor_dir, read_json, task_dir
from biotok_train.config import BASE_SIZE, AblationConfig

MEAN_METRICS = ("accuracy", "hamming_score", "exact_match_ratio")  # means of per-example scores


def _task_rows(ctx: Context, task: str, runs: dict[str, dict]):
    """Per-example rows of each run for the bootstrap, and the statistic: {run: rows}, metric."""
    test = list(ctx.datasets[task].test)
    _, kind, head = ctx.task_objs[task]
    metric = head.metric
    preds = {k: decode(r["predictions"]) for k, r in runs.items()}
    labels = next(iter(runs.values()))["labels"]

    def score(items):  # any task: its own scorer on the resampled (example, prediction) pairs
        return head.score([e for e, _ in items], [p for _, p in items], labels).metrics[metric]

    score.__name__ = metric

    def agrees(rows: dict, statistic) -> bool:  # a fast path must give the head's own number
        return all(math.isclose(statistic(rows[k]), runs[k]["score"], abs_tol=1e-9) for k in rows)

    if kind == "ner" and all(hasattr(e, "tags") for e in test):  # strict IOB2 entity F1 from per-sentence counts
        gold = [list(e.tags) for e in test]
        rows = {k: S.entity_stats(gold, p) for k, p in preds.items()}
        if agrees(rows, S.MICRO_F1):
            return rows, S.MICRO_F1
    elif metric in MEAN_METRICS:  # a mean of per-example scores
        rows = {k: S.accuracy_stats([score([(e, q)]) for e, q in zip(test, p)]) for k, p in preds.items()}
        if agrees(rows, S.MEAN):
            return rows, S.MEAN
    return {k: list(zip(test, p)) for k, p in preds.items()}, score


def _load_runs(base: Path, cfg: AblationConfig, task: str) -> dict[str, dict]:
    return {f"p{p}-f{f}": read_json(base / f"p{p}" / task_dir(task) / f"f{f}" / "predictions.json")
            for p in cfg.pretrain_seeds for f in cfg.seeds}


def _ranks(out: Path, cfg: AblationConfig, size: str, name: str) -> dict[int, list[int]]:
    """An arm's rank of each held-out word (-1: not scored), per pretraining seed."""
    return {p: read_json(out / "arms" / size / name / f"p{p}" / "mlm.json")["ranks"] for p in cfg.pretrain_seeds}


def _mlm_rows(out: Path, cfg: AblationConfig, size: str, ref: str, cand: str):
    """Top-1 hits per held-out word scored by both arms, per pretraining seed."""
    r, c = _ranks(out, cfg, size, ref), _ranks(out, cfg, size, cand)
    first = cfg.pretrain_seeds[0]
    both = [i for i, (a, b) in enumerate(zip(r[first], c[first])) if a >= 0 and b >= 0]
    hit = lambda ranks: S.accuracy_stats([float(ranks[i] == 1) for i in both])  # noqa: E731
    return {str(p): hit(r[p]) for p in r}, {str(p): hit(c[p]) for p in c}


def _bootstrap(ref_by_run: dict, cand_by_run: dict, metric, cfg: AblationConfig, name: str | None = None
               ) -> S.PairedBootstrap:
    ref, cand, clusters = S.pool_seeds(ref_by_run, cand_by_run)
    return S.paired_bootstrap(ref, cand, metric, clusters=clusters, n_resamples=cfg.n_resamples,
                              confidence=cfg.confidence, seed=0, name=name)


def _mlm_floor_rows(out: Path, cfg: AblationConfig, size: str, name: str, hits: Sequence[float]):
    """Top-1 hits of an arm and of the word floor on the words the arm could score, per seed."""
    r = _ranks(out, cfg, size, name)
    words = [i for i, k in enumerate(r[cfg.pretrain_seeds[0]]) if k >= 0]
    arm = {str(p): S.accuracy_stats([float(r[p][i] == 1) for i in words]) for p in r}
    return {str(p): S.accuracy_stats([hits[i] for i in words]) for p in r}, arm


def compute_statistics(ctx: Context, arms: list[ArmResult], legs: list[Leg]) -> tuple[list, list, list, list]:
    """(comparisons vs the reference, arm-vs-floor checks, rank agreements across sizes,
    masked-word top-1 of each arm against always answering the most frequent word)."""
    cfg, out = ctx.cfg, ctx.out
    comparisons, floors, mlm_floors = [], [], []
    names = [leg.name for leg in legs]
    ref = names[0]
    word, hits = ctx.word_floor
    for size in cfg.sizes:
        if word:
            for n in names:
                b = _bootstrap(*_mlm_floor_rows(out, cfg, size, n, hits), S.MEAN, cfg)
                mlm_floors.append({"size": size, "task": MLM, "arm": n, "word": word, **b.to_dict(),
                                   "beats_floor": b.verdict == S.BETTER})
        for cand in names[1:]:
            r_rows, c_rows = _mlm_rows(out, cfg, size, ref, cand)
            b = _bootstrap(r_rows, c_rows, S.MEAN, cfg)
            comparisons.append({"size": size, "task": MLM, "reference_arm": ref, "candidate_arm": cand,
                                **b.to_dict(), "metric": "top1"})
        for task in cfg.tasks:
            rows = {n: _task_rows(ctx, task, _load_runs(out / "arms" / size / n, cfg, task)) for n in names}
            for cand in names[1:]:
                b = _bootstrap(rows[ref][0], rows[cand][0], rows[ref][1], cfg, ctx.task_objs[task][2].metric)
                comparisons.append({"size": size, "task": task, "reference_arm": ref, "candidate_arm": cand,
                                    **b.to_dict()})
            if cfg.floor:
                for leg in legs:
                    n = leg.name
                    fdir = floor_dir(out, size, leg, cfg.base is not None)
                    floor_rows, metric = _task_rows(ctx, task, _load_runs(fdir, cfg, task))
                    b = _bootstrap(floor_rows, rows[n][0], metric, cfg, ctx.task_objs[task][2].metric)
                    floors.append({"size": size, "task": task, "arm": n, **b.to_dict(),
                                   "beats_floor": b.verdict == S.BETTER})
    rankings = []
    if len(cfg.sizes) > 1:
        by = {(a.size, a.name): a for a in arms}
        for task in (MLM, *cfg.tasks):
            scores = {s: {n: by[(s, n)].summary(task).mean for n in names} for s in cfg.sizes}
            label = "MLM top-1" if task == MLM else f"{task} {ctx.task_objs[task][2].metric}"
            rankings += [r.to_dict() for r in S.rank_agreement(scores, metric=label)]
    return comparisons, floors, rankings, mlm_floors


# --------------------------------------------------------------------------- the report


def metric_label(ctx_tasks: dict, task: str) -> str:
    return "MLM top-1" if task == MLM else f"{ctx_tasks[task]['name']} {ctx_tasks[task]['metric']}"


def at_size(size: str) -> str:
    """'At size tiny', or 'With the base's architecture' for the arms of a --base ablation."""
    return "With the base's architecture" if size == BASE_SIZE else f"At size {size}"


def verdict_sentences(cfg: AblationConfig, tasks: dict, comparisons: list[dict], floors: list[dict],
                      rankings: list[dict], arms: list[ArmResult], mlm_floors: Sequence[dict] = ()) -> list[str]:
    """The verdicts in words, every one computed from the numbers."""
    out = []
    seeds = len(cfg.pretrain_seeds) * len(cfg.seeds)
    pct = f"{cfg.confidence:.0%}"
    for c in comparisons:
        what = metric_label(tasks, c["task"])
        ci = f"{c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}]"
        n = (f"{c['n_clusters']} held-out words × {len(cfg.pretrain_seeds)} pretraining seed(s)" if c["task"] == MLM
             else f"{c['n_clusters']} test examples × {seeds} seed pair(s)")
        if c["verdict"] == S.INDISTINGUISHABLE:
            head = f"cannot be told apart from {c['reference_arm']}"
        else:
            head = f"is {c['verdict']} than {c['reference_arm']}"
        out.append(f"{at_size(c['size'])}, on {what}, {c['candidate_arm']} {head}: {ci} "
                   f"({pct} paired bootstrap interval over {n}).")
    for f in floors:
        if not f["beats_floor"]:
            out.append(f"{at_size(f['size'])}, {f['arm']} does not beat its floor on {metric_label(tasks, f['task'])} "
                       f"(pooled over seeds: pretrained {f['candidate']:.3f} vs random init {f['reference']:.3f}, "
                       f"{f['difference']:+.3f} [{f['low']:+.3f}, {f['high']:+.3f}]).")
    for size in cfg.sizes:
        for task in cfg.tasks:
            bad = [f["arm"] for f in floors if f["size"] == size and f["task"] == task and not f["beats_floor"]]
            if bad:
                out.append(f"The budget ({cfg.budget} steps, {cfg.tokens_per_arm:,} token positions per arm) was too "
                           f"small to judge the vocabularies on {metric_label(tasks, task)} {at_size(size).lower()}: "
                           f"{len(bad)} of {len({a.name for a in arms})} arms do not beat a randomly initialised model, "
                           "so the verdicts on that task say little about the vocabularies.")
    for size in cfg.sizes:
        low = [f for f in mlm_floors if f["size"] == size and not f["beats_floor"]]
        if low:
            scored = ", ".join(f"{f['arm']} ({f['candidate']:.3f})" for f in low)
            out.append(f"{at_size(size)}, masked-word top-1 of {scored} "
                       f"is no better than always answering “{low[0]['word']}” ({low[0]['reference']:.3f} on the same "
                       "words): these models have not learned to use the context, so their masked-word comparison "
                       "says little about the vocabularies.")
    out += [r["sentence"] for r in rankings]
    return out
