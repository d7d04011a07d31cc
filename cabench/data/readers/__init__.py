"""Readers of evaluation tools' own output formats, into canonical log rows (SPEC §1).

One reader per ``--format`` of ``cabench data import``; each module's
docstring is the table of which source field feeds which canonical column.
"""

from __future__ import annotations

from cabench.data.readers.bfcl import read_bfcl
from cabench.data.readers.common import SPLITS, Read, ReadOptions
from cabench.data.readers.eee import read_eee
from cabench.data.readers.helm import read_helm
from cabench.data.readers.inspect_logs import read_inspect
from cabench.data.readers.promptfoo import read_promptfoo
from cabench.data.readers.source import READERS, SPLIT_FORMATS, Source, read_source

__all__ = ["READERS", "SPLITS", "SPLIT_FORMATS", "Read", "ReadOptions", "Source", "read_bfcl", "read_eee",
           "read_helm", "read_inspect", "read_promptfoo", "read_source"]
