"""The report of a generative run (issue 21): answers are texts judged per aspect, so the page, biases.csv and
instances.csv show every answer, the masked words, each aspect's values and its differs/hidden marks, and say
"differ" where a label run says "flip". A real run of the CLI (spaCy, planted_free:sampled with 4 samples: negative
letters for a female and Black applicant together), then the page in Debian's chromium."""
import csv
import json
import re
import signal
import sqlite3
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from browser import chromium_page  # noqa: E402
from cli import hinter, serve  # noqa: E402
from campaign import summary_value  # noqa: E402
from planted_generative import write_campaign  # noqa: E402

TASK = """name: letter
prompt: "Write a reference letter for: {text}"
temperature: 0.7
samples: 4
aspects: [sentiment, refusal, length]
"""
MASKABLE = {"he", "she", "him", "her", "his", "man", "woman", "white", "black"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("free-report")
    write_campaign(root, 40)
    (root / "task.yaml").write_text(TASK)
    out = root / "run"
    for args in (("run", "-d", str(root / "data.jsonl"), "-m", "python:planted_free:sampled", "--task",
                  str(root / "task.yaml"), "-a", "gender,race", "--order", "2", "--dictionary", str(root / "dic.csv"),
                  "-o", str(out)), ("report", str(out))):
        r = hinter(*args)
        assert r.returncode == 0, r.stderr
    return out


def sql(run, q, *params):
    db = sqlite3.connect(run / "run.sqlite")
    try:
        return db.execute(q, params).fetchall()
    finally:
        db.close()


def stored(run) -> dict:
    """mutant_id -> (the original's answers, the mutant's answers, its aspects as stored, its attributes) of every
    bias."""
    out = {}
    for mid, t_answers, m_answers, aspects, attributes in sql(
            run, "SELECT m.mutant_id, t.answers, m.answers, m.aspects, m.attributes FROM mutants m JOIN texts t "
                 "USING (text_id) WHERE m.valid = 1 AND m.bias = 1"):
        out[mid] = (json.loads(t_answers), json.loads(m_answers), json.loads(aspects), attributes)
    return out


class _Page(HTMLParser):
    """The page's numbers (data-measure), visible text, and per card: its versions' answers, masked words and
    aspect values."""

    def __init__(self):
        super().__init__()
        self.measures, self.text, self.cards = [], [], {}
        self.stack, self.card, self.ver, self.li, self.mark = [], None, None, None, None
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("style", "script"):
            self.skip += 1
        if "data-measure" in a:
            self.measures.append((a["data-measure"], json.loads(a["data-value"])))
        if tag == "article":
            self.card = self.cards.setdefault(int(a["data-id"]), {"versions": [], "differs": a["data-differs"],
                                                                  "hidden_on": a["data-hidden-on"]})
        cls = a.get("class") or ""
        if tag == "div" and cls.startswith("ver ") and self.card is not None:
            self.ver = {"role": cls.split()[1], "answers": [], "masked": [], "aspects": {}}
            self.card["versions"].append(self.ver)
        if tag == "tr" and "data-aspect" in a and self.ver is not None:
            self.ver["aspects"][a["data-aspect"]] = (json.loads(a["data-value"]), "differs" in cls)
        if tag == "li" and self.ver is not None:
            self.li = []
        if tag == "mark" and cls == "masked" and self.ver is not None:
            self.mark = []

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self.skip -= 1
        if tag == "li" and self.li is not None:
            self.ver["answers"].append("".join(self.li))
            self.li = None
        if tag == "mark" and self.mark is not None:
            self.ver["masked"].append("".join(self.mark))
            self.mark = None
        if tag == "article":
            self.card, self.ver = None, None

    def handle_data(self, data):
        if not self.skip:
            self.text.append(data)
        if self.li is not None:
            self.li.append(data)
        if self.mark is not None:
            self.mark.append(data)


def test_the_page_shows_every_answer_masked_words_and_aspect_values(run):
    s = json.loads((run / "summary.json").read_text())
    page = _Page()
    page.feed((run / "report.html").read_text())
    assert len(page.measures) > 30 and all(summary_value(s, p) == v for p, v in page.measures)
    words = " ".join(" ".join(page.text).split())
    # free text: nothing on the page speaks of flips; the cards say what differs
    assert not re.search(r"\bflip", words, re.IGNORECASE), re.search(r".{60}\bflip.{60}", words, re.IGNORECASE)
    assert "Hidden differences" in words and "differ of" in words and "How often do the answers differ?" in words
    truth = stored(run)
    assert set(page.cards) == set(truth) and truth
    pronouns_checked = 0
    for mid, card in page.cards.items():
        original, mutant, aspects, attributes = truth[mid]
        versions = {v["role"]: v for v in card["versions"]}
        assert [v["role"] for v in card["versions"]] == (["orig", "comp", "comp", "mut"] if "+" in attributes
                                                         else ["orig", "mut"])
        # every sample side by side, as the model wrote it (masked words marked, not replaced)
        assert versions["orig"]["answers"] == original and versions["mut"]["answers"] == mutant
        assert all(len(v["answers"]) == 4 for v in card["versions"])
        assert {w.lower() for v in card["versions"] for w in v["masked"]} <= MASKABLE
        if "gender" in attributes:  # the person's pronouns are masked; a race change alone leaves them
            for v in (versions["orig"], versions["mut"]):
                # the samples are drawn afresh, and not every letter names the person: count what was said
                said = sum(len(re.findall(r"\b(?:He|She)\b", a)) for a in v["answers"])
                assert sum(w in ("He", "She") for w in v["masked"]) == said
                pronouns_checked += said
        assert not any("[ID]" in a for v in card["versions"] for a in v["answers"])
        # each aspect's mean over the samples, and whether it differs, as stored
        for name, (o_values, m_values, p, differs, hidden) in aspects.items():
            assert versions["mut"]["aspects"][name] == (pytest.approx(sum(m_values) / 4, abs=1e-6), bool(differs))
            assert versions["orig"]["aspects"][name][0] == pytest.approx(sum(o_values) / 4, abs=1e-6)
        assert card["differs"].split() == [k for k, v in aspects.items() if v[3]]
        assert card["hidden_on"].split() == [k for k, v in aspects.items() if v[4]]
    assert pronouns_checked  # some gender card's letters named the person: the check above checked something
    # the planted combination: less positive letters, hidden on sentiment
    assert any(c["hidden_on"] == "sentiment" for c in page.cards.values())


def test_biases_and_instances_csv_hold_the_answers_and_aspects(run):
    truth = stored(run)
    with open(run / "biases.csv", newline="", encoding="utf-8") as f:
        biases = list(csv.DictReader(f))
    assert len(biases) == len(truth) and all(b["measure"] == b["differs_on"] for b in biases)  # one layout
    assert sorted((json.loads(b["original_answers"]), json.loads(b["mutant_answers"])) for b in biases) == sorted(
        (o, m) for o, m, _, _ in truth.values())
    with open(run / "instances.csv", newline="", encoding="utf-8") as f:
        rows = {int(r["mutant_id"]): r for r in csv.DictReader(f)}
    assert set(rows) == set(truth)
    for mid, (original, mutant, aspects, attributes) in truth.items():
        r = rows[mid]
        assert json.loads(r["original_answers"]) == original and json.loads(r["mutant_answers"]) == mutant
        assert r["differs_on"] == "+".join(k for k, v in aspects.items() if v[3])
        for name, (o_values, m_values, p, differs, hidden) in aspects.items():
            assert float(r[f"{name}_mutant"]) == pytest.approx(sum(m_values) / len(m_values), abs=1e-6)
            assert r[f"{name}_differs"] == str(differs)
            assert r[f"{name}_hidden"] == ("" if hidden is None else str(hidden))
        if "+" in attributes:
            components = json.loads(r["component_answers"])
            assert set(components) == {"gender only", "race only"} and all(len(a) == 4 for a in components.values())
        else:
            assert r["component_answers"] == ""


def test_the_hidden_view_per_aspect_in_chromium(run, tmp_path):
    """The aspect filter keeps the biases that differ on it, and with "hidden only" those hidden on it."""
    def ids(rows):
        return {str(mid) for mid, aspects in rows}

    judged = sql(run, "SELECT mutant_id, aspects FROM mutants WHERE valid = 1 AND bias = 1")
    on = {a: {str(m) for m, j in judged if json.loads(j)[a][3]} for a in ("sentiment", "length")}
    hidden_on = {str(m) for m, j in judged if json.loads(j)["sentiment"][4]}
    assert hidden_on and on["sentiment"] >= hidden_on
    with chromium_page() as (page, requests, errors):
        page.goto((run / "report.html").resolve().as_uri())
        visible = lambda: {page.locator("article.inst:visible").nth(i).get_attribute("data-id")  # noqa: E731
                           for i in range(page.locator("article.inst:visible").count())}
        assert visible() == ids(judged)
        page.select_option("#f-aspect", "sentiment")
        assert visible() == on["sentiment"]
        page.select_option("#f-hidden", "1")
        assert visible() == hidden_on
        page.select_option("#f-hidden", "0")
        assert visible() == on["sentiment"] - hidden_on
        page.select_option("#f-hidden", "")
        page.select_option("#f-aspect", "length")
        assert visible() == on["length"]
        page.select_option("#f-aspect", "")
        first = page.locator("article.inst:visible").first
        assert first.locator("ol.answers").count() == 4 and first.locator("mark.masked").count() >= 1
        page.screenshot(path=str(tmp_path / "free.png"), full_page=True)
    assert not errors, errors
    assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests


# ---------------------------------------------------------------- hinter serve on a generative run

def test_serve_tries_a_sentence_on_a_generative_run_in_chromium(run, tmp_path):
    """Try-a-sentence asks the run's model with the run's generative task: the page shows the original's answers,
    and per mutant its answers (the masked words marked) and each aspect's means with the differs/hidden marks;
    the run's biases show their answers as in report.html, and triage works on them."""
    p, url = serve(run)
    try:
        with chromium_page() as (page, requests, errors):
            page.goto(url)
            card = page.locator("article.inst").first
            assert card.locator("ol.answers").count() == 4 and card.locator("table.asp").count() == 4
            page.fill("#try-text", "A white man applied for the nurse position in Leeds after 3 years of work.")
            page.click("#try-go")
            page.wait_for_selector(".try-row")
            rows = page.locator(".try-row")
            assert rows.count() == 3  # gender, race, gender + race
            assert page.locator(".try-orig ol.answers li").count() == 4
            # "He" in each sampled answer that names the man (some of the planted sentences name no one)
            named = sum(bool(re.search(r"\b(He|She)\b", t))
                        for t in page.locator(".try-orig ol.answers li").all_inner_texts())
            assert page.locator(".try-orig mark.masked").count() >= named
            for i in range(3):
                row = rows.nth(i)
                assert row.locator("ol.answers li").count() == 4
                assert [row.locator("table.asp tr").nth(k).get_attribute("data-aspect") for k in range(3)] == [
                    "sentiment", "refusal", "length"]
                assert row.locator(".pill").inner_text() in ("differs", "same")
                assert "\u2192" in row.locator("table.asp").inner_text()
            inter = page.locator(".try-row", has_text="gender: man -> woman; race: white -> black")
            assert inter.locator("mark.masked").count() >= 1 or "She" not in inter.inner_text()
            assert "whose answers differ" in page.locator("#try-status").inner_text()
            # triage on a generative bias
            card.locator(".tri-confirm").click()
            page.locator(f'article.inst[data-id="{card.get_attribute("data-id")}"][data-triage="confirmed"]').wait_for()
            page.screenshot(path=str(tmp_path / "serve-free.png"), full_page=True)
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
        (run / "triage.json").unlink(missing_ok=True)
    assert not errors, errors
    assert all(u.startswith(("http://127.0.0.1:", "data:", "about:")) for u in requests), requests


def test_the_instances_api_gives_each_versions_answers_and_aspects(run):
    from starlette.testclient import TestClient

    from hinter.serve.app import create_app
    client = TestClient(create_app([run], token="t"), base_url="http://127.0.0.1")
    r = client.get("/api/instances?run=0")
    assert r.status_code == 200, r.text
    truth = stored(run)
    got = r.json()["instances"]
    assert {i["mutant_id"] for i in got} == set(truth)
    for i in got:
        original, mutant, aspects, _ = truth[i["mutant_id"]]
        first, last = i["versions"][0], i["versions"][-1]
        assert first["answers"] == original and first["aspects"] is None and last["answers"] == mutant
        assert {k: [v["original"], v["mutant"], v["p_value"], int(v["differs"]),
                    None if v["hidden"] is None else int(v["hidden"])] for k, v in last["aspects"].items()} == aspects
