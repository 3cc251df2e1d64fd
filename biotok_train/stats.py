"""Statistics of an ablation: paired bootstrap intervals, seed summaries, verdicts, rank agreement.

numpy and scipy only (no torch), so a report can be rebuilt from saved predictions anywhere.
The bootstrap resamples *test examples* (with every seed's prediction of a drawn example kept
together, so seeds of one example are never treated as independent evidence) and recomputes
the metric of both systems on each resample, which works for per-example metrics (accuracy)
and corpus-level ones (entity micro-F1, macro-F1, Pearson) alike.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

BETTER, WORSE, INDISTINGUISHABLE = "better", "worse", "indistinguishable"
VERDICTS = (BETTER, WORSE, INDISTINGUISHABLE)
_CHUNK = 256  # resamples drawn per block (fixed: the random stream must not depend on the data size)


# --------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class SumStatistic:
    """A metric computed from per-example statistics summed over examples (fast to bootstrap).

    ``fn`` maps column sums of shape ``(..., k)`` to metric values of shape ``(...)``; the
    bootstrap then needs one matrix product per block of resamples instead of a Python call
    per resample. Per-example statistics are built by :func:`accuracy_stats`,
    :func:`entity_stats`, :func:`class_stats` and :func:`pearson_stats`.
    """

    name: str
    fn: Callable[[np.ndarray], np.ndarray]

    def __call__(self, stats: np.ndarray) -> float:
        return float(self.fn(np.asarray(stats, dtype=np.float64).sum(axis=0)))


def _ratio(num: np.ndarray, den: np.ndarray, empty: float) -> np.ndarray:
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), empty)


def _mean_fn(s: np.ndarray) -> np.ndarray:
    return _ratio(s[..., 0], s[..., 1], math.nan)


def _micro_f1_fn(s: np.ndarray) -> np.ndarray:
    tp, fp, fn = s[..., 0], s[..., 1], s[..., 2]
    return _ratio(2 * tp, 2 * tp + fp + fn, 0.0)  # no entity at all: 0, as seqeval


def _macro_f1_fn(s: np.ndarray) -> np.ndarray:
    k = s.shape[-1] // 3
    c = s.reshape(*s.shape[:-1], k, 3)
    tp, fp, fn = c[..., 0], c[..., 1], c[..., 2]
    f1 = _ratio(2 * tp, 2 * tp + fp + fn, math.nan)  # a class absent from gold and predictions: left out
    with np.errstate(invalid="ignore"), _quiet():
        return np.nanmean(f1, axis=-1)


def _weighted_f1_fn(s: np.ndarray) -> np.ndarray:
    """sklearn's ``average="weighted"`` F1 (zero_division 0): each label's F1 weighted by its gold
    support (tp + fn); no gold label at all: 0."""
    k = s.shape[-1] // 3
    c = s.reshape(*s.shape[:-1], k, 3)
    tp, fp, fn = c[..., 0], c[..., 1], c[..., 2]
    f1 = _ratio(2 * tp, 2 * tp + fp + fn, 0.0)
    support = tp + fn
    return _ratio((f1 * support).sum(axis=-1), support.sum(axis=-1), 0.0)


def _pearson_fn(s: np.ndarray) -> np.ndarray:
    n, sx, sy, sxx, syy, sxy = (s[..., i] for i in range(6))
    cov = n * sxy - sx * sy
    vx, vy = n * sxx - sx * sx, n * syy - sy * sy
    den = np.sqrt(np.clip(vx, 0, None) * np.clip(vy, 0, None))
    return _ratio(cov, den, math.nan)


class _quiet:
    """Silence numpy's 'Mean of empty slice' warning (an all-nan row is a defined nan here)."""

    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


MEAN = SumStatistic("mean", _mean_fn)  # stats from accuracy_stats(): accuracy, or the mean of any score
MICRO_F1 = SumStatistic("micro_f1", _micro_f1_fn)  # stats from entity_stats() or (tp, fp, fn) rows
MACRO_F1 = SumStatistic("macro_f1", _macro_f1_fn)  # stats from class_stats()
PEARSON = SumStatistic("pearson", _pearson_fn)  # stats from pearson_stats()
WEIGHTED_F1 = SumStatistic("weighted_f1", _weighted_f1_fn)  # stats from class_stats(): single- or multi-label


def accuracy_stats(scores: Sequence[float]) -> np.ndarray:
    """Per-example ``(score, 1)`` rows for :data:`MEAN` (score 1/0 for accuracy)."""
    x = np.asarray(scores, dtype=np.float64).reshape(-1)
    return np.stack([x, np.ones_like(x)], axis=1)


def entity_stats(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], *, strict: bool = True) -> np.ndarray:
    """Per-sentence ``(tp, fp, fn)`` of entities for :data:`MICRO_F1` (seqeval's spans).

    ``strict``: IOB2 spans as ``seqeval``'s ``mode="strict"``; else seqeval's lenient default.
    Summed over sentences these give exactly seqeval's micro-F1.
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted")
    rows = np.zeros((len(gold), 3), dtype=np.float64)
    if strict:
        def spans(seqs):  # biotok's one-pass IOB2 reading of seqeval's strict entities (scores.StrictEntities)
            from biotok.errors import DataError
            from biotok_train.scores import StrictEntities  # lazy: scores imports the config

            try:
                ents = StrictEntities([list(s) for s in seqs]).entities
            except DataError:  # a tag outside IOB2: seqeval's own reading
                from seqeval.scheme import IOB2, Entities

                ents = [[e.to_tuple() for e in sent] for sent in Entities(list(map(list, seqs)), IOB2).entities]
            return [{e[1:] for e in sent} for sent in ents]
    else:
        from seqeval.metrics.sequence_labeling import get_entities

        def spans(seqs):
            return [set(get_entities(list(s))) for s in seqs]
    for i, (g, p) in enumerate(zip(spans(gold), spans(pred))):
        rows[i] = (len(g & p), len(p - g), len(g - p))
    return rows


def class_stats(gold: Sequence[Hashable], pred: Sequence[Hashable], labels: Sequence[Hashable] | None = None) -> np.ndarray:
    """Per-example one-hot ``(tp, fp, fn)`` for each label, for :data:`MACRO_F1` and
    :data:`WEIGHTED_F1` (as sklearn's).

    A multi-label example may give sets of labels for ``gold`` and ``pred``.
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predicted")

    def as_set(x) -> set:
        return set(x) if isinstance(x, (set, frozenset, list, tuple)) else {x}

    gs, ps = [as_set(g) for g in gold], [as_set(p) for p in pred]
    labels = list(labels) if labels is not None else sorted(set().union(*gs, *ps), key=str)
    index = {l: j for j, l in enumerate(labels)}
    rows = np.zeros((len(gs), len(labels), 3), dtype=np.float64)
    for i, (g, p) in enumerate(zip(gs, ps)):
        for l in g & p:
            rows[i, index[l], 0] = 1
        for l in p - g:
            rows[i, index[l], 1] = 1
        for l in g - p:
            rows[i, index[l], 2] = 1
    return rows.reshape(len(gs), 3 * len(labels))


def pearson_stats(gold: Sequence[float], pred: Sequence[float]) -> np.ndarray:
    """Per-example ``(1, x, y, x², y², xy)`` rows for :data:`PEARSON`."""
    x, y = np.asarray(gold, dtype=np.float64), np.asarray(pred, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"{x.size} gold values but {y.size} predicted")
    return np.stack([np.ones_like(x), x, y, x * x, y * y, x * y], axis=1)


# --------------------------------------------------------------------------- bootstrap


def verdict(low: float, high: float, higher_is_better: bool = True) -> str:
    """better / worse when the interval of (candidate - reference) excludes 0, else indistinguishable."""
    if low > 0:
        return BETTER if higher_is_better else WORSE
    if high < 0:
        return WORSE if higher_is_better else BETTER
    return INDISTINGUISHABLE


@dataclass(frozen=True)
class PairedBootstrap:
    """Candidate minus reference on the same examples, with its percentile bootstrap interval."""

    metric: str
    reference: float
    candidate: float
    difference: float  # candidate - reference, on all examples
    low: float
    high: float
    confidence: float
    verdict: str
    higher_is_better: bool
    n_examples: int  # pooled rows (examples x seeds)
    n_clusters: int  # independent units resampled (test examples)
    n_resamples: int
    n_undefined: int  # resamples where the metric was undefined (left out of the interval)
    seed: int

    def to_dict(self) -> dict:
        return asdict(self)

    def interval(self, digits: int = 3) -> str:
        """``+0.012 [+0.003, +0.021]``."""
        return f"{self.difference:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]"


def _clusters(n: int, clusters: Sequence[Hashable] | None) -> list[np.ndarray]:
    if clusters is None:
        return [np.array([i]) for i in range(n)]
    if len(clusters) != n:
        raise ValueError(f"{len(clusters)} cluster ids for {n} examples")
    ids = np.asarray(clusters)
    if ids.dtype == object:
        ids = ids.astype(str)
    _, inverse = np.unique(ids, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[order])) + 1
    return np.split(order, bounds)


def _take(items, idx: np.ndarray):
    return items[idx] if isinstance(items, np.ndarray) else [items[i] for i in idx]


def paired_bootstrap(
    reference: Sequence[Any] | np.ndarray,
    candidate: Sequence[Any] | np.ndarray,
    metric: SumStatistic | Callable[[Any], float] | None = None,
    *,
    clusters: Sequence[Hashable] | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    higher_is_better: bool = True,
    name: str | None = None,
) -> PairedBootstrap:
    """Paired percentile bootstrap of ``metric(candidate) - metric(reference)``.

    ``reference[i]`` and ``candidate[i]`` are the two systems' outputs on the same example i
    (pooled over seeds with :func:`pool_seeds`). ``metric`` is a :class:`SumStatistic` over
    per-example statistic rows (fast), any callable taking the resampled items (an array when
    the items are one, else a list), or None for the mean of per-example scores. ``clusters``
    (e.g. the test-example id of each pooled row) makes the bootstrap draw whole clusters.
    The same ``seed`` gives the same interval; swapping the systems negates it.
    """
    _check_paired(reference, candidate, confidence, n_resamples)
    n = len(reference)
    if metric is None:
        metric = MEAN
        reference, candidate = accuracy_stats(reference), accuracy_stats(candidate)
    groups = _clusters(n, clusters)
    rng = np.random.default_rng(seed)
    if isinstance(metric, SumStatistic):
        point_ref, point_cand, diffs = _resample_sums(reference, candidate, metric, groups, rng, n_resamples)
        label = name or metric.name
    else:
        point_ref, point_cand, diffs = _resample_items(reference, candidate, metric, groups, rng, n_resamples)
        label = name or getattr(metric, "__name__", "metric")
    ok = diffs[np.isfinite(diffs)]
    alpha = (1 - confidence) / 2
    if ok.size:
        low, high = (float(v) for v in np.quantile(ok, [alpha, 1 - alpha]))
    else:
        low = high = math.nan
    diff = point_cand - point_ref
    return PairedBootstrap(
        metric=label, reference=float(point_ref), candidate=float(point_cand), difference=float(diff),
        low=low, high=high, confidence=confidence,
        verdict=verdict(low, high, higher_is_better) if ok.size else INDISTINGUISHABLE,
        higher_is_better=higher_is_better, n_examples=n, n_clusters=len(groups), n_resamples=n_resamples,
        n_undefined=int(n_resamples - ok.size), seed=seed,
    )


def _check_paired(reference, candidate, confidence: float, n_resamples: int) -> None:
    if len(reference) != len(candidate):
        raise ValueError(f"the systems have {len(reference)} and {len(candidate)} examples: they must be paired")
    if len(reference) == 0:
        raise ValueError("no examples to compare")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")


def _resample_sums(reference, candidate, metric: SumStatistic, groups: list[np.ndarray], rng: np.random.Generator,
                   n_resamples: int) -> tuple[float, float, np.ndarray]:
    """Point values and resampled differences of a :class:`SumStatistic`: each resample is a
    count per cluster times the clusters' summed rows (vectorised, ``_CHUNK`` resamples at a time)."""
    ref, cand = np.asarray(reference, dtype=np.float64), np.asarray(candidate, dtype=np.float64)
    if ref.ndim != 2 or ref.shape != cand.shape:
        raise ValueError("a SumStatistic needs two (examples, k) arrays of the same shape")
    n_groups = len(groups)
    diffs = np.empty(n_resamples, dtype=np.float64)
    g_ref = np.stack([ref[g].sum(axis=0) for g in groups])
    g_cand = np.stack([cand[g].sum(axis=0) for g in groups])
    for start in range(0, n_resamples, _CHUNK):
        b = min(_CHUNK, n_resamples - start)
        draws = rng.integers(0, n_groups, size=(_CHUNK, n_groups))[:b]
        flat = (draws + np.arange(b)[:, None] * n_groups).ravel()
        counts = np.bincount(flat, minlength=b * n_groups).reshape(b, n_groups).astype(np.float64)
        diffs[start : start + b] = metric.fn(counts @ g_cand) - metric.fn(counts @ g_ref)
    return metric(ref), metric(cand), diffs


def _resample_items(reference, candidate, metric: Callable[[Any], float], groups: list[np.ndarray],
                    rng: np.random.Generator, n_resamples: int) -> tuple[float, float, np.ndarray]:
    """Point values and resampled differences of any callable over the resampled items."""
    n_groups = len(groups)
    diffs = np.empty(n_resamples, dtype=np.float64)
    point_ref, point_cand = float(metric(reference)), float(metric(candidate))
    for start in range(0, n_resamples, _CHUNK):
        b = min(_CHUNK, n_resamples - start)
        draws = rng.integers(0, n_groups, size=(_CHUNK, n_groups))[:b]
        for j in range(b):
            idx = np.concatenate([groups[k] for k in draws[j]])
            diffs[start + j] = float(metric(_take(candidate, idx))) - float(metric(_take(reference, idx)))
    return point_ref, point_cand, diffs


def pool_seeds(reference: Mapping[Any, Sequence], candidate: Mapping[Any, Sequence]):
    """Pool each system's per-seed outputs on one test set: ``(ref_rows, cand_rows, clusters)``.

    Both mappings need the same seeds and, per seed, the same number of examples; row r of the
    pooled outputs is example ``clusters[r]`` of one seed in both systems, so the bootstrap can
    draw an example with all its seeds. Arrays are stacked, other sequences concatenated.
    """
    if set(map(str, reference)) != set(map(str, candidate)):
        raise ValueError(f"different seeds: {sorted(map(str, reference))} vs {sorted(map(str, candidate))}")
    keys = sorted(reference, key=str)
    cand = {str(k): v for k, v in candidate.items()}
    sizes = {len(reference[k]) for k in keys} | {len(cand[str(k)]) for k in keys}
    if len(sizes) != 1:
        raise ValueError(f"the seeds cover different numbers of examples: {sorted(sizes)}")
    (m,) = sizes

    def cat(parts):
        if all(isinstance(p, np.ndarray) for p in parts):
            return np.concatenate(parts, axis=0)
        return [x for p in parts for x in p]

    ref_rows = cat([reference[k] for k in keys])
    cand_rows = cat([cand[str(k)] for k in keys])
    return ref_rows, cand_rows, np.tile(np.arange(m), len(keys))


# --------------------------------------------------------------------------- seeds


@dataclass(frozen=True)
class SeedSummary:
    """Mean and sample standard deviation of one number over seeds (std None for one seed)."""

    mean: float
    std: float | None
    n: int
    values: tuple[float, ...]

    def format(self, digits: int = 3) -> str:
        """``0.512 ± 0.013`` (or ``0.512`` for one seed)."""
        if self.std is None:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.std:.{digits}f}"

    def to_dict(self) -> dict:
        return {"mean": self.mean, "std": self.std, "n": self.n, "values": list(self.values)}

    @classmethod
    def from_dict(cls, d: dict) -> SeedSummary:
        """The summary of a :meth:`to_dict` (an ablation.json cell)."""
        return cls(d["mean"], d["std"], d["n"], tuple(d["values"]))


def summarize_seeds(values: Sequence[float]) -> SeedSummary:
    """Mean ± sample std (ddof 1) of per-seed values: the one mean ± std of biotok_train (ablations,
    bench). One seed has no std (None, printed as the mean alone), not a spread of 0."""
    x = np.asarray(list(values), dtype=np.float64)
    if x.size == 0:
        raise ValueError("no values to summarize")
    std = float(np.std(x, ddof=1)) if x.size > 1 else None
    return SeedSummary(mean=float(np.mean(x)), std=std, n=int(x.size), values=tuple(float(v) for v in x))


def seed_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """Student-t interval of the mean of per-seed values (None for fewer than 2): the spread over
    the seeds given, e.g. fine-tuning seeds of one pretrained model (not over pretraining draws)."""
    from scipy.stats import t  # lazy: scipy.stats takes a second to import

    x = np.asarray(list(values), dtype=np.float64)
    if x.size < 2:
        return None
    half = float(t.ppf(0.5 + confidence / 2, x.size - 1) * np.std(x, ddof=1) / math.sqrt(x.size))
    return float(x.mean()) - half, float(x.mean()) + half


# --------------------------------------------------------------------------- rankings


@dataclass(frozen=True)
class RankAgreement:
    """Whether two model sizes rank the vocabularies alike on one metric (Kendall τ-b)."""

    metric: str
    sizes: tuple[str, str]
    vocabularies: tuple[str, ...]
    tau: float | None  # None when undefined (fewer than 2 vocabularies, or all tied at one size)
    p_value: float | None
    rankings: dict  # size -> vocabularies, best first
    sentence: str

    def to_dict(self) -> dict:
        d = asdict(self)
        d["sizes"], d["vocabularies"] = list(self.sizes), list(self.vocabularies)
        return d


def rank_agreement(
    scores: Mapping[str, Mapping[str, float]], *, metric: str = "score", higher_is_better: bool = True,
) -> list[RankAgreement]:
    """Kendall τ between the vocabulary scores of each pair of sizes (``{size: {vocab: score}}``).

    Only vocabularies scored at both sizes are compared. The sentence says whether the ranking
    holds, and whether the number of vocabularies allows τ to be significant at all.
    """
    from scipy.stats import kendalltau

    sizes = list(scores)
    out: list[RankAgreement] = []
    for i in range(len(sizes)):
        for j in range(i + 1, len(sizes)):
            a, b = sizes[i], sizes[j]
            vocabs = tuple(v for v in scores[a] if v in scores[b])
            xa = [float(scores[a][v]) for v in vocabs]
            xb = [float(scores[b][v]) for v in vocabs]
            sign = -1 if higher_is_better else 1
            rankings = {s: [vocabs[k] for k in np.argsort([sign * x for x in xs], kind="stable")]
                        for s, xs in ((a, xa), (b, xb))}
            tau = p = None
            if len(vocabs) >= 2:
                res = kendalltau(xa, xb)
                if not math.isnan(res.statistic):
                    tau, p = float(res.statistic), float(res.pvalue)
            out.append(RankAgreement(metric, (a, b), vocabs, tau, p, rankings,
                                     _rank_sentence(metric, a, b, vocabs, tau, p, rankings)))
    return out


def _rank_sentence(metric, a, b, vocabs, tau, p, rankings) -> str:
    n = len(vocabs)
    if n < 2:
        return f"{metric}: fewer than two vocabularies were scored at both {a} and {b}; there is no ranking to compare."
    if tau is None:
        return (f"{metric}: the scores are tied at {a} or {b}, so Kendall τ is undefined and the sizes "
                "cannot be said to agree or disagree.")
    order = {s: " > ".join(r) for s, r in rankings.items()}
    if math.isclose(tau, 1.0):
        head = f"{metric}: the ranking of the {n} vocabularies is the same at {a} and {b} ({order[a]})"
    elif math.isclose(tau, -1.0):
        head = f"{metric}: the ranking is reversed between {a} ({order[a]}) and {b} ({order[b]})"
    else:
        head = f"{metric}: the rankings at {a} ({order[a]}) and {b} ({order[b]}) agree only in part"
    stat = f"Kendall τ = {tau:+.2f}, p = {p:.2f}"
    if n == 2:
        caveat = "; with 2 vocabularies τ is ±1 by construction, so this is one comparison, not a test"
    elif p >= 0.05:
        caveat = f"; with {n} vocabularies ({n * (n - 1) // 2} pairs) this is not significant at 5 %"
    else:
        caveat = ""
    return f"{head} ({stat}){caveat}."


__all__ = [
    "BETTER", "WORSE", "INDISTINGUISHABLE", "VERDICTS", "SumStatistic", "MEAN", "MICRO_F1", "MACRO_F1",
    "PEARSON", "WEIGHTED_F1", "accuracy_stats", "entity_stats", "class_stats", "pearson_stats", "verdict", "PairedBootstrap",
    "paired_bootstrap", "pool_seeds", "SeedSummary", "seed_interval", "summarize_seeds", "RankAgreement", "rank_agreement",
]
