"""`hinter serve` (issue 16) on a real planted-model run: the API (in-process, Starlette's TestClient), then the live
server (uvicorn, a subprocess on a free loopback port) in Debian's chromium: a finding side by side, try a sentence,
triage kept across a restart and honoured by `hinter check`, dataset text escaped; and the triage arithmetic."""
import datetime as dt
import json
import signal
import sys
from pathlib import Path

import pytest

from hinter.analysis import triage

import cli
from browser import chromium_page
from cli import serve

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

TEXTS = [
    "A white man walked into the shop. The film was fine.",
    "A white boy and a man met. They talked for hours.",
    "The white man sang well. I liked it.",
    "A white man walked in. The sign said <script>window.pwned = 1</script> and more.",
    "Nothing to see here. The plot was thin.",
    "The black man sang well. I liked it.",  # man -> woman alone flips it: an atomic bias
]
DIC = ("attribute,source_group,target_group,word,replacement\ngender,male,female,man,woman\n"
       "gender,male,female,boy,girl\nrace,european,african,white,black\nrace,european,asian,white,asian\n")
TOKEN = "test-token"


def hinter(*args, **kw):
    return cli.hinter(*args, timeout=300, **kw)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A run of the planted model that flips only for a black woman (a hidden intersectional bias)."""
    root = tmp_path_factory.mktemp("serve")
    (root / "d.jsonl").write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    (root / "dic.csv").write_text(DIC)
    r = hinter("run", "--dataset", str(root / "d.jsonl"), "--dictionary", str(root / "dic.csv"), "--attributes",
               "race,gender", "--model", "python:planted:intersectional", "--out", str(root / "run"))
    assert r.returncode == 0, r.stderr
    return root / "run"


@pytest.fixture(scope="module")
def client(run_dir, parser):
    from starlette.testclient import TestClient

    from hinter.serve.app import create_app
    return TestClient(create_app([run_dir], token=TOKEN, parser=parser), base_url="http://127.0.0.1")


AUTH = {"X-Hinter-Token": TOKEN}


# ---------------------------------------------------------------- the API

def test_try_a_sentence_marks_the_planted_hidden_bias(client):
    r = client.post("/api/try", headers=AUTH, json={"text": "A white man met a boy.", "attributes": ["race", "gender"],
                                                     "order": 2})
    assert r.status_code == 200, r.text
    j = r.json()
    assert j["original"]["outcome"] == "positive"
    by_text = {m["text"]: m for m in j["mutants"]}
    assert {"order", "replacements", "text", "valid", "discard_reason", "outcome", "bias", "hidden"} <= set(
        j["mutants"][0])
    hidden = [m for m in j["mutants"] if m["hidden"]]
    assert [m["text"] for m in hidden] == ["A black woman met a boy."]
    assert by_text["A black woman met a boy."]["outcome"] == "negative" and hidden[0]["bias"] is True
    assert by_text["A white woman met a boy."]["bias"] is False and by_text["A black man met a boy."]["bias"] is False
    m = hidden[0]
    assert [m["text"][a:b] for a, b in m["marks"]] == ["black", "woman"]


@pytest.mark.parametrize("body, status, words", [
    (b"{not json", 400, "not valid JSON"),
    (b"[1, 2]", 400, "JSON object"),
    (json.dumps({"text": "   ", "attributes": ["race"], "order": 1}).encode(), 400, "empty"),
    (json.dumps({"text": "A white man.", "attributes": ["religion"], "order": 1}).encode(), 400,
     "unknown attribute 'religion'"),
    (json.dumps({"text": "A white man.", "attributes": ["race"], "order": 3}).encode(), 400, "order"),
    (json.dumps({"text": "A white man. " * 500, "attributes": ["race"], "order": 1}).encode(), 413, "over the limit"),
    (b"x" * 70000, 413, "KiB"),
])
def test_bad_requests_get_clear_4xx_errors(client, body, status, words):
    r = client.post("/api/try", headers={**AUTH, "Content-Type": "application/json"}, content=body)
    assert r.status_code == status and words in r.json()["error"], r.text
    assert client.get("/api/runs").status_code == 200  # the server goes on


def test_an_order_error_says_what_to_send(client):
    r = client.post("/api/try", headers=AUTH, json={"text": "A white man.", "attributes": ["race", "gender"], "order": 5})
    assert r.status_code == 400 and "from 1 to 2" in r.json()["error"]
    assert '"order" from 1' in r.json()["fix"] and "attributes" in r.json()["fix"]


def test_writes_need_the_token(client, run_dir):
    inst = client.get("/api/instances").json()["instances"][0]
    for headers in ({}, {"X-Hinter-Token": "wrong"}):
        r = client.post("/api/triage", headers=headers, json={"mutant_id": inst["mutant_id"], "verdict": "confirmed"})
        assert r.status_code == 403 and "token" in r.json()["error"]
        assert client.post("/api/try", headers=headers, json={"text": "A man."}).status_code == 403
    assert not (run_dir / "triage.json").exists()
    assert client.post("/api/triage", headers=AUTH, json={"mutant_id": 10 ** 6, "verdict": "confirmed"}).status_code == 404
    r = client.post("/api/triage", headers=AUTH, json={"mutant_id": inst["mutant_id"], "verdict": "not_bias"})
    assert r.status_code == 400 and "reason" in r.json()["error"]
    r = client.post("/api/triage", headers=AUTH, json={"mutant_id": inst["mutant_id"], "verdict": "confirmed",
                                                        "expires": "next week"})
    assert r.status_code == 400 and "expiry" in r.json()["error"]
    # a page of another site reaching the server through DNS rebinding names another host: refused
    assert client.get("/api/runs", headers={"Host": "evil.example:8000"}).status_code == 400


def test_filters_and_explain(client):
    every = client.get("/api/instances").json()
    hidden = client.get("/api/instances", params={"hidden": "1"}).json()
    assert 0 < hidden["total"] < every["total"] and all(i["hidden"] for i in hidden["instances"])
    combo = client.get("/api/instances", params={"combination": "gender"}).json()
    assert combo["total"] and all(i["attributes"] == "gender" for i in combo["instances"])
    group = client.get("/api/instances", params={"group": "race:african"}).json()
    assert group["total"] == sum(any(r["target_group"] == "african" for r in i["replacements"])
                                 for i in every["instances"])
    inst = hidden["instances"][0]
    e = client.get("/api/explain", params={"mutant_id": inst["mutant_id"], "component": 0}).json()
    assert e["reason"] is None and e["sentences"][0]["tags"][0]["status"] == "same"


def test_align_walks_algorithm_4():
    from hinter.serve.explain import align
    from hinter.validity import tolerant_compare
    cases = [("DT JJ NN VBD", "DT JJ NN VBD"), ("DT JJ NN VBD", "DT NN VBD"), ("DT NN", "DT JJ JJ NN"),
             ("DT NN VBD", "DT VB VBD"), ("NN", "VB JJ")]
    for a, b in cases:
        a, b = a.split(), b.split()
        rows = align(a, b)
        errors = sum(r["status"] in ("mismatch", "extra") for r in rows)
        assert (errors <= abs(len(a) - len(b))) == tolerant_compare(a, b), (a, b, rows)
        assert sorted(r["a"] for r in rows if r["a"] is not None) == list(range(len(a)))
        assert sorted(r["b"] for r in rows if r["b"] is not None) == list(range(len(b)))


# ---------------------------------------------------------------- triage arithmetic

def test_gated_summary_leaves_dismissed_instances_out():
    b = [triage.Bias(0, "g & r1", "gender+race", 2, True, False, "gender:m>f & race:e>a"),
         triage.Bias(1, "g & r1", "gender+race", 2, True, False, "gender:m>f & race:e>a"),
         triage.Bias(1, "g", "gender", 1, None, None, "gender:m>f")]
    today = dt.date(2030, 1, 1)
    v = [triage.parse_verdict({"text_id": 0, "pair_key": "g & r1", "verdict": "not_bias", "reason": "idiom"}),
         triage.parse_verdict({"finding": "gender:m>f", "verdict": "confirmed"}),
         triage.parse_verdict({"text_id": 1, "pair_key": "g & r1", "verdict": "not_bias", "reason": "x",
                               "expires": "2029-12-31"})]
    t = triage.section(b, v, today)
    assert (t["reviewed"], t["confirmed"], t["dismissed"], t["expired"]) == (2, 1, 1, 1)
    assert t["precision"] == 0.5 and t["precision_ci"][0] < 0.5 < t["precision_ci"][1]
    combo = {"order": 2, "tested": 10, "biased": 2, "hidden": 2, "error_rate": 0.2}
    s = {"intersectional": {"gender+race": dict(combo)}, "atomic": {},
         "totals": {"intersectional": dict(combo), "atomic": {"order": 1, "tested": 5, "biased": 1}},
         "originals_with_bias": {"count": 2, "of_originals_with_valid_mutants": 4}, "findings": [],
         "significant_findings": 0, "population_hidden": 0, "triage": t}
    g = triage.gated(s)
    assert g["intersectional"]["gender+race"]["biased"] == 1 and g["totals"]["intersectional"]["hidden"] == 1
    assert g["totals"]["intersectional"]["error_rate"] == 0.1 and g["originals_with_bias"]["count"] == 1
    assert s["totals"]["intersectional"]["biased"] == 2  # the summary itself is left as it is


# ---------------------------------------------------------------- the live server in chromium

def _stop(p) -> str:
    p.send_signal(signal.SIGINT)  # Ctrl-C
    rest = p.stderr.read()
    assert p.wait(timeout=30) == 0, rest
    return rest


def test_serve_in_chromium(run_dir, tmp_path):
    summary = json.loads((run_dir / "summary.json").read_text())
    hidden = summary["totals"]["intersectional"]["hidden"]
    assert hidden >= 2
    gate = f"hidden>{hidden - 2}"
    assert hinter("check", str(run_dir), "--fail-on", gate).returncode == 1  # fails before the triage
    if (run_dir / "triage.json").exists():
        (run_dir / "triage.json").unlink()
    requests, errors = [], []
    p, url = serve(run_dir)
    try:
        with chromium_page() as (page, requests, errors):
            page.goto(url)
            # a finding: the original, each attribute alone and together, side by side
            page.select_option("#f-hidden", "1")
            card = page.locator("article.inst:visible").first
            versions = card.locator(".ver")
            assert versions.count() == 4
            boxes = [versions.nth(i).bounding_box() for i in range(4)]
            assert len({round(b["y"]) for b in boxes}) == 1 and [b["x"] for b in boxes] == sorted(b["x"] for b in boxes)
            assert "white man" in versions.nth(0).inner_text().lower()
            assert "black woman" in versions.nth(3).inner_text().lower()
            assert card.locator(".ver.mut .pill.flip").inner_text() == "negative"
            page.select_option("#f-combo", "gender")
            assert page.locator("article.inst:visible").count() == 0  # hidden and atomic: none
            page.select_option("#f-combo", "")
            # try a sentence: its mutants, the planted hidden bias marked
            page.fill("#try-text", "A white man met a boy in the park.")
            page.click("#try-go")
            page.wait_for_selector(".try-row")
            marked = page.locator('.try-row[data-hidden="1"]')
            assert marked.count() == 1 and "A black woman met a boy" in marked.inner_text()
            assert marked.locator(".badge.hidden").count() == 1
            # triage two hidden instances as not a bias
            shown = page.locator("article.inst:visible")
            ids = [shown.nth(i).get_attribute("data-id") for i in range(2)]
            for i in ids:
                c = page.locator(f'article.inst[data-id="{i}"]')
                c.locator(".tri-reason").fill("the planted model's rule, not a bias")
                c.locator(".tri-dismiss").click()
                # (the page's policy forbids eval: waits use locators, not wait_for_function)
                page.locator(f'article.inst[data-id="{i}"][data-triage="not_bias"]').wait_for()
            assert page.locator("#tr-dismissed").inner_text() == "2"
            # a <script> in a dataset text stays text
            page.select_option("#f-hidden", "")
            page.fill("#f-search", "window.pwned")
            assert "<script>window.pwned = 1</script>" in page.locator("article.inst:visible").first.inner_text()
            assert page.evaluate("typeof window.pwned") == "undefined"
            assert "Stopped." in _stop(p)
            saved = json.loads((run_dir / "triage.json").read_text())["verdicts"]
            assert len(saved) == 2 and all(v["verdict"] == "not_bias" for v in saved)
            # a restart finds them kept
            p, url = serve(run_dir)
            page.goto(url)
            page.locator('article.inst[data-triage="not_bias"]').nth(1).wait_for(state="attached")
            kept = {page.locator('article.inst[data-triage="not_bias"]').nth(i).get_attribute("data-id")
                    for i in range(2)}
            assert kept == set(ids)
            assert "Not a bias" in page.locator(f'article.inst[data-id="{ids[0]}"] .tri-state').inner_text()
            page.screenshot(path=str(tmp_path / "serve.png"), full_page=True)
    finally:
        if p.poll() is None:
            _stop(p)
    assert not errors, errors
    assert all(u.startswith(("http://127.0.0.1:", "data:", "about:")) for u in requests), requests  # no outside request
    # the gate passes only because of the dismissal
    ok = hinter("check", str(run_dir), "--fail-on", gate)
    assert ok.returncode == 0 and "2 biases dismissed" in ok.stderr, ok.stderr
    report = hinter("report", str(run_dir))
    assert report.returncode == 0, report.stderr
    assert 'data-measure="triage.dismissed"' in (run_dir / "report.html").read_text()
    assert json.loads((run_dir / "summary.json").read_text())["triage"]["dismissed"] == 2
