"""The figure index ``ROOT/figures.csv``: every figure drawn, its caption, and the result files it was drawn from.

Each row names a figure's file ``stem`` (relative to ``ROOT``), its ``caption``, the ``experiments`` it shows,
the ``source`` that drew it (``experiment:<label>`` or ``paper``), the ``formats`` written, its ``inputs`` (a
JSON object: each result file it read, relative to ``ROOT``, with its SHA-256), the drawing ``code`` version
and its ``outputs`` (each file written, by format, with its SHA-256). :func:`current_figures` keeps only the
figures whose files are the ones written and whose inputs still hash as recorded, so a figure older than the
results it shows, or replaced or damaged since, is never embedded; :func:`record_figures` merges the rows
``cabench plot`` draws.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

import pandas as pd

from cabench.errors import CabenchError
from cabench.storage import refuse_unless_ours, remove_stale_temporaries, to_csv, write_atomic

INDEX = "figures.csv"
COLUMNS = ["stem", "caption", "experiments", "source", "formats", "inputs", "code", "outputs"]
#: The files of an experiment's results folder that figures read (``selections.csv`` is never drawn).
READ = ("config.yaml", "runs.*", "arms.*", "trajectories.*", "dataset.csv*")  # dataset.csv: the title figures show
PAPER = "paper"
FORMATS = ("png", "pdf", "svg")  # the files a figure may have
#: What ``cabench plot`` writes into each file's metadata (:data:`METADATA`), and how the bytes of the file show it.
SIGNATURE = "cabench"
METADATA: dict[str, dict[str, str | None]] = {
    "png": {"Software": SIGNATURE},
    "pdf": {"Creator": SIGNATURE, "Producer": None, "CreationDate": None},
    "svg": {"Date": None, "Creator": SIGNATURE}}
_SIGNED = {"png": re.compile(re.escape(b"tEXtSoftware\0" + SIGNATURE.encode())),
           "pdf": re.compile(re.escape(b"/Creator (" + SIGNATURE.encode() + b")")),
           "svg": re.compile(rb"<dc:creator>\s*<cc:Agent>\s*<dc:title>" + re.escape(SIGNATURE.encode()))}


def experiment_source(label: str) -> str:
    """The ``source`` of an experiment's own figures."""
    return f"experiment:{label}"


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def experiment_inputs(folder: Path, root: Path) -> dict[str, str]:
    """The files of the results folder ``folder`` that its figures read, by path relative to ``root``, hashed."""
    files = sorted({p for pattern in READ for p in folder.glob(pattern) if p.is_file()})
    return {p.relative_to(root).as_posix(): file_sha256(p) for p in files}


def check_index_is_ours(root: Path) -> None:
    """Refuse, before any drawing, a ``ROOT/figures.csv`` whose header does not begin as cabench's (``stem,``): a
    user's own file of that name, which ``plot`` would otherwise rebuild over as a damaged index."""
    refuse_unless_ours(root / INDEX, f"{COLUMNS[0]},", "a figure index cabench wrote",
                       "move it, or plot into another folder")


def read_index(root: Path, damaged_as_empty: bool = False) -> pd.DataFrame:
    """``ROOT/figures.csv`` as text, every column of :data:`COLUMNS` present (empty where an older cabench wrote
    none), a figure listed twice by its first row; an empty table when there is no index. A damaged one is a
    one-line error, or with ``damaged_as_empty`` an empty table (``cabench plot`` rebuilds it)."""
    path = root / INDEX
    try:
        if not path.is_file():
            return pd.DataFrame(columns=COLUMNS)
        try:
            table = pd.read_csv(path, dtype=str, keep_default_na=False)
        except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
            raise CabenchError(f"{path}: unreadable figure index ({str(exc).splitlines()[0]}); run `cabench plot` "
                               "again") from None
        for col in ("stem", "caption"):
            if col not in table.columns:
                raise CabenchError(f"{path}: column '{col}' is missing (a damaged file); run `cabench plot` again")
        outside = next((n for n, stem in enumerate(table["stem"]) if not inside(stem)), None)
        if outside is not None:
            raise CabenchError(f"{path}: line {outside + 2}: stem '{table['stem'].iloc[outside]:.80}' is no file "
                               f"below {root} (absolute, or through '..'): a damaged or crafted index, whose files "
                               "cabench neither deletes nor embeds; run `cabench plot` again")
    except CabenchError:
        if damaged_as_empty:
            return pd.DataFrame(columns=COLUMNS)
        raise
    for col in COLUMNS:
        if col not in table.columns:
            table[col] = ""
    # a figure listed twice (an index edited by hand: plot never writes one) is read once, at its first row
    return table.drop_duplicates("stem").reset_index(drop=True)


def inside(stem: str) -> bool:
    """Whether an index row's ``stem`` names a file below its root, as every stem ``plot`` writes does: relative and
    never through ``..``. An index naming another (``../x``, ``/home/u/x``; one received with someone's results) is
    a damaged one, whose files ``plot`` neither deletes nor ``report`` embeds."""
    parts = stem.split("/")
    return bool(stem) and not stem.startswith("/") and ".." not in parts and "" not in parts


def recorded_inputs(row: pd.Series) -> dict[str, str] | None:
    """A row's recorded inputs; None where it records none (an older cabench) or they cannot be read."""
    try:
        inputs = json.loads(row["inputs"])
    except (TypeError, ValueError):
        return None
    return inputs if isinstance(inputs, dict) and inputs else None


def _outputs(row: pd.Series) -> dict[str, str]:
    """The SHA-256 of each file ``cabench plot`` wrote for the figure of ``row``, by format; empty where the index
    records none (or a damaged record)."""
    try:
        written = json.loads(row.get("outputs") or "{}")
    except (TypeError, ValueError):
        return {}
    return written if isinstance(written, dict) else {}


def _drawn(root: Path, row: pd.Series, formats: Iterable[str]) -> bool:
    """Whether the figure of ``row`` has a file in each of ``formats`` (and at least one format), each the file
    ``cabench plot`` wrote (its SHA-256 as recorded: a figure replaced or damaged since is not this one)."""
    formats = [f for f in formats if f]
    written = _outputs(row)
    if not formats or not written:
        return False
    for fmt in formats:
        path = root / f"{row['stem']}.{fmt}"
        if not path.is_file() or written.get(fmt) != file_sha256(path):
            return False
    return True


def recorded_outputs(table: pd.DataFrame) -> dict[str, str]:
    """Every figure file the index ``table`` (:func:`read_index`) records as written (path relative to its root:
    its SHA-256)."""
    return {f"{row['stem']}.{fmt}": digest for _, row in table.iterrows() for fmt, digest in _outputs(row).items()}


def drawn_by_cabench(path: Path, root: Path, recorded: dict[str, str]) -> bool:
    """Whether the file at ``path`` (below ``root``) is a figure ``cabench plot`` drew, which it may replace: the
    file the index recorded (``recorded``, :func:`recorded_outputs`) or one signed in its metadata
    (:data:`METADATA`), as every figure is since the index may be gone. Any other file is a user's."""
    data = path.read_bytes()
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else None
    if rel is not None and recorded.get(rel) == hashlib.sha256(data).hexdigest():
        return True
    signed = _SIGNED.get(path.suffix.lstrip("."))
    return signed is not None and signed.search(data) is not None


def _hash_of(root: Path, rel: str, seen: dict[str, str | None]) -> str | None:
    if rel not in seen:
        path = root / rel
        seen[rel] = file_sha256(path) if path.is_file() else None
    return seen[rel]


def current_figures(root: Path) -> pd.DataFrame:
    """The rows of ``ROOT/figures.csv`` whose figure files (every recorded format) exist and whose recorded inputs
    are unchanged (each result file it was drawn from hashes as recorded), in index order; an empty table with
    the columns when there is no index."""
    table = read_index(root)
    seen: dict[str, str | None] = {}

    def current(row: pd.Series) -> bool:
        inputs = recorded_inputs(row)
        return (inputs is not None and _drawn(root, row, row["formats"].split(";"))
                and all(_hash_of(root, rel, seen) == digest for rel, digest in inputs.items()))

    keep = [current(row) for _, row in table.iterrows()]
    return table[pd.Series(keep, index=table.index, dtype=bool)].reset_index(drop=True)


def _is_index(folder: Path) -> bool:
    try:
        read_index(folder)
    except CabenchError:
        return False
    return True


def index_root(folder: Path) -> Path:
    """Where ``cabench plot FOLDER`` records its figures: the nearest folder above ``folder`` holding a cabench
    figure index (so the root's report keeps its figures), else ``folder`` itself; relative if ``folder`` is."""
    for parent in Path(os.path.abspath(folder)).parents:  # as the path goes (a folder below may be a link)
        if (parent / INDEX).is_file() and _is_index(parent):
            return parent if folder.is_absolute() else Path(os.path.relpath(parent))
    return folder


def figure_row(stem: str, caption: str, experiments: Sequence[str], source: str, formats: Sequence[str],
               inputs: dict[str, str], code: str, files: Sequence[tuple[Path, bytes]],
               carried: dict[str, str] | None = None) -> dict[str, str]:
    """A row of the index, recording the SHA-256 of each file just written (``files``: path and bytes, one per
    format) as ``outputs``, and of each file ``carried`` over from an earlier drawing (:func:`carried_formats`:
    format: SHA-256), its format recorded after those drawn."""
    outputs = {**(carried or {}), **{path.suffix[1:]: hashlib.sha256(data).hexdigest() for path, data in files}}
    formats = [*formats, *(f for f in FORMATS if f in (carried or {}) and f not in formats)]
    return {"stem": stem, "caption": caption, "experiments": "; ".join(experiments), "source": source,
            "formats": ";".join(formats), "inputs": json.dumps(inputs, sort_keys=True), "code": code,
            "outputs": json.dumps(outputs, sort_keys=True)}


def carried_formats(root: Path, row: pd.Series | None, inputs: dict[str, str], code: str,
                    formats: Sequence[str]) -> dict[str, str]:
    """The files of the figure ``row`` (its earlier drawing) in formats other than ``formats`` that stay current
    when it is drawn again in ``formats`` from the same ``inputs`` by the same ``code``: each one still the file
    ``cabench plot`` wrote (format: SHA-256). ``plot --format pdf`` after ``plot --format png`` keeps the PNGs
    (the same figure, drawn by the same code from the same results); after the results changed they are out of
    date, and none is carried."""
    if row is None or recorded_inputs(row) != inputs or row["code"] != code:
        return {}
    written = _outputs(row)
    return {fmt: written[fmt] for fmt in row["formats"].split(";")
            if fmt and fmt not in formats and fmt in written and _drawn(root, row, [fmt])}


def is_current(root: Path, row: pd.Series, inputs: dict[str, str], code: str, formats: Sequence[str]) -> bool:
    """Whether the figure ``row`` needs no drawing: drawn by ``code`` from exactly the files ``inputs`` (path:
    SHA-256), with a file in every format of ``formats`` and every file it records (one gone is drawn again, or
    :func:`current_figures` would drop the figure from the report)."""
    return to_draw(root, row, inputs, code, formats) == []


def to_draw(root: Path, row: pd.Series, inputs: dict[str, str], code: str, formats: Sequence[str]) -> list[str] | None:
    """The formats of ``formats`` the figure ``row`` still needs drawn in: none when it is current
    (:func:`is_current`), those it has no file in when its files are current (drawn by ``code`` from exactly
    ``inputs``, every file it records as written: ``plot`` after ``plot --format png`` draws only the PDFs), None
    when it is drawn again whole."""
    recorded = row["formats"].split(";")
    if recorded_inputs(row) != inputs or row["code"] != code or not _drawn(root, row, recorded):
        return None
    return [fmt for fmt in formats if fmt not in recorded]


def remove_figures(root: Path, rows: pd.DataFrame, keep: Collection[Path]) -> tuple[list[Path], list[Path]]:
    """Delete the files of the figures ``rows`` (every format), but those in ``keep``: figures drawn from results
    that changed or went away. Only a file ``cabench plot`` wrote is deleted (its SHA-256 as the row records it);
    any other file of such a name, one replaced or edited since or never drawn, is left alone. Returns the files
    deleted and those left."""
    kept = {Path(p).resolve() for p in keep}
    removed, left = [], []
    for _, row in rows.iterrows():
        path, written = root / row["stem"], _outputs(row)
        for old in sorted(path.parent.glob(f"{glob.escape(path.name)}.*")):
            fmt = old.suffix.lstrip(".")
            if old.resolve() in kept or fmt not in FORMATS or not old.is_file():
                continue
            if written.get(fmt) == file_sha256(old):
                old.unlink(missing_ok=True)
                removed.append(old)
            else:
                left.append(old)
    return removed, left


def merged(old: pd.DataFrame, rows: Iterable[dict], replaced: Collection[str]) -> pd.DataFrame:
    """``old`` with the rows of every source in ``replaced`` (and of the sources of ``rows``) swapped for ``rows``,
    each source's new rows where its old rows stood, new sources at the end."""
    new = pd.DataFrame(list(rows), columns=COLUMNS).fillna("")
    by_source = dict(list(new.groupby("source", sort=False)))
    dropped = set(replaced) | set(by_source)
    parts, placed = [], set()
    for _, block in old.groupby((old["source"] != old["source"].shift()).cumsum(), sort=False):
        name = block["source"].iloc[0]
        if name not in dropped:
            parts.append(block)
        elif name in by_source and name not in placed:
            parts.append(by_source[name])
            placed.add(name)
    parts += [g for s, g in by_source.items() if s not in placed]
    table = pd.concat([p[COLUMNS] for p in parts], ignore_index=True) if parts else new.iloc[:0]
    return table.drop_duplicates("stem", keep="last").reset_index(drop=True)


def record_figures(root: Path, rows: list[dict], replaced: Collection[str] = ()) -> None:
    """Merge ``rows`` (dicts with the keys of :data:`COLUMNS`) into ``ROOT/figures.csv`` atomically: they replace
    the rows of their sources and of every source in ``replaced``; the file is rewritten only if it changes."""
    path = root / INDEX
    text = to_csv(merged(read_index(root, damaged_as_empty=True), rows, replaced))
    try:
        unchanged = path.read_text() == text
    except (OSError, UnicodeDecodeError):
        unchanged = False
    if not unchanged:
        remove_stale_temporaries([path])
        write_atomic(path, text)
