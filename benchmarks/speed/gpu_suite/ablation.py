"""Step 3, ablation: ``biotok-train ablate`` with 2 vocabularies, one size, 1 seed, end to end."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from benchmarks.speed.gpu_suite.config import SuiteConfig, field_of
from benchmarks.speed.gpu_suite.results import StepResult


def toy_ner_task(corpus: Path, terms: Path, out: Path, max_sentences: int = 240) -> Path:
    """A small NER task built from the sample corpus for the dry run: numbers and listed terms.

    Words that are numbers are tagged NUM, words of ``terms`` (one term TAB category a line)
    their category; train/dev/test are every line but each 5th / each 10th / the other 5ths.
    """
    cats: dict[str, str] = {}
    for line in terms.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            term, _, cat = line.partition("\t")
            if " " not in term.strip():
                cats[term.strip().lower()] = re.sub(r"\W+", "_", cat.strip() or "TERM").upper()
    splits: dict[str, list[str]] = {"train": [], "dev": [], "test": []}
    lines = [l for l in corpus.read_text(encoding="utf-8").splitlines() if l.strip()]
    for i, line in enumerate(lines[:max_sentences]):
        rows = []
        for word in re.findall(r"\w+|[^\w\s]", line)[:60]:
            tag = "B-NUM" if word.isdigit() else (f"B-{cats[word.lower()]}" if word.lower() in cats else "O")
            rows.append(f"{word} {tag}")
        split = "test" if i % 5 == 0 else "dev" if i % 10 == 1 else "train"
        splits[split].append("\n".join(rows) + "\n")
    out.mkdir(parents=True, exist_ok=True)
    for name, sents in splits.items():
        (out / f"{name}.bio").write_text("\n".join(sents), encoding="utf-8")
    return out


# The first GPU run's BERT-small arms (H200, eager, 64 x 128; benchmarks/results/gpu/h200-2026-11-27): the
# issue's figure, 45-60 steps/s; the goal is the pretraining time per arm down at least 4x from there.
H200_EAGER_STEPS_PER_S = (45.0, 60.0)


def pretraining_speed(out: Path) -> list[dict]:
    """Each pretraining run under ``out`` (its metrics.jsonl): its steps, the median tokens/s, steps/s and
    MFU of its logged windows after the first (which holds compilation and warm-up), and its overall
    steps/s (ablate's pauses between chunks included); against the first H200 run's eager arms."""
    import json
    import statistics

    runs = []
    for f in sorted(out.rglob("metrics.jsonl")):
        rows = [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
        if len(rows) < 2:
            continue
        first, last = rows[0], rows[-1]
        overall = (last["step"] - first["step"]) / max(last["time"] - first["time"], 1e-9)
        per_step = (last["tokens"] - first["tokens"]) / max(last["step"] - first["step"], 1)  # tokens a step
        tps = statistics.median(r["tokens_per_s"] for r in rows[1:])
        mfus = [r["mfu"] for r in rows[1:] if r.get("mfu") is not None]
        runs.append({"run": str(f.parent.relative_to(out)), "steps": last["step"], "tokens_per_step": per_step,
                     "tokens_per_s_median": tps, "steps_per_s_median": tps / per_step,
                     "steps_per_s_overall": overall,  # with ablate's pauses between chunks (held-out scoring, saves)
                     "mfu_median": statistics.median(mfus) if mfus else None, "graphs": last.get("graphs"),
                     "speedup_vs_h200_eager": [tps / per_step / h for h in H200_EAGER_STEPS_PER_S]})
    return runs


def run_small_ablation(cfg: SuiteConfig, tokenizers: Sequence[str], corpus: str, task: str, work: Path) -> StepResult:
    """``biotok-train ablate`` with 2 vocabularies, one size, 1 seed; its table and numbers."""
    from biotok_train.ablate import run_ablation
    from biotok_train.ablate.command import command_line
    from biotok_train.ablate.config import AblationConfig, Finetuning, Pretraining, Statistics
    from biotok_train.config import FinetuneConfig

    toy = dict(finetuning=Finetuning(FinetuneConfig(epochs=1, max_steps=6, batch_size=8)),
               statistics=Statistics(n_words=50, n_resamples=200)) if cfg.dry_run else {}
    acfg = AblationConfig(
        tokenizers=tuple(tokenizers), corpus=(corpus,), field_name=field_of(corpus, cfg.field_name), tasks=(task,),
        data_dir=cfg.data_dir, sizes=(cfg.ablation_size,), pretraining=Pretraining(
            budget=cfg.ablation_budget, batch_size=cfg.ablation_batch_size, seq_len=cfg.ablation_seq_len), **toy,
    )
    out = work / "ablation"
    report = run_ablation(acfg, out, progress=not cfg.dry_run)
    legs = [{"name": a.name, "mlm_top1": a.mlm["top1"]["mean"], "f1": a.metrics[task]["mean"],
             "floor": a.floors.get(task, {}).get("mean"), "tokens_seen": a.tokens_seen, "chars_seen": a.chars_seen}
            for a in report.arms]
    return StepResult(status="passed", data={
        "size": cfg.ablation_size, "budget": cfg.ablation_budget, "task": task, "metric": report.tasks[task]["metric"],
        "legs": legs, "verdicts": report.sentences, "table": report.markdown, "command": command_line(acfg, out),
        "pretraining": pretraining_speed(out), "h200_eager_steps_per_s": list(H200_EAGER_STEPS_PER_S), "goal_speedup": 4.0})
