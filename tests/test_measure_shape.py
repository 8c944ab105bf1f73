"""One kind of measure (issue 42): a label run and a free-text run write biases.csv in one layout and summary.json
with one measures section, and their findings have one shape. Real runs of the CLI on the planted world of
tests/planted_generative.py (a label model, python:planted:intersectional; a free-text one,
python:planted_free:sampled)."""
import csv
import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from cli import hinter  # noqa: E402
from planted_generative import write_campaign  # noqa: E402

from hinter.analysis.findings import Component, Finding, Measure  # noqa: E402
from hinter.report.outputs import BIAS_COLUMNS  # noqa: E402

TASK = """name: letter
prompt: "Write a reference letter for: {text}"
samples: 1
aspects: [sentiment, length]
"""
# the keys every finding has, whatever it measures (findings.Finding.to_dict)
ONE_SHAPE = {"measure", "kind", "components", "tested", "texts", "texts_changed", "flips", "transitions", "toward",
             "direction", "effect", "effect_ci", "p_value", "q_value", "significant", "testable", "note", "summary"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("measure-shape")
    write_campaign(root, 12)
    (root / "task.yaml").write_text(TASK)
    common = ("-d", str(root / "data.jsonl"), "-a", "gender,race", "--order", "2", "--dictionary",
              str(root / "dic.csv"))
    out = {}
    for name, model in (("labels", ("-m", "python:planted:intersectional")),
                        ("free", ("-m", "python:planted_free:sampled", "--task", str(root / "task.yaml")))):
        out[name] = root / name
        r = hinter("run", *model, *common, "-o", str(out[name]))
        assert r.returncode == 0, r.stderr
    return out


def _biases(run: Path) -> list[dict]:
    with open(run / "biases.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_biases_csv_has_one_layout(runs):
    labels, free = _biases(runs["labels"]), _biases(runs["free"])
    assert labels and free  # both planted models expose some bias
    assert list(labels[0]) == list(free[0]) == list(BIAS_COLUMNS)
    # the measure column says what changed: a label task's outcome, a free-text mutant's aspects
    assert {b["measure"] for b in labels} == {"outcome"} and all(b["original_outcome"] != b["mutant_outcome"]
                                                                 for b in labels)
    assert all(b["measure"] == b["differs_on"] and b["measure"] for b in free)
    assert all(len(json.loads(b["mutant_answers"])) == 1 for b in free)


def test_summary_has_one_measures_section(runs):
    labels, free = (json.loads((runs[k] / "summary.json").read_text()) for k in ("labels", "free"))
    assert labels["measures"].keys() == free["measures"].keys()
    assert (labels["measures"]["kind"], free["measures"]["kind"]) == ("labels", "free text")
    assert [m["of"] for m in labels["measures"]["records"]] in (["label share"], ["score"])
    assert [(m["name"], m["of"]) for m in free["measures"]["records"]] == [("sentiment", "aspect"),
                                                                           ("length", "aspect")]
    assert {k for m in labels["measures"]["records"] for k in m} == {k for m in free["measures"]["records"] for k in m}
    # every finding has the one shape; the old sections and keys are kept for a release
    assert labels["findings"] and free["findings"]
    assert all(ONE_SHAPE <= f.keys() for f in labels["findings"] + free["findings"])
    assert all("aspect" in f and f["differ"] == f["flips"] and f["measure"] == f["aspect"] for f in free["findings"])
    assert {f["measure"] for f in labels["findings"]} == {labels["findings_analysis"]["label"]}
    assert free["findings_analysis"]["measure"] == "aspects" and labels["findings_analysis"]["measure"] in (
        "label", "score")


def test_a_label_finding_says_itself():
    """describe() on a label finding (it raised InputError: it knew only aspects)."""
    gender = Component("gender", "male", "female")
    f = Finding("atomic", (gender,), tested=10, texts=10, texts_changed=4, flips=4,
                transitions={"positive->negative": 3, "positive->neutral": 1}, toward="negative", effect=-0.4,
                effect_ci=(-0.7, -0.1), p_value=0.01, q_value=0.02, significant=True,
                measured=Measure.label_share("positive"))
    assert f.describe() == ("gender male -> female: 3 to negative, 1 to neutral of 10 mutants; share of positive -0.4 "
                            "[-0.7, -0.1], q = 0.02")
    by_hand = Finding("atomic", (gender,), 10, 10, 0, 0, {}, None, 0.3, None, 0.01, 0.02, True, label="Article 6")
    assert "share of Article 6 +0.3" in by_hand.describe() and "a shift of the answers' distribution" in \
        by_hand.describe()
