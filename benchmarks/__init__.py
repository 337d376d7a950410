"""Benchmarks of indexops against the fastest native expression on the same backend.

Run ``python -m benchmarks.run --backend numpy --quick``; see ``benchmarks/README.md``.
Nothing here is part of the test suite.
"""

import indexops

# Timed calls are warm calls: the compiled kernels load now, not on a thread from the first
# large call (calls until the load ends take the paths taken without numba).
indexops.load_host_kernels()
