"""The GPU-minutes of an ablation before it runs: each kind of job (a pretraining, a fine-tune per
task), how many, and its minutes on one card at a throughput measured by the GPU suite.

A pretraining costs its token positions (``tokens_per_arm``) at that rate; a fine-tune its padded
positions (epochs x train + dev each epoch + test, forward-only passes counted a third), plus
:data:`JOB_OVERHEAD_S` of start-up each job. The GPU suite's throughput is a whole run's positions
over its wall time (evaluation and fine-tunes included), so a lower bound.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from biotok_train.config import AblationConfig
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
             positions_per_s: float) -> list[dict]:
    """Each kind of GPU job of the ablation ``cfg``: how many, and its estimated GPU-minutes on one
    card at ``positions_per_s`` (``task_sizes``: train, dev, test examples and sequences per
    example); ``fits_a_piece``: at most :data:`PIECE_MINUTES`."""
    arms, pseeds, fseeds = len(cfg.tokenizers), len(cfg.pretrain_seeds), len(cfg.seeds)
    length = cfg.finetune_config(0).max_length
    rows = [{"job": "pretrain", "count": arms * pseeds,
             "minutes": (cfg.tokens_per_arm / positions_per_s + JOB_OVERHEAD_S) / 60}]
    for task, (train, dev, test, per) in task_sizes.items():
        work = per * length * (cfg.finetune.epochs * (train + dev / 3) + test / 3)
        runs = arms * pseeds * fseeds * (2 if cfg.floor else 1)
        rows.append({"job": f"finetune {task}", "count": runs, "minutes": (work / positions_per_s + JOB_OVERHEAD_S) / 60})
    for r in rows:
        r["total_minutes"] = r["count"] * r["minutes"]
        r["fits_a_piece"] = r["minutes"] <= PIECE_MINUTES
    return rows


def task_sizes(tasks: Iterable[str], data_dir: str) -> dict[str, tuple[int, int, int, int]]:
    """train, dev and test examples of each task and its sequences per example (a question's options)."""
    out = {}
    for t in tasks:
        d = load(t, data_dir)
        per = max(1, len(getattr(d.train[0], "options", ()) or ()))
        out[t] = (len(d.train), len(d.dev), len(d.test), per)
    return out


__all__ = ["H100_OVER_H200", "JOB_OVERHEAD_S", "PIECE_MINUTES", "gpu_plan", "measured_throughput", "task_sizes"]
