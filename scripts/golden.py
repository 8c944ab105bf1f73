"""Golden runs: record a few campaigns' results, and compare them after a change that must not change behaviour.

    python scripts/golden.py record /tmp/golden/before [--src OTHER_CHECKOUT/src] [--ray]
    python scripts/golden.py record /tmp/golden/after
    python scripts/golden.py compare /tmp/golden/before /tmp/golden/after

Each campaign runs the real CLI in a subprocess (`--src` runs another checkout's hinter, e.g. the commit before
a refactor). What is compared: every text and mutant row of run.sqlite (verdicts, outcomes, raw answers, bias,
hidden), summary.json less timings and in-memory cache counters, biases.csv and instances.csv.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLANTED = ROOT / "tests"  # planted models: python:planted:NAME
sys.path.insert(0, str(PLANTED))
from campaign import mutant_rows, stored_texts  # noqa: E402  (the tests' readers of a run)

COMMON = ("--max-pairs-per-text", "2", "--seed", "3")
CAMPAIGNS = {
    "imdb-planted": ("--dataset", "imdb", "--limit", "60", "--model", "python:planted:by_hash",
                     "--attributes", "race,gender,body", "--order", "2", *COMMON),
    "ecthr-planted": ("--dataset", "ecthr", "--limit", "8", "--model", "python:planted:by_hash",
                      "--attributes", "race,gender", "--order", "2", *COMMON),
    "imdb-order3": ("--dataset", "imdb", "--limit", "40", "--model", "python:planted:by_hash",
                    "--attributes", "race,gender,body", "--order", "3", *COMMON),
    "imdb-gguf": ("--dataset", "imdb", "--limit", "6", "--model", "gguf:default", "--attributes", "race,gender",
                  "--max-pairs-per-text", "1"),
}
# Summary keys added since the first recordings (issue 12's run health).
ADDED_KEYS = ("health", "first_errors", "findings", "findings_analysis", "significant_findings",
              "population_hidden", "self_flip", "determinism", "evaluative", "top_pairs",
              "measures")  # issue 42: one measures section for labels and free text
CODE_MARK = "@source="  # hinter.models.callable.SOURCE_MARK (recordings of another checkout may predate it)
# CSV columns added since: the dataset's own ids; issue 42's one biases.csv layout for labels and free text
ADDED_COLUMNS = ("source_id", "measure", "differs_on", "hidden_on", "original_answers", "mutant_answers")
RESUMED = ("--dataset", "imdb", "--limit", "96", "--model", "python:planted:counting", "--attributes",
           "race,gender", "--order", "2", *COMMON)


def _env(src: str | None) -> dict:
    path = [str(PLANTED)] + ([src] if src else [])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path[::-1] + [os.environ.get("PYTHONPATH", "")])}


def _hinter(args, src, **kw):
    return [sys.executable, "-m", "hinter.cli", *args], dict(env=_env(src), **kw)


def _run(args, src) -> None:
    cmd, kw = _hinter(args, src)
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({p.returncode}):\n{p.stderr[-3000:]}")


def _resumed(out: Path, src) -> None:
    """Killed (SIGKILL) once its first batch is stored, then continued with `hinter resume`. A run left in `out` by
    an earlier recording is removed first: the kill would otherwise land in that run's continuation."""
    import shutil
    shutil.rmtree(out, ignore_errors=True)
    cmd, kw = _hinter(["run", *RESUMED, "--out", str(out)], src)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, **kw)
    deadline = time.time() + 300
    while stored_texts(out) == 0 and p.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    _run(["resume", str(out)], src)


def snapshot(out: Path) -> dict:
    db = sqlite3.connect(out / "run.sqlite")
    texts = sorted(db.execute("SELECT text_id, source_id, text, gold, outcome, raw FROM texts"))
    db.close()
    # through the store (mutants are kept as edits since issue 14), in the form recordings made before it hold
    mutants = mutant_rows(out)
    summary = json.loads((out / "summary.json").read_text())
    for volatile in ("seconds", "sentences_tagged", "sentences_parsed"):
        summary.pop(volatile, None)
    for added in ADDED_KEYS:  # new measures, not changes: absent from recordings made before them
        summary.pop(added, None)
    summary["unparseable"].pop("answers", None)
    for table in (*summary["atomic"].values(), *summary["intersectional"].values(), *summary["totals"].values()):
        table.pop("unseen", None)
        table.pop("evaluative", None)
    # how the run was started (cli, config), and the analysis options and start-up checks added since
    summary["settings"] = {k: v for k, v in summary["settings"].items()
                           if k not in ("cli", "config") and not k.startswith(("analysis.", "checks."))}
    # a python: model's fingerprint holds a hash of its code since issue 20 (it changes with tests/planted.py)
    if isinstance(summary["settings"].get("model"), str):
        summary["settings"]["model"] = summary["settings"]["model"].split(CODE_MARK)[0]

    def table(name):
        f = out / name
        if not f.exists():
            return None
        rows = list(csv.reader(f.open(encoding="utf-8")))
        keep = [i for i, c in enumerate(rows[0]) if c not in ADDED_COLUMNS]
        return [[r[i] for i in keep] for r in rows]

    return {"texts": texts, "mutants": mutants, "summary": summary, "biases.csv": table("biases.csv"),
            "instances.csv": table("instances.csv")}


def record(folder: Path, src: str | None, ray: bool) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    campaigns = dict(CAMPAIGNS)
    if ray:
        campaigns["imdb-ray"] = (*CAMPAIGNS["imdb-planted"], "--executor", "ray", "--workers", "2")
    for name, args in [*campaigns.items(), ("imdb-resumed", None)]:
        out = folder / "runs" / name
        t0 = time.perf_counter()
        if args is None:
            _resumed(out, src)
        else:
            _run(["run", *args, "--out", str(out), "--overwrite"], src)
        _run(["report", str(out)], src)
        (folder / f"{name}.json").write_text(json.dumps(snapshot(out), indent=1, sort_keys=True) + "\n")
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)


def _first_difference(a, b, path=""):
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'after' if k not in a else 'before'}"
            d = _first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None if len(a) == len(b) else f"{path}: {len(a)} != {len(b)} items"
    return None if a == b else f"{path}: {a!r} != {b!r}"


def compare(before: Path, after: Path) -> int:
    bad = 0
    for f in sorted(before.glob("*.json")):
        g = after / f.name
        if not g.exists():
            print(f"{f.stem}: missing after")
            bad += 1
            continue
        d = _first_difference(json.loads(f.read_text()), json.loads(g.read_text()))
        print(f"{f.stem}: {'identical' if d is None else 'DIFFERS at ' + d}")
        bad += d is not None
    return 1 if bad else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("folder", type=Path)
    r.add_argument("--src", help="another checkout's src folder to run instead of this one")
    r.add_argument("--ray", action="store_true", help="also a campaign on a local Ray cluster (ray extra)")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    a = ap.parse_args()
    if a.cmd == "record":
        record(a.folder, a.src, a.ray)
    else:
        sys.exit(compare(a.before, a.after))


if __name__ == "__main__":
    main()
