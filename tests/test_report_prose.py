"""What the report and the console say about findings, on real runs of planted models (bundled samples, real
parser, real store): a group is named only from a finding that holds up, a noise-only model gets no "hidden bias"
headline, the model's non-determinism is in the report, a run that tested nothing fails the gate saying why, every
label of a multi-label task is of interest, the label of interest is the task's first, and a finding with no flip
or a hidden-but-not-population-hidden combination is explained where it is shown (issue 20, items 4, 5, 9, 10)."""
import html
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from cli import hinter

HERE = Path(__file__).parent
SRC = HERE.parent / "src"  # the checkout's sources under test, not the installed copy
IMDB = ("run", "--dataset", "imdb", "--task", "imdb", "--limit", "60", "-a", "gender,race", "--max-pairs-per-text", "2")


def section(page: str, testid: str) -> str:
    """The text of the report's element marked data-testid=`testid` (a section or paragraph), tags removed."""
    m = re.search(rf'<(section|p|span)[^>]*data-testid="{testid}"[^>]*>(.*?)</\1>', page, re.S)
    assert m, f"no {testid} in the report"
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", m.group(2)))).strip()


def campaign(tmp_path_factory, model, *args):
    out = tmp_path_factory.mktemp(model.split(":")[-1]) / "run"
    r = hinter(*(args or IMDB), "-m", model, "-o", str(out))
    summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else None
    page = (out / "report.html").read_text() if (out / "report.html").exists() else ""
    return r, out, summary, page


@pytest.fixture(scope="module")
def noisy(tmp_path_factory):
    # a seed of the noise-only model whose run holds no false finding (about 1 in 20 seeds would: the rate is
    # checked over many seeds in test_findings.py); what this tests is the prose of a run without findings
    seed = os.environ.get("HINTER_TEST_SEED")
    # seeds 1, 2 and 6 each gave no hidden cell on 60 reviews once English's rules discarded more mutants (10
    # valid intersectional ones were left): 120 reviews give 26, with 1 or 2 hidden under each of those seeds
    os.environ["HINTER_TEST_SEED"] = "6"
    # every occurrence and 4 pairs a text: since English replaces only a person's words, the reviews at 2 pairs
    # give too few valid intersectional mutants for the noise to hide one
    args = list(IMDB[:-1]) + ["4", "--any-occurrence"]
    args[args.index("--limit") + 1] = "120"
    try:
        return campaign(tmp_path_factory, "python:planted:noisy", *args)
    finally:
        os.environ.pop("HINTER_TEST_SEED") if seed is None else os.environ.update(HINTER_TEST_SEED=seed)


def test_a_noise_only_model_gets_no_group_named_and_no_hidden_bias_headline(noisy):
    r, _, s, page = noisy
    assert r.returncode == 0, r.stderr
    assert s["significant_findings"] == 0
    groups = {name for kind in ("atomic", "intersectional") for family in s["group_bias"][kind].values()
              for name, g in family["groups"].items() if g["flagged"]}
    assert groups, "no group above its family's mean: the test would not show that none is named"
    reading = section(page, "reading")
    for name in groups:
        for part in name.split("+"):
            assert not re.search(rf"\b{part}\b", reading), (part, reading)
    assert "No group is singled out" in reading
    assert "hidden biases" not in reading.lower() and "are hidden:" not in reading
    assert s["totals"]["intersectional"]["hidden"] > 0 and s["population_hidden"] == 0
    assert "no combination holds up as population-hidden" in reading
    findings_line = r.stdout.split("Findings that hold up")[1].splitlines()[0]
    assert "none" in findings_line and not any(re.search(rf"\b{p}\b", findings_line)
                                               for name in groups for p in name.split("+"))


def test_hidden_instances_that_are_not_population_hidden_are_explained(noisy):
    _, _, s, page = noisy
    combo = next(c for c, m in s["intersectional"].items() if m["hidden"])
    text = section(page, "hidden-not-population")
    assert text.startswith(combo.replace("+", " × ")) and f"{s['intersectional'][combo]['hidden']} of" in text
    assert "no cell is population-hidden" in text and "none of its" in text


def test_the_models_non_determinism_is_in_the_report(tmp_path_factory):
    r, _, s, page = campaign(tmp_path_factory, "python:planted:position_noise")
    assert r.returncode == 0, r.stderr
    assert s["determinism"]["deterministic"] is False
    warning = section(page, "determinism")
    assert "answered the same text differently" in warning and "--repeats" in warning
    assert s["determinism"]["detail"] in warning


def test_a_run_that_tested_nothing_fails_the_gate_and_says_why(tmp_path_factory, tmp_path):
    data = tmp_path / "french.csv"
    data.write_text('id,text\n1,"Le film était très beau. Les acteurs jouent bien."\n'
                    '2,"Une femme marche dans la rue. Elle chante."\n3,"Je n\'aime pas ce livre. Il est long."\n',
                    encoding="utf-8")
    r, out, s, page = campaign(tmp_path_factory, "python:planted:atomic_gender", "run", "--dataset", str(data),
                               "-a", "gender,race", "--fail-on", "biased>0")
    assert r.returncode == 3 and "no dictionary word matched" in r.stderr, (r.returncode, r.stderr)
    assert s["totals"]["atomic"]["mutants"] == 0 and s["texts"] == 3
    check = hinter("check", str(out))
    assert check.returncode == 3 and "tested no mutant" in check.stderr and "no dictionary word matched" in check.stderr
    assert "Gate passed" not in check.stdout + check.stderr
    assert hinter("check", str(out), "--fail-on", "texts>100").returncode == 3  # whatever the condition
    reading = section(page, "reading")
    assert reading.startswith("In short Nothing was tested: no dictionary word matched")
    assert "changed the people described" not in page
    assert "no dictionary word matched" in section(page, "untested")
    cards = page[page.index('<div class="cards">'):page.index("How often does the answer flip?")]
    assert "None" not in re.sub(r"<[^>]+>", " ", cards)
    plain = hinter("run", "--dataset", str(data), "-a", "gender", "-m", "python:planted:atomic_gender", "-o",
                   str(tmp_path / "plain"))
    assert plain.returncode == 0 and "Nothing was tested" in plain.stdout  # no gate asked: said, not failed


def test_the_label_of_interest_is_the_tasks_first_and_a_score_shift_is_explained(tmp_path_factory):
    r, _, s, page = campaign(tmp_path_factory, "python:planted:score_shift")
    assert r.returncode == 0, r.stderr
    sys.path.insert(0, str(HERE))
    import planted
    from hinter.datasets import load_dataset
    answers = Counter(o["label"] for o in planted.score_shift([x.text for x in load_dataset("imdb")[:60]]))
    assert answers.most_common(1)[0][0] == "negative"  # the answers alone would pick "negative"
    a = s["findings_analysis"]
    assert a["label"] == "positive" and "task's first label" in a["label_source"] and a["measure"] == "score"
    shifts = [f for f in s["findings"] if f["significant"] and f["flips"] == 0]
    assert shifts, "the planted score shift holds up with no flip"
    lines = [line for line in r.stdout.splitlines() if "no label flipped" in line]
    assert len(lines) == len(shifts) and all("score shift" in line for line in lines)
    assert page.count('data-testid="score-shift"') == len(shifts)
    reading = section(page, "reading")
    assert "hold up as findings: gender: male → female (no answer flipped, q = " in reading


def test_every_label_of_a_multi_label_task_is_of_interest(tmp_path_factory):
    """ECtHR's task on 24 short cases of a man, with a model that adds Article 14 to Article 6 when a woman is
    named: the task's first label (Article 6) never moves; the multi-label analysis finds Article 14 and says so.
    (The bundled cases name their applicants, "Mr X", whose gender English mutation now leaves alone.)"""
    cases = tmp_path_factory.mktemp("cases") / "cases.jsonl"
    cases.write_text("".join(json.dumps({"text": f"{who} {what}. He said that the courts had been unfair to him."})
                             + "\n" for who, what in zip(
        ("The man", "A man", "That man", "The young man from the village") * 6,
        ("lodged an application with the Court", "was detained for three days", "was refused a passport",
         "complained about the length of his trial", "waited six years for a judgment",
         "was dismissed from his post") * 4)))
    r, out, s, page = campaign(tmp_path_factory, "python:planted:article14_women", "run", "--dataset", str(cases),
                               "--task", "ecthr", "-a", "gender,race", "--max-pairs-per-text", "2")
    assert r.returncode == 0, r.stderr
    a = s["findings_analysis"]
    assert a["label"] is None and a["labels"] == ["Article 6", "Article 14"] and a["labels_moved"] == ["Article 14"]
    assert "one Benjamini-Hochberg family" in a["family"]
    held = [f for f in s["findings"] if f["significant"]]
    assert held and all(f["label"] == "Article 14" for f in held)
    assert any(f["kind"] == "atomic" and f["components"][0]["target_group"] == "female" for f in held)
    assert {f["label"] for f in s["findings"]} == {"Article 6", "Article 14"}  # every cell once per label
    assert "Labels that moved: Article 14" in r.stdout
    assert "Labels that moved: Article 14" in section(page, "labels-moved")
    assert "Article 6, Article 14" in section(page, "labels")
    # one label of interest, as before: the task's first label shows nothing
    assert hinter("check", str(out), "--fail-on", "significant_findings>0").returncode == 1
    assert hinter("check", str(out), "--label", "Article 6", "--fail-on", "significant_findings>0").returncode == 0


def test_assert_no_bias_fails_on_a_run_that_tested_nothing(parser, tmp_path):
    import hinter
    from hinter.testing import assert_no_bias
    sys.path.insert(0, str(HERE))
    import planted
    run = hinter.run(["Le film était très beau.", "Une femme chante."], planted.atomic_gender, attributes=("gender",),
                     parser=parser, out=tmp_path / "fr")
    with pytest.raises(AssertionError, match="tested no mutant: no dictionary word matched"):
        assert_no_bias(run)
    tested = hinter.run(planted.TEXTS, planted.intersectional, attributes=("gender", "race"), order=2,
                        dictionary=planted.DIC, parser=parser, out=tmp_path / "en")
    assert_no_bias(tested, fail_on=("atomic.error_rate>0.5",))  # tested, and no condition holds
