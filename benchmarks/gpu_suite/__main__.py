"""``python -m benchmarks.gpu_suite``: run the GPU suite (see the package docstring)."""

import sys

from benchmarks.gpu_suite.run import main

sys.exit(main())
