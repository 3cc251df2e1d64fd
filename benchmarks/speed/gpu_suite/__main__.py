"""``python -m benchmarks.speed.gpu_suite``: run the GPU suite (see the package docstring)."""

import sys

from benchmarks.speed.gpu_suite.run import main

sys.exit(main())
