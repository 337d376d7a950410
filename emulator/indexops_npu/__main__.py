"""``python -m indexops_npu``: the ``indexops-npu`` command."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
