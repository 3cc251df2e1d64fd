"""Does a cheap instrument predict the downstream ranking of vocabularies?

An instrument (the causal-LM probe, fertility, Rényi efficiency, Zipf fit) and a downstream task
each give a :class:`Ranking` of the same vocabularies (:func:`intrinsic_metrics` measures the
intrinsic ones, :func:`metric_rankings` and :func:`probe_ranking` rank them, and
:func:`ablation_rankings` the tasks). :func:`agreement` compares two: Kendall's
tau (scipy's tau-b, its p-value and the number of vocabularies both rank), a tau interval when
the rankings carry bootstrap replicates, and the plain sentence a reader needs: would the laptop
verdict (the instrument's best vocabulary) have been the downstream one? With n vocabularies even
a perfect agreement has p = 2/n! (:func:`smallest_p_value`): 0.083 for 4, so a handful of
vocabularies can show agreement and the choice, never significance at 5 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from biotok.corpus import iter_lines
from biotok.errors import ConfigError
from biotok.formats import load
from biotok.metrics import compare, count


@dataclass(frozen=True)
class Ranking:
    """One instrument's or task's score of each vocabulary.

    ``tied_with_best``: the vocabularies a downstream result cannot tell from its best (paired
    bootstrap interval of the difference holding 0); ``replicates``: bootstrap replicates of
    ``scores`` (each a vocabulary -> score mapping), for an interval on tau.
    """

    name: str
    scores: Mapping[str, float]
    higher_is_better: bool
    tied_with_best: tuple[str, ...] = ()
    replicates: tuple[Mapping[str, float], ...] = ()

    def __post_init__(self) -> None:
        if not self.scores:
            raise ConfigError(f"ranking {self.name!r} scores no vocabulary")
        if any(not math.isfinite(v) for v in self.scores.values()):
            raise ConfigError(f"ranking {self.name!r} holds a score that is not a finite number")

    def goodness(self, scores: Mapping[str, float] | None = None) -> dict[str, float]:
        """Scores turned so that higher is better."""
        s = self.scores if scores is None else scores
        return {v: (x if self.higher_is_better else -x) for v, x in s.items()}

    def order(self) -> list[str]:
        """The vocabularies, best first (ties: by name)."""
        g = self.goodness()
        return sorted(g, key=lambda v: (-g[v], v))

    def best(self) -> str:
        return self.order()[0]


@dataclass(frozen=True)
class Agreement:
    """How one instrument's ranking agrees with one task's."""

    instrument: str
    task: str
    n: int  # vocabularies both rank
    tau: float | None  # Kendall's tau-b (None: fewer than 2 vocabularies, or a constant ranking)
    p_value: float | None
    choice: str  # the instrument's best among the shared vocabularies
    task_best: str
    acceptable: tuple[str, ...]  # the task's best and those it cannot tell from it
    tau_interval: tuple[float, float] | None = None

    @property
    def same_choice(self) -> bool:
        return self.choice == self.task_best

    @property
    def acceptable_choice(self) -> bool:
        return self.choice in self.acceptable

    def sentence(self) -> str:
        """The verdict in words, every part computed from the fields."""
        if self.same_choice:
            verdict = (f"{self.instrument} would have chosen {self.choice}, the best vocabulary on {self.task} too: "
                       "the laptop verdict is the downstream one")
        elif self.acceptable_choice:
            verdict = (f"{self.instrument} would have chosen {self.choice}; the best on {self.task} is "
                       f"{self.task_best}, which the downstream result cannot tell from {self.choice}: the laptop "
                       "verdict picks a vocabulary as good as the downstream best, within its intervals")
        else:
            verdict = (f"{self.instrument} would have chosen {self.choice}; the best on {self.task} is "
                       f"{self.task_best}, and {self.choice} is worse than it: the laptop verdict would have chosen "
                       "another vocabulary")
        return f"{verdict}; {self.tau_text()}."

    def tau_text(self) -> str:
        if self.tau is None:
            return f"Kendall tau undefined ({self.n} vocabularies, or a ranking with all scores equal)"
        interval = (f" [{self.tau_interval[0]:+.2f}, {self.tau_interval[1]:+.2f}]"
                    if self.tau_interval is not None else "")
        return f"Kendall tau {self.tau:+.2f}{interval} (p = {self.p_value:.3f}, {self.n} vocabularies)"


def smallest_p_value(n: int) -> float:
    """The p-value of a perfect agreement between two rankings of ``n`` items (exact test)."""
    from scipy.stats import kendalltau  # lazy: scipy.stats takes a second to import

    if n < 2:
        raise ConfigError("a ranking agreement needs at least 2 vocabularies")
    return float(kendalltau(range(n), range(n)).pvalue)


def _tau(a: Sequence[float], b: Sequence[float]) -> tuple[float | None, float | None]:
    from scipy.stats import kendalltau  # lazy: scipy.stats takes a second to import

    if len(a) < 2:
        return None, None
    r = kendalltau(a, b)
    if not math.isfinite(r.statistic):
        return None, None
    return float(r.statistic), float(r.pvalue)


def _tau_interval(instrument: Ranking, task: Ranking, common: list[str],
                  confidence: float) -> tuple[float, float] | None:
    """Percentile interval of tau over paired bootstrap replicates (a side without replicates
    keeps its scores); None when neither side has replicates."""
    if not instrument.replicates and not task.replicates:
        return None
    a = instrument.replicates or (instrument.scores,)
    b = task.replicates or (task.scores,)
    taus = []
    for i in range(max(len(a), len(b))):
        ga, gb = instrument.goodness(a[i % len(a)]), task.goodness(b[i % len(b)])
        t, _ = _tau([ga[v] for v in common], [gb[v] for v in common])
        if t is not None:
            taus.append(t)
    if not taus:
        return None
    tail = 100 * (1 - confidence) / 2
    return float(np.percentile(taus, tail)), float(np.percentile(taus, 100 - tail))


def agreement(instrument: Ranking, task: Ranking, confidence: float = 0.95) -> Agreement:
    """Kendall's tau between the two rankings over the vocabularies both score, and whether the
    instrument's best is the task's best (or one the task cannot tell from it)."""
    common = sorted(set(instrument.scores) & set(task.scores))
    if not common:
        raise ConfigError(f"{instrument.name} and {task.name} rank no vocabulary in common")
    gi, gt = instrument.goodness(), task.goodness()
    tau, p = _tau([gi[v] for v in common], [gt[v] for v in common])
    choice = min(common, key=lambda v: (-gi[v], v))
    best = min(common, key=lambda v: (-gt[v], v))
    acceptable = tuple(v for v in common if v == best or v in task.tied_with_best)
    return Agreement(instrument.name, task.name, len(common), tau, p, choice, best, acceptable,
                     _tau_interval(instrument, task, common, confidence))


def agreements(instruments: Sequence[Ranking], tasks: Sequence[Ranking], confidence: float = 0.95) -> list[Agreement]:
    """:func:`agreement` of every instrument with every task, instruments first."""
    return [agreement(i, t, confidence) for i in instruments for t in tasks]


def probe_ranking(name: str, probe_json: dict, runs: Sequence[dict], chars: Sequence[float], *,
                  n_resamples: int = 1000, seed: int = 0) -> Ranking:
    """The probe's ranking (bits per character, lower is better) with paired bootstrap replicates
    over held-out documents, each drawn for every vocabulary and seed at once.

    ``probe_json``: the probe's probe.json; ``runs``: its runs/*/seed*.json records (tokenizer,
    seed, doc_bits); ``chars``: each held-out document's characters as the probe scored them.
    """
    c = np.asarray(chars, dtype=np.float64)
    bits: dict[str, list[np.ndarray]] = {}
    seeds = set(probe_json["setup"]["seeds"])
    for r in runs:
        if r["seed"] in seeds:
            bits.setdefault(r["tokenizer"], []).append(np.asarray(r["doc_bits"], dtype=np.float64))
    scores = {a["name"]: float(a["bits_per_char"]["mean"]) for a in probe_json["arms"]}
    for arm, per_seed in bits.items():
        if any(b.shape != c.shape for b in per_seed) or not math.isclose(
                float(np.mean([b.sum() / c.sum() for b in per_seed])), scores[arm], rel_tol=1e-9):
            raise ConfigError(f"{arm}: the probe's documents do not match the characters given")
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(n_resamples):
        idx = rng.integers(0, c.size, c.size)
        total = c[idx].sum()
        reps.append({arm: float(np.mean([b[idx].sum() / total for b in per_seed])) for arm, per_seed in bits.items()})
    return Ranking(name, scores, False, replicates=tuple(reps))


def intrinsic_metrics(tokenizers: Mapping[str, str], heldout: Path, pretrain: Path) -> dict[str, dict]:
    """Name -> ``biotok compare``'s metrics (fertility, Rényi efficiency, ...) of each tokenizer on
    ``heldout``, its Zipf fit (``zipf``: None when there is none) and the pieces it cuts
    ``pretrain`` into (``pretrain_pieces``)."""
    toks = [load(p, name=n) for n, p in tokenizers.items()]
    held = compare(toks, iter_lines([str(heldout)]))
    pieces = count(toks, iter_lines([str(pretrain)]))
    return {n: {**r.as_dict(), "zipf": z.as_dict() if z else None, "pretrain_pieces": c.pieces}
            for n, r, z, c in zip(tokenizers, held.results, held.zipf, pieces)}


def metric_rankings(metrics: Mapping[str, dict]) -> list[Ranking]:
    """The rankings of :func:`intrinsic_metrics`' numbers: fertility (lower is better), Rényi
    efficiency and the Zipf fit's R² (higher is better; a vocabulary without a fit is left out)."""
    return [Ranking("fertility (pieces/word)", {n: m["fertility"] for n, m in metrics.items()}, False),
            Ranking("Rényi efficiency", {n: m["renyi_efficiency"] for n, m in metrics.items()}, True),
            Ranking("Zipf fit (R²)", {n: m["zipf"]["r2"] for n, m in metrics.items() if m["zipf"]}, True)]


@dataclass(frozen=True)
class PairVerdict:
    """One vocabulary against another on one ranking: the difference of their scores (first minus
    second) with its percentile interval over the ranking's replicates."""

    first: str
    second: str
    difference: float
    low: float
    high: float
    higher_is_better: bool

    @property
    def verdict(self) -> str:
        if self.low <= 0 <= self.high:
            return "indistinguishable from"
        return "better than" if (self.low > 0) == self.higher_is_better else "worse than"

    def sentence(self, unit: str = "") -> str:
        return (f"{self.first} is {self.verdict} {self.second}: {self.difference:+.3f}{unit} "
                f"[{self.low:+.3f}, {self.high:+.3f}]")


def pairs(ranking: Ranking, confidence: float = 0.95) -> list[PairVerdict]:
    """Every pair of vocabularies (in the ranking's order, the better first) with the interval of
    their difference over the ranking's bootstrap replicates (none: an empty list)."""
    if not ranking.replicates:
        return []
    order = ranking.order()
    tail = 100 * (1 - confidence) / 2
    out = []
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            d = [r[a] - r[b] for r in ranking.replicates]
            out.append(PairVerdict(a, b, ranking.scores[a] - ranking.scores[b], float(np.percentile(d, tail)),
                                   float(np.percentile(d, 100 - tail)), ranking.higher_is_better))
    return out


def no_signal(ablation: dict, size: str | None = None) -> list[str]:
    """The tasks of an ``ablate`` result where no arm beats the trivial baseline at ``size`` (None:
    the first size): their rankings order noise."""
    size = size or (ablation["arms"][0]["size"] if ablation.get("arms") else None)
    return [s["task"] for s in ablation.get("no_signal", []) if s["size"] == size]


def ablation_rankings(ablation: dict, size: str | None = None) -> list[Ranking]:
    """One downstream :class:`Ranking` per task of an ``ablate`` result (its ablation.json): each
    arm's mean over seeds at ``size`` (None: the first size); an arm is tied with the best when a
    paired bootstrap comparison between the two (either way round) says indistinguishable. A task
    with no signal (:func:`no_signal`: no arm beats its trivial baseline) has no ranking."""
    arms = [a for a in ablation["arms"] if a.get("init", "scratch") == "scratch"]
    size = size or (arms[0]["size"] if arms else None)
    arms = [a for a in arms if a["size"] == size]
    silent = set(no_signal(ablation, size))
    out = []
    for key, task in ((k, t) for k, t in ablation["tasks"].items() if k not in silent):
        scores = {a["name"]: float(a["metrics"][key]["mean"]) for a in arms if key in a["metrics"]}
        if not scores:
            continue
        best = Ranking(key, scores, True).best()  # ties broken as every ranking breaks them
        tied = tuple(sorted(set(
            c["candidate_arm"] if c["reference_arm"] == best else c["reference_arm"]
            for c in ablation["comparisons"]
            if c["task"] == key and c["size"] == size and c["verdict"] == "indistinguishable"
            and best in (c["reference_arm"], c["candidate_arm"]))))
        out.append(Ranking(f"{task['name']} ({task['metric']})", scores, True, tied))
    return out


def summary(found: Sequence[Agreement]) -> str:
    """One sentence over all pairs: how often the laptop verdict was the downstream one."""
    if not found:
        return "No instrument was compared with a downstream result."
    same = sum(a.same_choice for a in found)
    ok = sum(a.acceptable_choice for a in found)
    positive = sum(a.tau is not None and a.tau > 0 for a in found)
    return (f"Over {len(found)} instrument-task pairs, the laptop verdict chose the downstream best {same} times, "
            f"a vocabulary the downstream result cannot tell from its best {ok - same} more times, and another "
            f"vocabulary {len(found) - ok} times; tau is positive in {positive} of {len(found)} pairs.")


__all__ = ["Agreement", "PairVerdict", "Ranking", "ablation_rankings", "agreement", "agreements", "intrinsic_metrics",
           "metric_rankings", "no_signal", "pairs", "probe_ranking", "smallest_p_value", "summary"]
