"""The GPU-minutes of an ablation before it runs (:func:`gpu_plan`: each kind of job, how many,
its minutes on one card at a throughput the GPU suite measured, a lower bound), and a short GPU
slot's jobs estimated from what such a slot measured (:func:`slot_costs`, :func:`job_seconds`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

from biotok_train.ablate.keys import Key
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
    from biotok_train.ablate.store import read_archive  # lazy: one use

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
    """train, dev and test examples of each task and its sequences per example (a question's options)."""
    out = {}
    for t in tasks:
        d = load(t, data_dir)
        per = max(1, len(getattr(d.train[0], "options", ()) or ()))
        out[t] = (len(d.train), len(d.dev), len(d.test), per)
    return out


__all__ = ["FLOOR_MODEL_S", "H100_OVER_H200", "JOB_OVERHEAD_S", "PIECE_MINUTES", "PREPARE_SPEEDUP_2_CORES", "STARTUP_S",
           "gpu_plan", "job_seconds", "measured_throughput", "slot_costs", "task_sizes"]
