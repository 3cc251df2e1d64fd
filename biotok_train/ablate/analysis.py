"""The statistics of an ablation: each candidate against the reference (or every pair of arms,
``pairs="all"``), each arm against its floors and against its task's trivial baseline (paired
bootstrap over test examples pooled across seeds), the tasks where no arm beats that baseline
("no signal"), rank agreement between sizes, the curves, the costs, and the verdict sentences written
from those numbers: :func:`analyze` turns the records of a finished ablation into its
:class:`~biotok_train.ablate.results.Results`, numbers only (the page is rendered from them)."""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from biotok.io import versions_sentence
from biotok_train import stats as S
from biotok_train.ablate import plateau as P
from biotok_train.ablate.command import command_line
from biotok_train.ablate.keys import Key
from biotok_train.ablate.plan import Leg, Plan, comparison_pairs, evaluate_key, floor_name, pretrain_key
from biotok_train.ablate.results import MLM, ArmResult, Results, at_size, metric_label
from biotok_train.ablate.store import decode
from biotok_train.ablate.tasks import resolve_tasks
from biotok_train.ablate.config import AblationConfig
from biotok_train.tasks.examples import targets

MEAN_METRICS = ("accuracy", "hamming_score", "exact_match_ratio")  # means of per-example scores
WEIGHTED_METRICS = ("weighted_f1", "weighted_f1_multilabel")  # sklearn's weighted F1: sums of per-label counts


@dataclass
class Evidence:
    """Everything the results are computed from: the recipe, the arms, the plan and the records of
    its jobs (by key), the tasks' data and the jobs' costs; ``rows``: the bootstrap rows made so
    far, by cell (see :func:`_cell_rows`)."""

    cfg: AblationConfig
    out: Path
    legs: list[Leg]
    plan: Plan
    records: dict
    datasets: dict
    costs: dict
    rows: dict = field(default_factory=dict)

    @functools.cached_property
    def resolved(self) -> dict:
        """task key -> its spec, data, task type and head (:func:`~biotok_train.ablate.tasks.resolve_tasks`)."""
        return resolve_tasks(self.cfg, self.datasets)

    @functools.cached_property
    def tasks(self) -> dict:
        """task key -> {"name", "type", "metric", "n_test"}."""
        return {t: {"name": r.spec.name if r.spec is not None else getattr(self.datasets[t], "name", t),
                    "type": r.kind, "metric": r.head.metric, "n_test": len(self.datasets[t].test)}
                for t, r in self.resolved.items()}

    @functools.cached_property
    def baselines(self) -> dict:
        """task key -> its trivial baseline (:func:`biotok_train.tasks.baseline.trivial_baseline`)."""
        from biotok_train.tasks.baseline import trivial_baseline  # lazy: one use

        return {t: trivial_baseline(self.datasets[t], self.resolved[t].spec) for t in self.datasets}

    @functools.cached_property
    def word_floor(self) -> tuple[str, tuple[float, ...]]:
        from biotok_train.evaluate.masked_words import sample_words  # lazy: heavy import

        held = (self.out / "corpus" / "heldout.txt").read_text(encoding="utf-8").splitlines()
        return word_floor(self.out / "corpus" / "pretrain.txt", sample_words(held, self.cfg.statistics.n_words, seed=0))

    def runs(self, size: str, arm: str, task: str, step: int | None = None) -> dict[str, dict]:
        """The records of one cell's fine-tuning runs: {"pP-fF": run}."""
        return {k: self.records[key] for k, key in self.plan.runs[(size, arm, task, step)].items()}

    def ranks(self, size: str, arm: str) -> dict[int, list[int]]:
        """An arm's rank of each held-out word (-1: not scored), per pretraining seed."""
        return {p: self.records[evaluate_key(size, arm, p)]["mlm"]["ranks"] for p in self.cfg.pretraining.seeds}


def analyze(res: Evidence) -> Results:
    """The results of a finished ablation, from its records only: every number, verdict and
    sentence its page shows (:mod:`~biotok_train.ablate.render` computes none)."""
    cfg, sized = res.cfg, len(res.cfg.sizes) > 1
    arms = arm_results(res)
    comparisons, floors, rankings, mlm_floors = compute_statistics(res, arms)
    probed = P.probe_agreements(res, arms) if cfg.probe else []
    points, gaps = curve(res)
    held, held_gaps = P.heldout_curve(res), P.heldout_curve_gaps(res)
    baselines, checks, silent = baseline_checks(res)
    comparisons = signal(comparisons, arms, floors, mlm_floors, checks)
    sentences = [*verdict_sentences(cfg, res.tasks, comparisons, floors, rankings, arms, mlm_floors),
                 *P.plateau_sentences(arms, sized), *(r["sentence"] for r in probed),
                 *no_signal_sentences(res.tasks, baselines, checks, silent, cfg),
                 *P.curve_plateau_sentences(held, cfg.pretraining.budget, sized), *P.heldout_gap_sentences(held_gaps, sized),
                 *catch_up_sentences(gaps, res)]
    return Results(recipe=cfg.recipe(), tokenizers=list(cfg.tokenizers), reference=res.legs[0].name,
                   command=command_line(cfg, res.out), versions=versions_line(), tasks=res.tasks, arms=arms,
                   comparisons=comparisons, floors=floors,
                   mlm_floors=mlm_floors, rankings=rankings, probe_rankings=probed, curve=points, curve_gaps=gaps,
                   heldout_curve=held, heldout_curve_gaps=held_gaps, verdicts=sentences, pairs=cfg.statistics.pairs,
                   baselines=baselines, baseline_checks=checks, no_signal=silent,
                   per_pretrain_seed=per_pretrain_seed(res), costs=cost_summary(res))


def signal(comparisons: Sequence[dict], arms: Sequence[ArmResult], floors: Sequence[dict],
           mlm_floors: Sequence[dict], checks: Sequence[dict]) -> list[dict]:
    """The comparisons, each marked ``"signal": False`` where its verdict says nothing about the
    vocabularies: on masked words, where either arm did not leave the plateau or no arm beats
    always answering the most frequent word; on a task, where no arm beats its random-init floor
    or no arm beats the task's trivial baseline (``"why_no_signal"`` says which). Unmarked, the verdict stands."""
    plateau = {(a.size, a.name) for a in arms if a.heldout_mlm and not a.heldout_mlm["left_plateau"]}

    def none_beat(rows: Sequence[dict], size: str, task: str, beats: str) -> bool:
        mine = [f for f in rows if f["size"] == size and f["task"] == task]
        return bool(mine) and not any(f[beats] for f in mine)

    out = []
    for c in comparisons:
        size, task = c["size"], c["task"]
        stuck = [n for n in (c["reference_arm"], c["candidate_arm"]) if (size, n) in plateau] if task == MLM else []
        if stuck:
            why = f"{' and '.join(stuck)} did not leave the plateau"
        elif none_beat(mlm_floors if task == MLM else floors, size, task, "beats_floor"):
            why = "no arm beats always answering the most frequent word" if task == MLM else \
                "no arm beats its random-init floor"
        else:
            why = "no arm beats the trivial baseline" if none_beat(checks, size, task, "beats_baseline") else None
        out.append({**c, "signal": False, "why_no_signal": why} if why else c)
    return out


def versions_line() -> str:
    return versions_sentence(("python", "biotok", "torch", "transformers", "tokenizers", "seqeval", "scipy", "numpy"))


def word_floor(train: Path, samples: Sequence) -> tuple[str, tuple[float, ...]]:
    """The masked-word floor: always answer the pretraining text's most frequent word (as the
    masked-word evaluation delimits words). Returns it and its hit (1.0 / 0.0) per sample."""
    from biotok_train.evaluate.masked_words import WORD  # lazy: evaluate imports torch-side modules

    counts: Counter = Counter()
    with open(train, encoding="utf-8") as f:
        for line in f:
            counts.update(m.group(0) for m in WORD.finditer(line))
    if not counts:
        return "", tuple(0.0 for _ in samples)
    word = min(counts, key=lambda w: (-counts[w], w))
    return word, tuple(float(s.text[s.start:s.end] == word) for s in samples)


def arm_results(res: Evidence) -> list[ArmResult]:
    """Each arm at each size, from the records of its jobs."""
    from biotok_train.pretrain.heldout import pooled_summary  # lazy: torch-side module

    cfg = res.cfg
    train_chars = int((res.out / "corpus" / "done").read_text(encoding="utf-8").split()[1])
    arms = []
    for size in cfg.sizes:
        for leg in res.legs:
            prep = res.records[f"prepare/{leg.vocab}"]
            pre = [res.records[pretrain_key(size, leg.name, p)] for p in cfg.pretraining.seeds] if leg.pretrained else []
            ev = {p: res.records[evaluate_key(size, leg.name, p)] for p in cfg.pretraining.seeds} if leg.pretrained else {}
            tokens = int(round(sum(r["tokens_seen"] for r in pre) / len(pre))) if pre else 0
            cpt = train_chars / max(1, prep["num_tokens"])
            summ = lambda runs: S.summarize_seeds([r["score"] for r in runs.values()]).to_dict()  # noqa: E731
            floors = {t: summ(res.runs(size, floor_name(leg, cfg.base.model is not None), t)) for t in cfg.tasks} \
                if cfg.statistics.floor else {}
            arms.append(ArmResult(
                size=size, name=leg.name, tokenizer=str(leg.tokenizer), vocab_size=prep["vocab_size"],
                fertility=prep["fertility"], pieces_per_line=prep["pieces_per_line"], chars_per_token=round(cpt, 4),
                corpus_tokens=prep["num_tokens"], steps=int(pre[0]["steps"]) if pre else 0, tokens_seen=tokens,
                chars_seen=int(round(tokens * cpt)), epochs=round(tokens / max(1, prep["num_tokens"]), 3),
                heldout_mlm=pooled_summary({p: e["heldout"]["rows"] for p, e in ev.items()}, cfg.statistics.n_resamples,
                                           cfg.statistics.confidence) if ev else {},
                mlm={k: S.summarize_seeds([e["mlm"]["accuracy"][k] for e in ev.values()]).to_dict()
                     for k in ("top1", "top3", "top5")} if ev else {},
                mlm_words=int(next(iter(ev.values()))["mlm"]["n_words"]) if ev else 0,
                metrics={t: summ(res.runs(size, leg.name, t)) for t in cfg.tasks}, floors=floors,
                init=leg.init, vocabulary=leg.vocab, loss_curve=pre[0].get("loss_curve", []) if pre else [],
                probe=res.records["probe"][leg.vocab] if cfg.probe else {}))
    return arms


def _cell_rows(res: Evidence, cell: tuple, fast: bool = True):
    """Per-example rows of each run of ``cell`` for the bootstrap, and the statistic: {run: rows},
    metric; made once per cell (the comparisons, floors, baselines and curve share them). ``cell``:
    (size, arm, task, step), that cell's fine-tuning runs; ("baseline", size, arm, task, step), the
    task's trivial baseline paired with them (the same constant answer under every run's key)."""
    if (cell, fast) not in res.rows:
        res.rows[(cell, fast)] = _rows(res, *_predictions(res, cell), fast=fast)
    return res.rows[(cell, fast)]


def _predictions(res: Evidence, cell: tuple) -> tuple:
    """(task, decoded predictions by run, head scores by run, labels) of a cell (:func:`_cell_rows`)."""
    baseline = cell[0] == "baseline"
    size, arm, task, step = cell[1:] if baseline else cell
    runs = res.runs(size, arm, task, step)
    labels = next(iter(runs.values()))["labels"]
    if not baseline:
        return task, {k: decode(r["predictions"]) for k, r in runs.items()}, {k: r["score"] for k, r in runs.items()}, labels
    b, data = res.baselines[task], res.datasets[task]
    one = tuple(b.prediction) if isinstance(b.prediction, list) else b.prediction
    pred = [["O"] * len(e.tags) for e in data.test] if res.resolved[task].kind == "ner" else [one] * len(data.test)
    return task, {k: pred for k in runs}, {k: b.test for k in runs}, labels


def _paired(res: Evidence, a: tuple, b: tuple) -> tuple:
    """(rows of cell a, rows of cell b, statistic) on one footing: where one took a fast path and the
    other could not (its head's score is not the fast statistic's), both in the head's own scorer."""
    fast = (S.MICRO_F1, S.MEAN, S.WEIGHTED_F1)
    ra, rb = _cell_rows(res, a), _cell_rows(res, b)
    if ra[1] is rb[1] or (ra[1] not in fast and rb[1] not in fast):  # one statistic, or both the head's scorer
        return ra[0], rb[0], ra[1]
    ra, rb = _cell_rows(res, a, fast=False), _cell_rows(res, b, fast=False)
    return ra[0], rb[0], ra[1]


def _rows(res: Evidence, task: str, preds: dict[str, list], scores: dict[str, float], labels: list,
          fast: bool = True):
    """:func:`_cell_rows` of decoded predictions ``preds`` whose head scores are ``scores``
    (``fast`` False: the head's own scorer on (example, prediction) pairs)."""
    test = list(res.datasets[task].test)
    kind, head = res.resolved[task].kind, res.resolved[task].head
    metric = head.metric

    def score(items):  # any task: its own scorer on the resampled (example, prediction) pairs
        return head.score([e for e, _ in items], [p for _, p in items], labels).metrics[metric]

    score.__name__ = metric

    def agrees(rows: dict, statistic) -> bool:  # a fast path must give the head's own number
        return all(math.isclose(statistic(rows[k]), scores[k], abs_tol=1e-9) for k in rows)

    if not fast:
        pass
    elif kind == "ner" and all(hasattr(e, "tags") for e in test):  # strict IOB2 entity F1 from per-sentence counts
        gold = [list(e.tags) for e in test]
        rows = {k: S.entity_stats(gold, p) for k, p in preds.items()}
        if agrees(rows, S.MICRO_F1):
            return rows, S.MICRO_F1
    elif metric in MEAN_METRICS:  # a mean of per-example scores (the metric itself on each example)
        from biotok_train.scores import compute  # lazy: one use

        gold = targets(kind, test)
        one = (lambda g, q: float(g == q)) if metric == "accuracy" else (  # noqa: E731 (accuracy: no sklearn per row)
            lambda g, q: compute(metric, [g], [q]).value)
        rows = {k: S.accuracy_stats([one(g, q) for g, q in zip(gold, p)]) for k, p in preds.items()}
        if agrees(rows, S.MEAN):
            return rows, S.MEAN
    elif metric in WEIGHTED_METRICS:  # per-label (tp, fp, fn) of each example: one matrix product per resample
        gold = targets(kind, test)
        spec = res.resolved[task].spec
        fixed = dict(spec.metric_options).get("labels") if spec else None
        if metric == "weighted_f1":  # single-label, compared as strings (scores.weighted_f1)
            gold, preds = [str(g) for g in gold], {k: [str(q) for q in p] for k, p in preds.items()}
        flat = (lambda xs: [x for t in xs for x in t]) if kind == "multilabel" else list  # noqa: E731
        names = list(fixed) if fixed else sorted({*flat(gold), *(x for p in preds.values() for x in flat(p))})
        rows = {k: S.class_stats(gold, p, names) for k, p in preds.items()}
        if agrees(rows, S.WEIGHTED_F1):
            return rows, S.WEIGHTED_F1
    return {k: list(zip(test, p)) for k, p in preds.items()}, score


def _mlm_rows(res: Evidence, size: str, ref: str, cand: str):
    """Top-1 hits per held-out word scored by both arms, per pretraining seed."""
    r, c = res.ranks(size, ref), res.ranks(size, cand)
    first = res.cfg.pretraining.seeds[0]
    both = [i for i, (a, b) in enumerate(zip(r[first], c[first])) if a >= 0 and b >= 0]
    hit = lambda ranks: S.accuracy_stats([float(ranks[i] == 1) for i in both])  # noqa: E731
    return {str(p): hit(r[p]) for p in r}, {str(p): hit(c[p]) for p in c}


def _bootstrap(ref_by_run: dict, cand_by_run: dict, metric, cfg: AblationConfig, name: str | None = None
               ) -> S.PairedBootstrap:
    ref, cand, clusters = S.pool_seeds(ref_by_run, cand_by_run)
    return S.paired_bootstrap(ref, cand, metric, clusters=clusters, n_resamples=cfg.statistics.n_resamples,
                              confidence=cfg.statistics.confidence, seed=0, name=name)


def _compare(res: Evidence, ref: tuple, cand: tuple, task: str) -> S.PairedBootstrap:
    """Cell ``cand`` against cell ``ref`` (:func:`_cell_rows`) on ``task``, named by its metric."""
    return _bootstrap(*_paired(res, ref, cand), res.cfg, res.resolved[task].head.metric)


def _mlm_floor_rows(res: Evidence, size: str, name: str, hits: Sequence[float]):
    """Top-1 hits of an arm and of the word floor on the words the arm could score, per seed."""
    r = res.ranks(size, name)
    words = [i for i, k in enumerate(r[res.cfg.pretraining.seeds[0]]) if k >= 0]
    arm = {str(p): S.accuracy_stats([float(r[p][i] == 1) for i in words]) for p in r}
    return {str(p): S.accuracy_stats([hits[i] for i in words]) for p in r}, arm


def arm_pairs(legs: Sequence[Leg], which: str = "reference") -> list[tuple[str, str]]:
    """(reference, candidate) pairs the report compares: ``reference``,
    :func:`~biotok_train.ablate.plan.comparison_pairs` (every arm against the first, and a base's
    own pairs); ``all``, those then every other pair of arms, the earlier arm as reference."""
    pairs = comparison_pairs(legs)
    if which == "all":
        seen = {frozenset(p) for p in pairs}
        pairs += [(a.name, b.name) for i, a in enumerate(legs) for b in legs[i + 1:]
                  if frozenset((a.name, b.name)) not in seen]
    return pairs


def compute_statistics(res: Evidence, arms: list[ArmResult]) -> tuple[list, list, list, list]:
    """(comparisons of each pair of arms (:func:`arm_pairs` of the recipe's ``pairs``),
    arm-vs-floor checks, rank agreements across sizes, masked-word top-1 of each pretrained arm
    against always answering the most frequent word)."""
    cfg = res.cfg
    comparisons, floors, mlm_floors = [], [], []
    names = [leg.name for leg in res.legs]
    pairs = arm_pairs(res.legs, cfg.statistics.pairs)
    pretrained = {leg.name for leg in res.legs if leg.pretrained}
    word, hits = res.word_floor
    for size in cfg.sizes:
        for n in (n for n in names if word and n in pretrained):
            b = _bootstrap(*_mlm_floor_rows(res, size, n, hits), S.MEAN, cfg)
            mlm_floors.append({"size": size, "task": MLM, "arm": n, "word": word, **b.to_dict(),
                               "beats_floor": b.verdict == S.BETTER})
        for ref, cand in ((r, c) for r, c in pairs if r in pretrained and c in pretrained):
            b = _bootstrap(*_mlm_rows(res, size, ref, cand), S.MEAN, cfg)
            comparisons.append({"size": size, "task": MLM, "reference_arm": ref, "candidate_arm": cand,
                                **b.to_dict(), "metric": "top1"})
        for task in cfg.tasks:
            for ref, cand in pairs:
                b = _compare(res, (size, ref, task, None), (size, cand, task, None), task)
                comparisons.append({"size": size, "task": task, "reference_arm": ref, "candidate_arm": cand,
                                    **b.to_dict()})
            for leg in (res.legs if cfg.statistics.floor else ()):
                floor = (size, floor_name(leg, cfg.base.model is not None), task, None)
                b = _compare(res, floor, (size, leg.name, task, None), task)
                floors.append({"size": size, "task": task, "arm": leg.name, **b.to_dict(),
                               "beats_floor": b.verdict == S.BETTER})
    return comparisons, floors, _rankings(res, arms, names), mlm_floors


def baseline_checks(res: Evidence) -> tuple[dict, list[dict], list[dict]]:
    """(each task's trivial baseline, each arm against it (paired bootstrap, ``beats_baseline``
    when better), the tasks where no arm beats it at a size: "no signal")."""
    cfg = res.cfg
    checks, silent = [], []
    for size in cfg.sizes:
        for task in cfg.tasks:
            for leg in res.legs:
                cell = (size, leg.name, task, None)
                b = _compare(res, ("baseline", *cell), cell, task)
                checks.append({"size": size, "task": task, "arm": leg.name, **b.to_dict(),
                               "beats_baseline": b.verdict == S.BETTER})
            mine = [c for c in checks if c["size"] == size and c["task"] == task]
            if not any(c["beats_baseline"] for c in mine):
                silent.append({"size": size, "task": task, "baseline": res.baselines[task].test,
                               "best_arm": max(mine, key=lambda c: c["candidate"])["arm"],
                               "best": max(c["candidate"] for c in mine)})
    return {t: b.to_dict() for t, b in res.baselines.items()}, checks, silent


def no_signal_sentences(tasks: dict, baselines: dict, checks: Sequence[dict], silent: Sequence[dict],
                        cfg: AblationConfig) -> list[str]:
    """One sentence per task and size where no arm beats the trivial baseline, from the numbers."""
    out = []
    for s in silent:
        mine = [c for c in checks if c["size"] == s["size"] and c["task"] == s["task"]]
        b = baselines[s["task"]]
        best = max(mine, key=lambda c: c["candidate"])
        out.append(f"{at_size(s['size'])}, {metric_label(tasks, s['task'])} carries no signal: no arm beats its "
                   f"trivial baseline ({b['rule']}: {b['test']:.3f} on test); the best arm, {best['arm']}, scores "
                   f"{best['candidate']:.3f} ({best['difference']:+.3f} [{best['low']:+.3f}, {best['high']:+.3f}], "
                   f"{cfg.statistics.confidence:.0%} paired bootstrap), so the verdicts on that task say nothing about the "
                   "vocabularies and it is left out of the Kendall τ that tests whether a tokenizer measure predicts the "
                   "tasks' ranking.")
    return out


def _rankings(res: Evidence, arms: list[ArmResult], names: list[str]) -> list[dict]:
    """Kendall τ of the arms' ranking between sizes, per metric."""
    cfg, out = res.cfg, []
    if len(cfg.sizes) > 1:
        by = {(a.size, a.name): a for a in arms}
        for task in (MLM, *cfg.tasks):
            scores = {s: {n: by[(s, n)].summary(task)["mean"] for n in names} for s in cfg.sizes}
            label = "MLM top-1" if task == MLM else f"{task} {res.resolved[task].head.metric}"
            out += [r.to_dict() for r in S.rank_agreement(scores, metric=label)]
    return out


def curve(res: Evidence) -> tuple[list[dict], list[dict]]:
    """The learning curve on each of the curve's tasks (the first, unless --curve-tasks): each
    pretrained arm's score after k steps (0: where it starts, then each --curve step and the budget),
    and at each step each arm minus continual (or the reference) with its paired bootstrap interval."""
    cfg = res.cfg
    steps = (0, *cfg.curve.steps, cfg.pretraining.budget)
    legs = [leg for leg in res.legs if leg.pretrained]
    ref = next((leg.name for leg in legs if leg.init == "continual"), legs[0].name if legs else None)
    points, gaps = [], []
    for size in cfg.sizes:
        for task in cfg.curve_task_list:
            for k in steps:
                step = None if k == cfg.pretraining.budget else k
                runs = {leg.name: res.runs(size, leg.name, task, step) for leg in legs}
                for name, r in runs.items():
                    points.append({"size": size, "arm": name, "step": k, "task": task,
                                   **S.summarize_seeds([v["score"] for _, v in sorted(r.items())]).to_dict()})
                for name in (n for n in runs if n != ref):
                    b = _compare(res, (size, ref, task, step), (size, name, task, step), task)
                    gaps.append({"size": size, "step": k, "task": task, "reference_arm": ref, "candidate_arm": name,
                                 **b.to_dict()})
    return points, gaps


def verdict_sentences(cfg: AblationConfig, tasks: dict, comparisons: list[dict], floors: list[dict],
                      rankings: list[dict], arms: list[ArmResult], mlm_floors: Sequence[dict] = ()) -> list[str]:
    """The verdicts in words, every one computed from the numbers."""
    out = []
    seeds = len(cfg.pretraining.seeds) * len(cfg.finetuning.seeds)
    pct = f"{cfg.statistics.confidence:.0%}"
    for c in comparisons:
        what = metric_label(tasks, c["task"])
        ci = f"{c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}]"
        n = (f"{c['n_clusters']} held-out words × {len(cfg.pretraining.seeds)} pretraining seed(s)" if c["task"] == MLM
             else f"{c['n_clusters']} test examples × {seeds} seed pair(s)")
        if c.get("signal") is False:
            out.append(f"{at_size(c['size'])}, on {what}, {c['candidate_arm']} against {c['reference_arm']} carries "
                       f"no signal: {ci} ({pct} paired bootstrap interval over {n}), but {c['why_no_signal']}, so the "
                       "difference says nothing about the vocabularies.")
            continue
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
                out.append(f"The budget ({cfg.pretraining.budget} steps, {cfg.tokens_per_arm:,} token positions per arm) was too "
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


def per_pretrain_seed(res: Evidence) -> list[dict]:
    """Each arm's test score per task and pretraining seed: mean ± std over the fine-tuning seeds
    with its t-interval (the spread of fine-tuning only: one pretraining seed is one draw of the
    pretraining)."""
    cfg, out = res.cfg, []
    for size in cfg.sizes:
        for leg in res.legs:
            for task in cfg.tasks:
                runs = res.runs(size, leg.name, task)
                for p in cfg.pretraining.seeds:
                    values = [runs[f"p{p}-f{f}"]["score"] for f in cfg.finetuning.seeds if f"p{p}-f{f}" in runs]
                    if not values:
                        continue
                    ci = S.seed_interval(values, cfg.statistics.confidence)
                    out.append({"size": size, "arm": leg.name, "task": task, "pretrain_seed": p,
                                **S.summarize_seeds(values).to_dict(),
                                "low": ci[0] if ci else None, "high": ci[1] if ci else None})
    return out


def cost_summary(res: Evidence) -> dict:
    """costs.json: every job's CPU seconds (``time.process_time`` of the process that ran it), wall
    seconds and device, in all and per arm (pretraining, evaluation, fine-tuning with its floors'
    and the curve's runs); the one cost format (benchmarks/experiments/time_to_verdict.py reads it)."""
    by_arm: dict[str, dict[str, float]] = {}
    for key, c in res.costs.items():
        k = Key.parse(key)
        kind, arm = k.kind, k.owner
        row = by_arm.setdefault(arm, {})
        row[kind] = round(row.get(kind, 0.0) + float(c.get("cpu_s", 0.0)), 1)
    return {"format": "biotok-costs/1", "unit": "seconds",
            "total_cpu_s": round(sum(float(c.get("cpu_s", 0.0)) for c in res.costs.values()), 1),
            "total_wall_s": round(sum(float(c.get("wall_s", 0.0)) for c in res.costs.values()), 1),
            "by_arm": dict(sorted(by_arm.items())), "jobs": dict(sorted(res.costs.items()))}


def catch_up_sentences(gaps: Sequence[dict], res: Evidence) -> list[str]:
    """The curve's answer per arm, computed from the per-step verdicts: from which step it is no
    longer worse than the curve's reference, and whether it stays so."""
    out = []
    tasks = res.cfg.curve_task_list
    for size, task in ((size, task) for size in res.cfg.sizes for task in tasks):
        on = f" on {metric_label(res.tasks, task)}" if len(tasks) > 1 else ""
        for arm in dict.fromkeys(g["candidate_arm"] for g in gaps if g["size"] == size and g["task"] == task):
            rows = [g for g in gaps if g["size"] == size and g["candidate_arm"] == arm and g["task"] == task]
            ref, tried = rows[0]["reference_arm"], ", ".join(f"{g['step']:,}" for g in rows)
            first = next((g for g in rows if g["verdict"] != S.WORSE), None)
            if first is None:
                out.append(f"On the curve{on}, {arm} stays below {ref} at every step measured (k = {tried}): within "
                           f"{res.cfg.pretraining.budget:,} steps it does not catch up.")
                continue
            when = "from the start (k = 0)" if first["step"] == 0 else f"after {first['step']:,} MLM steps"
            word = "better than" if first["verdict"] == S.BETTER else "indistinguishable from"
            later = all(g["verdict"] != S.WORSE for g in rows if g["step"] >= first["step"])
            out.append(f"On the curve{on}, {arm} is {word} {ref} {when}: {first['difference']:+.3f} [{first['low']:+.3f}, "
                       f"{first['high']:+.3f}]" + ("" if later else ", though a later step is worse again") + ".")
    return out


