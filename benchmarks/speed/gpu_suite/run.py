"""The run: the inputs (shared data, or toy ones for a dry run), each step timed, the results
JSON and the README tables; :func:`main` is ``python -m benchmarks.speed.gpu_suite``."""

from __future__ import annotations

import contextlib
import dataclasses
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

from benchmarks.speed.gpu_suite.ablation import run_small_ablation, toy_ner_task
from benchmarks.speed.gpu_suite.config import REPO, SCHEMA, STEPS, SuiteConfig, config_from_args, field_of
from benchmarks.speed.gpu_suite.equivalence import check_equivalence
from benchmarks.speed.gpu_suite.results import StepResult, device_info, result_path, update_readme, versions, write_json
from benchmarks.speed.gpu_suite.throughput import measure_throughput


def _shared() -> Path | None:
    from biotok.datadir import shared_data

    base = shared_data() or REPO.parent / "shared" / "data"
    return base if (base / "corpora").is_dir() else None


def _inputs(cfg: SuiteConfig, work: Path) -> tuple[str, str, tuple[str, ...], str, list[dict]]:
    """(tokenizer, corpus, the ablation's tokenizers, its task, skipped) for this run."""
    skipped: list[dict] = []
    if cfg.dry_run:
        from biotok.config import NormalizeConfig, TrainConfig
        from biotok.train import train_tokenizer

        corpus = cfg.corpus or str(REPO / "corpora" / "sample" / "e3c_pamj_fr.txt")
        toks = []
        for algo in ("unigram", "wordpiece"):
            out = work / f"tok-{algo}"
            if not (out / "tokenizer.json").is_file():
                train_tokenizer([Path(corpus)], TrainConfig(algo=algo, vocab_size=cfg.ablation_vocab_size,
                                                            normalize=NormalizeConfig(lowercase=True)), out)
            toks.append(str(out))
        tokenizer = cfg.tokenizer or toks[0]
        task = cfg.task if cfg.task != SuiteConfig.task else str(
            toy_ner_task(Path(corpus), REPO / "corpora" / "terms" / "fr_biomedical.txt", work / "toy-ner"))
        skipped.append({"what": "shared data", "why": "dry run: tokenizers trained on the sample corpus, and a toy "
                                                      "NER task (numbers and listed terms) instead of E3C"})
        return tokenizer, corpus, tuple(cfg.tokenizers) or tuple(toks), task, skipped
    shared = _shared()
    need = [x is None for x in (cfg.tokenizer, cfg.corpus)] + [not cfg.tokenizers]
    if shared is None and any(need):
        raise SystemExit("gpu_suite: error: the shared data folder was not found (set BIOTOK_SHARED_DATA), "
                         "or pass --tokenizer, --corpus and --tokenizers")
    tokenizer = cfg.tokenizer or str(shared / "tokenizers" / "camemberta-base")
    corpus = cfg.corpus or str(shared / "corpora" / "e3c-fr" / "layer3_fr_pamj_ccby.jsonl.xz")
    tokenizers = tuple(cfg.tokenizers)
    if not tokenizers:
        from biotok.config import TrainConfig
        from biotok.train import train_tokenizer

        out = work / "tok-biotok-unigram-lower"
        texts = [corpus]
        leaflets = shared / "corpora" / "e3c-fr" / "layer3_fr_ministere_ccbync.jsonl.xz" if shared else None
        if leaflets is not None and leaflets.is_file() and leaflets.suffixes == Path(corpus).suffixes:
            texts.append(str(leaflets))  # the clinical cases alone support only ~11,600 pieces
        if not (out / "tokenizer.json").is_file():
            from biotok.config import NormalizeConfig

            train_tokenizer(texts, TrainConfig(vocab_size=cfg.ablation_vocab_size, normalize=NormalizeConfig(lowercase=True),
                                               field_name=field_of(corpus, cfg.field_name)), out)
        tokenizers = (tokenizer, str(out))  # the reference first: CamemBERTa's vocabulary
    return tokenizer, corpus, tokenizers, cfg.task, skipped


def _timed(name: str, fn, *args) -> StepResult:
    """Run one step; an exception becomes an 'error' result (the JSON is written whatever happens)."""
    import traceback

    t0 = time.perf_counter()
    try:
        res = fn(*args)
    except Exception as e:  # noqa: BLE001 - the suite reports every failure in its JSON
        tb = traceback.format_exc().strip().splitlines()
        res = StepResult(status="error", why=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                         data={"traceback_tail": tb[-6:]})
    res.wall_s = time.perf_counter() - t0
    print(f"[gpu-suite] {name}: {res.status} in {res.wall_s:.0f} s" + (f" ({res.why})" if res.why else ""), flush=True)
    return res


def run_suite(cfg: SuiteConfig, argv: Sequence[str] | None = None) -> tuple[dict, Path]:
    """Run the steps of ``cfg``, write the results JSON (and the README tables); return both."""
    import torch

    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    device = torch.device(cfg.device or ("cpu" if cfg.dry_run else "cuda"))
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("gpu_suite: error: no CUDA GPU here; use --dry-run to run every step at toy size on CPU")
    info = device_info(str(device))
    path = result_path(cfg.out, info, cfg.dry_run)
    if path.exists() and not cfg.force:
        raise SystemExit(f"gpu_suite: error: {path} exists: pass --force to replace it")
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # the fp32 reference is true fp32
        torch.backends.cudnn.allow_tf32 = False
    with contextlib.ExitStack() as stack:
        if cfg.work:
            work = Path(cfg.work)
            work.mkdir(parents=True, exist_ok=True)
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="biotok-gpu-suite-")))
        tokenizer, corpus, tokenizers, task, skipped = _inputs(cfg, work)
        steps: dict[str, dict] = {}
        data = None
        if "equivalence" in cfg.only:
            from biotok_train.config import PrepareConfig
            from biotok_train.pretrain.prepare import prepare

            data = work / "data-check"
            if not (data / "meta.json").is_file():
                seq_len = cfg.ablation_seq_len if cfg.dry_run else 128
                prepare([corpus], tokenizer, PrepareConfig(seq_len=seq_len, field_name=field_of(corpus, cfg.field_name)),
                        data, progress=False)
            steps["equivalence"] = _timed("equivalence", check_equivalence, cfg, data, device, work).to_dict()
        if "throughput" in cfg.only:
            steps["throughput"] = _timed("throughput", measure_throughput, cfg, tokenizer, corpus, work, device).to_dict()
        if "ablation" in cfg.only:
            steps["ablation"] = _timed("ablation", run_small_ablation, cfg, tokenizers, corpus, task, work).to_dict()
    skipped += _skipped(cfg, steps)
    ok = all(s["status"] == "passed" for s in steps.values())
    result = {
        "schema": SCHEMA, "dry_run": cfg.dry_run, "passed": ok,
        "command": "python -m benchmarks.speed.gpu_suite" + "".join(" " + shlex.quote(a) for a in (argv or [])),
        "started_utc": started, "wall_s": round(time.perf_counter() - t0, 1), "device": info, "versions": versions(),
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(cfg).items()},
        "inputs": {"tokenizer": tokenizer, "corpus": corpus, "ablation_tokenizers": list(tokenizers), "task": task},
        "skipped": skipped, "steps": steps,
    }
    write_json(path, result, force=cfg.force)
    if cfg.update_readme and not cfg.dry_run:
        update_readme(cfg.readme, cfg.out)
    return result, path


def _skipped(cfg: SuiteConfig, steps: dict[str, dict]) -> list[dict]:
    """What the run left out, and why: steps not in --only, each step's own skips, dry-run limits."""
    skipped = [{"what": name, "why": "not in --only"} for name in STEPS if name not in cfg.only]
    for s in steps.values():
        skipped.extend(s.get("skipped", []) if isinstance(s.get("skipped"), list) else [])
    if cfg.dry_run and "throughput" in cfg.only and not cfg.compile:
        skipped.append({"what": "throughput --compile", "why": "dry run: both sides eager (inductor compiles for "
                                                               "minutes per model on a CPU)"})
    if cfg.dry_run:
        skipped.append({"what": "goals", "why": "dry run: toy sizes on CPU, so speed and MFU say nothing about a GPU"})
    return skipped


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cfg = config_from_args(argv)
    result, path = run_suite(cfg, argv)
    print(f"[gpu-suite] {'passed' if result['passed'] else 'FAILED'} in {result['wall_s'] / 60:.1f} min -> {path}")
    return 0 if result["passed"] else 1
