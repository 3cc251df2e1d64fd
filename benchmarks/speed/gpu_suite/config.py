"""The suite's options (:class:`SuiteConfig`, the command line built from it), goals and tolerances."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).resolve().parents[3]
SCHEMA = "biotok-gpu-suite/1"
STEPS = ("equivalence", "throughput", "ablation")
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
    # 1. equivalence
    check_size: str = "small"
    check_batches: int = 4
    check_steps: int = 6
    check_batch_size: int = 8
    check_lr: float = 1e-3
    compile_backend: str = "inductor"
    # 2. throughput
    size: str = "base"
    seq_lens: tuple[int, ...] = (128, 512)
    batch_sizes: tuple[int, ...] = (128, 32)
    timed_steps: int = 50
    warmup_steps: int = 10
    compile: bool = True
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
    ablation_budget: int = 3000
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

    def toy(self) -> "SuiteConfig":
        """The dry-run sizes: every step runs, on CPU, in about a minute."""
        return dataclasses.replace(
            self, check_size="tiny", check_batches=2, check_steps=3, check_batch_size=4,
            compile_backend="aot_eager" if self.compile_backend == "inductor" else self.compile_backend,
            size="tiny", seq_lens=(32, 64), batch_sizes=(8, 4), timed_steps=4, warmup_steps=2, compile=False,
            ablation_size="tiny", ablation_budget=4, ablation_batch_size=8, ablation_seq_len=32,
            ablation_vocab_size=1500,
        )


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
    if cfg.dry_run:
        explicit = {a.split("=")[0] for a in (argv if argv is not None else sys.argv[1:]) if a.startswith("--")}
        toy = cfg.toy()
        # sizes the user set explicitly win over the toy sizes
        keep = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)
                if "--" + f.name.replace("_", "-") in explicit}
        cfg = dataclasses.replace(toy, **keep)
    return cfg


def field_of(corpus: str, field_name: str | None) -> str | None:
    """The JSONL field only for a JSON-lines corpus (plain text has none)."""
    return field_name if ".jsonl" in Path(corpus).name or ".json" in Path(corpus).suffixes else None
