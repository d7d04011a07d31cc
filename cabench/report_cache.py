"""Report sections kept between runs of ``cabench report``: ``ROOT/report_sections.json``.

What the report says of one experiment — its verdicts, its part of REPORT.md and the data of its part of REPORT.html
(the decision, the tables, the paired comparisons), and what ``cabench recommend`` says of it without requirements
(:func:`cabench.recommend.experiment_answers`, read back by ``recommend``) — depends only on that experiment's result
files, its label and the code that renders it. Each section is stored under a key hashing exactly those (SHA-256 of
every file of the results folder that :func:`cabench.results.load_experiment` reads, the label, the folders holding a
copy of it, and :func:`code_version`), so a section is reused only when nothing it was computed from changed; any edit
of a result file, a relabelling or another cabench computes it again. Figures are never stored here: the report embeds
them as :func:`cabench.figure_index.current_figures` finds them at the time.

The file is JSON (never code: a results folder may come from someone else), written atomically after the reports; an
unreadable or damaged file counts as empty, and one that cannot be written leaves the reports as written. Each
section is stored with its own SHA-256: one edited by hand no longer matches it and is computed again. The SHA-256
is no signature: a section rewritten with it recomputed is read as written (one that does not render is computed
again, :func:`cabench.html_report.write_reports`), so the file is trusted as the result files beside it are.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
from pathlib import Path
from typing import Any

import cabench
from cabench.figure_index import file_sha256
from cabench.results import Experiment
from cabench.storage import remove_stale_temporaries, write_atomic

FILE = "report_sections.json"
#: The files of an experiment's results folder that the report reads or cites (the tables plain or gzip).
READ = ("config.yaml", "runs.csv*", "summary.csv", "selections.csv*", "arms.csv*", "dataset.csv*", "trajectories.csv*")
_LIBRARIES = ("numpy", "pandas", "jinja2", "plotly")


@functools.cache
def code_version() -> str:
    """SHA-256 (16 hex digits) of cabench's sources and templates and the versions of the libraries the report's
    numbers and markup come from."""
    h = hashlib.sha256(" ".join([cabench.__version__, *(importlib.metadata.version(n) for n in _LIBRARIES)]).encode())
    package = Path(str(cabench.__file__)).parent
    for path in sorted([*package.rglob("*.py"), *(package / "templates").glob("*")]):
        h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def section_key(e: Experiment) -> str:
    """The key of ``e``'s report section: its label, the hash of every file it was read from, the code version."""
    files = sorted({p for pattern in READ for p in e.folder.glob(pattern) if p.is_file()})
    copies = "\0".join(str(p) for p in e.duplicates)  # the section names where else it was found
    h = hashlib.sha256(f"{code_version()}\0{e.label}\0{copies}\0".encode())
    for path in files:
        h.update(f"{path.name}\0{file_sha256(path)}\0".encode())
    return h.hexdigest()


class SectionCache:
    """The sections stored in ``ROOT/report_sections.json``, by key."""

    def __init__(self, root: Path) -> None:
        self.path = root / FILE
        try:
            stored = json.loads(self.path.read_text()) if self.path.is_file() else {}
        except (OSError, ValueError, UnicodeDecodeError):
            stored = {}  # damaged: every section is computed again and the file rewritten
        entries = stored.get("sections") if isinstance(stored, dict) else None
        self.entries: dict[str, dict[str, Any]] = {  # a section edited since (its digest differs) is not kept
            k: v["section"] for k, v in (entries.items() if isinstance(entries, dict) else ())
            if isinstance(v, dict) and isinstance(v.get("section"), dict) and v.get("sha256") == _digest(v["section"])}

    def forget(self) -> None:
        """Trust none of the sections read: every one is computed again (and stored anew by :meth:`save`)."""
        self.entries = {}

    def get(self, key: str) -> dict[str, Any] | None:
        """The section stored under ``key``, or None."""
        return self.entries.get(key)

    def save(self, sections: dict[str, dict[str, Any]]) -> bool:
        """Replace the stored sections by ``sections`` (the current experiments' only); False when the file cannot
        be written (the reports are unaffected)."""
        try:
            stored = {key: {"sha256": _digest(section), "section": section} for key, section in sections.items()}
            remove_stale_temporaries([self.path])
            write_atomic(self.path, json.dumps({"sections": stored}, separators=(",", ":")))
        except OSError:
            return False
        self.entries = dict(sections)
        return True


def _digest(section: Any) -> str:
    """SHA-256 of a section as canonical JSON: stored beside it, so a section edited by hand is computed again."""
    return hashlib.sha256(json.dumps(section, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def round_trip(section: dict[str, Any]) -> dict[str, Any]:
    """``section`` as :class:`SectionCache` gives it back (JSON): the reports render what is stored, whether it was
    computed now or read."""
    return json.loads(json.dumps(section))
