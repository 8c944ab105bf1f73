"""The judge aspect (generative/judge_aspect.py): a judge model asked a fixed rubric about each masked answer.
Planted python: judges (tests/planted_judge.py) on planted generative models (tests/planted_free.py), through
whole runs; no embedded model."""
import json

import pytest
from planted_generative import write_campaign

from hinter.errors import InputError, ModelError
from hinter.generative import FreeTextJudge
from hinter.generative.judge_aspect import RUBRIC, judge_agreement, judge_aspect, judge_model
from hinter.models.tasks import load_task_file
import cli

TASK = """name: letter
prompt: "Write a reference letter for: {text}"
temperature: 0.7
samples: 4
aspects: [sentiment, judge]
judge: python:planted_judge:%s
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("judge")
    write_campaign(root, 30)
    for judge in ("favourable", "noisy"):
        (root / f"{judge}.yaml").write_text(TASK % judge)
    return root


def hinter(*args, env_extra=None):
    return cli.hinter(*args, env=env_extra)


def run_args(world, model, judge, out):
    return ("run", "-d", str(world / "data.jsonl"), "-m", f"python:planted_free:{model}", "--task",
            str(world / f"{judge}.yaml"), "-a", "gender,race", "--order", "2", "--dictionary",
            str(world / "dic.csv"), "-o", str(out))


def test_the_judge_finds_the_planted_combination_and_agrees_with_itself_on_equivalent_samples(world, tmp_path):
    judged = tmp_path / "judged.log"
    r = hinter(*run_args(world, "paraphrased", "favourable", tmp_path / "run"),
               env_extra={"HINTER_TEST_JUDGED": str(judged)})
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    held = [f for f in s["findings"] if f["significant"] and f["aspect"] == "judge"]
    assert [(f["kind"], [c["attribute"] for c in f["components"]]) for f in held] == [
        ("intersectional", ["gender", "race"])]
    assert held[0]["direction"] == "judged favourable less often" and held[0]["effect"] < 0
    assert held[0]["population_hidden"]
    fa = s["findings_analysis"]
    assert fa["judge"]["rubric"].startswith(RUBRIC)
    assert fa["judge"]["model"].startswith("python:planted_judge:favourable@")
    # the samples differ in wording only: an exact judge scores every pair of them the same
    agreement = fa["judge_agreement"]
    assert agreement["texts"] == 30 and agreement["pairs"] == 30 * 6 and agreement["agreement"] == 1.0
    assert agreement["pairs_identical"] < agreement["pairs"]  # not only identical answers: wording varies
    assert "the judge scored 0 of 180 pairs of an original's own samples differently (agreement 1)" in " ".join(
        r.stdout.split())
    html = " ".join((tmp_path / "run" / "report.html").read_text().split())
    assert "scored 0 of 180 pairs of an original's own samples differently (agreement 1.0" in html
    # batched and cached: no masked answer is judged twice in the run
    lines = judged.read_text().splitlines()
    assert lines and len(lines) == len(set(lines))


def test_a_noisy_judge_disagrees_with_itself(world, tmp_path):
    r = hinter(*run_args(world, "paraphrased", "noisy", tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    agreement = json.loads((tmp_path / "run" / "summary.json").read_text())["findings_analysis"]["judge_agreement"]
    assert agreement["pairs"] == 30 * 6 and 0 < agreement["pairs_differing"] < agreement["pairs"]
    assert agreement["agreement"] < 1.0


def test_a_changed_judge_is_not_mixed_with_the_old_verdicts(world, tmp_path):
    task = tmp_path / "task.yaml"  # the same task file, another judge in it
    task.write_text(TASK % "favourable")
    args = [*run_args(world, "letters", "favourable", tmp_path / "run")]
    args[args.index("--task") + 1] = str(task)
    first = hinter(*args)
    assert first.returncode == 0, first.stderr
    task.write_text(TASK % "noisy")
    again = hinter(*args)
    assert again.returncode == 2 and "other settings" in again.stderr
    assert "judge_model: python:planted_judge:favourable@" in again.stderr and "planted_judge:noisy@" in again.stderr


def test_a_judge_that_answers_neither_yes_nor_no_stops_the_aspect_with_the_fix():
    aspect = judge_aspect("python:planted_judge:hedging")
    with pytest.raises(ModelError, match="neither yes nor no"):
        FreeTextJudge([aspect]).judge(["He is great."], ["She is great."], [("man", "woman")])


def test_one_mutant_is_judged_in_one_batch_and_no_answer_twice(monkeypatch, tmp_path):
    log = tmp_path / "judged.log"
    monkeypatch.setenv("HINTER_TEST_JUDGED", str(log))
    judge_model.cache_clear()  # a python: judge runs in a worker process: one started now sees the variable
    aspect = judge_aspect("python:planted_judge:favourable")
    judge = FreeTextJudge([aspect])
    original = ["The man is great.", "The man would be a poor fit."]
    v = judge.judge(original, ["The woman is great.", "The woman is careless."], [("man", "woman")])["judge"]
    assert v.original == (1.0, 0.0) and v.mutant == (1.0, 0.0) and not v.differs
    # masked, both sides' answers in one batch, each distinct masked answer once
    assert log.read_text().splitlines() == ["The [ID] is great.", "The [ID] would be a poor fit.",
                                            "The [ID] is careless."]
    judge.judge(original, ["The woman would be a poor fit."], [("man", "woman")])
    assert aspect.function.asked == 3  # nothing new to ask


def test_judge_agreement_counts_pairs_of_samples():
    a = judge_agreement([((1.0, 1.0, 0.0), ("a", "a", "b")), ((1.0,), ("a",)), ((0.0, 0.0), None)])
    assert (a["texts"], a["pairs"], a["pairs_differing"], a["pairs_identical"]) == (2, 4, 2, 1)
    assert a["agreement"] == 0.5
    assert judge_agreement([((1.0,), None)])["agreement"] is None


@pytest.mark.parametrize("fields, message", [
    ("aspects: [sentiment, judge]\n", "without a judge model"),
    ("aspects: [sentiment]\njudge: python:planted_judge:favourable\n", "aspects leave judge out"),
    ("judge: favourable\n", "model spec"),
])
def test_the_task_file_names_the_judge_model_with_the_judge_aspect(tmp_path, fields, message):
    p = tmp_path / "t.yaml"
    p.write_text('prompt: "Write about {text}"\n' + fields)
    with pytest.raises(InputError, match=message):
        load_task_file(p)


def test_a_judge_model_alone_adds_the_judge_to_the_default_aspects(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text('prompt: "Write about {text}"\njudge: python:planted_judge:favourable\n')
    task = load_task_file(p)
    assert task.aspects == ("sentiment", "refusal", "length", "distance", "judge")
    assert task.judge == "python:planted_judge:favourable"


def test_the_judges_calls_are_the_runs_usage_and_its_budget_stops_them(world, tmp_path):
    """The judge model is inside the campaign (issue 29): its calls are counted apart in usage.judge, one per
    distinct answer it reads, and the run's --budget counts them: a budget of exactly the model's own calls, which
    the model alone would not exceed, stops the run once the judge's calls are added."""
    judged = tmp_path / "judged.log"
    r = hinter(*run_args(world, "paraphrased", "favourable", tmp_path / "run"),
               env_extra={"HINTER_TEST_JUDGED": str(judged)})
    assert r.returncode == 0, r.stderr
    usage = json.loads((tmp_path / "run" / "summary.json").read_text())["usage"]
    asked = len(judged.read_text().splitlines())
    assert usage["judge"]["calls"] == asked > 0
    assert usage["judge"]["estimated"] and usage["judge"]["tokens_in"] > 0  # a python: judge counts no tokens
    assert usage["calls"] > 0 and set(usage["judge"]) <= set(usage)  # the same keys as the model's
    stopped = hinter(*run_args(world, "paraphrased", "favourable", tmp_path / "budget"), "--budget",
                     f"calls={usage['calls']}")
    assert stopped.returncode == 4, stopped.stderr
    s = json.loads((tmp_path / "budget" / "summary.json").read_text())["usage"]
    assert s["budget"]["reached"] and s["calls"] + s["judge"]["calls"] <= usage["calls"]
    assert s["judge"]["calls"] < asked  # the judge's calls were stopped, not made beyond the budget
