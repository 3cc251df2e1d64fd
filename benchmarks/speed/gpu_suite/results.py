"""The suite's results: one JSON per device, and the README tables written from them."""

from __future__ import annotations

import json
import os
import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from benchmarks.speed.gpu_suite.config import GOAL_MFU, GOAL_RATIO, SCHEMA, TOLERANCES
from biotok_train.pretrain.flops import peak_tflops

README_BEGIN = "<!-- gpu-suite:begin (written by python -m benchmarks.speed.gpu_suite; do not edit by hand) -->"
README_END = "<!-- gpu-suite:end -->"


def slug(name: str) -> str:
    """A file name from a device name: ``NVIDIA H100 80GB HBM3`` -> ``nvidia-h100-80gb-hbm3``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "device"


@dataclass
class StepResult:
    """One step's outcome in the JSON: passed / failed / skipped (with why), its time and numbers."""

    status: str = "skipped"
    wall_s: float = 0.0
    why: str | None = None
    data: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"status": self.status, "wall_s": round(self.wall_s, 1), "why": self.why, **self.data}


def device_info(device: str) -> dict:
    """Name, memory, capability and peak of the device the suite ran on."""
    import torch

    if device.startswith("cuda"):
        idx = torch.device(device).index or 0
        p = torch.cuda.get_device_properties(idx)
        name = torch.cuda.get_device_name(idx)
        return {"type": "cuda", "name": name, "count": torch.cuda.device_count(),
                "memory_gib": round(p.total_memory / 2**30, 1), "capability": f"{p.major}.{p.minor}",
                "peak_bf16_tflops": peak_tflops(name)}
    return {"type": "cpu", "name": f"CPU ({platform.processor() or platform.machine()})",
            "count": 1, "threads": torch.get_num_threads(), "memory_gib": None, "capability": None,
            "peak_bf16_tflops": None}


def versions() -> dict:
    """Versions of what the numbers depend on: the libraries (biotok.io.versions), CUDA and the platform."""
    import torch

    from biotok.io import versions as library_versions

    cuda = torch.version.cuda if torch.cuda.is_available() else None
    return {**library_versions(("python", "torch")), "cuda": cuda,
            "cudnn": torch.backends.cudnn.version() if cuda else None,
            **library_versions(("transformers", "biotok")), "platform": platform.platform()}


def result_path(out: str | Path, device: dict, dry_run: bool) -> Path:
    """``<out>/<gpu-name>.json``; a dry run writes ``<out>/dry-run-<device>.json`` (never a GPU's file)."""
    name = "dry-run-" + slug(device["type"]) if dry_run else slug(device["name"])
    return Path(out) / f"{name}.json"


def write_json(path: Path, obj: dict, force: bool) -> Path:
    """Write ``obj`` as JSON through a temporary sibling, refusing to replace a file without ``force``."""
    if path.exists() and not force:
        raise FileExistsError(f"{path} exists: pass --force to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:,.0f}"


def render_tables(results: Sequence[dict]) -> str:
    """The Markdown tables of ``benchmarks/README.md`` from suite results (dry runs left out)."""
    real = sorted((r for r in results if not r.get("dry_run")), key=lambda r: r["device"]["name"])
    if not real:
        return "No GPU run yet: `python -m benchmarks.speed.gpu_suite` on a machine with one CUDA GPU writes these tables.\n"
    lines = ["Throughput: `biotok-train mlm` vs transformers' `Trainer` at its best (bf16, SDPA, eager or compiled "
             "whichever is faster, pre-masked rows of the same batches in the same order, loader workers), the same "
             "model, weights and tokens; the timed steps come after warm-up and after every compilation; step = "
             f"median step time (goals: ratio >= {GOAL_RATIO}, MFU >= {GOAL_MFU:.0%}; MFU from "
             "6·N + 12·L·d·s FLOPs per token, see `flops_per_token`).", "",
             "| GPU | model | seq | batch | biotok tokens/s (step) | Trainer tokens/s (step, mode) | ratio | MFU biotok "
             "| MFU Trainer | goals met |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in real:
        tp = r["steps"].get("throughput", {})
        for run in tp.get("runs", []):
            met = "yes" if run.get("met_ratio") and run.get("met_mfu") else "no"
            ms = {k: f" ({1000 * run[k]['median']:.1f} ms)" if run.get(k) else "" for k in ("biotok_step_s", "hf_step_s")}
            mode = f", {run['hf_mode']}" if run.get("hf_mode") else ""
            lines.append(
                f"| {r['device']['name']} | bert-{tp.get('size')} | {run['seq_len']} | {run['batch_size']} | "
                f"{_num(run.get('biotok_tokens_per_s'))}{ms['biotok_step_s']} | "
                f"{_num(run.get('hf_tokens_per_s'))}{ms['hf_step_s'][:-1] + mode + ')' if ms['hf_step_s'] else ''} | "
                f"**{run['ratio']:.2f}** | {_pct(run.get('biotok_mfu'))} | {_pct(run.get('hf_mfu'))} | {met} |")
        if tp.get("status") not in (None, "passed"):
            lines.append(f"| {r['device']['name']} | throughput {tp.get('status')}: {tp.get('why') or ''} |||||||||")
    lines += ["", "Numerics: largest relative loss difference from fp32 eager over a short training trajectory "
              "(tolerance in brackets; ✓ within it).", ""]
    variants = list(TOLERANCES)
    lines += ["| GPU | model | " + " | ".join(f"{v} [{TOLERANCES[v]:g}]" for v in variants) + " |",
              "|---|---|" + "---|" * len(variants)]
    for r in real:
        checks = r["steps"].get("equivalence", {}).get("checks", [])
        for arch in dict.fromkeys(c["arch"] for c in checks):
            cells = []
            for v in variants:
                c = next((c for c in checks if c["arch"] == arch and c["variant"] == v), None)
                if c is None or c.get("skipped"):
                    cells.append("skipped")
                else:
                    cells.append(f"{c['max_rel_diff']:.1e} {'✓' if c['passed'] else '✗'}")
            lines.append(f"| {r['device']['name']} | {arch}-{r['config']['check_size']} | " + " | ".join(cells) + " |")
    lines += ["", "Ablation (`biotok-train ablate`, 2 vocabularies, 1 seed):", ""]
    lines += ["| GPU | size | steps | wall | tokenizer | MLM top-1 | task | F1 |", "|---|---|---|---|---|---|---|---|"]
    for r in real:
        ab = r["steps"].get("ablation", {})
        for leg in ab.get("legs", []):
            lines.append(f"| {r['device']['name']} | {ab.get('size')} | {ab.get('budget')} | {ab.get('wall_s', 0) / 60:.1f} min | "
                         f"{leg['name']} | {leg.get('mlm_top1', float('nan')):.3f} | {ab.get('task')} | "
                         f"{leg.get('f1', float('nan')):.3f} |")
        if ab.get("status") not in (None, "passed"):
            lines.append(f"| {r['device']['name']} | ablation {ab.get('status')}: {ab.get('why') or ''} |||||||")
    lines += ["", "Runs: " + "; ".join(
        f"{r['device']['name']}, {r.get('started_utc', '?')[:10]}, torch {r['versions']['torch']}, "
        f"{r.get('wall_s', 0) / 60:.1f} min (`{r.get('command', '')}`)" for r in real) + "."]
    return "\n".join(lines) + "\n"


def update_readme(readme: str | Path, results_dir: str | Path) -> Path:
    """Rewrite the part of ``readme`` between the gpu-suite markers from every JSON in ``results_dir``.

    Without the markers, a "GPU suite" section holding them is appended.
    """
    readme = Path(readme)
    results = []
    for f in sorted(Path(results_dir).glob("*.json")):
        try:
            r = json.loads(f.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            continue
        if r.get("schema") == SCHEMA:
            results.append(r)
    block = f"{README_BEGIN}\n{render_tables(results)}{README_END}"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    if README_BEGIN in text and README_END in text:
        head, rest = text.split(README_BEGIN, 1)
        _, tail = rest.split(README_END, 1)
        new = head + block + tail
    else:
        new = text.rstrip("\n") + ("\n\n" if text else "") + "## GPU suite\n\n" + block + "\n"
    tmp = readme.with_name(f".{readme.name}.tmp")
    tmp.write_text(new, encoding="utf-8")
    os.replace(tmp, readme)
    return readme
