"""The public ops, one module per op.

Each has the same shape: ``OP``, the public function (its signature, then the executor
lookup of :mod:`indexops._plan.executors`), ``_prepare`` (validates the call and picks
its executor), ``_plan`` (the cached static rules) and ``_execute*`` (the array work).
"""
