"""Strict JSON out: every file and ``--json`` output cabench writes parses under RFC 8259.

Python's ``json`` writes ``NaN`` and ``Infinity`` for non-finite floats; no
other JSON reader accepts them. :func:`strict_dumps` writes them as ``null``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np


def finite(value: Any) -> Any:
    """``value`` with numpy scalars as Python ones and every non-finite float (nested in dicts, lists and
    tuples) replaced by None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def strict_dumps(value: Any, **options: Any) -> str:
    """JSON text of ``value`` with non-finite numbers as ``null`` (never ``NaN``/``Infinity``)."""
    return json.dumps(finite(value), allow_nan=False, **options)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def strict_loads(text: str | bytes) -> Any:
    """Parse JSON, refusing ``NaN``/``Infinity``; ValueError (or RecursionError) on bad input."""
    return json.loads(text, parse_constant=_refuse_constant)
