"""Issue 30, outputs, storage and serve input: a poisoned cell, a lost or damaged run.sqlite, a full disk and a
too-deep request never give a wrong answer, a lost output or a raw traceback.

Real faults throughout: a real run of the CLI on a planted python: model, a real 0-byte or corrupted database, a
real full disk (a small tmpfs, where this process may mount one) or a directory that refuses writes, and the real
HTTP server of `hinter serve` on loopback."""
import csv
import io
import json
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hinter.files import csv_text, safe_cell, write_atomic
import cli
from cli import hinter_here

HERE = Path(__file__).parent
FORMULAS = ['=HYPERLINK("http://evil.example","click")', "+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0"]
# A task whose labels themselves begin like formulas: a model's label reaches the CSVs as the task names it
TASK = 'name: poison\nlabels: ["@SUM(9)", "fine"]\nsystem_prompt: "Classify among [LABELS]."\nquestion: "Which?"\n'
MODEL = '''import re
def poison(texts):
    """The label "@SUM(9)" whenever a woman and a black person are named: a hidden intersectional bias."""
    return ["@SUM(9)" if re.search(r"\\bwoman\\b", t, re.I) and re.search(r"\\bblack\\b", t, re.I) else "fine"
            for t in texts]
'''
DIC = ("attribute,source_group,target_group,word,replacement\ngender,male,female,man,woman\n"
       "race,european,african,white,black\n")


def hinter(*args, cwd=None, timeout=300):
    return cli.hinter(*args, cwd=cwd, pythonpath=(cwd or HERE,), timeout=timeout)


def write_campaign(root: Path) -> Path:
    """Texts and ids that begin like formulas (and one id that is a negative number), the poison task and model."""
    rows = [{"id": FORMULAS[i % 3] if i < 3 else ("-0.5" if i == 3 else f"r{i}"),
             "text": (FORMULAS[i % 3] + " " if i < 3 else "") + f"A white man came home on day {i}. He liked it."}
            for i in range(6)]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "dic.csv").write_text(DIC)
    (root / "poison.yaml").write_text(TASK)
    (root / "poisonmodel.py").write_text(MODEL)
    return root


def run(root: Path, out: Path, *extra):
    return hinter("run", "-d", root / "data.jsonl", "-m", "python:poisonmodel:poison", "--task", root / "poison.yaml",
                  "-a", "gender,race", "--order", "2", "--dictionary", root / "dic.csv", "-o", out, *extra, cwd=root)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One finished run (with its report), copied by each test that damages it."""
    root = write_campaign(tmp_path_factory.mktemp("campaign"))
    r = run(root, root / "run")
    assert r.returncode == 0, r.stderr
    return root


def copy_run(finished: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(finished / "run", out, ignore=shutil.ignore_patterns("run.lock", "run.sqlite-*"))
    return out


def outputs(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())
            if p.name.endswith((".json", ".csv", ".html", ".parquet", ".xml"))}


def cells(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------- CSV injection

def test_safe_cell_quotes_formulas_and_keeps_numbers():
    assert [safe_cell(v) for v in ("=1+1", "+cmd", "-x", "@SUM(1)", "\tx", "\rx")] == \
        ["'=1+1", "'+cmd", "'-x", "'@SUM(1)", "'\tx", "'\rx"]
    assert [safe_cell(v) for v in ("-0.5", "+3", "-1e-3", "a=b", "", 7, None)] == ["-0.5", "+3", "-1e-3", "a=b", "", 7,
                                                                                   None]


CELLS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                  st.floats(allow_nan=False).map(np.float64),  # a measure's numpy float
                  st.text(alphabet=st.sampled_from(list(',"\r\n \t\x00\'=+-@aé;|')), max_size=8), st.text(max_size=8))


@settings(max_examples=400, deadline=None)
@given(header=st.lists(st.text(max_size=4), max_size=3), rows=st.lists(st.lists(CELLS, max_size=4), max_size=5),
       raw=st.booleans())
def test_csv_text_writes_what_csv_writer_writes(header, rows, raw):
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows([["" if v is None else (v if raw else safe_cell(v)) for v in row] for row in rows])
    assert csv_text(header, rows, raw) == buf.getvalue()


def test_every_csv_cell_of_a_real_run_is_safe_in_a_spreadsheet(finished, tmp_path, capsys):
    out = copy_run(finished, tmp_path)
    assert hinter_here(capsys, "report", out)[0] == 0
    for name in ("biases.csv", "instances.csv"):
        rows = cells(out / name)
        assert rows, name
        flat = [v for row in rows for v in row.values()]
        # no cell a spreadsheet would run; the poisoned ids, texts and the model's label are there, quoted
        assert not [v for v in flat if v[:1] in ("=", "+", "@", "\t", "\r") or (v[:1] == "-" and v != "-0.5")], name
        assert any(v.startswith("'@SUM(9)") for v in flat), name
        assert any(v.startswith("'=HYPERLINK(") for v in flat) and any(v.startswith("'+cmd|") for v in flat), name
    ids = {row["source_id"] for row in cells(out / "biases.csv")}
    assert "-0.5" in ids  # a number stays a number
    # --raw-csv: the cells as they are, for tools that need them (report writes instances.csv; run, biases.csv)
    assert hinter_here(capsys, "report", out, "--raw-csv")[0] == 0
    raw = [v for row in cells(out / "instances.csv") for v in row.values()]
    assert "@SUM(9)" in raw and any(v.startswith("=HYPERLINK(") for v in raw)


# ---------------------------------------------------------------- atomic writes

def test_a_write_that_fails_midway_keeps_the_previous_file(tmp_path):
    # a real failure midway: a file size limit (RLIMIT_FSIZE) makes the kernel refuse the write past 1 KiB, in a
    # child process so that this one keeps its limits
    target = tmp_path / "summary.json"
    target.write_text('{"old": true}\n')
    code = ("import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
            "resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024)); from hinter.files import write_atomic; "
            f"write_atomic({str(target)!r}, 'x' * 100000)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(HERE / ".." / "src")})
    assert r.returncode != 0 and "File too large" in r.stderr
    assert target.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]  # no temporary file left beside it
    write_atomic(target, "new\n")
    assert target.read_text() == "new\n" and oct(target.stat().st_mode & 0o777) == "0o644"


# ---------------------------------------------------------------- an empty or damaged run.sqlite

@pytest.mark.parametrize("command", ["report", "check", "resume", "run"])
def test_an_empty_run_sqlite_is_an_error_and_changes_no_output(finished, tmp_path, command, capsys):
    out = copy_run(finished, tmp_path)
    (out / "run.sqlite").write_bytes(b"")  # a copy that failed
    before = outputs(out)
    if command == "run":
        r = run(finished, out)
        code, err = r.returncode, r.stderr
    else:
        code, err = hinter_here(capsys, command, out)
    assert code == 2 and "Traceback" not in err, err
    message = " ".join(err.split())
    assert f"{out / 'run.sqlite'}: run.sqlite holds no run (0 bytes)" in message, message
    assert "--overwrite" in message and "Restore run.sqlite" in message and "RUN_DIR" not in message
    assert outputs(out) == before and (out / "run.sqlite").stat().st_size == 0


def test_an_unfinished_run_names_its_folder_never_RUN_DIR(finished, tmp_path, capsys):
    out = copy_run(finished, tmp_path)
    db = sqlite3.connect(out / "run.sqlite")  # the state a kill leaves: the last text's batch not committed
    with db:
        db.execute("DELETE FROM mutants WHERE text_id = 5")
        db.execute("DELETE FROM texts WHERE text_id = 5")
    db.close()
    (out / "run.sqlite.sha256").unlink()  # changed on purpose, as a killed run leaves no seal
    code, err = hinter_here(capsys, "check", out)
    message = " ".join(err.split())
    assert code == 3 and "unfinished: 5 of 6 texts" in message, message
    assert f"hinter resume {out}" in message and "RUN_DIR" not in message, message


def corrupt(path: Path, rng: random.Random) -> str:
    """One small random corruption: a few bytes changed, a run of bytes zeroed, or the file cut short."""
    data = bytearray(path.read_bytes())
    kind = rng.choice(["bytes", "zeros", "truncate"])
    if kind == "truncate":
        cut = rng.randrange(len(data))
        del data[cut:]
        return_ = f"cut at {cut}"
    elif kind == "zeros":
        at, n = rng.randrange(len(data)), rng.randint(8, 512)
        data[at:at + n] = bytes(len(data[at:at + n]))
        return_ = f"{n} zeros at {at}"
    else:
        spots = [rng.randrange(len(data)) for _ in range(rng.randint(1, 4))]
        for at in spots:
            data[at] = rng.randrange(256)
        return_ = f"bytes at {spots}"
    path.write_bytes(bytes(data))
    return f"{kind}: {return_}"


def test_fuzz_a_damaged_database_never_gives_a_traceback_or_a_silent_change(finished, tmp_path, capsys):
    rng = random.Random(30)
    good = copy_run(finished, tmp_path / "good")
    assert hinter_here(capsys, "report", good)[0] == 0
    expected, good_check = outputs(good), hinter_here(capsys, "check", good)
    seen = Counter()
    for trial in range(20):
        out = copy_run(finished, tmp_path / str(trial))
        sealed = trial % 2 == 0  # the odd ones as a killed or older run leaves them: no seal, pages checked only
        if not sealed:
            (out / "run.sqlite.sha256").unlink()
        what = corrupt(out / "run.sqlite", rng)
        for command in ("report", "check"):
            before = outputs(out)
            try:
                code, err = hinter_here(capsys, command, out)
            except Exception as e:  # what would reach the user as a traceback
                pytest.fail(f"{what}, {command}: {e!r}")
            if code == 2:  # a clear error naming the file, and no output touched
                seen["error"] += 1
                assert str(out / "run.sqlite") in " ".join(err.split()), (what, command, err)
                assert outputs(out) == before, (what, command)
            elif not sealed:  # without a seal a changed byte inside a text reads back as another text
                seen["read"] += 1
                assert code in (0, 1), (what, command, err)
            elif command == "check":  # or the good run's verdict
                seen["same"] += 1
                assert (code, err) == good_check, (what, err)
            else:  # or the good run's outputs
                seen["same"] += 1
                assert code == 0 and outputs(out) == expected, (what, err)
    assert seen["error"] >= 10, seen  # the fuzz reached damage, sealed and not


# ---------------------------------------------------------------- a full disk, a folder that refuses writes

def mount_tmpfs(folder: Path, size: str) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    return r.returncode == 0


def fill(folder: Path, leave: int = 0) -> None:
    """Fill the file system of `folder` but `leave` bytes (about: tmpfs counts pages)."""
    fd = os.open(folder / "ballast", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (1 << 20, 4096):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    os.truncate(folder / "ballast", os.path.getsize(folder / "ballast") - leave)


def test_a_full_disk_is_one_paragraph_and_the_run_resumes_once_space_is_freed(finished, tmp_path, capsys):
    disk = tmp_path / "disk"
    if not mount_tmpfs(disk, "16m"):
        pytest.skip("mounting a tmpfs is refused here (not root, or no CAP_SYS_ADMIN): see the read-only test")
    try:
        out = disk / "run"
        fill(disk, leave=150 * 1024)  # room for the run to start, not for it to finish: it fails midway
        r = run(finished, out)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        message = " ".join(r.stderr.split())
        assert "the disk is full" in message and str(out) in message and "Free some space" in message, message
        (disk / "ballast").unlink()
        r = run(finished, out)  # the same command, once space is freed, finishes the run
        assert r.returncode == 0, r.stderr
        assert json.loads((out / "summary.json").read_text())["texts"] == 6
        # the finished run's report on a full disk: one paragraph, and every output left as it was
        before = outputs(out)
        fill(disk)
        code, err = hinter_here(capsys, "report", out)
        assert code == 2 and "the disk is full" in " ".join(err.split()), err
        assert outputs(out) == before
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_a_folder_that_refuses_writes_is_one_paragraph(finished, tmp_path, capsys):
    out = copy_run(finished, tmp_path)
    before = outputs(out)
    os.chmod(out / "run.sqlite", 0o444)
    os.chmod(out, 0o555)
    try:
        if os.access(out, os.W_OK) and os.geteuid() == 0:
            # root writes anyway: make the file system itself refuse, with a read-only bind mount
            ro = tmp_path / "ro"
            ro.mkdir()
            if subprocess.run(["mount", "--bind", "-o", "ro", str(out), str(ro)], capture_output=True).returncode:
                pytest.skip("root ignores permissions here and a read-only bind mount is refused")
            subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], capture_output=True)
            target = ro
        else:
            target = out
        try:
            for command in ("report", "check", "run"):
                if command == "run":
                    r = run(finished, target)
                    code, err = r.returncode, r.stderr
                else:
                    code, err = hinter_here(capsys, command, target)
                message = " ".join(err.split())
                assert "Traceback" not in message, message
                if command == "check" and code != 2:  # reading a run needs no write where SQLite can
                    assert code in (0, 1), message
                    continue
                assert code == 2 and str(target) in message and "writable" in message, (command, message)
        finally:
            if target != out:
                subprocess.run(["umount", str(target)], capture_output=True)
    finally:
        os.chmod(out, 0o755)
        os.chmod(out / "run.sqlite", 0o644)
    assert outputs(out) == before


# ---------------------------------------------------------------- serve: a body too deep

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_answers_malformed_or_too_deep_json_with_a_400(finished, tmp_path):
    uvicorn = pytest.importorskip("uvicorn")
    from hinter.serve.app import create_app
    # the real server on loopback, in a thread: the body is read before any parser or model is loaded
    server = uvicorn.Server(uvicorn.Config(create_app([copy_run(finished, tmp_path)], token="t0ken"),
                                           host="127.0.0.1", port=free_port(), log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(300):
            if server.started:
                break
            thread.join(0.05)
        assert server.started
        for body in (b"[" * 20000 + b"]" * 20000, b'{"a":' * 12000, b"{not json", b"\xff\xfe"):
            req = urllib.request.Request(f"http://127.0.0.1:{server.config.port}/api/try", data=body, method="POST",
                                         headers={"Content-Type": "application/json", "X-Hinter-Token": "t0ken"})
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(req, timeout=30)
            assert e.value.code == 400, (body[:20], e.value.code)
            error = json.loads(e.value.read())
            assert "not valid JSON" in error["error"] and error["fix"].startswith("Send"), error
    finally:
        server.should_exit = True
        thread.join(30)
