"""Readers of evaluation tools' own output formats, into canonical log rows (SPEC §1).

One reader per ``--format`` of ``cabench data import``; each module's
docstring is the table of which source field feeds which canonical column.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cabench.data.readers.bfcl import read_bfcl
from cabench.data.readers.common import Read
from cabench.data.readers.eee import read_eee
from cabench.data.readers.helm import read_helm
from cabench.data.readers.inspect_logs import read_inspect
from cabench.data.readers.promptfoo import read_promptfoo

#: ``--format`` name -> reader(source, metric) (``canonical`` is read by the importer itself).
READERS: dict[str, Callable[[Path, str | None], Read]] = {
    "bfcl": read_bfcl,
    "helm": read_helm,
    "inspect": read_inspect,
    "promptfoo": read_promptfoo,
    "every-eval-ever": read_eee,
}

__all__ = ["READERS", "Read", "read_bfcl", "read_eee", "read_helm", "read_inspect", "read_promptfoo"]
