"""A grid run piece by piece on machines that keep nothing (short GPU slots): one piece run with
its records packed, which pieces the records at home complete, and which pretraining seeds they
cover (the pieces themselves, sized by their estimated minutes: :func:`biotok_train.ablate.estimate.pieces`).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
import time
from pathlib import Path
from typing import Sequence

from biotok_train.ablate import records as R
from biotok_train.ablate.estimate import Piece
from biotok_train.ablate.run import job_status, run_ablation
from biotok_train.config import AblationConfig, EngineConfig


def run_piece(cfg: AblationConfig, out: str | os.PathLike[str], piece: Piece, engine: EngineConfig,
              archive: str | os.PathLike[str]) -> dict:
    """``piece``'s jobs of the ablation ``cfg`` in OUT (``engine`` with ``only`` its patterns), then
    every record of OUT into ``archive``; returns its manifest (the piece, the device, the
    arithmetic, the wall time beside the estimate)."""
    start = time.perf_counter()
    run_ablation(cfg, out, engine=dataclasses.replace(engine, only=piece.patterns))
    return R.export_records(out, archive, {"piece": piece.name, "patterns": list(piece.patterns), "device": _device(),
                                           "wall_s": round(time.perf_counter() - start, 1),
                                           "estimated_minutes": round(piece.minutes, 2)})


def _device() -> str:
    import torch  # lazy: the device in words

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"


def status(cfg: AblationConfig, out: str | os.PathLike[str], plan: Sequence[Piece]) -> list[tuple[Piece, bool]]:
    """Each piece of ``plan`` and whether every job it names has a record in OUT (in the arithmetic of
    the pieces merged there, or this machine's before any)."""
    out = Path(out)
    done = job_status(cfg, out, R.recorded_precision(out)) if out.is_dir() else {}
    return [(p, bool(done) and all(ok for key, ok in done.items() if any(fnmatch.fnmatchcase(key, x) for x in p.patterns)))
            for p in plan]


def complete_seeds(cfg: AblationConfig, state: Sequence[tuple[Piece, bool]]) -> tuple[int, ...]:
    """The pretraining seeds whose every piece (its pretrainings, fine-tunings and floors) is done."""
    return tuple(s for s in cfg.pretrain_seeds
                 if all(ok for p, ok in state if any(re.search(rf"/p{s}(/|$)", x) for x in p.patterns)))


def table(state: Sequence[tuple[Piece, bool]], unit: str = "H100-minutes") -> list[str]:
    """The pieces as a Markdown table (what each holds, its estimated minutes, whether it is done) and a total."""
    lines = [f"| piece | jobs | {unit} (estimated) | done |", "|---|---|---:|---|"]
    lines += [f"| {p.name} | {p.what} | {p.minutes:.1f} | {'yes' if ok else 'no'} |" for p, ok in state]
    left = [p for p, ok in state if not ok]
    return lines + ["", f"{len(state) - len(left)} of {len(state)} pieces done, "
                        f"{sum(p.minutes for p in left):.0f} estimated {unit} left."]


__all__ = ["complete_seeds", "run_piece", "status", "table"]
