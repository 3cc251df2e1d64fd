"""What an ablation's jobs cost, before and while it runs.

Before a GPU run: its GPU-minutes (:func:`gpu_plan`: each kind of job, how many, its minutes on one
card at a throughput the GPU suite measured, a lower bound), and a short GPU slot's jobs estimated
from what such a slot measured (:func:`slot_costs`, :func:`job_seconds`).

On this machine: the cost up front and the ETA per kind of job (:func:`kind_eta`, issue 45 item 4).
A pretraining of a tiny model takes minutes where a fine-tune takes seconds: an ETA that counts
jobs says "2 min left" before a 13-minute pretraining. Here each job has a kind (a pretraining of
one size, a fine-tune of one task at one size, a held-out evaluation, a preparation...), and each
kind its seconds: the mean wall seconds of the jobs of that kind measured so far (this OUT's cost
records, then this run's jobs as they finish), else, for a tiny model, biotok's measured CPU
pretraining rate (``biotok/data/pretrain_throughput.json``) turned into seconds by
:func:`gpu_plan`'s positions (token positions of a pretraining; padded positions of a fine-tune).
A kind with neither is said as not yet estimated, never guessed. Jobs are summed one after the
other: with a parallel engine the time is an upper bound.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from biotok_train.ablate.keys import Key
from biotok_train.ablate.store import read_archive
from biotok_train.ablate.config import AblationConfig
from biotok_train.tasks import load

H100_OVER_H200 = 3.35 / 4.8  # memory bandwidth (TB/s): same bf16 peak, so a conservative slow-down
JOB_OVERHEAD_S = 20.0  # start-up of one job (model load, data, first steps), an assumption
PIECE_MINUTES = 8.0  # the longest job a short GPU slot should hold


def measured_throughput(path: Path) -> dict:
    """Token positions per second of BERT MLM from the GPU suite's ablation.json at ``path``: its
    arms' positions over the whole run's wall time (a lower bound), and the H100 figure it implies."""
    suite = json.loads(Path(path).read_text(encoding="utf-8"))
    step = suite["steps"]["ablation"]
    positions = sum(leg["tokens_seen"] for leg in step["legs"])
    rate = positions / step["wall_s"]
    return {"source": f"{path.parent.name}/{path.name}", "device": suite["device"]["name"], "size": step["size"],
            "positions": positions, "wall_s": step["wall_s"], "h200_positions_per_s": rate,
            "h100_positions_per_s": rate * H100_OVER_H200}


def gpu_plan(cfg: AblationConfig, task_sizes: dict[str, tuple[int, int, int, int]],
             positions_per_s: float, lengths: dict[str, float] | None = None) -> list[dict]:
    """Each kind of GPU job of the ablation ``cfg``: how many, and its estimated GPU-minutes on one
    card at ``positions_per_s`` (``task_sizes``: train, dev, test examples and sequences per
    example; ``lengths``: a task's mean positions per sequence, default every sequence padded to the
    fine-tuning max length); ``fits_a_piece``: at most :data:`PIECE_MINUTES`."""
    arms, pseeds, fseeds = len(cfg.tokenizers), len(cfg.pretraining.seeds), len(cfg.finetuning.seeds)
    padded = cfg.finetune_config(0).max_length
    rows = [{"job": "pretrain", "count": arms * pseeds,
             "minutes": (cfg.tokens_per_arm / positions_per_s + JOB_OVERHEAD_S) / 60}]
    for task, (train, dev, test, per) in task_sizes.items():
        length = min(padded, (lengths or {}).get(task, padded))
        work = per * length * (cfg.finetuning.recipe.epochs * (train + dev / 3) + test / 3)
        runs = arms * pseeds * fseeds * (2 if cfg.statistics.floor else 1)
        rows.append({"job": f"finetune {task}", "count": runs, "minutes": (work / positions_per_s + JOB_OVERHEAD_S) / 60})
    for r in rows:
        r["total_minutes"] = r["count"] * r["minutes"]
        r["fits_a_piece"] = r["minutes"] <= PIECE_MINUTES
    return rows


def slot_costs(archives: Sequence[str | Path]) -> dict:
    """The measured cost of each kind of job, from the cost records (``jobs/*.cost.json``) of
    archives of ablation records made on a GPU machine (each read by the store's bounded reader,
    :func:`~biotok_train.ablate.store.read_archive`): what :func:`job_seconds` reads."""
    out: dict = {"prepare_s": {}, "pretrain_s": {}, "evaluate_s": {}, "finetune_s": {}, "runs": []}
    for a in archives:
        got = read_archive(a)
        out["runs"].append({"archive": Path(a).name, "wall_s": got.manifest.get("wall_s"),
                            "device": got.manifest.get("device")})
        for key, result in sorted(got.results().items()):
            if Key.parse(key).kind == "pretrain":
                out["pretrain_positions"] = max(out.get("pretrain_positions", 0), result["tokens_seen"])
        for text, wall in sorted(got.walls().items()):
            key = Key.parse(text)
            if key.kind == "prepare":
                out["prepare_s"][key.vocab] = wall
            elif key.kind in ("pretrain", "evaluate"):
                out[f"{key.kind}_s"][key.arm] = wall
            elif key.kind == "finetune" and not key.floor:
                out["finetune_s"].setdefault(key.task, []).append(wall)
    out["finetune_s"] = {t: sorted(v) for t, v in sorted(out["finetune_s"].items())}
    return out


# The figures a slot's estimate uses besides the measured costs (slot_costs), each named with its source.
# prepare(workers=2) over one thread on the 2-core CPU: measured 2.07-2.16x on 98 M characters, the GPU run's size
# (benchmarks/results/prepare_speed.json), taken as 2.0 (one core's worth per worker at most); per core, it is
# assumed to hold up to a quarter of the GPU machine's 16 cores (4 workers for each of the 4 prepares)
PREPARE_SPEEDUP_2_CORES = 2.0
# run.sh (carried wheels), torch imported, the text unpacked (107 MB from xz) and split, the inputs checked, and the
# engine's start: the pieces' wall time minus their jobs' critical path was 15-21 s (h200-2026-11-28), plus the
# unpacking before it; rounded up
STARTUP_S = 45.0
FLOOR_MODEL_S = 10.0  # a random-init BERT-small built and saved on one CPU thread (not measured on the GPU machine)


def job_seconds(costs: dict, key: str, arms: int, positions: int, cores: int) -> float:
    """A job's estimated wall seconds on the GPU machine from ``costs`` (:func:`slot_costs`): ``arms``
    pretrainings of ``positions`` each share the measured two-at-once throughput (the GPU is assumed
    to give no more to four than to two), ``cores`` are shared among ``arms`` preparations, a floor's
    fine-tune is as an arm's; a vocabulary or task not measured: the slowest measured."""
    k = Key.parse(key)
    kind = k.kind
    if kind == "prepare":
        speedup = max(1.0, (cores // max(arms, 1)) * PREPARE_SPEEDUP_2_CORES / 2)
        return costs["prepare_s"].get(k.vocab, max(costs["prepare_s"].values())) / speedup
    if kind == "pretrain":
        rate = sum(costs["pretrain_positions"] / s for s in costs["pretrain_s"].values())
        return positions / (rate / max(arms, 1))
    if kind == "evaluate":
        return max(costs["evaluate_s"].values())
    if kind == "floor-model":
        return FLOOR_MODEL_S
    if kind in ("finetune", "curve"):
        means = {t: sum(v) / len(v) for t, v in costs["finetune_s"].items()}
        return means.get(k.task, max(means.values()))
    return max(costs["evaluate_s"].values())  # any other job: as an evaluation


def task_sizes(tasks: Iterable[str], data_dir: str) -> dict[str, tuple[int, int, int, int]]:
    """:func:`sizes` of each task read from ``data_dir``."""
    return {t: sizes(load(t, data_dir)) for t in tasks}


def sizes(data) -> tuple[int, int, int, int]:
    """A task's train, dev and test examples and its sequences per example (a question's options)."""
    train = data.split("train")
    per = max(1, len(getattr(train[0], "options", ()) or ())) if len(train) else 1
    return len(train), len(data.split("dev")), len(data.split("test")), per


FINETUNES = ("finetune", "curve")  # job kinds that fine-tune a model on a task (args[0]: the task)


def job_kind(job, labels: Mapping[str, str] | None = None) -> str:
    """The kind of a job of the plan: "pretrain tiny", "finetune tiny e3c", "evaluate tiny",
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
    cost records by key, :func:`biotok_train.ablate.store.read_costs`; ``datasets``: each task's data,
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
    counts, lengths = {task: sizes(data) for task, data in datasets.items()}, {}
    for task, data in datasets.items():
        words = [_words(x) for x in data.split("train")]
        if words and all(w is not None for w in words):  # a batch is padded to its longest, not to max_length
            lengths[task] = PIECES_PER_WORD * sum(words) / len(words) + 2
    rows = gpu_plan(cfg, counts, positions_per_s, lengths)
    table = {"pretrain tiny": rows[0]["minutes"] * 60}
    for task, row in zip(counts, rows[1:]):
        table[f"finetune tiny {labels.get(task, task)}"] = row["minutes"] * 60
    return table if "tiny" in cfg.sizes and cfg.base.model is None else {}


__all__ = ["FLOOR_MODEL_S", "H100_OVER_H200", "JOB_OVERHEAD_S", "PIECE_MINUTES", "PREPARE_SPEEDUP_2_CORES", "STARTUP_S",
           "KindEta", "gpu_plan", "job_kind", "job_seconds", "kind_eta", "measured_throughput", "sizes",
           "slot_costs", "task_sizes"]
