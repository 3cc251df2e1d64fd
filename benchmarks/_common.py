"""Shared helpers for the benchmarks: inputs built from ../shared/data, timing, peak RSS, JSON,
and the French CPU ablation's recipe (ablation_cpu publishes it; plateau_fr runs its curve).

Every benchmark runs biotok and its baseline side by side in one process (alternating runs),
reports min and median over the runs, and the ratio of medians.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from benchmarks.corpora import CAMEMBERTA, CORPORA, DATA, LEAFLETS, PAMJ, REPO
from biotok.io import open_text, versions

CACHE = Path(os.environ.get("BIOTOK_BENCH_CACHE", REPO / "benchmarks" / ".data"))
# run_all.py --quick points this elsewhere, so a smoke run never replaces the published results.
RESULTS = Path(os.environ.get("BIOTOK_BENCH_RESULTS", REPO / "benchmarks" / "results"))


def require_data() -> None:
    if not (DATA / "MANIFEST.md").is_file():
        sys.exit(f"benchmarks need the reference data: {DATA} not found (set BIOTOK_SHARED_DATA)")


def _paragraphs(path: Path):
    with open_text(path, newline=None) as f:
        for line in f:
            for para in json.loads(line)["text"].splitlines():
                para = para.strip()
                if para:
                    yield para


def e3c_text(megabytes: float, name: str = "e3c") -> Path:
    """E3C French clinical cases then drug leaflets, repeated if needed, cut at ``megabytes``.

    Streamed to a cached file (never held in memory); reused when it exists.
    """
    require_data()
    CACHE.mkdir(parents=True, exist_ok=True)
    out = CACHE / f"{name}_{megabytes:g}MB.txt"
    if out.is_file():
        return out
    target = int(megabytes * 1_000_000)
    written = 0
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        while written < target:
            for src in (PAMJ, LEAFLETS):
                for para in _paragraphs(src):
                    f.write(para + "\n")
                    written += len(para.encode("utf-8")) + 1
                    if written >= target:
                        break
                if written >= target:
                    break
    tmp.rename(out)
    return out


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def side_by_side(a: Callable[[], object], b: Callable[[], object], runs: int) -> tuple[list[float], list[float]]:
    """Alternate a and b ``runs`` times each (so drifting machine load hits both alike)."""
    ta, tb = [], []
    for _ in range(runs):
        ta.append(timed(a))
        tb.append(timed(b))
    return ta, tb


def summary(times: list[float]) -> dict:
    return {"min": min(times), "median": statistics.median(times), "runs": times}


def run_measured(code: str) -> dict:
    """Run Python ``code`` in a fresh interpreter under /usr/bin/time: wall seconds, peak RSS MB."""
    cmd = ["/usr/bin/time", "-f", "__TIME__ %e %M", sys.executable, "-c", code]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark job failed:\n{proc.stderr[-2000:]}")
    line = next(l for l in proc.stderr.splitlines() if l.startswith("__TIME__"))
    _, wall, rss_kb = line.split()
    return {"seconds": float(wall), "rss_mb": int(rss_kb) / 1024}


def git_commit() -> str | None:
    """The checkout's commit (with '+dirty' when files differ from it), or None outside git."""
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=REPO, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def machine() -> dict:
    """Where a result was measured: CPU count, OS, library versions and the git commit."""
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        **versions(),
        "commit": git_commit(),
    }


def save(name: str, result: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": name, "machine": machine(), **result}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def ablation_unigram_l(cfg, out: Path, tok: Path) -> tuple[Path, Path]:
    """The ablation's corpus split in OUT (pretraining and held-out lines) and, trained on its
    pretraining part only (never a held-out line), the biotok Unigram_L of 8,000 pieces ``tok``."""
    from biotok import TrainConfig, train_tokenizer
    from biotok.config import NormalizeConfig
    from biotok_train.ablate import split_corpus

    train, held, _ = split_corpus(cfg, out)
    if not (tok / "tokenizer.json").is_file():
        tcfg = TrainConfig(algo="unigram", vocab_size=8000, normalize=NormalizeConfig(lowercase=True))
        print(train_tokenizer([train], tcfg, tok, force=True).summary(), file=sys.stderr)
    return train, held


WMT_FR_TEXT = "wmt_biomed_fr.txt"  # in CACHE: the French WMT-biomed abstracts, the general text of every general model


def general_model(out: Path, data_dir: Path, pcfg) -> Path:
    """A general BERT (``pcfg``, a PretrainConfig) pretrained in ``out`` on the French WMT biomedical abstracts
    (written once to CACHE/WMT_FR_TEXT, whichever recipe asks first) with CamemBERTa's vocabulary, prepared in
    ``data_dir``: kept when it has its steps."""
    from benchmarks.corpora import CAMEMBERTA, wmt_french_file
    from biotok_train.config import PrepareConfig
    from biotok_train.pretrain.loop import pretrain
    from biotok_train.pretrain.prepare import open_prepared, prepare

    meta = out / "biotok_pretrain.json"
    if meta.is_file() and json.loads(meta.read_text(encoding="utf-8"))["step"] == pcfg.steps:
        return out
    data = open_prepared(data_dir) if (data_dir / "meta.json").is_file() else prepare(
        [str(wmt_french_file(CACHE / WMT_FR_TEXT))], str(CAMEMBERTA), PrepareConfig(seq_len=128), data_dir, force=True, progress=False)
    pretrain(data.path, pcfg, out, resume=(out / "checkpoint").exists(), progress=False)
    return out


def run_published_ablation(cfg, work: Path, tok: Path, slug: str, title: str, doc: str, quick: bool,
                           script: str | None = None, force: bool = False, engine=None):
    """Run (or resume) a published CPU ablation whose candidate vocabulary ``tok`` is a biotok
    Unigram_L of 8,000 pieces trained on the ablation's own pretraining split, then (unless
    ``quick``) copy its report to docs/results/SLUG/ with a README written from the numbers.
    ``force``: the work folder is shared with another recipe (ablate keeps the jobs they share)."""
    from biotok_train.ablate import run_ablation

    out = work / "run"
    ablation_unigram_l(cfg, out, tok)
    # the ablation (resumable: a rerun reuses every finished part)
    report = run_ablation(cfg, out, progress=False, force=force, **({"engine": engine} if engine else {}))
    if not quick:
        publish_ablation(report, out, REPO / "docs" / "results" / slug, title, doc,
                         f"python -m benchmarks.experiments.{script or slug.replace('-', '_')}")
    print("\n".join(report.sentences))
    return report


def published_ablation_main(doc: str, slug: str, title: str, work_name: str, make_base, recipe, argv=None,
                            options: tuple = ()):
    """The command line of a published CPU ablation from a base: ``--quick`` (results kept in the cache)
    and ``options`` ((flag, help) pairs, passed to ``make_base(work, args)``); then the base, the
    ablation's Unigram_L-8k and the ablation (``recipe(base, tokenizer, quick)``), published as SLUG."""
    import argparse
    import logging

    from biotok_train.ablate.config import EngineConfig  # lazy: the training package

    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few steps, results kept in benchmarks/.data only")
    ap.add_argument("--workers", type=int, default=0, metavar="N",
                    help="run the jobs in N processes of this machine (the same records and page as one process)")
    for flag, text in options:
        ap.add_argument(flag, help=text)
    args = ap.parse_args(argv)
    require_data()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    work = CACHE / (f"{work_name}_quick" if args.quick else work_name)
    work.mkdir(parents=True, exist_ok=True)
    tok = work / "Unigram_L-8k"
    base = make_base(work, args)
    engine = EngineConfig(engine="processes", workers=args.workers) if args.workers else EngineConfig()
    return run_published_ablation(recipe(base, tok, args.quick), work, tok, slug, title, doc, args.quick,
                                  engine=engine)


def publish_ablation(report, out: Path, dest: Path, title: str, doc: str, command: str) -> None:
    """An ablation's report from OUT copied to ``dest`` with a README written from the numbers
    (its setup: ``doc`` from "Phases: " on; ``command``: the one that makes it)."""
    import shutil

    from biotok_train.ablate.render import published_readme

    dest.mkdir(parents=True, exist_ok=True)
    for name in ("ablation.md", "ablation.json", "ablation.png", "config.json", "timings.json", "costs.json",
                 "heldout_curve.png"):
        if name not in ("timings.json", "costs.json", "heldout_curve.png") or (out / name).is_file():
            shutil.copyfile(out / name, dest / name)
        else:  # a file of an older publication that this run does not make (timings.json: before costs.json)
            (dest / name).unlink(missing_ok=True)
    setup = "Setup: " + " ".join(doc.split("Phases: ", 1)[1].split("\n"))
    text = published_readme(report, out, title=title, setup=setup, cpu_count=machine()["cpu_count"], command=command)
    (dest / "README.md").write_text(text, encoding="utf-8")
    print(f"wrote {dest}", file=sys.stderr)


PLATEAU_BUDGET = 6000  # the first published run (docs/results/ablation-cpu/): its arms are on the plateau
PLATEAU_EVERY = 2000  # plateau_fr's steps between two held-out evaluations: the curve of the runs past the plateau


def ablation_cpu_recipe(tokenizer: Path, quick: bool, budget: int = PLATEAU_BUDGET):
    """The French CPU ablation (ablation_cpu; plateau_fr at the same budget shares its pretraining jobs):
    everything the comparison holds equal across the two vocabularies. Past the plateau budget, the
    held-out curve every PLATEAU_EVERY steps, nothing fine-tuned on it (plateau_fr's curve)."""
    from biotok_train.ablate.config import AblationConfig, Curve, Finetuning, Pretraining
    from biotok_train.config import FinetuneConfig, OptimConfig  # lazy: torch-side config, only for the experiments

    past = budget != PLATEAU_BUDGET and not quick  # the run at a budget that plateau_fr.py found (its pretraining shared)
    cfg = AblationConfig(
        tokenizers=(str(CAMEMBERTA), str(tokenizer)), corpus=(str(PAMJ),), field_name="text", tasks=("e3c",),
        data_dir=str(CORPORA), sizes=("tiny",), pretraining=Pretraining(budget=budget, batch_size=8, seq_len=128, lr=2e-3, seeds=(0, 1)),
        finetuning=Finetuning(FinetuneConfig(epochs=10, optim=OptimConfig(lr=5e-4)), seeds=(0, 1)))
    if quick:
        return quick_variant(cfg, budget=20, n_words=100)
    return cfg if not past else dataclasses.replace(  # past the plateau: does the causal-LM probe rank as the MLM does?
        cfg, probe=400, pretraining=dataclasses.replace(cfg.pretraining, seeds=(0,)),
        finetuning=dataclasses.replace(cfg.finetuning, seeds=(0, 1, 2)),
        curve=Curve(steps=tuple(range(PLATEAU_EVERY, budget, PLATEAU_EVERY)), tasks=()))


def quick_variant(cfg, budget: int, n_words: int, seeds: tuple[int, ...] | None = None, **groups):
    """A recipe's ``--quick`` run: its groups with ``budget`` pretraining steps, one fine-tuning epoch on 40
    sentences (``seeds``: other fine-tuning seeds), ``n_words`` masked words; ``groups``: others swapped whole."""
    recipe = dataclasses.replace(cfg.finetuning.recipe, epochs=1, max_train_sentences=40)
    finetuning = dataclasses.replace(cfg.finetuning, recipe=recipe, seeds=seeds or cfg.finetuning.seeds)
    return dataclasses.replace(cfg, pretraining=dataclasses.replace(cfg.pretraining, budget=budget), finetuning=finetuning,
                               statistics=dataclasses.replace(cfg.statistics, n_words=n_words), **groups)


def ablation_cpu_workdir(budget: int, quick: bool) -> Path:
    """The ablation's work folder for ``budget`` (benchmarks/experiments/plateau_fr.py runs there too)."""
    return CACHE / ("ablation_cpu_quick" if quick else "ablation_cpu" + ablation_cpu_suffix(budget))


def ablation_cpu_suffix(budget: int) -> str:
    """What a budget adds to the names of the work folder and the published one (ablation-cpu-BUDGET)."""
    return "" if budget == PLATEAU_BUDGET else f"-{budget}"
