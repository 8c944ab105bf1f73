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

from .errors import InputError


class RunLock:
    def __init__(self, fd: int, path: Path):
        self._fd, self.path = fd, path

    def release(self) -> None:
        if self._fd is not None:
            fcntl.lockf(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def lock_run_folder(folder: Path) -> RunLock:
    path = Path(folder) / "run.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another process"
        os.close(fd)
        raise InputError(f"another hinter process is working on this run folder ({holder})", where=str(folder),
                         fix="Wait for it to finish (it saves every batch), stop it, or choose another --out "
                             "folder. Running the same command again afterwards continues the run.") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}: {' '.join(sys.argv[:8])}"[:4000].encode(), 0)
    return RunLock(fd, path)
