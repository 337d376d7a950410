"""Layer 1, validate: pure Python checks of attributes, shapes, dtypes and arguments.

Each check raises an error that names the argument, the value received, what is allowed
and, for StableHLO constraints, the constraint's label.
"""
