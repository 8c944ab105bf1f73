"""`hinter augment` (issue 24): counterfactual training data from planted runs (real parser, real store), exactly
the rows expected: labels, kinds, evaluative pairs left out, no text twice, balance, significant cells only; each
format read back; a dataset augmented directly gives the rows a run of it gives."""
import csv
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

import hinter
from hinter.report import augment as aug
from hinter.datasets import read_dataset
from hinter.mutation.dictionary import Dictionary, Pair
from hinter.records import Replacement, TextRecord
from hinter.store import open_run

HERE = Path(__file__).parent
SRC = HERE.parent / "src"  # the checkout's sources under test, not the installed copy
sys.path.insert(0, str(HERE))
from planted import PAIRS  # noqa: E402
from cli import hinter as cli

# The planted pairs and an evaluative one ("boy" -> "ugly boy" adds VADER's -2.3).
DIC = Dictionary(PAIRS + (Pair("body", "average", "unattractive", "boy", "ugly boy"),), "planted-augment")
SHOP = "A {} walked into the shop. The film was fine."
TEXTS = [TextRecord(SHOP.format("white man"), "r0", "negative"),
         TextRecord("Nothing to see here. The plot was thin.", "r1", "positive"),  # no dictionary word
         TextRecord("The boy liked it. It was big.", "r2", "positive"),
         TextRecord(SHOP.format("white woman"), "r3", "positive"),  # r0's gender mutant; its own mutants are r0's
         TextRecord("The white man bought a car. It was fast.", "r4", "negative")]
CAR = "The {1} {0} bought a car. It was fast."  # a person's race: a car's is left alone (issue 40)
# Every row expected with the default selection: (text, label, source_id, kind, groups).
EXPECTED = [
    (SHOP.format("white man"), "negative", "r0", "original", ()),
    (SHOP.format("black man"), "negative", "r0", "atomic", ("race:european>african",)),
    ("An asian man walked into the shop. The film was fine.", "negative", "r0", "atomic", ("race:european>asian",)),
    (SHOP.format("black woman"), "negative", "r0", "intersectional", ("gender:male>female", "race:european>african")),
    ("An asian woman walked into the shop. The film was fine.", "negative", "r0", "intersectional",
     ("gender:male>female", "race:european>asian")),  # a/an follows the new word (issue 40)
    ("The boy liked it. It was big.", "positive", "r2", "original", ()),
    ("The ugly boy liked it. It was big.", "positive", "r2", "atomic", ("body:average>unattractive",)),
    ("The girl liked it. It was big.", "positive", "r2", "atomic", ("gender:male>female",)),
    (CAR.format("man", "white"), "negative", "r4", "original", ()),
    (CAR.format("woman", "white"), "negative", "r4", "atomic", ("gender:male>female",)),
    (CAR.format("man", "black"), "negative", "r4", "atomic", ("race:european>african",)),
    (CAR.format("man", "asian"), "negative", "r4", "atomic", ("race:european>asian",)),
    (CAR.format("woman", "black"), "negative", "r4", "intersectional", ("gender:male>female", "race:european>african")),
    (CAR.format("woman", "asian"), "negative", "r4", "intersectional",
     ("gender:male>female", "race:european>asian")),
]


def _rows(result):
    return [(r.text, r.label, r.source_id, r.kind, r.groups) for r in result.rows]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("augment") / "small"
    run = hinter.run(TEXTS, "python:planted:atomic_gender", out=out, dictionary=DIC, attributes=("gender", "race", "body"))
    run.store.close()
    return out


def test_every_valid_mutant_with_its_originals_gold_label_and_no_text_twice(small):
    store = open_run(small)
    result = aug.from_run(store, aug.Selection())
    assert result.label_source == "gold"
    assert _rows(result) == EXPECTED
    # r0's "white woman" mutant is r3 itself, and r3's two mutants are r0's intersectional ones: left out, and r3
    # (no mutant left) is not written
    assert result.counts["repeated_texts"] == 3
    assert len({r.text for r in result.rows}) == len(result.rows)


def test_evaluative_pairs_are_left_out_as_the_run_recorded_them(small):
    result = aug.from_run(open_run(small), aug.Selection(exclude_pairs=aug.EVALUATIVE))
    assert _rows(result) == [r for r in EXPECTED if "ugly" not in r[0]]
    assert result.counts["evaluative_left_out"] == 1


def test_only_given_combinations_and_balanced_combinations(small):
    store = open_run(small)
    only = aug.from_run(store, aug.Selection(combinations=(aug.parse_combination("race:european>african+gender"),)))
    assert [r[0] for r in _rows(only) if r[3] != "original"] == [SHOP.format("black woman"), CAR.format("woman", "black")]
    assert {r[2] for r in _rows(only)} == {"r0", "r4"}
    # per combination as many mutants as the smallest (body: 1), drawn by the seed, no evaluative pair: gender 2,
    # race 4, gender+race 4 -> 2 each
    balanced = aug.from_run(store, aug.Selection(balance="combinations", exclude_pairs=aug.EVALUATIVE, seed=3))
    per_combo = Counter("+".join(r.attributes) for r in balanced.rows if r.kind != "original")
    assert per_combo == {"gender": 2, "race": 2, "gender+race": 2}
    assert balanced.counts["balanced_away"] == 4
    assert set(_rows(balanced)) <= set(EXPECTED)
    assert balanced.rows == aug.from_run(store, aug.Selection(balance="combinations", exclude_pairs=aug.EVALUATIVE,
                                                                seed=3)).rows  # the same seed, the same draw


def test_balanced_groups_keep_as_many_per_cell_as_the_smallest_cell():
    def mutant(tid, *groups):
        reps = tuple(Replacement(a, s, t, "w", "r", ((0, 1),)) for a, s, t in groups)
        return aug.Candidate(tid, f"text {tid} {groups}", reps)

    originals = [aug.Original(i, f"s{i}", f"original {i}", "positive") for i in range(6)]
    african, asian = ("race", "european", "african"), ("race", "european", "asian")
    mutants = [mutant(i, african) for i in range(5)] + [mutant(i, asian) for i in (1, 4)] + [
        mutant(i, ("gender", "male", "female")) for i in range(3)]
    result = aug.augment(originals, mutants, aug.Selection(balance="groups"))
    cells = Counter(r.groups for r in result.rows if r.kind != "original")
    assert cells == {("race:european>african",): 2, ("race:european>asian",): 2, ("gender:male>female",): 3}
    both = aug.augment(originals, mutants, aug.Selection(balance="both"))
    assert Counter(r.groups for r in both.rows if r.kind != "original") == {
        ("race:european>african",): 2, ("race:european>asian",): 2, ("gender:male>female",): 2}
    # every original with a kept mutant comes first, once
    assert [r.kind for r in both.rows].count("original") == len({r.text_id for r in both.rows})


def test_without_gold_labels_the_models_outcome_on_the_original_is_the_label(tmp_path):
    texts = [TextRecord(t.text, t.source_id) for t in TEXTS]
    run = hinter.run(texts, "python:planted:atomic_gender", out=tmp_path / "nogold", dictionary=DIC,
                     attributes=("gender", "race"))
    result = aug.from_run(run.store, aug.Selection())
    assert result.label_source == "model"
    # atomic_gender answers negative where a woman is named: no original here names one
    assert {r.label for r in result.rows} == {"positive"}
    assert {r.source_id for r in result.rows} == {"r0", "r2", "r4"}


@pytest.fixture(scope="module")
def biased_run(tmp_path_factory):
    """20 texts naming a white man, a model negative whenever a woman is named: gender and gender x race cells
    significant, race alone not."""
    places = ["shop", "park", "bank", "cafe", "library", "station", "museum", "school", "garden", "market"]
    texts = [TextRecord(f"A white man walked into the {p}. The {w} was fine.", f"t{i}", "positive")
             for i, (p, w) in enumerate((p, w) for p in places for w in ("film", "song"))]
    out = tmp_path_factory.mktemp("augment") / "biased"
    run = hinter.run(texts, "python:planted:atomic_gender", out=out, dictionary=Dictionary(PAIRS, "planted"),
                     attributes=("gender", "race"))
    run.store.close()
    return out


def test_significant_keeps_the_mutants_of_significant_cells_only(biased_run):
    s = json.loads((biased_run / "summary.json").read_text())
    significant = {tuple(f"{c['attribute']}:{c['source_group']}>{c['target_group']}" for c in f["components"])
                   for f in s["findings"] if f["significant"]}
    assert significant == {("gender:male>female",), ("gender:male>female", "race:european>african"),
                           ("gender:male>female", "race:european>asian")}
    result = aug.from_run(open_run(biased_run), aug.Selection(), significant=True)
    kept = Counter(r.groups for r in result.rows if r.kind != "original")
    assert kept == {g: 20 for g in significant}
    assert result.counts["outside_selection"] == 40  # black man, asian man on each text
    assert Counter(r.kind for r in result.rows)["original"] == 20


def test_the_command_writes_jsonl_csv_and_a_datasets_folder_each_read_back(small, tmp_path):
    expected = [r for r in EXPECTED if "ugly" not in r[0]]
    for name in ("aug.jsonl", "aug.csv", "aug"):
        out = tmp_path / name
        r = cli("augment", small, "--exclude-evaluative", "--out", out)
        assert r.returncode == 0, r.stderr
        assert f"{len(expected)} rows" in r.stderr and "Labels: the dataset's gold labels" in r.stderr
        assert "1 mutants with an evaluative pair" in r.stderr
        back = read_dataset(out)  # hinter reads it as a dataset: a run on the augmented data needs nothing else
        assert [(x.text, x.gold) for x in back.records] == [(e[0], e[1]) for e in expected]
    lines = [json.loads(x) for x in (tmp_path / "aug.jsonl").read_text().splitlines()]
    assert [(x["text"], x["label"], x["source_id"], x["kind"], tuple(x["groups"])) for x in lines] == expected
    assert lines[3]["attributes"] == ["gender", "race"] and lines[3]["replacements"] == \
        "gender: man -> woman; race: white -> black"
    with open(tmp_path / "aug.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["kind"] for r in rows] == [e[3] for e in expected] and rows[3]["attributes"] == "gender+race"
    import datasets
    ds = datasets.load_from_disk(str(tmp_path / "aug"))
    assert ds["source_id"] == [e[2] for e in expected] and ds[3]["groups"] == list(expected[3][4])


def test_a_dataset_augmented_directly_gives_the_rows_of_a_run_on_it(small, tmp_path):
    data = tmp_path / "texts.jsonl"
    data.write_text("".join(json.dumps({"id": t.source_id, "text": t.text, "label": t.gold}) + "\n" for t in TEXTS))
    direct = tmp_path / "direct.jsonl"
    r = cli("augment", "--dataset", data, "--attributes", "gender,race", "--out", direct)
    assert r.returncode == 0, r.stderr
    run = tmp_path / "run"
    r2 = cli("run", "--dataset", data, "--attributes", "gender,race", "--model", "python:planted:atomic_gender",
             "--out", run)
    assert r2.returncode in (0, 1), r2.stderr
    from_run = tmp_path / "from-run.jsonl"
    assert cli("augment", run, "--out", from_run).returncode == 0
    assert direct.read_text() == from_run.read_text()
    rows = [json.loads(x) for x in direct.read_text().splitlines()]
    assert {x["kind"] for x in rows} == {"original", "atomic", "intersectional"}
    assert len({x["text"] for x in rows}) == len(rows) and "r1" not in {x["source_id"] for x in rows}


def test_clear_errors(small, tmp_path):
    for args, where in ((("augment", small, "--out", tmp_path / "x.parquet"), "--out"),
                        (("augment", small, "--attributes", "race", "--out", tmp_path / "x.jsonl"), "--attributes"),
                        (("augment", "--out", tmp_path / "x.jsonl"), "RUN"),
                        (("augment", small, "--only", "gender:male", "--out", tmp_path / "x.jsonl"), "--only"),
                        (("augment", "--dataset", "imdb", "--significant", "--out", tmp_path / "x.jsonl"),
                         "--significant")):
        r = cli(*args)
        assert r.returncode == 2 and r.stderr.startswith("error:") and where in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr


def test_a_suite_gives_the_rows_of_a_run_of_it_without_a_model(small, tmp_path):
    suite = hinter.build_suite(TEXTS, out=tmp_path / "small.suite", dictionary=DIC, attributes=("gender", "race", "body"))
    out = tmp_path / "from-suite.jsonl"
    r = cli("augment", suite, "--out", out)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(x["text"], x["label"], x["source_id"], x["kind"], tuple(x["groups"])) for x in rows] == EXPECTED
    r = cli("augment", suite, "--significant", "--out", out)
    assert r.returncode == 2 and "a suite has none" in r.stderr
