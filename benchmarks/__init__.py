"""The benchmarks of biotok and biotok-train: a package, so that its scripts share helpers by
importing them (``from benchmarks._common import ...``, ``from benchmarks import pretrain_throughput``).

Run a script from the checkout either way:

    python benchmarks/ablation_cpu.py --quick
    python -m benchmarks.ablation_cpu --quick
    python -m benchmarks.gpu_suite --dry-run --out /tmp/suite     # a package: -m only

Run as a file, a script's folder is first on ``sys.path``; its first lines put the checkout
there instead (what ``-m`` does), so ``benchmarks`` imports as a package the same way in both
cases. ``benchmarks/README.md`` says what each one measures.
"""
