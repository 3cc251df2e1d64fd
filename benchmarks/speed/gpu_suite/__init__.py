"""The GPU suite: speed, numerics, a profile and a small ablation on one CUDA GPU, in one short slot.

    python -m benchmarks.speed.gpu_suite                      # one CUDA GPU, 8 minutes (--minutes N to size it)
    python -m benchmarks.speed.gpu_suite --dry-run --out /tmp/suite   # every step at toy size (CPU)

Steps, in this order (``--only`` picks some; the results JSON is rewritten after each, so a run
cut short keeps what it measured; a step that would not fit in what is left of ``--minutes`` by
the H200 run's measured times is skipped, and ``--minutes`` sizes the steps, see ``plan_for``):

1. throughput: ``biotok-train mlm`` (the ``pretrain`` loop) against transformers' ``Trainer`` at its
   best (the same batches, weights and tokens, pre-masked rows, loader workers, bf16, eager and
   compiled: the faster; :mod:`benchmarks.pretrain_throughput`), tokens/s, MFU and per-step times of
   both, BERT-base at seq 128 (and 512 with 12 minutes or more); goals: ratio >= 1.5, MFU >= 40 %;
2. equivalence: bf16 autocast, SDPA attention and ``torch.compile`` give the loss of the fp32
   eager reference on a few fixed batches, for BERT, ALBERT and ELECTRA, over a short training
   trajectory (so the backward pass and the update are checked too); packed rows (padded to
   the batch's length) give the loss and hidden states of each row run alone; all within the
   tolerances of :data:`TOLERANCES`; and a few compiled steps of the real loop for each objective;
3. profile: the BERT-small ablation step (64 x 128) eager and compiled under ``torch.profiler``:
   step time, the GPU's busy share, the top operators;
4. ablation: ``biotok-train ablate`` with 2 vocabularies, ``--size small``, 1 seed, end to end.

Failures are recorded with their root cause (the last lines of the innermost exception).
Writes ``<out>/<gpu-name>.json`` (schema :data:`SCHEMA`; a dry run writes
``<out>/dry-run-cpu.json``) and, for a real run, the tables between the
``gpu-suite`` markers of ``benchmarks/README.md``.

One module per part: :mod:`.config` (options, goals, tolerances, time estimates), :mod:`.results`
(the JSON and the README tables), :mod:`.throughput`, :mod:`.equivalence`, :mod:`.profile`,
:mod:`.ablation` (the steps), :mod:`.run` (inputs, the run, ``main``). FLOPs, MFU and GPU peaks:
:mod:`biotok_train.pretrain.flops`.
"""

from __future__ import annotations

from benchmarks.speed.gpu_suite.ablation import run_small_ablation, toy_ner_task
from benchmarks.speed.gpu_suite.config import (
    GOAL_MFU, GOAL_RATIO, REPO, SCHEMA, STEPS, TOLERANCES, SuiteConfig, build_parser, config_from_args, estimate_s,
    plan_for,
)
from benchmarks.speed.gpu_suite.profile import profile_step
from benchmarks.speed.gpu_suite.equivalence import (
    check_equivalence, fixed_batches, fixed_gumbel_noise, loop_smoke,
)
from benchmarks.speed.gpu_suite.results import (
    README_BEGIN, README_END, StepResult, device_info, render_tables, result_path, slug, update_readme, versions,
    write_json,
)
from benchmarks.speed.gpu_suite.run import main, run_suite
from benchmarks.speed.gpu_suite.throughput import measure_throughput
from biotok_train.pretrain.flops import PEAK_BF16_TFLOPS, flops_per_token, mfu, peak_tflops

__all__ = [
    "GOAL_MFU", "GOAL_RATIO", "PEAK_BF16_TFLOPS", "README_BEGIN", "README_END", "REPO", "SCHEMA", "STEPS",
    "TOLERANCES", "StepResult", "SuiteConfig", "build_parser", "check_equivalence", "config_from_args",
    "device_info", "estimate_s", "fixed_batches", "fixed_gumbel_noise", "flops_per_token", "loop_smoke", "main",
    "measure_throughput", "mfu", "peak_tflops", "plan_for", "profile_step", "render_tables", "result_path", "run_small_ablation", "run_suite",
    "slug", "toy_ner_task", "update_readme", "versions", "write_json",
]
