"""Writing without destroying: atomic files, atomically published folders, exclusive folder locks.

* :func:`write_atomic` writes a temporary file beside the target and renames
  it over the target, so a reader (or a crash) sees the old file or the new
  one, never a part.
* :func:`replaced_together` writes several files so that a failure while writing any changes none.
* :func:`figure_bytes` draws a figure in memory, for a writer above to write.
* :func:`publish_folder` moves a fully written temporary folder into place;
  replacing an existing folder uses the kernel's atomic exchange
  (``renameat2(RENAME_EXCHANGE)``) where there is one, so that a kill at any
  moment leaves either the old folder or the new one whole.
* :func:`folder_lock` holds an exclusive ``flock`` on a lock file for as long
  as a run writes into a results folder.
* :func:`compressed` and :func:`read_text` store large tables as gzip CSV that
  pandas reads directly and that decompresses to exactly the CSV text written.
* :func:`record_built` and :func:`unchanged` let a writer skip files whose
  inputs did not change since it last wrote them (and nobody altered them).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from cabench.errors import CabenchError

LOCK_NAME = ".cabench.lock"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a plain ``open()`` would give a new file under the current umask."""
    return 0o666 & ~_umask()


def named(exc: OSError, path: Path) -> OSError:
    """``exc`` naming ``path``: a failed write names no file of its own, and a temporary file, removed again, is no
    name to give a user."""
    return OSError(exc.errno, exc.strerror, str(path))


#: How a temporary file written beside ``NAME`` is named: ``.NAME.<pid>-<letters>.tmp`` (the writer's process id).
TEMPORARY = ".tmp"


def temporary_of(path: Path, names: Collection[str]) -> bool:
    """Whether ``path`` is a temporary file written beside a file of one of ``names`` (one a stopped write left)."""
    return path.name.endswith(TEMPORARY) and any(path.name.startswith(f".{name}.") for name in names)


def _write_temporary(path: Path, data: str | bytes) -> str:
    """Write ``data`` to a new temporary file beside ``path`` (synced to disk, with the umask's mode: ``mkstemp``
    alone would make it private) and return its name; on an error nothing is left and the OSError names ``path``."""
    mode = "wb" if isinstance(data, bytes) else "w"
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}-", suffix=TEMPORARY)
    except OSError as exc:
        raise named(exc, path) from exc
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, mode) as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise named(exc, path) from exc
        raise
    return tmp


#: A temporary file :func:`_write_temporary` names: ``.NAME.<pid>-<mkstemp's letters>.tmp``.
_OWN_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]{1,10})-[a-z0-9_]{8}\.tmp", re.ASCII)


def remove_stale_temporaries(paths: Collection[Path]) -> None:
    """Remove the temporary files beside ``paths`` that a writer killed between writing and renaming left for good
    (a report's were 6 MB each): those named ``.NAME.<pid>-<letters>.tmp`` whose process is gone. A temporary file of
    a writer still running, of this process, or named otherwise is kept. The process is looked for on this machine
    only: on a folder that several machines write at once, run one report or plot at a time."""
    for folder, names in _by_folder(paths).items():
        try:
            found = [p for p in folder.iterdir() if p.name.endswith(TEMPORARY) and p.name.startswith(".")]
        except OSError:
            continue
        for temporary in found:
            parts = _OWN_TEMPORARY.fullmatch(temporary.name)  # as _write_temporary names them, nothing looser
            if parts and parts["name"] in names and int(parts["pid"]) != os.getpid() and \
                    not _running(int(parts["pid"])):
                with contextlib.suppress(OSError):
                    temporary.unlink()


def _by_folder(paths: Collection[Path]) -> dict[Path, set[str]]:
    out: dict[Path, set[str]] = {}
    for path in paths:
        out.setdefault(path.parent, set()).add(path.name)
    return out


def refuse_unless_ours(path: Path, mark: str, what: str, remedy: str, within: bool = False) -> None:
    """Refuse, in one line, to replace ``path`` (a file of a name cabench writes) where it does not begin with
    ``mark`` (``within``: where its first 4 KiB do not hold it): a user's own file, ``what`` cabench's is not,
    said with the ``remedy`` the command offers; and one cabench signed (:func:`signed`) whose text has changed
    since: notes added to a report would be lost."""
    if not path.is_file():
        return
    data = path.read_bytes()  # read once: its start says whose it is, its end whether it changed since
    if not data:
        return  # an empty file holds nothing to lose: it is replaced as if it were not there
    head = data[:4096].decode("utf-8", errors="replace")
    if not (mark in head if within else head.startswith(mark)):
        raise CabenchError(f"{path}: not {what} (it does not begin with {mark.strip()!r}); {remedy}")
    if edited(data):
        raise CabenchError(f"{path}: edited since cabench wrote it (its text no longer matches the signature on its "
                           f"last line); {remedy}")


_SIGNED = b"<!-- cabench sha256:"
_SIGNATURE = re.compile(rb"<!-- cabench sha256:([0-9a-f]{64}) -->\n")


def signed(text: str) -> str:
    """``text`` (ending in a newline) with a last line holding the SHA-256 of what precedes it, in an HTML comment
    (which Markdown and HTML show as nothing): a later run can tell its own file from one edited since."""
    text += "\n"  # a blank line first: a Markdown table just above ends before the comment in every renderer
    return f"{text}{_SIGNED.decode()}{hashlib.sha256(text.encode()).hexdigest()} -->\n"


def edited(data: bytes) -> bool:
    """Whether a file's bytes ``data`` hold a :func:`signed` line that is not their last, or that their text no
    longer matches (a file without one, written before cabench signed its reports, is not said to be edited)."""
    at = data.rfind(_SIGNED)
    if at < 0:
        return False
    found = _SIGNATURE.match(data, at)
    if found is None or found.end() != len(data):  # damaged, or text added after it
        return True
    return hashlib.sha256(data[:at]).hexdigest() != found.group(1).decode()


def table_record(path: Path) -> Path:
    """Where cabench records the SHA-256 of a table it wrote at ``path``: a hidden file beside it (a CSV has no line
    a signature could take without becoming a row)."""
    return path.with_name(f".{path.name}.sha256")


def edited_table(path: Path) -> bool:
    """Whether the table at ``path`` no longer matches the SHA-256 :func:`write_table` recorded (nothing recorded,
    as before cabench recorded it: not said to be edited)."""
    try:
        recorded = table_record(path).read_text().strip()
        return hashlib.sha256(path.read_bytes()).hexdigest() != recorded
    except OSError:
        return False


def write_table(path: Path, text: str) -> None:
    """Write a table and the record of its SHA-256 (:func:`table_record`) together, all or none (a table stopped
    between the two renames holds the text it would be written again with: not said to be edited)."""
    remove_stale_temporaries([path, table_record(path)])
    with replaced_together() as files:
        files.write(path, text)
        files.write(table_record(path), hashlib.sha256(text.encode()).hexdigest() + "\n")


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``.

    An error of the file system (a full disk, a read-only folder) is an OSError naming ``path`` (one file
    :func:`replaced_together`).
    """
    with replaced_together() as files:
        files.write(path, data)


_KINDS = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a named pipe",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


def not_a_file(path: Path) -> str:
    """What stands at ``path`` (through a symbolic link too) where it is something other than a regular file: ``a
    folder``, ``a named pipe``, ``a character device``...; empty where it is a file, or nothing this process sees."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    return "" if stat.S_ISREG(mode) else _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def _replaceable(path: Path) -> None:
    """Refuse to write ``path`` where something other than a regular file is there: a file is written by renaming a
    new one over its path, which would put a file where a device, a named pipe or a socket was (``-o /dev/null`` run
    as root would replace the system's ``/dev/null``)."""
    if kind := not_a_file(path):
        raise OSError(errno.EEXIST, f"{kind} is there, not a file; cabench writes a file by putting a new one in its "
                                    "place, so give the path of a file", str(path))


class FileSet:
    """Files replaced together (:func:`replaced_together`): each written beside its target as it is given, all
    renamed over their targets, in the order given, once every one is written."""

    def __init__(self) -> None:
        self.written: list[tuple[str, Path]] = []
        self.removed: list[Path] = []

    def write(self, path: Path, data: str | bytes) -> None:
        _replaceable(path)
        self.written.append((_write_temporary(path, data), path))

    def remove(self, path: Path) -> None:
        """Delete ``path`` (if there) once the files are in place."""
        self.removed.append(path)


@contextlib.contextmanager
def replaced_together() -> Iterator[FileSet]:
    """Write several files so that a failure while writing any of them (a full disk) changes none: every file is
    written first, beside its target, and only then are all renamed into place (a rename needs no room). On an
    error every temporary file is removed and the error raised."""
    files = FileSet()
    try:
        yield files
        while files.written:
            tmp, path = files.written[0]
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise named(exc, path) from exc
            files.written.pop(0)
        for path in files.removed:
            path.unlink(missing_ok=True)
    finally:
        for tmp, _ in files.written:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def figure_bytes(fig: Any, fmt: str, **options: Any) -> bytes:
    """The matplotlib figure ``fig`` drawn as ``fmt`` (``savefig``'s ``options``) in memory, as the file's bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, **options)
    return buffer.getvalue()


def to_csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, lineterminator="\n")


def compressed(text: str) -> bytes:
    """``text`` as gzip (level 6; no time or file name in the header, so equal text gives equal bytes)."""
    return gzip.compress(text.encode(), compresslevel=6, mtime=0)


def read_text(path: Path) -> str:
    """A file's text exactly as written (no newline translation), decompressed when its name ends in ``.gz``."""
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def csv_records(body: str) -> list[str]:
    """The records of CSV text written by pandas, each without its ending newline.

    A record ends at a newline outside quotes; a quoted field (a configuration name with a comma,
    a quote or a newline) never splits one.
    """
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if '"' not in body:
        return lines
    records: list[str] = []
    pending: list[str] = []
    quotes = 0
    for line in lines:
        pending.append(line)
        quotes += line.count('"')
        if quotes % 2 == 0:  # every quoted field is closed: the record ends here
            records.append("\n".join(pending))
            pending, quotes = [], 0
    if pending:  # not CSV as pandas writes it: kept as it is, for the reader to report
        records.append("\n".join(pending))
    return records


def file_digests(folder: Path, names: Collection[str]) -> dict[str, str | None]:
    """SHA-256 of each file ``names`` of ``folder`` (``None``: absent)."""
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() if (folder / n).is_file() else None
            for n in names}


def record_built(record: Path, inputs: str, folder: Path, names: Collection[str]) -> None:
    """Record in ``record`` that the files ``names`` of ``folder``, as they are now, were built from ``inputs``
    (a digest of everything they are computed from)."""
    write_atomic(record, json.dumps({"inputs": inputs, "files": file_digests(folder, names)}))


def unchanged(record: Path, inputs: str, folder: Path, names: Collection[str]) -> bool:
    """Whether ``record`` says the files ``names`` of ``folder`` were built from ``inputs`` and they still hash
    as they did then (none altered, removed or added since)."""
    try:
        built = json.loads(record.read_text())
        return bool(built["inputs"] == inputs and built["files"] == file_digests(folder, names))
    except (OSError, ValueError, TypeError, KeyError):
        return False


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux ``renameat2``); False where the kernel or libc cannot."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    if ctypes.get_errno() in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(b))


def _running(pid: int) -> bool:
    """Whether a process ``pid`` is running on this machine (one of another user counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # there, but another user's
        return True
    except OverflowError:
        return False
    return True


_STAGING_TAIL = re.compile(r"(?:(\d+)-)?[a-z0-9_]+(?:-old)?")  # [pid-]mkdtemp's letters[, -old: publish_folder's]


def _stale_staging(folder: Path, prefix: str) -> bool:
    """Whether ``folder``, named ``prefix`` and a tail, is a staging folder no running process writes in: its name
    carries the id of a process no longer running, or no id (one of a cabench before staging folders were named
    by their process). A name with another tail (a staging folder of another destination whose name starts
    like this one) is not one."""
    tail = _STAGING_TAIL.fullmatch(folder.name[len(prefix):])
    return tail is not None and (tail[1] is None or not _running(int(tail[1])))


def new_folders(path: Path) -> list[Path]:
    """``path`` and the folders above it that do not exist yet, deepest first: what a writer about to create them
    removes again with :func:`remove_empty` when it fails."""
    missing = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    return missing


def remove_empty(folders: list[Path]) -> None:
    """Remove each of ``folders`` (deepest first) that is empty; a folder something was written into stays."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def staging_folder(dest: Path) -> Path:
    """A new empty folder beside ``dest`` to write into before :func:`publish_folder`.

    Its name carries this process's id. Staging folders of earlier writes to ``dest`` whose process is no longer
    running (interrupted, killed) are removed first; one of a running process (another import into ``dest`` at
    the same time) is left to it.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{dest.name}.staging-"
    for stale in [p for p in dest.parent.iterdir() if p.name.startswith(prefix)]:  # not a glob: [ ] * in names
        if _stale_staging(stale, prefix):
            shutil.rmtree(stale, ignore_errors=True)
    try:
        return Path(tempfile.mkdtemp(dir=dest.parent, prefix=f"{prefix}{os.getpid()}-"))
    except OSError as exc:  # named by the folder it is for: the staging folder's name is no name to give a user
        raise named(exc, dest) from exc


def publish_folder(staged: Path, dest: Path) -> None:
    """Move the written folder ``staged`` to ``dest``, replacing an existing ``dest`` atomically."""
    os.chmod(staged, 0o777 & ~_umask())  # as mkdir would (mkdtemp makes it private)
    if not dest.exists():
        os.rename(staged, dest)
        return
    if _exchange(staged, dest):
        shutil.rmtree(staged, ignore_errors=True)  # now the old folder
        return
    old = staged.with_name(staged.name + "-old")
    os.rename(dest, old)  # no atomic exchange here: a short window without dest, the old folder kept beside
    os.rename(staged, dest)
    shutil.rmtree(old, ignore_errors=True)


def swap_folders(a: Path, b: Path) -> None:
    """Exchange two folders' places: atomically where the kernel can, else by three renames (``a`` kept until the
    end beside itself). :func:`swap_folders` again puts them back."""
    if _exchange(a, b):
        return
    aside = a.with_name(a.name + "-aside")
    os.rename(a, aside)
    os.rename(b, a)
    os.rename(aside, b)


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (a ``.cabench.lock`` file in it) or fail at once."""
    path = folder / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, file_mode())
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CabenchError(f"{folder}: another cabench run is writing to this results folder; wait for it "
                               "to finish or pass another --out") from None
        yield
    finally:
        os.close(fd)
