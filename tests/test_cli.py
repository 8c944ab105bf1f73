"""The command line: a real run with a planted model, and clear errors (exit 2, no traceback) on bad input."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def hinter(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    return subprocess.run([sys.executable, "-m", "hinter.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_run_writes_store_summary_and_biases(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{"text": "A white man walked in. The film was fine."},
                                               {"text": "The man met a white boy. It rained."}])
    r = hinter("run", "--dataset", str(data), "--model", "python:planted:intersectional", "--attributes",
               "race,gender", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    for name in ("run.sqlite", "summary.json", "biases.csv"):
        assert (tmp_path / "out" / name).exists()
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert set(s["intersectional"]) == {"gender+race"} and s["texts"] == 2
    assert "gender+race" in r.stdout


def test_help_teaches_with_examples():
    r = hinter("run", "--help")
    assert r.returncode == 0
    assert "--attributes" in r.stdout and "Example" in r.stdout and "gguf:default" in r.stdout


def _assert_clear_error(r, *fragments):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    for f in fragments:
        assert f in r.stderr, r.stderr


def test_empty_dataset(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    _assert_clear_error(hinter("run", "-d", str(tmp_path / "empty.jsonl"), "-m", "python:planted:intersectional",
                               "-o", str(tmp_path / "o")), "empty.jsonl", "no records")


def test_row_without_text(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{"text": "A man."}, {"body": "no text here"}])
    _assert_clear_error(hinter("run", "-d", str(data), "-m", "python:planted:intersectional", "-o", str(tmp_path / "o")),
                        "d.jsonl, line 2", "--text-field")


def test_broken_dictionary_line(tmp_path):
    folder = tmp_path / "dic" / "gender"
    folder.mkdir(parents=True)
    (folder / "male_female.csv").write_text("man;woman\nboy girl\n")
    data = write_jsonl(tmp_path / "d.jsonl", [{"text": "A man."}])
    _assert_clear_error(hinter("run", "-d", str(data), "-m", "python:planted:intersectional", "-a", "gender",
                               "--dictionary", str(tmp_path / "dic"), "-o", str(tmp_path / "o")),
                        "male_female.csv, line 2", "semicolon")


def test_unknown_attribute(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{"text": "A man."}])
    _assert_clear_error(hinter("run", "-d", str(data), "-m", "python:planted:intersectional", "-a", "race,religion",
                               "-o", str(tmp_path / "o")), "religion", "race")


def test_unknown_model_spec(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{"text": "A man."}])
    _assert_clear_error(hinter("run", "-d", str(data), "-m", "bert:foo", "-o", str(tmp_path / "o")), "--model")
