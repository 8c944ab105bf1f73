"""Stage 6: the run store, one SQLite file holding every text, mutant, verdict, outcome and raw answer.

RunStore is the one place that speaks SQL: the engine saves each batch through it, and measures, reports, diff,
check and resume read through its typed methods (rows.py), never through SQL of their own. Its parts are split by
reason to change: the file (`database`), the writes (`writes`), and the reads grouped by their reader
(`measure_reads`, `report_reads`)."""
from __future__ import annotations

import os
import sqlite3

from hinter.files import storage_error
from hinter.store.database import (MAX_TRIES, RUN_FILES, SEAL, StoreFile, check_seal, run_file, where_named, empty_run_error,
                       holds_run, lost_run, remove_run_files, seal, unseal)
from hinter.store.measure_reads import MeasureReads
from hinter.store.report_reads import ReportReads
from hinter.store.writes import Writes

__all__ = ["MAX_TRIES", "RUN_FILES", "SEAL", "RunStore", "empty_run_error", "holds_run", "lost_run", "open_run",
           "remove_run_files", "seal", "unseal"]


class RunStore(Writes, MeasureReads, ReportReads, StoreFile):
    """A run's store: its file, the engine's writes, and the reads of the measures and of the reports."""


def open_run(folder: str | os.PathLike, where: str | None = None, verify: bool = False) -> RunStore:
    """The store of the finished (or interrupted) run in `folder`; `where` names the option that gave it.
    InputError when the folder holds no run.sqlite, or one that holds no run (it is never made into an empty
    one); a StorageError when SQLite cannot read it. `verify`, for the commands whose verdict or outputs must not
    come from a damaged file (report, check): compare the file with its seal, then check every page."""
    path = run_file(folder, where)
    try:
        if not holds_run(path):
            raise empty_run_error(path, where)
        if verify:
            check_seal(path)
        store = RunStore(path)
        if verify:
            # without a seal (a killed run, an older one), SQLite reads a damaged page lazily: a zeroed run of
            # bytes came back as rows with NULLs (a TypeError deep in the measures); the check reads each page
            # once (a 112 MB file: 0.1-0.6 s on a shared 2-core CPU)
            problems = [r[0] for r in store.db.execute("PRAGMA quick_check(3)")]
            if problems != ["ok"]:
                store.close()
                raise sqlite3.DatabaseError("database disk image is malformed: " + "; ".join(problems))
        return store
    except sqlite3.Error as e:
        raise storage_error(e, path.parent, where_named(path, where)) from None
