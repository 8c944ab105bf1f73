"""One run folder, one live process.

Two `hinter run`s on one folder (two terminals, an overlapping cron job) would each do the whole campaign:
four overlapping starts of one 60-review campaign made 7,220 model calls where 3,642 suffice. The first process
holds an exclusive POSIX lock (`lockf`) on OUT/run.lock; a second one stops at once, naming the first. The
kernel drops the lock when its process dies, however it dies, so a run killed with kill -9 is resumed exactly
as before. A POSIX lock, not `flock`: forked spaCy workers do not inherit it, so an orphaned worker cannot keep
a dead run's folder locked.
"""
from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

from hinter.errors import InputError

# A folder hinter made for a run (or an audit) holds this file from the start: hinter writes its outputs
# (summary.json, biases.csv, report.html...) over files of the same names only in a folder that holds it, or a
# run.sqlite or run.lock of an older hinter. Any other folder is the user's, taken as --out only while empty.
MARK = ".hinter-run"
_HINTER_FILES = (MARK, "run.sqlite", "run.lock")


def check_out_folder(folder: str | os.PathLike, where: str | None = None) -> None:
    """InputError unless `folder` may take a run's outputs: it does not exist, is empty, or is hinter's own."""
    folder = Path(folder)
    where = where or str(folder)
    if not folder.exists():
        return
    if not folder.is_dir():
        raise InputError("the output folder is a file", where=where, fix="Give --out a folder's path.")
    if any(os.path.lexists(folder / name) for name in _HINTER_FILES):
        return
    with os.scandir(folder) as entries:
        if next(entries, None) is None:
            return
    raise InputError("the folder holds files and no hinter run: the run's outputs (summary.json, biases.csv, "
                     "report.html...) would replace files of the same names that hinter did not write", where=where,
                     fix="Give --out a new or empty folder (e.g. runs/NAME): hinter writes only into folders it made.")


def make_out_folder(folder: str | os.PathLike) -> Path:
    """`folder` checked (check_out_folder), made if need be and marked as hinter's (MARK)."""
    folder = Path(folder)
    check_out_folder(folder)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    mark = folder / MARK
    if not mark.exists():
        mark.write_text("A hinter run folder: hinter writes its outputs here (--overwrite starts the run again).\n",
                        encoding="utf-8")
    return folder


class RunLock:
    def __init__(self, fd: int, path: Path):
        self._fd, self.path = fd, path

    def release(self) -> None:
        if self._fd is not None:
            fcntl.lockf(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def lock_run_folder(folder: Path, fix: str | None = None) -> RunLock:
    path = Path(folder) / "run.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another process"
        os.close(fd)
        raise InputError(f"another hinter process is working on this run folder ({holder})", where=str(folder),
                         fix=fix or "Wait for it to finish (it saves every batch), stop it, or choose another --out "
                             "folder. Running the same command again afterwards continues the run.") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}: {' '.join(sys.argv[:8])}"[:4000].encode(), 0)
    return RunLock(fd, path)
