"""Findings in a real run (bundled IMDB, real parser, real store): found where planted, absent where not, in
summary.json, the console, the gate and the report."""
import json
import math
from html.parser import HTMLParser

import pytest

import planted as planted_models  # the fixture below is named planted
from browser import chromium_page
from cli import hinter
from hinter.api import run as run_in_process
from hinter.report import write_report

# 200 reviews: English keeps a person's words only, and refuses a mutant whose pronouns or noun may be a named
# person's: 60 reviews left too few valid gender mutants for the planted bias to hold up
CAMPAIGN = ("run", "--dataset", "imdb", "--limit", "200", "-a", "gender,race", "--max-pairs-per-text", "2")


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    out = tmp_path_factory.mktemp("findings") / "planted"
    r = hinter(*CAMPAIGN, "-m", "python:planted:female_negative", "-o", str(out))
    return r, out


def test_a_planted_bias_is_a_significant_finding_toward_the_right_label(planted):
    r, out = planted
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    # the person's gender: an occupational pair's cell (manager -> cashier) is apart, and no woman is named there
    female = [f for f in s["findings"] if f["kind"] == "atomic" and f["components"][0]["target_group"] == "female"
              and not f["components"][0].get("occupational")]
    assert female and all(f["significant"] and f["toward"] == "negative" for f in female), female
    assert s["significant_findings"] >= len(female)
    assert "Findings that hold up" in r.stdout and "to negative" in r.stdout
    for f in s["findings"]:
        assert {"kind", "components", "tested", "flips", "transitions", "toward", "effect", "effect_ci", "p_value",
                "q_value", "significant"} <= set(f)
        if f["kind"] == "intersectional":
            assert {"interaction", "interaction_ci", "interaction_q", "population_hidden"} <= set(f)
    gate = hinter("check", str(out), "--fail-on", "significant_findings>0")
    assert gate.returncode == 1 and "significant_findings" in gate.stderr


def test_a_model_blind_to_people_yields_flips_but_no_finding(tmp_path):
    out = tmp_path / "null"
    r = hinter(*CAMPAIGN, "-m", "python:planted:by_hash", "-o", str(out))
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["totals"]["atomic"]["biased"] > 10  # the paper's oracle reports every flip as a bias...
    assert s["significant_findings"] == 0        # ...but none holds up as a finding
    assert "none" in r.stdout.split("Findings that hold up")[1].splitlines()[0]


def test_the_report_shows_which_findings_hold_up_in_chromium(planted, tmp_path):
    """The report's findings section in Debian's Chromium: the significant cells with their direction in words,
    the count tied to summary.json; a failed model's run leads with a warning."""
    r, out = planted
    s = json.loads((out / "summary.json").read_text())
    failed = tmp_path / "failed"
    assert hinter(*CAMPAIGN, "--limit", "3", "-m", "python:planted:failing", "-o", str(failed)).returncode == 3
    with chromium_page() as (page, _, _):
        page.goto((out / "report.html").resolve().as_uri())
        section = page.locator('[data-testid="findings"]')
        assert section.locator('[data-measure="significant_findings"]').first.inner_text() == \
            str(s["significant_findings"])
        rows = section.locator('[data-testid="finding"]')
        assert rows.count() == s["significant_findings"]
        female = [rows.nth(i).inner_text() for i in range(rows.count()) if "male → female" in rows.nth(i).inner_text()]
        assert female and all("toward negative" in t and "negative" in t for t in female), female
        assert page.locator('[data-testid="health"]').count() == 0
        section.screenshot(path=str(tmp_path / "findings.png"))
        page.goto((failed / "report.html").resolve().as_uri())
        assert "the model failed" in page.locator('[data-testid="health"]').inner_text()


def test_a_planted_bias_has_its_cohens_h_in_summary_json_and_the_report(parser, tmp_path):
    """A short in-process run of python:planted:female_negative (a woman named: negative; else 80% positive by a
    hash of the text): the gender finding's cohens_h in summary.json is negative (less often positive), the h of
    the originals' share to the mutants' (none positive: h = -2 asin sqrt(-effect)), and the report shows it."""
    things = ("film", "house", "dog", "car", "boat", "song", "play", "book", "shop", "city", "park", "game")
    texts = [f"The white man liked the {thing}. It was fine." for thing in things]
    r = run_in_process(texts, planted_models.female_negative, attributes=("gender", "race"), order=1,
                       dictionary=planted_models.DIC, parser=parser, out=tmp_path / "run")
    write_report(r.out_dir)
    s = json.loads((r.out_dir / "summary.json").read_text())
    assert s["findings_analysis"]["label"] == "positive"
    female = [f for f in s["findings"] if f["components"][0]["target_group"] == "female"]
    assert len(female) == 1 and female[0]["significant"], female
    f = female[0]
    assert f["direction"] == "less often positive" and f["effect"] < 0 and f["cohens_h"] < 0
    assert f["cohens_h"] == pytest.approx(-2 * math.asin(math.sqrt(-f["effect"])), abs=1e-5)
    for other in s["findings"]:  # every finding's size has its effect's sign (0 where nothing moved)
        assert other["cohens_h"] * other["effect"] > 0 or other["cohens_h"] == other["effect"] == 0, other

    class Sizes(HTMLParser):
        cells, inside = [], False

        def handle_starttag(self, tag, attrs):
            self.inside = ("data-testid", "cohens-h") in attrs

        def handle_data(self, data):
            if self.inside:
                self.cells.append(data)
                self.inside = False

    page = Sizes()
    page.feed((r.out_dir / "report.html").read_text())
    assert f"h = {f['cohens_h']:+.2f}" in page.cells and len(page.cells) == s["significant_findings"]
