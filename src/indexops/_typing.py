"""The one array type alias of indexops.

Every array library is accepted, so an array is typed as ``Any``; the alias says which
arguments are arrays.
"""

from __future__ import annotations

from typing import Any

Array = Any
