"""The suite's options (:class:`SuiteConfig`, the command line built from it), goals and tolerances."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from benchmarks.corpora import REPO
SCHEMA = "biotok-gpu-suite/1"
STEPS = ("throughput", "equivalence", "profile", "ablation")  # in the order they run (the JSON is written after each)
GOAL_RATIO = 1.5
GOAL_MFU = 0.40

# Largest relative difference of any step's loss from the fp32 eager reference that passes.
# fp32 variants differ only by summation order; bf16 keeps 8 bits of mantissa (relative
# rounding 2^-8 = 0.4 % per operation, averaged over many terms in a loss), and a short
# trajectory stays well within 1 %.
TOLERANCES: dict[str, float] = {
    "sdpa": 1e-4,
    "packed": 1e-4,
    "compile": 1e-3,
    "bf16": 1e-2,
    "bf16+compile": 1e-2,
}


# Seconds each step took on the first GPU run (one H200, 2026-11-27, benchmarks/results/gpu/h200-2026-11-27/),
# mostly compilation (CPU-bound, so about the same on an H100): throughput 133 s at seq 128 and 114 s at 512
# (BERT-base; its Trainer side then never compiled: ~50 s more now that it does, ~10 s for its eager run),
# the ablation 153 s for 3,000 BERT-small steps per arm (2 arms + fine-tuning), equivalence 112 s with
# 2 batches x 4 steps (more than 255 s with 4 x 6). The profile step is ~45 s (two short BERT-small runs).
SETUP_S = 45.0  # imports, preparing the data, training the ablation's Unigram_L
THROUGHPUT_S = {128: 190.0, 512: 170.0}  # per sequence length, both Trainer modes
PROFILE_S = 45.0
ABLATION_FIXED_S, ABLATION_PER_1000_S = 60.0, 31.0


def equivalence_s(batches: int, steps: int) -> float:
    """Estimated seconds of the equivalence step: 112 s measured at 2 x 4, growing with the trajectories."""
    return 112.0 * (1 + max(0, batches * steps - 8) / 16)


def estimate_s(cfg: "SuiteConfig", step: str) -> float:
    """Estimated seconds of one step of ``cfg`` on one H100/H200 (from the measured times above)."""
    if step == "throughput":
        return sum(THROUGHPUT_S.get(s, THROUGHPUT_S[512]) for s in cfg.seq_lens)
    if step == "equivalence":
        return equivalence_s(cfg.check_batches, cfg.check_steps)
    if step == "profile":
        return PROFILE_S
    return ABLATION_FIXED_S + ABLATION_PER_1000_S * cfg.ablation_budget / 1000


@dataclass(frozen=True)
class SuiteConfig:
    """Every option of the suite; the command-line defaults are read from here."""

    dry_run: bool = False
    out: str = str(REPO / "benchmarks" / "results" / "gpu")
    readme: str = str(REPO / "benchmarks" / "README.md")
    update_readme: bool = True
    force: bool = False
    only: tuple[str, ...] = STEPS
    device: str | None = None  # None: cuda (cpu for --dry-run)
    work: str | None = None  # scratch folder (default: a temporary one, removed at the end)
    minutes: float = 8.0  # the run's budget: sizes chosen to fit (plan_for), a step that would not fit is skipped
    # 1. equivalence
    check_size: str = "small"
    check_batches: int = 2
    check_steps: int = 4
    check_batch_size: int = 8
    check_lr: float = 1e-3
    compile_backend: str = "inductor"
    # 2. throughput
    size: str = "base"
    seq_lens: tuple[int, ...] = (128,)
    batch_sizes: tuple[int, ...] = (128,)
    timed_steps: int = 40
    warmup_steps: int = 10
    compile: bool = True
    compile_mode: str = "default"  # of our side (reduce-overhead: CUDA graphs)
    hf_workers: int = 2  # the Trainer's data-loader workers
    # profile
    profile_steps: int = 10
    peak_tflops: float | None = None
    # data for 1-2 and the ablation
    tokenizer: str | None = None  # default: camemberta-base from the shared data
    corpus: str | None = None  # default: E3C PAMJ clinical cases from the shared data
    field_name: str | None = "text"
    # 3. ablation
    tokenizers: tuple[str, ...] = ()  # default: --tokenizer, and a biotok Unigram_L trained on the E3C texts
    task: str = "e3c"
    data_dir: str | None = None
    ablation_size: str = "small"
    ablation_budget: int = 900  # what plan_for gives the ablation of an 8-minute run
    ablation_batch_size: int = 64
    ablation_seq_len: int = 128
    ablation_vocab_size: int = 32000

    def __post_init__(self) -> None:
        bad = [s for s in self.only if s not in STEPS]
        if bad:
            raise ValueError(f"unknown step {bad[0]!r} (choose from {', '.join(STEPS)})")
        if len(self.seq_lens) != len(self.batch_sizes):
            raise ValueError(f"{len(self.seq_lens)} --seq-lens but {len(self.batch_sizes)} --batch-sizes")
        for name in ("check_batches", "check_steps", "check_batch_size", "timed_steps", "ablation_budget"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1")
        if self.warmup_steps < 1:
            raise ValueError("--warmup-steps must be at least 1 (the first step compiles and allocates)")
        if self.minutes <= 0:
            raise ValueError("--minutes must be positive")

    def planned_s(self) -> float:
        """Estimated seconds of the steps in ``only`` and the setup (:func:`estimate_s`)."""
        return SETUP_S + sum(estimate_s(self, s) for s in self.only)

    def toy(self) -> "SuiteConfig":
        """The dry-run sizes: every step runs, on CPU, in about a minute."""
        return dataclasses.replace(
            self, check_size="tiny", check_batches=2, check_steps=3, check_batch_size=4,
            compile_backend="aot_eager" if self.compile_backend == "inductor" else self.compile_backend,
            size="tiny", seq_lens=(32, 64), batch_sizes=(8, 4), timed_steps=4, warmup_steps=2, compile=False,
            profile_steps=3,
            ablation_size="tiny", ablation_budget=4, ablation_batch_size=8, ablation_seq_len=32,
            ablation_vocab_size=1500,
        )


def plan_for(cfg: SuiteConfig, explicit: set[str] = frozenset()) -> SuiteConfig:
    """Sizes that fit ``cfg.minutes`` by the measured times (:func:`estimate_s`); a size named in
    ``explicit`` (options the user gave, ``--seq-lens`` ...) is kept. 8 minutes: BERT-base throughput
    at seq 128 only, equivalence at 2 batches x 4 steps, the profile, and the ablation budget from what is left;
    12 minutes or more add seq 512, 16 or more the longer equivalence trajectories (4 x 6)."""
    def free(*names: str) -> bool:
        return not any(f"--{n.replace('_', '-')}" in explicit for n in names)

    new: dict = {}
    if free("seq_lens", "batch_sizes"):
        new.update(seq_lens=(128, 512), batch_sizes=(128, 32)) if cfg.minutes >= 12 else \
            new.update(seq_lens=(128,), batch_sizes=(128,))
    if free("check_batches", "check_steps"):
        new.update(check_batches=4, check_steps=6) if cfg.minutes >= 16 else new.update(check_batches=2, check_steps=4)
    cfg = dataclasses.replace(cfg, **new)
    if free("ablation_budget") and "ablation" in cfg.only:
        others = SETUP_S + sum(estimate_s(cfg, s) for s in cfg.only if s != "ablation")
        left = cfg.minutes * 60 - others - ABLATION_FIXED_S
        budget = int(left / ABLATION_PER_1000_S * 1000) // 100 * 100
        cfg = dataclasses.replace(cfg, ablation_budget=max(200, min(3000, budget)))
    return cfg


def _csv_ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _csv(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def build_parser() -> argparse.ArgumentParser:
    """The command line; every default comes from :class:`SuiteConfig`."""
    d = SuiteConfig()
    from benchmarks.speed import gpu_suite

    ap = argparse.ArgumentParser(prog="python -m benchmarks.speed.gpu_suite", description=gpu_suite.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true",
                    help="every step at toy size on CPU (bf16 autocast on CPU, compile with the aot_eager backend)")
    ap.add_argument("--out", default=d.out, help="folder of the results JSON (default: %(default)s)")
    ap.add_argument("--readme", default=d.readme, help="README whose gpu-suite tables are rewritten (default: %(default)s)")
    ap.add_argument("--no-readme", dest="update_readme", action="store_false", help="leave the README alone")
    ap.add_argument("--force", action="store_true", help="replace an existing results JSON")
    ap.add_argument("--only", type=_csv, default=d.only, help=f"steps to run, comma-separated (default: {','.join(STEPS)})")
    ap.add_argument("--device", default=d.device, help="torch device (default: cuda; cpu with --dry-run)")
    ap.add_argument("--work", default=d.work, help="scratch folder kept after the run (default: a temporary one)")
    ap.add_argument("--minutes", type=float, default=d.minutes,
                    help="time budget: sizes chosen to fit it by the H200 run's measured times, and a step that would "
                         "not fit in what is left is skipped (default: %(default)s, one short GPU slot)")
    g = ap.add_argument_group("1. equivalence")
    g.add_argument("--check-size", default=d.check_size, help="model size of the checks (default: %(default)s)")
    g.add_argument("--check-batches", type=int, default=d.check_batches, help="fixed batches (default: %(default)s)")
    g.add_argument("--check-steps", type=int, default=d.check_steps, help="training steps compared (default: %(default)s)")
    g.add_argument("--check-batch-size", type=int, default=d.check_batch_size, help="rows per batch (default: %(default)s)")
    g.add_argument("--compile-backend", default=d.compile_backend,
                   help="torch.compile backend (default: %(default)s; aot_eager with --dry-run)")
    g = ap.add_argument_group("2. throughput")
    g.add_argument("--size", default=d.size, help="BERT size (default: %(default)s)")
    g.add_argument("--seq-lens", type=_csv_ints, default=d.seq_lens, help="sequence lengths (default: 128,512)")
    g.add_argument("--batch-sizes", type=_csv_ints, default=d.batch_sizes, help="batch per sequence length (default: 128,32)")
    g.add_argument("--timed-steps", type=int, default=d.timed_steps, help="timed steps per run (default: %(default)s)")
    g.add_argument("--warmup-steps", type=int, default=d.warmup_steps, help="untimed first steps (default: %(default)s)")
    g.add_argument("--no-compile", dest="compile", action="store_false", help="time both sides without torch.compile")
    g.add_argument("--compile-mode", default=d.compile_mode,
                   help="our side's torch.compile mode: default, reduce-overhead (CUDA graphs), max-autotune-no-cudagraphs")
    g.add_argument("--hf-workers", type=int, default=d.hf_workers, help="the Trainer's data-loader workers (default: %(default)s)")
    g.add_argument("--profile-steps", type=int, default=d.profile_steps,
                   help="profiled steps of the BERT-small ablation step, eager and compiled (default: %(default)s)")
    g.add_argument("--peak-tflops", type=float, default=d.peak_tflops, help="peak bf16 TFLOP/s for MFU (default: by GPU name)")
    g = ap.add_argument_group("data and 3. ablation")
    g.add_argument("--tokenizer", default=d.tokenizer, help="tokenizer of steps 1-2 (default: camemberta-base, shared data)")
    g.add_argument("--corpus", default=d.corpus, help="pretraining text (default: E3C PAMJ cases, shared data)")
    g.add_argument("--field", dest="field_name", default=d.field_name, help="JSONL field of --corpus (default: %(default)s)")
    g.add_argument("--tokenizers", nargs="+", default=list(d.tokenizers),
                   help="the ablation's 2 vocabularies, the reference first (default: --tokenizer, and a biotok "
                        "Unigram_L trained on the E3C clinical cases and drug leaflets)")
    g.add_argument("--task", default=d.task, help="ablation task (default: %(default)s)")
    g.add_argument("--data-dir", default=d.data_dir, help="shared corpora folder (default: $BIOTOK_SHARED_DATA/corpora)")
    g.add_argument("--ablation-budget", type=int, default=d.ablation_budget, help="pretraining steps per arm (default: %(default)s)")
    return ap


def config_from_args(argv: Sequence[str] | None = None) -> SuiteConfig:
    """Parse ``argv`` into a :class:`SuiteConfig` (toy sizes for ``--dry-run``)."""
    ap = build_parser()
    ns = vars(ap.parse_args(argv))
    ns["tokenizers"] = tuple(ns["tokenizers"])
    try:
        cfg = SuiteConfig(**ns)
    except ValueError as e:
        ap.error(str(e))
    explicit = {a.split("=")[0] for a in (argv if argv is not None else sys.argv[1:]) if a.startswith("--")}
    if not cfg.dry_run:
        return plan_for(cfg, explicit)
    if cfg.dry_run:
        toy = cfg.toy()
        # sizes the user set explicitly win over the toy sizes
        keep = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)
                if "--" + f.name.replace("_", "-") in explicit}
        cfg = dataclasses.replace(toy, **keep)
    return cfg


def field_of(corpus: str, field_name: str | None) -> str | None:
    """The JSONL field only for a JSON-lines corpus (plain text has none)."""
    return field_name if ".jsonl" in Path(corpus).name or ".json" in Path(corpus).suffixes else None
