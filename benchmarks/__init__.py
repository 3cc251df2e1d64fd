"""The benchmarks of biotok and biotok-train, in two folders:

- ``benchmarks/speed/``: speed benchmarks (biotok against its baseline, side by side, as a ratio);
- ``benchmarks/experiments/``: the published experiments, recipes over ``biotok_train.ablate``
  and ``biotok_train.probe``.

Every script runs as a module from the checkout (no script imports another; they share only
``benchmarks._common`` and ``benchmarks.corpora``, the shared corpora paths):

    python -m benchmarks.run_all --quick
    python -m benchmarks.experiments.ablation_cpu --quick
    python -m benchmarks.speed.gpu_suite --dry-run --out /tmp/suite

``benchmarks/README.md`` says what each one measures.
"""
