"""The GPU-minutes of an ablation before it runs: each kind of job (a pretraining, a fine-tune per
task), how many, and its minutes on one card at a throughput measured by the GPU suite.

A pretraining costs its token positions (``tokens_per_arm``) at that rate; a fine-tune its padded
positions (epochs x train + dev each epoch + test, forward-only passes counted a third), plus
:data:`JOB_OVERHEAD_S` of start-up each job. The GPU suite's throughput is a whole run's positions
over its wall time (evaluation and fine-tunes included), so a lower bound.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from biotok_train.config import AblationConfig
from biotok_train.tasks import load

H100_OVER_H200 = 3.35 / 4.8  # memory bandwidth (TB/s): same bf16 peak, so a conservative slow-down
JOB_OVERHEAD_S = 20.0  # start-up of one job (model load, data, first steps), an assumption
PIECE_MINUTES = 8.0  # the longest job a short GPU slot should hold
# a vocabulary's preparation (its pretraining text tokenized, one thread): on the 2-core CPU of the CPU runs,
# ablation_cpu's prepare jobs did 3.2 M characters in about 3 s, and prepare() on 5 MB of ablation_gpu_fr's text
# 1.2 (Unigram_L-32k) to 1.6 (CamemBERTa's) M per CPU-second; rounded down for the held-out part it also scores
PREPARE_CHARS_PER_S = 1.0e6


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


@dataclass(frozen=True)
class Piece:
    """Jobs a bare GPU machine runs in one short slot (``EngineConfig.only``: ``patterns``), what
    they are in words, and their estimated minutes on one H100."""

    name: str
    patterns: tuple[str, ...]
    minutes: float
    what: str


def pieces(cfg: AblationConfig, names: Sequence[str], rows: list[dict], packed: int, text_chars: int) -> list[Piece]:
    """A from-scratch grid (no base, no curve) cut for slots on a machine that keeps nothing: per
    pretraining seed and vocabulary (``names``: the arms' names) its preparation, pretraining,
    evaluation and fine-tunings (the model cannot leave the machine, so its fine-tunes go with
    it); per vocabulary its floors, as many pretraining seeds' together as fit
    :data:`PIECE_MINUTES`. ``rows``: :func:`gpu_plan`'s; fine-tunes run ``packed`` to the GPU;
    the preparation tokenizes ``text_chars`` characters in each piece. Seed 0 first, then the
    floors: after those pieces every vocabulary has one pretraining and its floor."""
    if cfg.base is not None or cfg.curve:
        raise ValueError("pieces() cuts a from-scratch grid without a curve")
    prep = text_chars / PREPARE_CHARS_PER_S / 60
    pretrain = next(r["minutes"] for r in rows if r["job"] == "pretrain")
    tunes = sum(r["minutes"] for r in rows if r["job"].startswith("finetune ")) * len(cfg.seeds) / packed
    out: list[Piece] = []
    for size in cfg.sizes:
        for i, p in enumerate(cfg.pretrain_seeds):
            out += [Piece(f"{n}/p{p}", (f"finetune/{size}/{n}/p{p}/*", f"evaluate/{size}/{n}/p{p}"),
                          prep + pretrain + tunes,
                          f"prepare, pretrain seed {p}, evaluate, {len(cfg.tasks)} tasks x {len(cfg.seeds)} seeds")
                    for n in names]
            if i == 0 and cfg.floor:
                per = max(1, int((PIECE_MINUTES - prep) // tunes)) if tunes else len(cfg.pretrain_seeds)
                for k in range(0, len(cfg.pretrain_seeds), per):
                    group = cfg.pretrain_seeds[k:k + per]
                    span = f"p{group[0]}" + (f"-{group[-1]}" if len(group) > 1 else "")
                    out += [Piece(f"{n}/floor/{span}", tuple(f"finetune/{size}/{n}/floor/p{q}/*" for q in group),
                                  prep + len(group) * tunes,
                                  f"prepare, random-init floors of pretraining seed{'s' if len(group) > 1 else ''} "
                                  f"{', '.join(map(str, group))}, {len(cfg.tasks)} tasks x {len(cfg.seeds)} seeds")
                            for n in names]
    return out


def task_sizes(tasks: Iterable[str], data_dir: str) -> dict[str, tuple[int, int, int, int]]:
    """train, dev and test examples of each task and its sequences per example (a question's options)."""
    out = {}
    for t in tasks:
        d = load(t, data_dir)
        per = max(1, len(getattr(d.train[0], "options", ()) or ()))
        out[t] = (len(d.train), len(d.dev), len(d.test), per)
    return out


__all__ = ["H100_OVER_H200", "JOB_OVERHEAD_S", "PIECE_MINUTES", "PREPARE_CHARS_PER_S", "Piece", "gpu_plan",
           "measured_throughput", "pieces", "task_sizes"]
