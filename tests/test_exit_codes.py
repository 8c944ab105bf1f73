"""Errors are results: a failed model or an unfinished run never passes a gate (exit 3), and bad options are
caught before the campaign."""
import json
import sqlite3
from pathlib import Path

from campaign import write_kill_campaign
import cli

HERE = Path(__file__).parent


def hinter(*args, cwd=None, pythonpath=True):
    """`pythonpath=False`: without the tests' folder, so that their planted models cannot be imported."""
    return cli.hinter(*args, cwd=cwd, pythonpath=(HERE,) if pythonpath else (), timeout=300)


def campaign(tmp_path, model, *extra, texts=12):
    tmp_path.mkdir(parents=True, exist_ok=True)
    c = write_kill_campaign(tmp_path, texts=texts)
    return hinter("run", "-d", "data.jsonl", "-m", model, "-a", "gender,race", "--dictionary", "dic.csv",
                  "-o", "out", *extra, cwd=c), c / "out"


def test_an_always_failing_model_exits_3_and_fails_check(tmp_path):
    r, out = campaign(tmp_path, "python:planted:failing")
    assert r.returncode == 3, r.stderr
    assert "the model failed" in r.stderr and "model server unreachable" in r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["health"]["failed_calls"] == s["model_calls"] > 0
    assert any("model server unreachable" in e for e in s["first_errors"])
    check = hinter("check", str(out), "--fail-on", "biased>0")
    assert check.returncode == 3 and "the model failed" in check.stderr and "Gate passed" not in check.stderr
    # allowed model errors pass the model check, but a run with no answer tested no mutant: no gate passes on it
    allowed = hinter("check", str(out), "--allow-model-errors")
    assert allowed.returncode == 3 and "tested no mutant" in allowed.stderr and "the model failed" not in allowed.stderr


def test_a_model_failing_a_tenth_of_texts_fails_by_default_and_passes_a_raised_threshold(tmp_path):
    r, out = campaign(tmp_path / "a", "python:planted:unparseable_tenth", texts=48)
    s = json.loads((out / "summary.json").read_text())
    share = s["health"]["failed_share"]
    assert 0.05 < share < 0.2, share
    assert r.returncode == 3 and "unparseable" in r.stderr, r.stderr
    r2, _ = campaign(tmp_path / "b", "python:planted:unparseable_tenth", "--max-failed-share", "0.25",
                     "--max-failed-originals", "100", texts=48)
    assert r2.returncode == 0, r2.stderr


def test_a_partial_run_fails_check_and_says_so(tmp_path):
    r, out = campaign(tmp_path, "python:planted:intersectional", texts=40)
    assert r.returncode == 0, r.stderr
    db = sqlite3.connect(out / "run.sqlite")
    with db:  # as if killed after the first batch: later batches' texts and mutants never committed
        db.execute("DELETE FROM mutants WHERE text_id >= 32")
        db.execute("DELETE FROM texts WHERE text_id >= 32")
    db.close()
    # changed on purpose: its seal goes too, as the damaged-file message says (a killed run writes none)
    (out / "run.sqlite.sha256").unlink()
    check = hinter("check", str(out))
    assert check.returncode == 3 and "unfinished: 32 of 40 texts" in check.stderr, check.stderr
    report = hinter("report", str(out))
    assert report.returncode == 0
    assert json.loads((out / "summary.json").read_text())["health"]["complete"] is False


def test_a_python_model_is_found_from_the_current_folder(tmp_path):
    c = write_kill_campaign(tmp_path, texts=3)
    (c / "my_model.py").write_text("def predict(texts):\n    return ['positive' for _ in texts]\n")
    r = hinter("run", "-d", "data.jsonl", "-m", "python:my_model:predict", "-a", "gender", "--dictionary", "dic.csv",
               "-o", "out", cwd=c, pythonpath=False)
    assert r.returncode == 0, r.stderr


def test_options_are_validated_before_the_campaign(tmp_path):
    c = write_kill_campaign(tmp_path, texts=3)
    base = ("run", "-d", "data.jsonl", "-m", "python:planted:intersectional", "-a", "gender", "--dictionary",
            "dic.csv")
    for extra, fragment in ((("--task", "nosuchtask"), "nosuchtask"),
                            (("--label-field", "nolabel"), "nolabel"),
                            (("--fail-on", "intersectional.eror_rate>0.05"), "eror_rate")):
        r = hinter(*base, "-o", f"out-{extra[0]}", *extra, cwd=c)
        assert r.returncode == 2 and fragment in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert not (c / f"out-{extra[0]}" / "run.sqlite").exists(), "stopped only after the campaign"
