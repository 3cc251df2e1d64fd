"""Loss curve of a run (``biotok-train plot RUN_DIR``) from its metrics.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

from biotok.output import atomic_file, check_png, check_writable_file
from biotok_train.errors import DataError


def read_metrics(run_dir: str | Path) -> list[dict]:
    path = Path(run_dir) / "metrics.jsonl"
    if not path.is_file():
        raise DataError(f"{run_dir} has no metrics.jsonl (not a biotok-train run directory)")
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut by a crash
    if not rows:
        raise DataError(f"{path} is empty")
    return rows


def plot_run(run_dir: str | Path, out: str | Path | None = None, force: bool = False) -> Path:
    """Write the loss (and MLM accuracy) against steps as a PNG; returns its path.

    ``out`` (default RUN_DIR/loss.png) goes through the output policy: a PNG name, never the
    run's metrics.jsonl, an existing file replaced only with ``force``, written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = check_png(out, "--out") if out else Path(run_dir) / "loss.png"
    metrics = Path(run_dir) / "metrics.jsonl"
    check_writable_file(out, force, [metrics])  # before the drawing
    rows = read_metrics(run_dir)
    steps = [r["step"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    ax.plot(steps, [r["loss"] for r in rows], label="loss", color="tab:blue")
    for key, colour in (("mlm_loss", "tab:cyan"), ("sop_loss", "tab:purple"), ("rtd_loss", "tab:red")):
        if key in rows[0] and not (key == "mlm_loss" and rows[0][key] == rows[0]["loss"]):
            ax.plot(steps, [r[key] for r in rows], label=key, color=colour, linewidth=1)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(Path(run_dir).resolve().name)
    ax.grid(alpha=0.3)
    if "mlm_acc" in rows[0]:
        ax2 = ax.twinx()
        ax2.plot(steps, [r["mlm_acc"] for r in rows], label="MLM accuracy", color="tab:green",
                 linestyle="--", linewidth=1)
        ax2.set_ylabel("MLM accuracy")
        ax2.set_ylim(0, 1)
        lines = ax.get_legend_handles_labels()
        lines2 = ax2.get_legend_handles_labels()
        ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper right")
    else:
        ax.legend(loc="upper right")
    fig.tight_layout()
    try:
        with atomic_file(out, force, [metrics]) as tmp:
            fig.savefig(tmp, format="png")
    finally:
        plt.close(fig)
    return out
