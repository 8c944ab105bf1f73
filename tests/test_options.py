"""Issue 20, "one owner per option": every RunConfig field is an option of `hinter run` and (its stages)
`hinter suite build`, refused beside --suite unless of the model stage, and an argument of `hinter.run`; the
reader of recorded settings (recorded_settings.config_of) opens a run folder recorded with the legacy "cli" key; --sample
draws a seeded sample of the dataset's texts."""
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

import hinter
from hinter.config import MODEL, RunConfig, option_fields
from hinter.errors import InputError
from cli import hinter as _hinter

HERE = Path(__file__).parent
LEGACY = HERE / "data" / "legacy-run"


def cli(*args):
    from hinter.cli import app
    from hinter.cli import commands  # noqa: F401  (registers the commands)
    return CliRunner().invoke(app, list(args))


def flags(stages=None):
    return [f.metadata["flag"] for f in option_fields() if stages is None or f.metadata["stage"] in stages]


def listed(help_text: str) -> set[str]:
    """The options a --help lists (not those its examples name)."""
    return set(re.findall(r"^  (?:-\w, )?(--[\w-]+)", help_text, re.MULTILINE))


def test_run_and_suite_build_offer_every_option_of_their_stages():
    run = cli("run", "--help")
    assert run.exit_code == 0
    assert set(flags()) <= listed(run.output), set(flags()) - listed(run.output)
    text = " ".join(run.output.split())
    assert "[default: gguf:default]" in text and "[default: imdb]" in text
    assert "python:package.module:function" in text  # the model's help names the backends
    build = cli("suite", "build", "--help")
    assert build.exit_code == 0
    assert set(flags(("dataset", "mutation", "validity"))) <= listed(build.output)
    assert not set(flags((MODEL,))) & listed(build.output)  # a suite is built without a model


def _cli_value(f):
    """A value the option parses (the refusal comes before any value is checked)."""
    import typing
    t = typing.get_type_hints(RunConfig)[f.name]
    if t is bool:
        return []
    numeric = {int, float}
    return ["3"] if numeric & set(typing.get_args(t)) or t in numeric else ["race"]


@pytest.mark.parametrize("field", [f for f in option_fields() if f.metadata["stage"] != MODEL], ids=lambda f: f.name)
def test_every_option_a_suite_fixed_is_refused_beside_it(field, tmp_path):
    r = cli("run", "--suite", str(tmp_path / "any.suite"), field.metadata["flag"], *_cli_value(field),
            "--out", str(tmp_path / "x"))
    assert isinstance(r.exception, InputError), r.output
    assert f": {field.metadata['flag']} cannot change a suite" in r.exception.message


def test_an_option_of_the_model_stage_is_taken_beside_a_suite(tmp_path):
    r = cli("run", "--suite", str(tmp_path / "missing.suite"), "--window", "2000", "--repeats", "3",
            "--out", str(tmp_path / "x"))
    assert isinstance(r.exception, InputError) and "no suite file" in r.exception.message


def test_the_api_takes_every_field_by_name_and_names_them_on_a_typo():
    with pytest.raises(InputError) as e:
        hinter.run(["A man."], "python:planted:intersectional", persononly=True)
    assert "persononly" in e.value.message
    assert all(f.name in e.value.fix for f in option_fields())
    with pytest.raises(InputError) as e:
        hinter.build_suite(["A man."], out="x.suite", window=2000)
    assert "window" in e.value.message and "model stage" in e.value.message


def test_hinter_run_sets_packs_person_only_repair_and_exclude_evaluative(parser, tmp_path):
    from hinter.mutation.dictionary import load_dictionary, with_packs
    from hinter.mutation.lint import evaluative_check
    rows = ["Ebony said the white man was kind. She smiled at him.",
            "A black man wore a black coat. The film was long.",
            "Brian met an old woman in the park. He liked her."]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "text": t}) + "\n" for i, t in enumerate(rows)))
    attributes = ("gender", "name", "race")
    # the campaign's dictionary does hold evaluative pairs: excluding them is a change
    assert evaluative_check(with_packs(load_dictionary(None), ["names"]).restrict(attributes).pairs)["pairs"]
    run = hinter.run(model="python:planted:intersectional", dataset=str(data), attributes=attributes, order=2,
                     packs=("names",), person_only=True, repair=True, exclude_evaluative=True, max_pairs_per_text=3,
                     parser=parser, out=tmp_path / "run")
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    config = s["settings"]["config"]
    assert (config["packs"], config["person_only"], config["repair"], config["exclude_evaluative"]) == \
           (["names"], True, True, True)
    assert s["settings"]["dictionary"] == "built-in+names"
    assert s["settings"]["checks.evaluative"]["pairs"] == []  # none left in the run's dictionary
    mutants = list(run.mutants)
    assert any("name" in m.attributes for m in mutants)  # the names pack's pairs were used
    assert s["person_only_skipped"] > 0  # "a black coat" is not a person
    coat = [m for m in mutants if m.text_id == 1 and m.text]
    assert coat and all("wore a black coat" in m.text for m in coat)
    assert s["repairs"]["a/an"] > 0 and any(m.text.startswith("An ") for m in coat)  # "A black" -> "An indig..."
    run.store.close()
    # the same campaign from its recorded settings: one reader, the config the run was given
    from hinter.pipeline.recorded_settings import config_of
    from hinter.store import RunStore
    assert config_of(RunStore.read_settings(tmp_path / "run")) == RunConfig(
        model="python:planted:intersectional", dataset=str(data), attributes=attributes, packs=("names",),
        person_only=True, repair=True, exclude_evaluative=True, max_pairs_per_text=3)


def test_sample_draws_the_same_texts_twice_and_others_with_another_seed():
    def texts(**options):
        return [r.source_id for r in RunConfig(dataset="imdb", **options).read_dataset().records]
    first = texts(sample=10)
    every = texts()
    assert len(first) == 10 and first == texts(sample=10)
    assert first != every[:10]  # a sample, not the first ten
    assert first == [i for i in every if i in first]  # in the dataset's order
    other = texts(sample=10, seed=1)
    assert len(other) == 10 and other != first
    assert set(texts(sample=5, limit=20)) <= set(every[:20])  # with --limit: drawn from the first texts
    assert texts(sample=500) == every  # more than the dataset holds: all of it
    assert RunConfig(sample=10).recorded() == {**RunConfig().recorded(), "sample": 10}
    assert "sample" not in RunConfig().recorded()  # a run made before --sample records the same config
    with pytest.raises(InputError) as e:
        RunConfig(sample=0)
    assert "--sample" in e.value.message


def test_the_api_samples_given_texts_as_the_cli_samples_a_dataset(parser, tmp_path):
    from hinter.datasets import sample_records
    given = [f"A man came home on day {i}." for i in range(30)]
    options = dict(attributes=("gender",), order=1, max_pairs_per_text=1, parser=parser)
    run = hinter.run(given, "python:planted:intersectional", sample=4, seed=2, out=tmp_path / "a", **options)
    stored = sorted({m.text_id for m in run.mutants})
    run.store.close()
    assert len(stored) == 4 and sample_records(given, 4, 2) != given[:4]
    db = sqlite3.connect(tmp_path / "a" / "run.sqlite")
    assert [t for (t,) in db.execute("SELECT text FROM texts ORDER BY text_id")] == sample_records(given, 4, 2)
    db.close()
    with pytest.raises(InputError) as e:  # how to read a dataset means nothing for texts given: not ignored
        hinter.run(given, "python:planted:intersectional", text_field="body", out=tmp_path / "b", **options)
    assert "text_field" in e.value.message


def test_cli_sample_runs_the_sampled_texts_and_records_the_option(tmp_path):
    rows = [{"id": f"r{i}", "text": f"The man came home on day {i}. He liked the film."} for i in range(12)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ("run", "-d", "d.jsonl", "-m", "python:planted:intersectional", "-a", "gender", "-k", "1",
            "--max-pairs-per-text", "1", "--no-jobs", "--sample", "3", "--seed", "5")
    r = _hinter(*args, "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    expected = [x.source_id for x in RunConfig(dataset=str(tmp_path / "d.jsonl"), sample=3, seed=5)
                .read_dataset().records]
    db = sqlite3.connect(tmp_path / "out" / "run.sqlite")
    stored = [row[0] for row in db.execute("SELECT source_id FROM texts ORDER BY text_id")]
    db.close()
    assert stored == expected and len(stored) == 3
    settings = json.loads((tmp_path / "out" / "summary.json").read_text())["settings"]
    assert settings["config"]["sample"] == 3
    assert settings["include_occupational"] is False  # --no-jobs: the inverted flag
    other = _hinter(*args[:-1], "6", "-o", "out", cwd=tmp_path)  # another seed: another campaign in that folder
    assert other.returncode == 2 and "--seed: 5 before, 6 now" in other.stderr


LEGACY_CLI = {"dataset": "imdb", "model": "python:planted:by_hash", "attributes": "gender,race", "order": 2,
              "limit": 10, "text_field": "text", "label_field": "label", "dictionary": None,
              "pairs_per_attribute": None, "max_pairs_per_text": 2, "seed": 3, "task": "imdb", "no_jobs": False,
              "query_discarded": False, "skip_bad_rows": False}


def test_a_run_recorded_with_the_legacy_cli_key_opens_and_resumes(tmp_path):
    from hinter.pipeline.recorded_settings import config_of
    from hinter.serve.app import model_spec_of
    from hinter.store import RunStore
    out = tmp_path / "run"
    shutil.copytree(LEGACY, out)
    recorded = config_of(RunStore.read_settings(out))
    from hinter.models import resolve_model
    db = sqlite3.connect(out / "run.sqlite")
    with db:  # as hinter recorded a run before RunConfig: its command's options under "cli"
        db.execute("DELETE FROM settings WHERE key = 'config'")
        db.execute("INSERT INTO settings VALUES ('cli', ?)", (json.dumps(LEGACY_CLI),))
        # the model's fingerprint as this hinter takes it (a python: model's now holds its code's hash): this test
        # is about the options' key, not the model's identity
        db.execute("UPDATE settings SET value = ? WHERE key = 'model'",
                   (json.dumps(resolve_model(LEGACY_CLI["model"]).fingerprint),))
    db.close()
    settings = RunStore.read_settings(out)
    assert "config" not in settings and config_of(settings) == recorded and recorded.dataset == "imdb"
    # the legacy keys are the flags' names: --no-jobs (an inverted flag) read back as include_occupational
    assert config_of({**settings, "cli": {**LEGACY_CLI, "no_jobs": True}}).include_occupational is False
    assert model_spec_of(settings) == ("python:planted:by_hash", "imdb")
    r = _hinter("resume", str(out))
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    before = json.loads((LEGACY / "summary.json").read_text())
    assert s["texts"] == 10 and s["model_calls"] == before["model_calls"]  # the stored run: nothing asked again


def test_the_execution_options_have_one_owner_and_every_command_checks_them_the_same_way(tmp_path):
    """config.Execution's fields own --executor, --workers...: run and resume offer all of them, suite build, study
    and augment --workers, each checked once on creation (before: study, suite build and augment passed --workers 0
    on unchecked)."""
    import dataclasses

    from hinter.config import Execution
    execution_flags = {f.metadata["flag"] for f in dataclasses.fields(Execution)}
    for command in (("run",), ("resume",)):
        assert execution_flags <= listed(cli(*command, "--help").output)
    for command in (("suite", "build"), ("study",), ("augment",)):
        assert "--workers" in listed(cli(*command, "--help").output)
    refusals = [cli("suite", "build", "--dataset", "imdb", "--workers", "0", "--out", str(tmp_path / "s.suite")),
                cli("augment", "--dataset", "imdb", "--workers", "0", "--out", str(tmp_path / "a.jsonl")),
                cli("study", "--models", "python:planted:by_hash", "--datasets", "imdb", "--workers", "0", "--out",
                    str(tmp_path / "study")),
                cli("run", "--dataset", "imdb", "--model", "python:planted:by_hash", "--workers", "0", "--out",
                    str(tmp_path / "run"))]
    for r in refusals:
        assert isinstance(r.exception, InputError) and "--workers must be at least 1, got 0" in str(r.exception)
    assert not (tmp_path / "s.suite").exists() and not (tmp_path / "run").exists()
