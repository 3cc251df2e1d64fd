"""Time to a verdict: what each published experiment cost, read from its own files.

    python -m benchmarks.experiments.time_to_verdict      # rewrites the "Time to a verdict" table of benchmarks/README.md

An ablation (``biotok-train ablate`` and the recipes over it: table9-minilm-cpu, minilm-fr-cpu,
ablation-cpu-BUDGET) publishes ``costs.json``, the one cost format (``biotok-costs/1``: every
job's CPU and wall seconds, totals and CPU seconds per arm). Results published before it are read
from their older files until regenerated: table9's ``ablation.json`` "costs", an ablation's
``timings.json`` (wall seconds). Also ``probe-fr/{fair,raw}/timings.json`` (CPU seconds of each
probe run) and ``plateau-fr/plateau.json`` (CPU seconds of each chunk of training: before
plateau_fr was a recipe over ablate; it now writes costs.json). A folder
that is not there yet is left out of the table.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from benchmarks._common import REPO

RESULTS = REPO / "docs" / "results"
README = REPO / "benchmarks" / "README.md"
START, END = "<!-- time-to-verdict: start -->", "<!-- time-to-verdict: end -->"


def _read(path: Path):
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def costs_row(results: Path, slug: str) -> dict | None:
    """An ablation's costs.json: CPU minutes of every job, per arm (or shared part)."""
    c = _read(results / slug / "costs.json")
    if not c or c.get("format") != "biotok-costs/1":
        return None
    arms = ", ".join(f"{arm} {sum(v.values()) / 60:.0f}" for arm, v in c["by_arm"].items())
    return {"experiment": slug, "unit": "CPU", "minutes": c["total_cpu_s"] / 60,
            "detail": f"{len(c['jobs'])} jobs; per arm: {arms}"}


def table9_row(results: Path) -> dict | None:
    new = costs_row(results, "table9-minilm-cpu")
    if new:
        return new
    a = _read(results / "table9-minilm-cpu" / "ablation.json")  # published before costs.json
    if not a or "costs" not in a:
        return None
    c = a["costs"]
    arms = ", ".join(f"{arm} {sum(v.values()) / 60:.0f}" for arm, v in c["by_arm"].items())
    done = a["jobs"] - len(a["pending"])
    return {"experiment": "table9-minilm-cpu", "unit": "CPU", "minutes": c["total_cpu_s"] / 60,
            "detail": f"{done} of {a['jobs']} jobs; per arm: {arms}"}


def probe_rows(results: Path) -> list[dict]:
    rows = []
    for mode in ("fair", "raw"):
        t = _read(results / "probe-fr" / mode / "timings.json")
        if not t:
            continue
        per: dict[str, float] = defaultdict(float)
        for key, v in t.items():
            per[key.rsplit("/", 1)[0]] += v["train_cpu_s"] + v["eval_cpu_s"]
        seeds = len(t) // max(1, len(per))
        arms = ", ".join(f"{arm} {s / 60:.0f}" for arm, s in per.items())
        rows.append({"experiment": f"probe-fr ({mode})", "unit": "CPU", "minutes": sum(per.values()) / 60,
                     "detail": f"{len(per)} arms x {seeds} seed(s); per arm: {arms}"})
    return rows


def ablation_row(results: Path, slug: str) -> dict | None:
    new = costs_row(results, slug)
    if new:
        return new
    t = _read(results / slug / "timings.json")  # published before costs.json: wall seconds
    if not t:
        return None
    per: dict[str, float] = defaultdict(float)
    for key, v in t.items():
        parts = key.split("/")
        if isinstance(v, (int, float)):  # SIZE/ARM/... per arm; a part of its own (the probe) by its name
            per[parts[1] if len(parts) > 1 else key] += v
    arms = ", ".join(f"{arm} {s / 60:.0f}" for arm, s in per.items())
    return {"experiment": slug, "unit": "wall", "minutes": sum(per.values()) / 60, "detail": f"per arm: {arms}"}


def plateau_row(results: Path) -> dict | None:
    new = costs_row(results, "plateau-fr")  # the recipe over ablate
    if new:
        return new
    p = _read(results / "plateau-fr" / "plateau.json")  # the script before it
    if not p:
        return None
    per = {name: sum(pt["train_cpu_s"] for pt in pts) for name, pts in p["vocabularies"].items()}
    arms = ", ".join(f"{name} {s / 60:.0f}" for name, s in per.items())
    return {"experiment": "plateau-fr", "unit": "CPU", "minutes": sum(per.values()) / 60,
            "detail": f"training only, {p['max_steps']:,} steps per vocabulary; per vocabulary: {arms}"}


def table(results: Path = RESULTS) -> str:
    budgets = sorted(d.name for d in results.glob("ablation-cpu-*") if d.is_dir())
    rows = [r for r in (table9_row(results), *probe_rows(results), ablation_row(results, "minilm-fr-cpu"),
                        plateau_row(results), *(ablation_row(results, b) for b in budgets)) if r]
    lines = ["| experiment | minutes | of | detail |", "|---|---:|---|---|"]
    lines += [f"| [{r['experiment']}](../docs/results/{r['experiment'].split(' ')[0]}/) | {r['minutes']:.0f} | "
              f"{r['unit']} | {r['detail']} |" for r in rows]
    return "\n".join(lines)


def rewrite(readme: Path = README, results: Path = RESULTS) -> str:
    """The README with its table between the markers replaced (the markers must be there)."""
    text = readme.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table(results)}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    import argparse

    argparse.ArgumentParser(prog="python -m benchmarks.experiments.time_to_verdict",
                            description=__doc__.splitlines()[0]).parse_args(argv)  # --help teaches, writes nothing
    README.write_text(rewrite(), encoding="utf-8")
    print(f"wrote the time-to-verdict table of {README}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
