"""The shipped surrogate logs known by their content, so that a copy of them imports as surrogate.

``data/gsm8k`` and ``data/piqa`` hold surrogate logs (``scripts/make_surrogate_logs.py``), not real model outputs.
Logs imported from their folder are marked surrogate by where they lie (:func:`cabench.data.importer.surrogate_source`);
a copy elsewhere is recognised by its content: the SHA-256 of the CSV text (gunzipped where the file is gzip), so a
copy, a gunzipped copy and one gzipped again at another level are all found. ``surrogate_logs.json`` beside this
module records each shipped file's content; the generator writes it with the logs, and a test checks it against them.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

RECORD = Path(__file__).with_name("surrogate_logs.json")
GZIP_MAGIC = b"\x1f\x8b"


def content(path: Path, limit: int) -> tuple[int, str] | None:
    """(bytes, SHA-256) of the text ``path`` holds (gunzipped where it is gzip), or None where it holds more than
    ``limit`` bytes (read no further: no shipped log is that long) or cannot be read."""
    h, size = hashlib.sha256(), 0
    try:
        with open(path, "rb") as raw:
            gz = raw.read(2) == GZIP_MAGIC
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                size += len(block)
                if size > limit:
                    return None
                h.update(block)
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    return size, h.hexdigest()


def record(folders: list[Path]) -> dict[str, dict[str, Any]]:
    """Each surrogate dataset folder's name: its log file's content (``bytes``, ``sha256``), as RECORD holds it."""
    out = {}
    for folder in folders:
        size, digest = content(folder / "logs.csv.gz", limit=1 << 40) or (0, "")
        out[folder.name] = {"bytes": size, "sha256": digest}
    return out


def write_record(folders: list[Path], path: Path = RECORD) -> None:
    """Write RECORD for the shipped surrogate dataset ``folders`` (``scripts/make_surrogate_logs.py``)."""
    path.write_text(json.dumps(record(folders), indent=2, sort_keys=True) + "\n")


def shipped() -> dict[str, dict[str, Any]]:
    """RECORD's content; empty where it is missing or unreadable (nothing is then recognised)."""
    try:
        data = json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def copy_of(path: Path) -> str | None:
    """The name of the shipped surrogate logs (``gsm8k``, ``piqa``) whose content ``path`` holds, if any."""
    files = {name: v for name, v in shipped().items() if isinstance(v, dict)}
    known = {str(v.get("sha256")): name for name, v in files.items()}
    sizes = {int(v.get("bytes", 0)) for v in files.values()}
    if not known:
        return None
    try:
        if not path.is_file():
            return None
        with open(path, "rb") as raw:
            gz = raw.read(2) == GZIP_MAGIC
        if not gz and path.stat().st_size not in sizes:  # a plain file of another length: not one of them, unread
            return None
    except OSError:
        return None
    found = content(path, max(sizes))
    return None if found is None or found[0] not in sizes else known.get(found[1])
