"""A user's own files and hinter's outputs (issue 41): nothing of the user's is touched that hinter did not write,
a seal is never lost to a refused rerun, odd files (a byte-order mark, a task file with a number where text
belongs, a gzip bomb, NaN scores in an old store) end in a right answer or a clear error, and `report` never runs
beside a live run. Real files, a real run holding its lock, a real `hinter serve` on loopback."""
import gzip
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import tracemalloc
import urllib.error
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

import pytest

import hinter
from hinter.datasets import read_dataset
from hinter.mutation.dictionary import load_dictionary
from hinter.errors import InputError
from hinter.models.tasks import load_task_file

from campaign import write_kill_campaign
from cli import hinter as hinter_cli, serve

HERE = Path(__file__).parent
# the hinter processes run the code under test (this checkout's), with the tests' planted models importable
PYTHONPATH = os.pathsep.join([str(HERE), str(Path(hinter.__file__).parents[1])])


def cli(*args, cwd=None, **kw):
    return hinter_cli(*args, cwd=cwd, timeout=300, **kw)


DATA = ("--dictionary", "dic.csv", "-d", "data.jsonl")


def run_args(attributes: str = "gender,race", model: str = "python:planted:score_shift") -> tuple:
    return ("-m", model, "-a", attributes, *DATA)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished, sealed run of a model with scores, in ROOT/run (ROOT holds its data.jsonl and dic.csv)."""
    root = write_kill_campaign(tmp_path_factory.mktemp("user_files"), texts=6)
    r = cli("run", *run_args(), "-o", "run", cwd=root)
    assert r.returncode == 0, r.stderr
    assert (root / "run" / "run.sqlite.sha256").is_file()
    return root


def copy_run(finished: Path, tmp_path: Path) -> Path:
    """ROOT with data.jsonl, dic.csv and a copy of the finished run in ROOT/run."""
    for name in ("data.jsonl", "dic.csv"):
        shutil.copy(finished / name, tmp_path / name)
    shutil.copytree(finished / "run", tmp_path / "run", ignore=shutil.ignore_patterns("run.lock"))
    return tmp_path


def change_a_stored_byte(db: Path) -> None:
    """One letter of a stored text changed in the file's bytes, as a bad disk or copy would."""
    data = bytearray(db.read_bytes())
    i = data.find(b"came home on day 3")
    assert i > 0
    data[i] = ord("k")
    db.write_bytes(bytes(data))


def strict_json(path: Path):
    """The file as a standard JSON reader reads it: NaN, Infinity and -Infinity are errors."""
    def refuse(token):
        raise ValueError(f"{token} is not JSON")
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


# ---------------------------------------------------------------- 6. the seal, 7. --overwrite

def test_a_refused_rerun_keeps_the_seal_and_a_later_change_is_caught(finished, tmp_path):
    root = copy_run(finished, tmp_path)
    seal = (root / "run" / "run.sqlite.sha256").read_text()
    r = cli("run", *run_args("gender"), "-o", "run", cwd=root)
    assert r.returncode == 2 and "other settings" in r.stderr, r.stderr
    assert (root / "run" / "run.sqlite.sha256").read_text() == seal  # the refused run changed nothing
    change_a_stored_byte(root / "run" / "run.sqlite")
    report = cli("report", "run", cwd=root)
    assert report.returncode == 2 and "changed since its run wrote its outputs" in report.stderr, report.stderr


def test_overwrite_deletes_the_run_database_alone(finished, tmp_path):
    root = copy_run(finished, tmp_path)
    out = root / "run"
    mine = {"run.sqlite.bak": b"my backup", "run.sqlite good copy 2026-11-28": b"my good copy",
            "run.sqlite.sha256.txt": b"my note"}
    for name, data in mine.items():
        (out / name).write_bytes(data)
    r = cli("run", *run_args("gender"), "-o", "run", "--overwrite", cwd=root)
    assert r.returncode == 0, r.stderr
    assert {name: (out / name).read_bytes() for name in mine} == mine
    assert json.loads((out / "summary.json").read_text())["settings"]["attributes"] == ["gender"]


# ---------------------------------------------------------------- 8. --out into a user's folder

def test_a_folder_that_is_not_a_run_is_refused_as_out(finished, tmp_path):
    root = copy_run(finished, tmp_path)
    mine = root / "my notes"
    mine.mkdir()
    files = {"summary.json": b'{"mine": true}\n', "report.html": b"<p>my report</p>", "biases.csv": b"my,table\n"}
    for name, data in files.items():
        (mine / name).write_bytes(data)
    r = cli("run", *run_args(), "-o", "my notes", cwd=root)
    assert r.returncode == 2 and "hinter did not write" in r.stderr and "my notes" in r.stderr, r.stderr
    assert sorted(p.name for p in mine.iterdir()) == sorted(files)  # nothing written, nothing replaced
    assert {name: (mine / name).read_bytes() for name in files} == files
    # a suite's path that holds another file is refused; the file stays as it was
    (root / "notes.txt").write_text("my notes\n")
    r = cli("suite", "build", *DATA, "--out", "notes.txt", cwd=root)
    assert r.returncode == 2 and "not a hinter suite" in r.stderr, r.stderr
    assert (root / "notes.txt").read_text() == "my notes\n"


# ---------------------------------------------------------------- 9. a byte-order mark

BOM = b"\xef\xbb\xbf"


def test_files_with_a_byte_order_mark_read_as_without(tmp_path):
    rows = [("r1", "A man came home. The film was fine."), ("r2", "A white boy came home. It was long.")]
    (tmp_path / "ids.csv").write_bytes(BOM + "id,text\r\n".encode() + b"".join(
        f'{i},"{t}"\r\n'.encode() for i, t in rows))  # Excel's "CSV UTF-8": the mark before the id column
    (tmp_path / "texts.csv").write_bytes(BOM + "text,id\r\n".encode() + b"".join(
        f'"{t}",{i}\r\n'.encode() for i, t in rows))  # ... and before the text column
    (tmp_path / "rows.jsonl").write_bytes(BOM + b"".join(json.dumps({"id": i, "text": t}).encode() + b"\n"
                                                         for i, t in rows))
    for name in ("ids.csv", "texts.csv", "rows.jsonl"):
        assert [(r.source_id, r.text) for r in read_dataset(tmp_path / name).records] == rows, name
    (tmp_path / "ref.csv").write_bytes(BOM + b"ref,text\nr1,A man came home.\n")  # an id column named by --id-field
    assert [r.source_id for r in read_dataset(tmp_path / "ref.csv", id_field="ref").records] == ["r1"]
    # a byte that is not UTF-8 is still named at its offset in the file, the mark counted
    (tmp_path / "bad.csv").write_bytes(BOM + b"text\nA man\xff\n")
    with pytest.raises(InputError) as e:
        read_dataset(tmp_path / "bad.csv")
    assert "invalid UTF-8 at byte 13" in e.value.message and "line 2" in e.value.where
    # a dictionary and task files saved with the mark
    (tmp_path / "dic.csv").write_bytes(BOM + b"attribute,source_group,target_group,word,replacement\n"
                                             b"gender,male,female,man,woman\n")
    assert [p.word for p in load_dictionary(tmp_path / "dic.csv").pairs] == ["man"]
    task = {"labels": ["Positive", "Negative"], "system_prompt": "Classify.", "question": "Which?"}
    (tmp_path / "t.json").write_bytes(BOM + json.dumps(task).encode())
    (tmp_path / "t.yaml").write_bytes(BOM + b"labels: [Positive, Negative]\nsystem_prompt: Classify.\nquestion: Which?\n")
    assert load_task_file(tmp_path / "t.json").labels == load_task_file(tmp_path / "t.yaml").labels == (
        "Positive", "Negative")


# ---------------------------------------------------------------- 10. a task file's types

@pytest.mark.parametrize("model", ["python:planted:intersectional", "openai:m@http://127.0.0.1:9/v1"])
def test_a_task_file_with_a_number_or_a_list_where_text_belongs_is_a_clear_error(finished, tmp_path, model):
    root = copy_run(finished, tmp_path)
    (root / "number.yaml").write_text("labels: [positive, negative]\nsystem_prompt: Classify.\nquestion: 42\n")
    (root / "list.yaml").write_text("labels: [positive, negative]\nsystem_prompt: [Classify, it]\nquestion: Which?\n")
    for task, key in (("number.yaml", "question"), ("list.yaml", "system_prompt")):
        r = cli("run", *run_args(model=model), "--task", task, "-o", "out-" + task, "--yes", cwd=root)
        assert r.returncode == 2, r.stderr
        assert "task file " in r.stderr and f"{task}: the field '{key}'" in r.stderr and "not text" in r.stderr
        assert "Traceback" not in r.stderr


# ---------------------------------------------------------------- 12. a gzip bomb

def bomb(path: Path, megabytes: int, head: bytes = b"") -> Path:
    """A gzip file of `head` then `megabytes` MB of zeros, made of one compressed MB repeated (gzip members
    concatenated are one stream to every reader): about a thousand times smaller than what it inflates to."""
    zeros = gzip.compress(b"\0" * (1 << 20), 9)
    path.write_bytes(gzip.compress(head) + zeros * megabytes)
    return path


def refused_with_peak(path):
    """load_suite's refusal of `path` (the pytest.raises info) and the peak memory Python allocated meanwhile."""
    from hinter.pipeline import suite
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as e:
            suite.load_suite(path)
        return e, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_gzip_bomb_is_refused_with_bounded_memory(tmp_path, monkeypatch):
    from hinter.pipeline import suite
    big = bomb(tmp_path / "big.suite", 300)  # 300 MB inflated, past the 256 MB bound, from a file of 300 KB
    assert big.stat().st_size < 1 << 20
    e, peak = refused_with_peak(big)
    assert "is not a hinter suite" in e.value.message
    assert peak < 32 << 20, peak  # kept nothing it read past the header (1 MB at most)
    # a suite's header before the bomb: inflated as far as its bound, then refused as no suite hinter wrote
    monkeypatch.setattr(suite, "INFLATE_FLOOR", 8 << 20)
    header = json.dumps({"format": suite.MAGIC, "format_version": suite.FORMAT_VERSION,
                         "hinter_version": hinter.__version__}).encode() + b"\n"
    headed = bomb(tmp_path / "headed.suite", 40, header)
    e, peak = refused_with_peak(headed)
    assert "decompresses to more than 8 MB" in e.value.message and str(headed) in e.value.message
    assert peak < 24 << 20, peak
    r = cli("suite", "info", str(big))
    assert r.returncode == 2 and "is not a hinter suite" in r.stderr and "Traceback" not in r.stderr


def test_a_suite_is_rebuilt_in_place_of_a_suite(tmp_path):
    """The --out check lets a suite be rebuilt over an older one (its header alone is read)."""
    from hinter.pipeline import suite
    header = json.dumps({"format": suite.MAGIC}).encode() + b"\n"
    assert suite.is_suite_file(bomb(tmp_path / "old.suite", 2, header))
    assert not suite.is_suite_file(bomb(tmp_path / "zeros.suite", 2))
    (tmp_path / "notes.txt").write_text("notes")
    assert not suite.is_suite_file(tmp_path / "notes.txt")


# ---------------------------------------------------------------- 3. NaN and infinite scores in a store

def test_report_and_check_read_a_store_holding_nan_scores(finished, tmp_path):
    root = copy_run(finished, tmp_path)
    db = sqlite3.connect(root / "run" / "run.sqlite")
    with db:  # as an older hinter stored a model's scores: json writes NaN and Infinity, and reads them back
        db.execute("""UPDATE texts SET scores = '[["positive",NaN],["negative",Infinity]]' WHERE text_id < 2""")
        db.execute("""UPDATE mutants SET scores = '[["positive",-Infinity],["negative",NaN]]' WHERE mutant_id % 2""")
    db.close()
    (root / "run" / "run.sqlite.sha256").unlink()  # changed on purpose: its seal goes, as the message says
    report = cli("report", "run", cwd=root)
    assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr
    assert "scores that are not finite numbers" in report.stderr
    s = strict_json(root / "run" / "summary.json")
    assert s["texts"] == 6
    check = cli("check", "run", "--fail-on", "biased>0", cwd=root)
    assert check.returncode in (0, 1) and "Traceback" not in check.stderr, check.stderr
    assert "scores that are not finite numbers" in check.stderr


def test_json_outputs_never_hold_nan(tmp_path):
    from hinter.files import json_text
    from hinter.report.outputs import write_summary
    path = write_summary(tmp_path, {"rate": float("nan"), "cells": [1.5, float("inf"), {"x": float("-inf")}]})
    assert strict_json(path) == {"rate": None, "cells": [1.5, None, {"x": None}]}
    assert json_text({"a": 0.25}) == json.dumps({"a": 0.25})


# ---------------------------------------------------------------- report beside a live run; serve's run number

SLOW = '''import pathlib, time
def predict(texts):
    pathlib.Path("asked").touch()
    time.sleep(60)
    return ["positive"] * len(texts)
'''


def test_report_refuses_a_folder_a_run_is_writing(finished, tmp_path):
    root = copy_run(finished, tmp_path)
    (root / "slow.py").write_text(SLOW)
    run = subprocess.Popen([sys.executable, "-m", "hinter.cli", "run", *run_args(model="python:slow:predict"),
                            "-o", "live"], cwd=root, env={**os.environ, "PYTHONPATH": PYTHONPATH},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (root / "asked").exists():  # the model is asked: the run holds its folder, its store made
            assert run.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        r = cli("report", "live", cwd=root)
        assert r.returncode == 2 and "another hinter process is working on this run folder" in r.stderr, r.stderr
        assert "Wait for it to finish" in r.stderr
        assert not (root / "live" / "report.html").exists() and not (root / "live" / "summary.json").exists()
    finally:
        os.killpg(run.pid, signal.SIGKILL)  # the run and its model's worker, started here
        run.wait(timeout=30)


def test_serve_answers_a_run_number_that_is_not_one_with_400(finished, tmp_path):
    root = copy_run(finished, tmp_path)
    p, url = serve(root / "run")
    try:
        parts = urllib.parse.urlsplit(url)
        token = urllib.parse.parse_qs(parts.query)["token"][0]
        base = f"{parts.scheme}://{parts.netloc}"
        for path, body in (("/api/try", b'{"run": 1e400, "text": "A man came home.", "attributes": ["gender"]}'),
                           ("/api/triage", b'{"run": 1e400, "mutant_id": 1}'),
                           ("/api/try", b'{"run": 0.5, "text": "A man came home.", "attributes": ["gender"]}')):
            request = urllib.request.Request(base + path, data=body, method="POST", headers={
                "Content-Type": "application/json", "X-Hinter-Token": token})
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(request, timeout=60)
            assert e.value.code == 400, (path, body)
            assert "run must be a whole number" in json.loads(e.value.read())["error"]
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(base + "/api/instances?run=1e400", timeout=60)
        assert e.value.code == 400
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
