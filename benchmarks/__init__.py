"""Benchmarks of indexops against the fastest native expression on the same backend.

Run ``python -m benchmarks.run --backend numpy --quick``; see ``benchmarks/README.md``.
Nothing here is part of the test suite.
"""
