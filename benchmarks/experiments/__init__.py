"""The published experiments: recipes over ablate and probe (``python -m benchmarks.experiments.NAME``)."""
