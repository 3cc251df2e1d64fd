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

from benchmarks import corpora as C
from benchmarks.speed.gpu_suite.ablation import run_small_ablation, toy_ner_task
from benchmarks.speed.gpu_suite.config import SCHEMA, STEPS, SuiteConfig, config_from_args, estimate_s, field_of
from benchmarks.speed.gpu_suite.equivalence import check_equivalence
from benchmarks.speed.gpu_suite.profile import profile_step
from benchmarks.speed.gpu_suite.results import StepResult, device_info, result_path, update_readme, versions, write_json
from benchmarks.speed.gpu_suite.throughput import measure_throughput


def _inputs(cfg: SuiteConfig, work: Path) -> tuple[str, str, tuple[str, ...], str, list[dict]]:
    """(tokenizer, corpus, the ablation's tokenizers, its task, skipped) for this run."""
    skipped: list[dict] = []
    if cfg.dry_run:
        from biotok.config import NormalizeConfig, TrainConfig
        from biotok.train import train_tokenizer

        corpus = cfg.corpus or str(C.SAMPLE)
        toks = []
        for algo in ("unigram", "wordpiece"):
            out = work / f"tok-{algo}"
            if not (out / "tokenizer.json").is_file():
                train_tokenizer([Path(corpus)], TrainConfig(algo=algo, vocab_size=cfg.ablation_vocab_size,
                                                            normalize=NormalizeConfig(lowercase=True)), out)
            toks.append(str(out))
        tokenizer = cfg.tokenizer or toks[0]
        task = cfg.task if cfg.task != SuiteConfig.task else str(
            toy_ner_task(Path(corpus), C.TERMS_FR, work / "toy-ner"))
        skipped.append({"what": "shared data", "why": "dry run: tokenizers trained on the sample corpus, and a toy "
                                                      "NER task (numbers and listed terms) instead of E3C"})
        return tokenizer, corpus, tuple(cfg.tokenizers) or tuple(toks), task, skipped
    shared = C.CORPORA.is_dir()
    need = [x is None for x in (cfg.tokenizer, cfg.corpus)] + [not cfg.tokenizers]
    if not shared and any(need):
        raise SystemExit("gpu_suite: error: the shared data folder was not found (set BIOTOK_SHARED_DATA), "
                         "or pass --tokenizer, --corpus and --tokenizers")
    tokenizer = cfg.tokenizer or str(C.CAMEMBERTA)
    corpus = cfg.corpus or str(C.PAMJ)
    tokenizers = tuple(cfg.tokenizers)
    if not tokenizers:
        from biotok.config import TrainConfig
        from biotok.train import train_tokenizer

        out = work / "tok-biotok-unigram-lower"
        texts = [corpus]
        if shared and C.LEAFLETS.is_file() and C.LEAFLETS.suffixes == Path(corpus).suffixes:
            texts.append(str(C.LEAFLETS))  # the clinical cases alone support only ~11,600 pieces
        if not (out / "tokenizer.json").is_file():
            from biotok.config import NormalizeConfig

            train_tokenizer(texts, TrainConfig(vocab_size=cfg.ablation_vocab_size, normalize=NormalizeConfig(lowercase=True),
                                               field_name=field_of(corpus, cfg.field_name)), out)
        tokenizers = (tokenizer, str(out))  # the reference first: CamemBERTa's vocabulary
    return tokenizer, corpus, tokenizers, cfg.task, skipped


def _timed(name: str, fn, *args) -> StepResult:
    """Run one step; an exception becomes an 'error' result whose ``why`` is its root cause (the
    last lines of the innermost exception), the JSON is written whatever happens."""
    import traceback

    from biotok_train.pretrain.compiled import root_cause

    t0 = time.perf_counter()
    try:
        res = fn(*args)
    except Exception as e:  # noqa: BLE001 - the suite reports every failure in its JSON
        tb = traceback.format_exc().strip().splitlines()
        res = StepResult(status="error", why=root_cause(e), data={"error": f"{type(e).__name__}: "
                                                                           f"{str(e).splitlines()[0] if str(e) else ''}",
                                                                  "traceback_tail": tb[-12:]})
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
    result = {
        "schema": SCHEMA, "dry_run": cfg.dry_run, "passed": None, "complete": False,
        "command": "python -m benchmarks.speed.gpu_suite" + "".join(" " + shlex.quote(a) for a in (argv or [])),
        "started_utc": started, "wall_s": 0.0, "device": info, "versions": versions(),
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(cfg).items()},
        "planned_s": None if cfg.dry_run else round(cfg.planned_s()), "inputs": {}, "skipped": [], "steps": {},
    }
    write_json(path, result, force=cfg.force)  # claimed now: a cut run keeps what it measured
    with contextlib.ExitStack() as stack:
        if cfg.work:
            work = Path(cfg.work)
            work.mkdir(parents=True, exist_ok=True)
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="biotok-gpu-suite-")))
        tokenizer, corpus, tokenizers, task, skipped = _inputs(cfg, work)
        result["inputs"] = {"tokenizer": tokenizer, "corpus": corpus, "ablation_tokenizers": list(tokenizers),
                            "task": task}
        for name in [s for s in STEPS if s in cfg.only]:
            left = cfg.minutes * 60 - (time.perf_counter() - t0)
            if not cfg.dry_run and estimate_s(cfg, name) > left:
                skipped.append({"what": name, "why": f"would not fit: ~{estimate_s(cfg, name):.0f} s estimated, "
                                                     f"{max(0.0, left):.0f} s left of --minutes {cfg.minutes:g}"})
                continue
            result["steps"][name] = _run_step(name, cfg, device, work, tokenizer, corpus, tokenizers, task).to_dict()
            result["wall_s"] = round(time.perf_counter() - t0, 1)
            write_json(path, result, force=True)
    steps = result["steps"]
    result.update(skipped=skipped + _skipped(cfg, steps), complete=True, wall_s=round(time.perf_counter() - t0, 1),
                  passed=bool(steps) and all(s["status"] == "passed" for s in steps.values()))
    write_json(path, result, force=True)
    if cfg.update_readme and not cfg.dry_run:
        update_readme(cfg.readme, cfg.out)
    return result, path


def _check_data(cfg: SuiteConfig, corpus: str, tokenizer: str, work: Path) -> Path:
    """The prepared data of the equivalence and profile steps (the ablation's sequence length)."""
    from biotok_train.config import PrepareConfig
    from biotok_train.pretrain.prepare import prepare

    data = work / "data-check"
    if not (data / "meta.json").is_file():
        seq_len = cfg.ablation_seq_len if cfg.dry_run else 128
        prepare([corpus], tokenizer, PrepareConfig(seq_len=seq_len, field_name=field_of(corpus, cfg.field_name)),
                data, progress=False)
    return data


def _run_step(name: str, cfg: SuiteConfig, device, work: Path, tokenizer: str, corpus: str,
              tokenizers: tuple[str, ...], task: str) -> StepResult:
    """One step of the suite, timed; its failure is a result, not an exception."""
    if name == "throughput":
        return _timed(name, measure_throughput, cfg, tokenizer, corpus, work, device)
    if name == "ablation":
        return _timed(name, run_small_ablation, cfg, tokenizers, corpus, task, work)
    data = _check_data(cfg, corpus, tokenizer, work)
    if name == "equivalence":
        if device.type == "cuda":  # the fp32 reference is true fp32 (the Trainer turns TF32 on when it compiles)
            import torch

            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        return _timed(name, check_equivalence, cfg, data, device, work)
    return _timed(name, profile_step, cfg, data, device, work)


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
