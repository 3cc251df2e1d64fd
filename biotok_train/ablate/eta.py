"""An ablation's cost up front and its ETA, per kind of job (issue 45 item 4).

A pretraining of a tiny model takes minutes where a fine-tune takes seconds: an ETA that counts
jobs says "2 min left" before a 13-minute pretraining. Here each job has a kind (a pretraining of
one size, a fine-tune of one task at one size, a held-out evaluation, a preparation...), and each
kind its seconds: the mean wall seconds of the jobs of that kind measured so far (this OUT's cost
records, then this run's jobs as they finish), else, for a tiny model, biotok's measured CPU
pretraining rate (``biotok/data/pretrain_throughput.json``) turned into seconds by
:func:`biotok_train.ablate.estimate.gpu_plan`'s positions (token positions of a pretraining; padded
positions of a fine-tune). A kind with neither is said as not yet estimated, never guessed.
Jobs are summed one after the other: with a parallel engine the time is an upper bound.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from biotok_train.ablate.keys import Key
from biotok_train.ablate.config import AblationConfig

FINETUNES = ("finetune", "curve")  # job kinds that fine-tune a model on a task (args[0]: the task)


def job_kind(job, labels: Mapping[str, str] | None = None) -> str:
    """The kind of a job of the grid: "pretrain tiny", "finetune tiny e3c", "evaluate tiny",
    "prepare"... (jobs of a kind cost about the same); ``labels``: a task's name by its --task value."""
    k = Key.parse(str(job.key))
    if k.kind in ("pretrain", "evaluate", "floor-model") and k.size is not None:
        return f"{k.kind} {k.size}"
    if k.kind in FINETUNES and k.size is not None:
        task = job.args[0] if job.args else k.task
        task = (labels or {}).get(task, task)
        return f"finetune {k.size} {task}"
    return k.kind


@dataclass
class KindEta:
    """Seconds per kind of job (:func:`job_kind`) and the kinds of the jobs left to run: the
    estimate before the long part (:meth:`plan`) and the ETA after each job (:meth:`remaining`)."""

    kinds: dict[str, str]  # job key -> kind, every job of the run
    left: dict[str, str]  # job key -> kind, the jobs not done yet
    measured: dict[str, list[float]] = field(default_factory=dict)  # kind -> wall seconds of its jobs
    table: dict[str, float] = field(default_factory=dict)  # kind -> seconds from biotok's CPU rate
    source: str = ""  # where the table's rate comes from

    def seconds(self, kind: str) -> float | None:
        """One job of ``kind``: its measured mean, else the table's figure, else None."""
        walls = self.measured.get(kind)
        if walls:
            return sum(walls) / len(walls)
        return self.table.get(kind)

    def done(self, key: str, seconds: float | None) -> None:
        """A job finished in ``seconds`` (its wall time): its kind is measured, it is no longer left."""
        kind = self.left.pop(key, None) or self.kinds.get(key)
        if kind is not None and isinstance(seconds, (int, float)) and seconds >= 0:
            self.measured.setdefault(kind, []).append(float(seconds))

    def remaining(self) -> tuple[float, int]:
        """(estimated seconds of the jobs left, how many of them have a kind not yet estimated)."""
        secs = [self.seconds(kind) for kind in self.left.values()]
        return sum((s for s in secs if s is not None), 0.0), secs.count(None)

    def by_kind(self) -> list[tuple[str, int, float | None, str]]:
        """(kind, jobs left, seconds each or None, "measured" / "CPU table" / "") of the jobs left."""
        return [(k, n, self.seconds(k), "measured" if self.measured.get(k) else "CPU table" if k in self.table else "")
                for k, n in Counter(self.left.values()).items()]

    def plan(self, total: int, duration) -> str:
        """The line before the long part: jobs to run, the estimate on this machine, per kind."""
        secs, unknown = self.remaining()
        head = f"ablate: {len(self.left)} of {total} jobs to run ({total - len(self.left)} already done)"
        if not self.left:
            return head
        parts = [f"{n} {k} x {duration(s)} ({how})" if s is not None else f"{n} {k} (not yet measured)"
                 for k, n, s, how in self.by_kind()]
        where = f"; CPU table: {self.source}" if any(how == "CPU table" for *_, how in self.by_kind()) else ""
        more = f", plus {unknown} job{'s' * (unknown != 1)} of kinds not yet measured" if unknown else ""
        return f"{head}: estimated {duration(secs)} on this machine{more}, one after the other: {'; '.join(parts)}{where}"

    def eta(self, duration) -> str:
        """", ETA 12 min 30 s" from the per-kind rates ("" when nothing is left)."""
        if not self.left:
            return ""
        secs, unknown = self.remaining()
        more = f" + {unknown} job{'s' * (unknown != 1)} not yet measured" if unknown else ""
        return f", ETA {duration(secs)}{more}"


def kind_eta(cfg: AblationConfig, jobs: Sequence, done: set[str], costs: Mapping[str, dict],
             datasets: Mapping | None = None, throughput=None) -> KindEta:
    """The :class:`KindEta` of ``jobs`` (``done``: the keys already recorded; ``costs``: this OUT's
    cost records by key, :func:`biotok_train.ablate.graph.costs`; ``datasets``: each task's data,
    for a fine-tune's positions; ``throughput``: biotok's CPU rate, default
    :func:`biotok.cost.default_throughput`)."""
    labels = {t: getattr(d, "name", None) or t for t, d in (datasets or {}).items()}
    names = list(labels.values())
    labels = {t: n if names.count(n) == 1 else t for t, n in labels.items()}  # two tasks of one name: never one kind
    kinds = {j.key: job_kind(j, labels) for j in jobs}
    measured: dict[str, list[float]] = {}
    for key, c in costs.items():
        wall = c.get("wall_s") if isinstance(c, dict) else None
        if key in kinds and isinstance(wall, (int, float)) and not isinstance(wall, bool):
            measured.setdefault(kinds[key], []).append(float(wall))
    if throughput is None:
        from biotok.cost import default_throughput  # lazy: one use

        throughput = default_throughput()
    table, source = {}, ""
    if throughput is not None:
        table, source = _table(cfg, datasets or {}, throughput.tokens_per_second, labels), throughput.source
    return KindEta(kinds, {k: v for k, v in kinds.items() if k not in done}, measured, table, source)


# Pieces per word of a CPU estimate's fine-tunes: about the fertility of French biomedical vocabularies on their
# text (1.3-1.9 in docs/results/minilm-fr-cpu and compare's tables), rounded up
PIECES_PER_WORD = 2.0


def _words(example) -> int | None:
    """Whitespace words of a task example (a NER sentence's words, a text's), None when it has neither."""
    words = getattr(example, "words", None)
    if words is not None:
        return len(words)
    text = getattr(example, "text", None)
    return len(str(text).split()) if text is not None else None


def _table(cfg: AblationConfig, datasets: Mapping, positions_per_s: float, labels: Mapping[str, str]) -> dict[str, float]:
    """Seconds of a tiny model's pretraining and fine-tunes at biotok's CPU rate (measured on
    BERT-tiny, so other sizes are left to their measurements)."""
    from biotok_train.ablate.estimate import gpu_plan  # the same positions as the GPU estimate

    sizes, lengths = {}, {}
    for task, data in datasets.items():
        train = data.split("train")
        per = max(1, len(getattr(train[0], "options", ()) or ())) if len(train) else 1
        sizes[task] = (len(train), len(data.split("dev")), len(data.split("test")), per)
        words = [_words(x) for x in train]
        if words and all(w is not None for w in words):  # a batch is padded to its longest, not to max_length
            lengths[task] = PIECES_PER_WORD * sum(words) / len(words) + 2
    rows = gpu_plan(cfg, sizes, positions_per_s, lengths)
    table = {"pretrain tiny": rows[0]["minutes"] * 60}
    for task, row in zip(sizes, rows[1:]):
        table[f"finetune tiny {labels.get(task, task)}"] = row["minutes"] * 60
    return table if "tiny" in cfg.sizes and cfg.base.model is None else {}


__all__ = ["KindEta", "job_kind", "kind_eta"]
