"""--id-field (issue 29): the dataset column holding each text's own id, read by every path that reads a dataset
(the command line, hinter.run), recorded with the run, shown as source_id in the outputs; a column named by it and
missing is a clear error naming the file and the fix."""
import csv
import json
from pathlib import Path

import pytest

import hinter
from hinter.errors import InputError
from cli import hinter as hinter_cli


REVIEWS = [("rv-101", "The man at the desk was helpful. The food was fine."),
           ("rv-102", "A man sang at the bar. It was loud."),
           ("rv-103", "Nothing happened. The plot was thin."),
           ("rv-104", "My father liked the film. He smiled.")]
OPTIONS = ("-a", "gender", "-k", "1", "--max-pairs-per-text", "2", "--no-jobs", "--workers", "1")


def write_csv(path, rows, header=("review_id", "text")):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def source_ids(out: Path, name: str) -> set[str]:
    with open(out / name, newline="") as f:
        return {row["source_id"] for row in csv.DictReader(f)}


def test_cli_reads_the_id_column_into_the_outputs_and_records_it(tmp_path):
    data = write_csv(tmp_path / "reviews.csv", REVIEWS)
    r = hinter_cli("run", "-d", str(data), "-m", "python:planted:atomic_gender", "--id-field", "review_id",
                   *OPTIONS, "-o", str(tmp_path / "out"))
    assert r.returncode in (0, 1), r.stderr
    biased = source_ids(tmp_path / "out", "biases.csv")
    # the texts naming a man flip (man -> woman): their biases carry the dataset's ids, not hinter's numbers
    assert biased and biased <= {"rv-101", "rv-102", "rv-104"}, biased
    assert source_ids(tmp_path / "out", "instances.csv") == biased
    settings = json.loads((tmp_path / "out" / "summary.json").read_text())["settings"]
    assert settings["config"]["id_field"] == "review_id"
    # resume rebuilds the run's config with it: the same texts, the same ids
    resumed = hinter_cli("resume", str(tmp_path / "out"))
    assert resumed.returncode in (0, 1), resumed.stderr
    assert source_ids(tmp_path / "out", "biases.csv") == biased


def test_without_the_option_an_unknown_id_column_is_not_read(tmp_path):
    data = write_csv(tmp_path / "reviews.csv", REVIEWS)
    r = hinter_cli("run", "-d", str(data), "-m", "python:planted:atomic_gender", *OPTIONS, "-o", str(tmp_path / "o"))
    assert r.returncode in (0, 1), r.stderr
    assert source_ids(tmp_path / "o", "biases.csv") <= {"0", "1", "2", "3"}  # hinter's own numbers


def test_api_reads_the_id_column_of_a_jsonl(tmp_path, parser):
    data = tmp_path / "reviews.jsonl"
    data.write_text("".join(json.dumps({"review_id": i, "text": t}) + "\n" for i, t in REVIEWS))
    run = hinter.run(model="python:planted:atomic_gender", dataset=str(data), id_field="review_id",
                     attributes=("gender",), order=1, max_pairs_per_text=2, include_occupational=False,
                     parser=parser, out=tmp_path / "out")
    run.store.close()
    biased = source_ids(tmp_path / "out", "biases.csv")
    assert biased and biased <= {"rv-101", "rv-102", "rv-104"}, biased
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["settings"]["config"]["id_field"] == "review_id"


def test_a_missing_id_column_is_a_clear_error_naming_the_file_and_the_fix(tmp_path, parser):
    data = write_csv(tmp_path / "reviews.csv", REVIEWS, header=("id", "text"))
    r = hinter_cli("run", "-d", str(data), "-m", "python:planted:atomic_gender", "--id-field", "review_id",
                   *OPTIONS, "-o", str(tmp_path / "o"))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    for fragment in ("reviews.csv, line 2", "no field 'review_id'", "fields: id, text", "--id-field"):
        assert fragment in r.stderr, r.stderr
    with pytest.raises(InputError) as e:
        hinter.run(model="python:planted:atomic_gender", dataset=str(data), id_field="review_id",
                   attributes=("gender",), parser=parser, out=tmp_path / "api")
    assert "review_id" in e.value.problem and "reviews.csv, line 2" in e.value.where and "--id-field" in e.value.fix
    # a row whose id is empty is named too; --skip-bad-rows leaves it out instead
    rows = [REVIEWS[0], ("", REVIEWS[1][1])]
    write_csv(tmp_path / "gap.csv", rows)
    r = hinter_cli("run", "-d", str(tmp_path / "gap.csv"), "-m", "python:planted:atomic_gender", "--id-field",
                   "review_id", *OPTIONS, "-o", str(tmp_path / "g"))
    assert r.returncode == 2 and "gap.csv, line 3" in r.stderr and "'review_id' is empty" in r.stderr, r.stderr


def test_audit_reads_the_id_column_too(tmp_path):
    import planted_audit
    data = tmp_path / "apps.jsonl"
    data.write_text("".join(json.dumps({"app_id": f"app-{i}", "text": t}) + "\n"
                            for i, t in planted_audit.applications()))
    r = hinter_cli("audit", "--dataset", str(data), "--id-field", "app_id", "--limit", "3", "--model",
                   "python:planted_audit:rejects_black_women", "--task", "imdb", "--favourable", "Positive",
                   "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr[-3000:]
    with open(tmp_path / "out" / "renderings.csv", newline="") as f:
        ids = {row["source_id"] for row in csv.DictReader(f)}
    assert ids and ids <= {f"app-{i}" for i, _ in planted_audit.applications()}, ids
