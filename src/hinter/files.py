"""How hinter writes its output files, and what it says when the disk refuses (issue 30).

Every output (summary.json, the CSVs, report.html, JUnit, ...) is written beside its target and renamed over it:
a full disk, a kill or a crash midway leaves the previous file whole, never a truncated one (at 420 KB free,
summary.json was once left cut in the middle). Every CSV goes through `write_csv`, whose cells a spreadsheet reads
as text where they could be read as a formula (OWASP's CSV-injection guidance).
"""
from __future__ import annotations

import errno
import json
import math
import os
import re
import sqlite3
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from hinter.errors import HinterError

# A cell a spreadsheet may evaluate: one beginning with these (tab and carriage return too: some strip them first)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def safe_cell(value):
    """`value` as a spreadsheet reads it as text: a string that begins like a formula, and is not a number, gets a
    leading single quote. Numbers (-0.5, +3) and every other value are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_atomic(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write `data` to `path` through a file beside it, flushed and renamed over it: readers see the old file or
    the new one, never a part. The temporary file is removed when the write fails (a full disk)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would make outputs unreadable to the user's other tools
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def write_set(files: dict) -> list[Path]:
    """Write several outputs as one consistent set (issue 41: a full disk left audit.json new beside an old
    audit.html): every file is first written in full beside its target and flushed; only when all of them are
    written are they renamed over their targets, one rename each, which needs no space. A full disk, a kill or an
    error while writing leaves every old file as it was and no temporary file behind. `files`: {path: str or
    bytes}. Returns the paths, in order."""
    temps: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            path = Path(path)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            temps.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
    except BaseException:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        raise
    for tmp, path in temps:
        os.replace(tmp, path)
    return [path for _, path in temps]


def json_text(obj, **kwargs) -> str:
    """json.dumps(obj, **kwargs) as every JSON reader takes it: a number that is not finite (NaN, infinity) is
    written null, where json.dumps would write NaN or Infinity, which standard readers refuse."""
    try:
        return json.dumps(obj, allow_nan=False, **kwargs)
    except ValueError:
        return json.dumps(_finite(obj), allow_nan=False, **kwargs)


def _finite(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def csv_text(header: Sequence[str], rows: Iterable[Sequence], raw: bool = False) -> str:
    """A CSV file's text: the header, then the rows (None as an empty cell), cells made safe unless `raw`. The
    bytes csv.writer writes (its excel dialect; tests/test_output_faults.py checks it), made with str methods, which
    search a cell at once: csv.writer copies it a character at a time (0.25 s for a large run's 20 MB biases.csv)."""
    lines = [_csv_line(header)]
    for row in rows:
        lines.append(_csv_line(["" if v is None else (v if raw else safe_cell(v)) for v in row]))
    lines.append("")
    return "\r\n".join(lines)


def _csv_line(cells: Sequence) -> str:
    """One row as csv.writer writes it without its line end: a cell holding a comma, a quote or a line break is
    quoted, its quotes doubled; a cell that is not a string is written as str() writes it; a row of one empty
    cell is written "" (a blank line would be no row)."""
    out = []
    for v in cells:
        v = v if type(v) is str else str(v)
        if '"' in v:
            v = '"' + v.replace('"', '""') + '"'
        elif "," in v or "\n" in v or "\r" in v:
            v = '"' + v + '"'
        out.append(v)
    return '""' if out == [""] else ",".join(out)


def write_csv(path: str | os.PathLike, header: Sequence[str], rows: Iterable[Sequence], raw: bool = False) -> Path:
    """Every CSV hinter writes: atomically, with cells a spreadsheet cannot run (`raw`: as they are)."""
    return write_atomic(path, csv_text(header, rows, raw))


def write_dict_csv(path: str | os.PathLike, columns: Sequence[str], rows: Iterable[dict], raw: bool = False) -> Path:
    return write_csv(path, columns, ([r.get(c) for c in columns] for r in rows), raw)


# ---------------------------------------------------------------- storage errors as one paragraph

_FULL = ("database or disk is full", "disk is full")
_READ_ONLY = ("readonly database", "read-only", "unable to open database file")
_DAMAGED = ("malformed", "not a database", "changed since", "could not decode", "file is encrypted", "no such table",
            "no such column")


_STORAGE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.EIO)


class StorageError(HinterError):
    """The disk or the run's database refused: a full disk, a damaged or unwritable file."""


def storage_error(e: BaseException, folder: str | os.PathLike | None, where: str | None = None
                  ) -> StorageError | None:
    """The SQLite or OS error `e`, met working on the run folder `folder`, as one paragraph with the path (`where`,
    else the file the OS names, else the folder's run.sqlite) and the fix; None when `e` is neither."""
    fallback = "" if folder is None else Path(folder) if isinstance(e, OSError) else Path(folder) / "run.sqlite"
    where = where or str(getattr(e, "filename", None) or fallback) or None
    text = str(e).lower()
    again = "run the same command again: run.sqlite keeps every finished batch, and a run continues where it stopped"
    if isinstance(e, OSError):
        if e.errno not in _STORAGE_ERRNOS:  # a model's ConnectionError, a missing input: not the disk's
            return None
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            return StorageError(f"the disk is full ({e.strerror})", where=where,
                                fix=f"Free some space on that disk, then {again}.")
        if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return StorageError(f"cannot write here ({e.strerror})", where=where,
                                fix="Make the folder writable (or give another --out folder), then " + again + ".")
        return StorageError(f"the disk failed ({e.strerror})", where=where,
                            fix=f"Check the disk and the folder, then {again}.")
    if not isinstance(e, sqlite3.Error):
        return None
    if any(s in text for s in _FULL) or ("disk i/o" in text and _no_space(folder)):  # SQLite says I/O error
        # where it cannot create its -shm file on a full disk
        return StorageError(f"the disk is full ({e})", where=where, fix=f"Free some space on that disk, then {again}.")
    if any(s in text for s in _READ_ONLY):
        return StorageError(f"run.sqlite cannot be written ({e})", where=where,
                            fix="Make run.sqlite and its folder writable (or give another --out folder), then "
                                + again + ".")
    if any(s in text for s in _DAMAGED):
        return StorageError(f"run.sqlite is damaged ({e}); no output was changed", where=where,
                            fix="Restore run.sqlite from a good copy, or start the run again with `hinter run ... "
                                "--overwrite`.")
    return StorageError(f"run.sqlite could not be read or written ({e})", where=where,
                        fix=f"Check that the disk has free space and works, then {again}.")


def _no_space(folder: str | os.PathLike | None) -> bool:
    try:
        return folder is not None and os.statvfs(folder).f_bavail == 0
    except OSError:
        return False


@contextmanager
def storage_errors(folder: str | os.PathLike | None) -> Iterator[None]:
    """Around a command's work on the run folder `folder`: SQLite and OS errors become a StorageError (the CLI
    prints it as one paragraph, exit 2)."""
    try:
        yield
    except (sqlite3.Error, OSError) as e:
        error = storage_error(e, folder)
        if error is None:
            raise
        raise error from e
