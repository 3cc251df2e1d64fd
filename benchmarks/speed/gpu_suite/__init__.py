"""The GPU suite: numerics, speed and a small ablation on one CUDA GPU, in under 25 minutes.

    python -m benchmarks.speed.gpu_suite                      # on a machine with one CUDA GPU
    python -m benchmarks.speed.gpu_suite --dry-run --out /tmp/suite   # every step at toy size (CPU)

Steps (``--only`` picks some):

1. equivalence: bf16 autocast, SDPA attention and ``torch.compile`` give the loss of the fp32
   eager reference on a few fixed batches, for BERT, ALBERT and ELECTRA, over a short training
   trajectory (so the backward pass and the update are checked too); packed rows (padded to
   the batch's length) give the loss and hidden states of each row run alone; all within the
   tolerances of :data:`TOLERANCES`; and a few steps of the real loop run for each objective;
2. throughput: ``biotok-train mlm`` (the ``pretrain`` loop) against the HF ``Trainer`` +
   ``DataCollatorForLanguageModeling`` on the same BERT model and data, tokens/s and MFU at
   seq 128 and 512 (goals: ratio >= 1.5, MFU >= 40 %);
3. ablation: ``biotok-train ablate`` with 2 vocabularies, ``--size small``, 1 seed, end to end.

Writes ``<out>/<gpu-name>.json`` (schema :data:`SCHEMA`; a dry run writes
``<out>/dry-run-cpu.json``) and, for a real run, the tables between the
``gpu-suite`` markers of ``benchmarks/README.md``.

One module per part: :mod:`.config` (options, goals, tolerances), :mod:`.results` (the JSON and
the README tables), :mod:`.equivalence`, :mod:`.throughput`, :mod:`.ablation` (the three steps),
:mod:`.run` (inputs, the run, ``main``). FLOPs, MFU and GPU peaks: :mod:`biotok_train.pretrain.flops`.
"""

from __future__ import annotations

from benchmarks.speed.gpu_suite.ablation import run_small_ablation, toy_ner_task
from benchmarks.speed.gpu_suite.config import (
    GOAL_MFU, GOAL_RATIO, REPO, SCHEMA, STEPS, TOLERANCES, SuiteConfig, build_parser, config_from_args,
)
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
    "device_info", "fixed_batches", "fixed_gumbel_noise", "flops_per_token", "loop_smoke", "main",
    "measure_throughput", "mfu", "peak_tflops", "render_tables", "result_path", "run_small_ablation", "run_suite",
    "slug", "toy_ner_task", "update_readme", "versions", "write_json",
]
