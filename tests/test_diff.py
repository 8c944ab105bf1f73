"""`hinter diff` and `hinter compare` say in words what a fix did (issue 24): significant cells per combination
before and after, the cells gone, and the accuracy on gold labels; planted runs (real parser, real store)."""
import json
import sys
from pathlib import Path

import pytest

import hinter
from hinter.mutation.dictionary import Dictionary
from hinter.records import TextRecord
from hinter.report.change import accuracy, change, headline
from hinter.store.rows import TextRow

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from planted import PAIRS, atomic_gender  # noqa: E402
from cli import hinter as cli

PLACES = ["shop", "park", "bank", "cafe", "library", "station", "museum", "school", "garden", "market"]
# 20 texts naming a white man; the song reviews are negative
TEXTS = [TextRecord(f"A white man walked into the {p}. The {w} was fine.", f"t{2 * i + j}",
                    "negative" if w == "song" else "positive")
         for i, p in enumerate(PLACES) for j, w in enumerate(("film", "song"))]


def fixed(texts):
    """Blind to people, right on every text: negative for songs."""
    return ["negative" if "song" in t else "positive" for t in texts]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("fix")
    dic = Dictionary(PAIRS, "planted")
    for name, model in (("before", atomic_gender), ("after", fixed)):
        hinter.run(TEXTS, model, out=root / name, dictionary=dic, attributes=("gender", "race")).store.close()
    return root / "before", root / "after"


GONE = ["gender: 1 significant cell before, 0 after (gone: gender: male -> female)",
        "gender x race: 2 significant cells before, 0 after (gone: gender: male -> female & race: european -> "
        "african; gender: male -> female & race: european -> asian)",
        "accuracy 50.0% -> 100.0% (on 20 texts with a gold label)"]


def test_diff_says_which_cells_stopped_holding_up_and_the_accuracy(runs):
    before, after = runs
    r = cli("diff", before, after, "--json", before.parent / "diff.json")
    assert r.returncode == 0, r.stderr
    for line in GONE:
        assert line in r.stdout, r.stdout
    d = json.loads((before.parent / "diff.json").read_text())
    assert d["change"]["sentences"] == GONE
    assert [(x["combination"], x["before"], x["after"]) for x in d["change"]["combinations"]] == [
        ("gender", 1, 0), ("gender x race", 2, 0)]
    assert d["change"]["accuracy"]["before"] == {"correct": 10, "texts": 20, "rate": 0.5}
    # the other way round: the cells appear
    back = cli("diff", after, before)
    assert "gender: 0 significant cells before, 1 after (appeared: gender: male -> female)" in back.stdout
    assert "accuracy 100.0% -> 50.0%" in back.stdout


def test_compare_says_what_each_run_changed_against_the_first(runs):
    r = cli("compare", *runs)
    assert r.returncode == 0, r.stderr
    assert "What changed from 1. to 2.:\n" + "".join(f"  {x}\n" for x in GONE) in r.stdout, r.stdout
    c = json.loads(cli("compare", *runs, "--json", "-").stdout)
    assert c["changes"][0]["sentences"] == GONE and c["runs"][1]["accuracy"]["rate"] == 1.0


def test_accuracy_reads_labels_in_any_case_and_label_sets_as_sets():
    rows = [TextRow(0, None, "a", "positive", "Positive", None), TextRow(1, None, "b", "negative", None, None),
            TextRow(2, None, "c", '["Article 6", "Article 14"]', "Article 14 | Article 6", None),
            TextRow(3, None, "d", None, "Positive", None)]
    assert accuracy(rows) == {"correct": 2, "texts": 3, "rate": 2 / 3}  # unanswered: wrong; no gold: not counted
    assert accuracy(rows[3:]) is None
    f = {"kind": "atomic", "significant": True,
         "components": [{"attribute": "race", "source_group": "european", "target_group": "african"}]}
    c = change([f], [f], None, None)
    assert headline(c) == "race: 1 significant cell before, 1 after" and len(c["sentences"]) == 1
