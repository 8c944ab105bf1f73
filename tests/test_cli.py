"""The command line: a real run with a planted model, and clear errors (exit 2, no traceback) on bad input."""
import json
import subprocess
import sys

import pytest
from cli import environment, hinter




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


def test_bad_rows_stop_or_are_skipped_and_listed(tmp_path):
    rows = [{"id": "a", "text": "A white man came."}, {"id": "b", "text": ""}, {"id": "a", "text": "A man left."},
            {"id": "c", "text": "x" * 1_000_001}, {"id": "d", "text": "The white boy sang."}]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    (tmp_path / "bad.jsonl").write_text('{"text": "A man."}\n{"text": "broken\n')
    base = ["-m", "python:planted:intersectional", "-a", "gender,race"]
    _assert_clear_error(hinter("run", "-d", str(data), *base, "-o", str(tmp_path / "o1")), "d.jsonl, line 2", "empty")
    _assert_clear_error(hinter("run", "-d", str(tmp_path / "bad.jsonl"), *base, "-o", str(tmp_path / "o0")),
                        "bad.jsonl, line 2", "JSON")
    r = hinter("run", "-d", str(data), *base, "-o", str(tmp_path / "o2"), "--skip-bad-rows")
    assert r.returncode == 0, r.stderr
    listed = (tmp_path / "o2" / "skipped_rows.txt").read_text().splitlines()
    assert len(listed) == 3 and "line 2" in listed[0] and "line 3" in listed[1] and "already used at line 1" in listed[1]
    assert "line 4" in listed[2] and "1,000,000" in listed[2]
    assert json.loads((tmp_path / "o2" / "summary.json").read_text())["texts"] == 2
    assert "Skipped 3 bad row(s)" in r.stderr


def test_invalid_utf8_and_csv_errors(tmp_path):
    (tmp_path / "u.jsonl").write_bytes(b'{"text": "ok"}\n{"text": "\xff\xfe"}\n')
    _assert_clear_error(hinter("run", "-d", str(tmp_path / "u.jsonl"), "-m", "python:planted:intersectional",
                               "-o", str(tmp_path / "o")), "u.jsonl, line 2", "UTF-8")
    (tmp_path / "n.csv").write_text("text\n\"A man\x00.\"\n")
    r = hinter("run", "-d", str(tmp_path / "n.csv"), "-m", "python:planted:intersectional", "-o", str(tmp_path / "o3"))
    assert r.returncode in (0, 2) and "Traceback" not in r.stderr


def test_a_dataset_where_no_dictionary_word_matches_says_so_at_the_start(tmp_path):
    french = write_jsonl(tmp_path / "fr.jsonl", [{"text": "La femme noire est partie. Le film était long."},
                                                 {"text": "Un homme blanc est venu. Il pleuvait."}])
    r = hinter("run", "--dataset", str(french), "--model", "python:planted:intersectional", "--attributes",
               "race,gender", "--out", str(tmp_path / "fr"))
    said = " ".join(r.stderr.split())
    assert ("no text of the dataset holds a word of the dictionary's attributes gender, race: nothing can be "
            "tested (the built-in dictionary is English" in said), said
    english = write_jsonl(tmp_path / "en.jsonl", [{"text": "Le film était long."}, {"text": "A white man came."}])
    r = hinter("run", "--dataset", str(english), "--model", "python:planted:intersectional", "--attributes",
               "race,gender", "--out", str(tmp_path / "en"))
    assert r.returncode == 0 and "no text of the dataset" not in r.stderr, r.stderr  # one text is enough


def test_every_error_begins_the_same_way(tmp_path):
    usage = hinter("run", "--bogus")  # the option parser's own error
    ours = hinter("run", "--dataset", "imdb", "--attributes", "race,gender", "--order", "5")  # hinter's
    for r in (usage, ours):
        assert r.returncode == 2 and "Error:" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert "error: No such option: --bogus" in usage.stderr and "for help." in usage.stderr
    assert "error: --order: --order 5 is higher than the number of attributes" in " ".join(ours.stderr.split())


def test_the_interrupt_message_names_the_real_run_folder(tmp_path):
    import importlib
    app = importlib.import_module("hinter.cli.app")  # the module (hinter.cli.app is also the Typer app)
    saved = list(app.RUN_FOLDER)
    try:
        app.RUN_FOLDER.clear()
        assert app.interrupted_message() == "Interrupted."  # no run under way: nothing to resume
        app.running_in(tmp_path / "runs" / "imdb")
        assert f"`hinter resume {tmp_path / 'runs' / 'imdb'}`" in app.interrupted_message()
        assert "OUT_FOLDER" not in app.interrupted_message()
    finally:
        app.RUN_FOLDER[:] = saved


# `hinter run` through the command line's entry point, in a process of its own; then what it imported
PROBE = """import sys
from hinter.cli.main import main
sys.argv = ["hinter", "run", "--dataset", %r, "--model", "python:planted:intersectional", "--attributes", "gender",
            "--out", %r]
try:
    main()
except SystemExit as e:
    assert not e.code, e.code
import thinc.compat
print("thinc saw torch:", thinc.compat.has_torch, "torch imported:", "torch" in sys.modules)
try:
    import torch
except ImportError:
    print("torch importable: no")
else:
    print("torch importable: yes")
"""


def test_a_command_that_parses_loads_no_gpu_library_and_a_model_can_still_import_one(tmp_path):
    """thinc (spaCy's) imports torch when it is installed, about 1.5 s of CPU for nothing at the start of every
    command that parses: each spaCy loader hides it while thinc loads (hinter.languages.parses.import_spacy). A later
    import, as an hf model makes, still finds it."""
    data = write_jsonl(tmp_path / "d.jsonl", [{"text": "A white man walked in. The film was fine."}])
    script = tmp_path / "probe.py"
    script.write_text(PROBE % (str(data), str(tmp_path / "out")))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=environment(), timeout=300)
    assert r.returncode == 0, r.stderr
    assert "thinc saw torch: False torch imported: False" in r.stdout, r.stdout
    assert (tmp_path / "out" / "summary.json").exists()  # the run parsed: spaCy and thinc were loaded
    pytest.importorskip("torch")
    assert "torch importable: yes" in r.stdout
