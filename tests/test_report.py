"""Measures, exports, report.html, the CI gate, the diff and attribution, on real runs (real parser, real store)
of models with planted biases; every number is recomputed here from the store with SQL."""
import csv
import json
import math
import re
import sqlite3
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

import hinter
from hinter.mutation.dictionary import Dictionary, Pair
from hinter.errors import InputError
from hinter.analysis.measures import attribution, verdicts, wilson
from hinter.report import write_report
from hinter.report.gate import evaluate, parse_condition, write_junit
from hinter.records import apply_replacements as rebuild, dictionary_replacements
from hinter.report.instances import load_instances
from hinter.testing import assert_no_bias

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import planted  # noqa: E402
from browser import chromium_page  # noqa: E402
from campaign import summary_value  # noqa: E402
from cli import hinter as cli  # noqa: E402

DIC = Dictionary(planted.PAIRS + (Pair("body", "young", "old", "young", "old"),), "planted-report")
TEXTS = planted.TEXTS + [
    "A white man walked into the shop. The sign said <script>window.pwned = 1</script> and more.",
]


@pytest.fixture(scope="module")
def run(parser, tmp_path_factory):
    r = hinter.run(TEXTS, planted.intersectional, attributes=("gender", "race"), order=2, dictionary=DIC,
                   parser=parser, out=tmp_path_factory.mktemp("inter"))
    write_report(r.out_dir)
    return r


@pytest.fixture(scope="module")
def run_b(parser, tmp_path_factory):
    return hinter.run(TEXTS, planted.atomic_gender, attributes=("gender", "race"), order=2, dictionary=DIC,
                      parser=parser, out=tmp_path_factory.mktemp("gender"))


def sql(run, q, *params):
    db = sqlite3.connect(run.out_dir / "run.sqlite")
    try:
        return db.execute(q, params).fetchall()
    finally:
        db.close()


# ---------------------------------------------------------------- measures

def test_wilson_interval_known_values():
    assert wilson(0, 0) is None
    lo, hi = wilson(5, 10)
    assert math.isclose(lo, 0.236593, abs_tol=1e-5) and math.isclose(hi, 0.763407, abs_tol=1e-5)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and math.isclose(hi, 0.277533, abs_tol=1e-5)
    assert wilson(10, 10)[1] == 1.0


def _tested_mutants(run):
    """(text_id, order, attributes, pair ids, target groups, bias, hidden) of every valid, answered mutant."""
    return [(m.text_id, m.order, m.attributes, tuple(m.pair_key.split(" & ")),
             tuple(r.target_group for r in dictionary_replacements(m.replacements)), int(m.bias), None if m.hidden is None else int(m.hidden))
            for m in run.store.tested_mutants()]


def test_rates_counts_and_intervals_match_the_store(run):
    s = json.loads((run.out_dir / "summary.json").read_text())
    assert s["schema_version"] == 2
    for kind in ("atomic", "intersectional"):
        for combo, m in s[kind].items():
            tested, biased = sql(run, "SELECT COUNT(*), SUM(bias) FROM mutants WHERE attributes = ? AND valid = 1 "
                                      "AND bias IS NOT NULL", combo)[0]
            assert (m["tested"], m["biased"]) == (tested, biased)
            assert m["error_rate_ci"] == wilson(biased, tested)
            assert m["error_rate_ci"][0] <= m["error_rate"] <= m["error_rate_ci"][1]
    hidden, biased = sql(run, "SELECT SUM(hidden = 1), SUM(bias = 1) FROM mutants WHERE ord >= 2 AND valid = 1")[0]
    t = s["totals"]["intersectional"]
    assert (t["hidden"], t["biased"]) == (hidden, biased) and hidden > 0
    assert t["hidden_rate_ci"] == wilson(hidden, biased)


def test_truth_table_matches_the_store(run):
    s = run.summary()
    tested = {(m[0], m[3]): m for m in _tested_mutants(run)}
    expected = {}
    for (tid, key), m in tested.items():
        if m[1] < 2:
            continue
        comps = [tested.get((tid, (p,))) for p in key]
        if all(comps):
            pattern = tuple(bool(c[5]) for c in comps) + (bool(m[5]),)
            expected.setdefault(m[2], {}).setdefault(pattern, 0)
            expected[m[2]][pattern] += 1
    for combo, t in s["truth_table"].items():
        assert len(t["rows"]) == 8
        got = {tuple(r["components"]) + (r["intersectional"],): r["count"] for r in t["rows"] if r["count"]}
        assert got == expected.get(combo, {})
        n = sql(run, "SELECT COUNT(*) FROM mutants WHERE attributes = ?", combo)[0][0]
        assert t["counted"] + t["left_out"] == n
        hidden_row = [r for r in t["rows"] if r["hidden"]]
        assert len(hidden_row) == 1 and hidden_row[0]["count"] == s["intersectional"][combo]["hidden"]


def test_group_bias_matches_the_store_and_flags_above_the_mean(run):
    s = run.summary()
    for tid, order, attrs, key, groups, bias, hidden in _tested_mutants(run):
        pass
    cells = {}
    for _, order, attrs, _, groups, bias, _ in _tested_mutants(run):
        c = cells.setdefault(("atomic" if order == 1 else "intersectional", attrs, "+".join(groups)), [0, 0])
        c[0] += 1
        c[1] += bias
    got = {(k, fam, g): [v["tested"], v["biased"]] for k, fams in s["group_bias"].items()
           for fam, f in fams.items() for g, v in f["groups"].items()}
    assert got == cells
    for fams in s["group_bias"].values():
        for f in fams.values():
            rates = [g["error_rate"] for g in f["groups"].values()]
            assert math.isclose(f["mean_error_rate"], sum(rates) / len(rates), abs_tol=1e-6)
            assert all(g["flagged"] == (g["error_rate"] > f["mean_error_rate"]) for g in f["groups"].values())
    # The planted bias is against black women: that intersectional group is flagged.
    assert s["group_bias"]["intersectional"]["gender+race"]["groups"]["female+african"]["flagged"]


def test_venn_and_originals_match_the_store(run):
    s = run.summary()
    kinds = {}
    for tid, order in sql(run, "SELECT DISTINCT text_id, ord > 1 FROM mutants WHERE valid = 1 AND bias = 1"):
        kinds.setdefault(tid, set()).add(order)
    v = s["originals_venn"]
    assert v["both"] == sum(k == {0, 1} for k in kinds.values())
    assert v["atomic_only"] == sum(k == {0} for k in kinds.values())
    assert v["intersectional_only"] == sum(k == {1} for k in kinds.values())
    assert s["originals_with_bias"]["count"] == len(kinds)


def test_attribution_hidden_biases_have_no_flipping_part(run):
    insts = [i for i in load_instances(run.store) if i.order >= 2]
    assert insts
    for i in insts:
        if i.hidden:
            assert i.attribution["flipped_by"] == [] and i.attribution["untested"] == 0
            assert i.flipped_by_text() == "none"
        for c in i.components:
            # a component is shown flipping exactly when the store says it is a bias
            assert c.bias == (c.valid and c.outcome != i.original.outcome) or c.outcome is None


def test_instances_read_the_attribution_the_measures_give(run):
    """The instances read only their biases' sub-combinations: each attribution is the one over every mutant."""
    by_key = verdicts(run.store)
    insts = [i for i in load_instances(run.store) if i.order >= 2]
    assert insts
    for i in insts:
        ids = tuple(r.pair_id for r in dictionary_replacements(i.replacements))
        assert i.attribution == attribution(by_key[(i.text_id, ids)], by_key)
        assert [c.bias for c in i.components] == [by_key[(i.text_id, (p,))].bias for p in ids]


def test_attribution_of_order_three_names_the_smallest_flipping_pair(parser, tmp_path):
    def pair_only(texts):  # flips with a woman and a black person together; age plays no part
        return planted.intersectional(texts)

    r = hinter.run(["A young white man came home. He was tired."], pair_only, attributes=("body", "gender", "race"),
                   order=3, dictionary=DIC, parser=parser, out=tmp_path)
    triples = [i for i in load_instances(r.store) if i.order == 3]
    assert triples, "no valid biased triple"
    for i in triples:
        assert i.hidden and not i.strictly_hidden
        assert i.attribution["size"] == 2
        assert [sorted(p.split(":")[0] for p in sub) for sub in i.attribution["flipped_by"]] == [["gender", "race"]]
    a = r.summary()["attribution"]["totals"]
    assert a["flipped_by_size"].get("2") == sum(1 for i in load_instances(r.store) if i.order == 3)


def test_false_positives_avoided_with_query_discarded(parser, tmp_path):
    # every occurrence: the invariant's discards here are race words on things ("a black car"), left alone otherwise
    r = hinter.run(TEXTS, planted.atomic_gender, attributes=("gender", "race"), dictionary=DIC, parser=parser,
                   out=tmp_path, query_discarded=True, person_only=False)
    fp = r.summary()["false_positives_avoided"]
    assert fp["queried"]
    for kind, cond in (("atomic", "ord = 1"), ("intersectional", "ord > 1")):
        n, b = sql(r, f"SELECT COUNT(*), COALESCE(SUM(bias), 0) FROM mutants WHERE valid = 0 AND bias IS NOT NULL "
                      f"AND {cond}")[0]
        real = sql(r, f"SELECT COALESCE(SUM(bias), 0) FROM mutants WHERE valid = 1 AND {cond}")[0][0]
        assert (fp[kind]["discarded_tested"], fp[kind]["discarded_biased"], fp[kind]["valid_biased"]) == (n, b, real)
    assert sql(r, "SELECT COUNT(*) FROM mutants WHERE valid = 0 AND outcome IS NOT NULL")[0][0] > 0


# ---------------------------------------------------------------- exports and the page

def test_exports_hold_every_bias(run):
    n = sql(run, "SELECT COUNT(*) FROM mutants WHERE valid = 1 AND bias = 1")[0][0]
    with open(run.out_dir / "instances.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == n
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(run.out_dir / "instances.parquet").to_pylist()
    assert [r["mutant_id"] for r in table] == [int(r["mutant_id"]) for r in rows]
    hidden = sql(run, "SELECT mutant_id FROM mutants WHERE hidden = 1")
    assert {r["mutant_id"] for r in table if r["hidden"]} == {h for (h,) in hidden}


def test_instances_rebuild_the_stored_texts(run):
    for i in load_instances(run.store):
        assert rebuild(i.original.text, i.mutant.edits) == i.mutant.text
        for c in i.components:
            assert rebuild(i.original.text, c.edits) == c.text


class _Measures(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found, self.scripts, self.cards = [], [], 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-measure" in a:
            self.found.append((a["data-measure"], json.loads(a["data-value"])))
        if tag == "script":
            self.scripts.append(a)
        if tag == "article":
            self.cards += 1


def test_every_number_on_the_page_is_the_summarys(run):
    page = (run.out_dir / "report.html").read_text()
    s = json.loads((run.out_dir / "summary.json").read_text())
    p = _Measures()
    p.feed(page)
    assert len(p.found) > 30
    for path, value in p.found:
        assert summary_value(s, path) == value, path
    assert p.cards == sql(run, "SELECT COUNT(*) FROM mutants WHERE valid = 1 AND bias = 1")[0][0]
    assert len(p.scripts) == 1 and not p.scripts[0]  # one inline script, nothing loaded
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page)
    assert "<script>window.pwned" not in page and "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in page


# ---------------------------------------------------------------- gate, JUnit, helper

def test_conditions_resolve_to_summary_paths(run):
    s = run.summary()
    assert parse_condition("intersectional.error_rate>0.05", s).path == "totals.intersectional.error_rate"
    assert parse_condition("hidden > 0", s).path == "totals.*.hidden"
    assert parse_condition("texts>=1", s).path == "texts"
    held = evaluate([parse_condition("hidden>0", s), parse_condition("atomic.error_rate>0.99", s)], s)
    assert [(c.text, p) for c, p, _ in held] == [("hidden>0", "totals.intersectional.hidden")]
    assert evaluate([parse_condition("intersectional.*.error_rate>0", s)], s)
    with pytest.raises(InputError, match="no measure"):
        parse_condition("intersectional.eror_rate>0", s)
    with pytest.raises(InputError, match="PATH OP NUMBER"):
        parse_condition("hidden is big", s)


def test_junit_has_one_case_per_combination(run, tmp_path):
    s = run.summary()
    write_junit(tmp_path / "j.xml", s, [parse_condition("hidden>0", s), parse_condition("texts>100", s)])
    cases = ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
    by_name = {c.get("name"): c for c in cases}
    assert set(by_name) == set(s["atomic"]) | set(s["intersectional"]) | {"run"}
    assert by_name["gender+race"].find("failure") is not None  # hidden > 0 there
    assert by_name["gender"].find("failure") is None and by_name["run"].find("failure") is None


def test_assert_no_bias(run):
    with pytest.raises(AssertionError, match="hidden>0"):
        assert_no_bias(run, fail_on=("hidden>0",))
    assert_no_bias(run.out_dir, fail_on=("intersectional.error_rate>0.99",))


def test_outputs_name_texts_by_the_datasets_own_id(parser, tmp_path):
    """biases.csv, instances.csv, the report's cards and the diff carry the dataset's id next to text_id; a text
    without an id is named by its text_id. Ids are escaped on the page."""
    from markupsafe import escape

    from hinter.report.diff import diff
    ids = [f"case-{i}" for i in range(len(TEXTS) - 1)] + ["<b>raw</b>"]
    records = [hinter.TextRecord(t, source_id=i) for t, i in zip(TEXTS, ids)]
    records[1] = hinter.TextRecord(TEXTS[1])  # no id: named by its position
    expected = {i: (r.source_id if r.source_id is not None else str(i)) for i, r in enumerate(records)}
    runs = {}
    for name, model in (("a", planted.atomic_gender), ("b", planted.intersectional)):
        runs[name] = hinter.run(records, model, attributes=("gender", "race"), order=2, dictionary=DIC,
                                parser=parser, out=tmp_path / name)
        write_report(runs[name].out_dir)
    out = runs["b"].out_dir
    for file in ("biases.csv", "instances.csv"):
        with open(out / file, newline="") as f:
            rows = list(csv.DictReader(f))
        assert rows and list(rows[0]).index("source_id") == list(rows[0]).index("text_id") + 1, file
        assert all(r["source_id"] == expected[int(r["text_id"])] for r in rows), file
        assert {r["source_id"] for r in rows} >= {"case-0", "case-2"}, file
    instances = load_instances(runs["b"].store)
    assert {i.source_id for i in instances} == {r["source_id"] for r in rows}
    page = (out / "report.html").read_text()
    for i in instances:
        shown = f"text #{i.text_id}" if i.source_id == str(i.text_id) else f"id {i.source_id} · text #{i.text_id}"
        assert f'<span class="tid">{escape(shown)}</span>' in page
    assert "id case-0 · text #0" in page and "<b>raw</b>" not in page
    assert "id &lt;b&gt;raw&lt;/b&gt; · text #5" in page
    d = diff(runs["a"].store, runs["b"].store)
    listed = [i for k in ("new", "fixed", "both") for i in d["instances"][k]]
    assert listed and all(i["source_id_a"] == expected[i["text_id_a"]] and i["source_id_b"] == expected[i["text_id_b"]]
                          for i in listed)
    shown = cli("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--show", "100")
    assert shown.returncode == 0, shown.stderr
    for i in d["instances"]["fixed"]:
        name = f"text {i['text_id_b']}" if i["source_id_b"] == str(i["text_id_b"]) else \
            f"id {i['source_id_b']} (text {i['text_id_b']})"
        assert f"Fixed in B: {name}, {i['replacements']}" in shown.stdout
    assert d["instances"]["fixed"] and "id case-0 (text 0)" in shown.stdout
    write_report(out, baseline=tmp_path / "a")
    page = (out / "report.html").read_text()
    written = json.loads((out / "diff.json").read_text())["instances"]
    assert {k: [i["source_id_b"] for i in v] for k, v in written.items()} == \
        {k: [i["source_id_b"] for i in v] for k, v in d["instances"].items()}
    assert all(f"(id {escape(i['source_id_b'])}, text #{i['text_id_b']}):" in page
               for i in listed if i["source_id_b"] != str(i["text_id_b"]))


# ---------------------------------------------------------------- command line

def test_cli_gate_junit_report_and_diff(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS[:3]))
    dic = tmp_path / "dic.csv"
    dic.write_text("attribute,source_group,target_group,word,replacement\n" + "".join(
        f"{p.attribute},{p.source_group},{p.target_group},{p.word},{p.replacement}\n" for p in DIC.pairs))
    common = ["--dataset", str(data), "--attributes", "race,gender", "--dictionary", str(dic)]
    b = cli("run", *common, "--model", "python:planted:intersectional", "--out", str(tmp_path / "b"),
            "--fail-on", "intersectional.error_rate>0.05", "--fail-on", "hidden>100", "--junit", str(tmp_path / "j.xml"))
    assert b.returncode == 1, b.stderr
    assert "FAIL intersectional.error_rate>0.05" in b.stderr and "hidden>100" not in b.stderr.split("FAIL")[-1]
    assert (tmp_path / "b" / "report.html").exists() and (tmp_path / "j.xml").exists()
    ok = cli("check", str(tmp_path / "b"), "--fail-on", "hidden>100")
    assert ok.returncode == 0 and "Gate passed" in ok.stderr
    bad = cli("check", str(tmp_path / "b"), "--fail-on", "hiden>0")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "hiden" in bad.stderr
    # A: a model biased against women alone; B: only against black women (some fixed, the rest in both, hidden)
    a = cli("run", *common, "--model", "python:planted:atomic_gender", "--out", str(tmp_path / "a"))
    assert a.returncode == 0, a.stderr
    d = cli("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--json", "-")
    assert d.returncode == 0, d.stderr
    got = json.loads(d.stdout)
    # Recomputed from both stores: mutants tested in both, keyed by text and pairs.
    rows = {}
    for side in ("a", "b"):
        db = sqlite3.connect(tmp_path / side / "run.sqlite")
        rows[side] = {(t, k): (bias, hidden) for t, k, bias, hidden in db.execute(
            "SELECT text_id, pair_key, bias, hidden FROM mutants WHERE valid = 1 AND bias IS NOT NULL")}
        db.close()
    both_keys = set(rows["a"]) & set(rows["b"])
    new = [k for k in both_keys if rows["b"][k][0] and not rows["a"][k][0]]
    fixed = [k for k in both_keys if rows["a"][k][0] and not rows["b"][k][0]]
    both = [k for k in both_keys if rows["a"][k][0] and rows["b"][k][0]]
    assert got["counts"]["new"] == len(new) and got["counts"]["fixed"] == len(fixed) > 0
    assert got["counts"]["both"] == len(both)
    assert got["counts"]["both_hidden"] == sum(bool(rows["a"][k][1] or rows["b"][k][1]) for k in both) > 0
    table = cli("diff", str(tmp_path / "a"), str(tmp_path / "b"))
    assert "new in B" in table.stdout and "fixed in B" in table.stdout
    rep = cli("report", str(tmp_path / "b"), "--baseline", str(tmp_path / "a"))
    assert rep.returncode == 0, rep.stderr
    assert 'id="diff"' in (tmp_path / "b" / "report.html").read_text()
    assert json.loads((tmp_path / "b" / "diff.json").read_text())["counts"] == got["counts"]


# ---------------------------------------------------------------- the page in a real browser

def test_report_in_chromium(run, tmp_path):
    """Open report.html in Debian's Chromium: headline numbers as in summary.json, filters, search, sorting,
    escaped dataset text, no request leaves the file, a screenshot."""
    s = json.loads((run.out_dir / "summary.json").read_text())
    hidden_ids = {str(i) for (i,) in sql(run, "SELECT mutant_id FROM mutants WHERE valid = 1 AND bias = 1 AND hidden = 1")}
    n_bias = sql(run, "SELECT COUNT(*) FROM mutants WHERE valid = 1 AND bias = 1")[0][0]
    with chromium_page() as (page, requests, errors):
        page.goto((run.out_dir / "report.html").resolve().as_uri())

        def card(testid):
            return page.locator(f'[data-testid="{testid}"] .card-value').inner_text().strip()

        t = s["totals"]
        assert card("texts") == str(s["texts"])
        assert card("atomic") == f"{100 * t['atomic']['error_rate']:.1f}%"
        assert card("intersectional") == f"{100 * t['intersectional']['error_rate']:.1f}%"
        assert card("hidden") == str(t["intersectional"]["hidden"])
        assert card("originals") == str(s["originals_with_bias"]["count"])
        reading = page.locator('[data-testid="reading"]').inner_text()
        # hidden instances are counted, but with no population-hidden finding the reading does not headline them
        assert s["population_hidden"] == 0
        assert (f"{t['intersectional']['hidden']} of the {t['intersectional']['biased']} intersectional flips fit the "
                "hidden pattern") in reading and "no combination holds up as population-hidden" in reading

        visible = lambda: page.locator("article.inst:visible")  # noqa: E731
        assert visible().count() == n_bias
        page.select_option("#f-hidden", "1")
        assert {visible().nth(i).get_attribute("data-id") for i in range(visible().count())} == hidden_ids
        assert "Showing" in page.locator("#f-count").inner_text()
        page.select_option("#f-hidden", "")
        page.select_option("#f-kind", "atomic")
        assert visible().count() == sql(run, "SELECT COUNT(*) FROM mutants WHERE valid = 1 AND bias = 1 AND ord = 1")[0][0]
        page.select_option("#f-kind", "")
        page.select_option("#f-group", "race:african")
        african = sum(any(r.attribute == "race" and r.target_group == "african" for r in i.replacements)
                      for i in load_instances(run.store))
        assert visible().count() == african > 0
        page.select_option("#f-group", "")
        page.fill("#f-search", "window.pwned")
        assert visible().count() >= 1
        assert "<script>window.pwned = 1</script>" in visible().first.inner_text()  # shown as text
        assert page.evaluate("typeof window.pwned") == "undefined"  # never run
        page.fill("#f-search", "")
        page.select_option("#f-sort", "text")
        ids = [int(visible().nth(i).get_attribute("data-text")) for i in range(visible().count())]
        assert ids == sorted(ids)
        page.select_option("#f-hidden", "1")
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20000
    assert not errors, errors
    assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
