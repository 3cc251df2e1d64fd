"""``python -m benchmarks.gpu_suite``: the GPU suite's old name, kept because the GPU run notes,
the issues and the stop hook name it; the suite lives in :mod:`benchmarks.speed.gpu_suite`."""

from benchmarks.speed.gpu_suite.run import main

if __name__ == "__main__":
    raise SystemExit(main())
