"""The audit as one system with the run (issue 39 items 4-5, issue 41 faults 4, 5, 11): the published summary's
fields in audit.json, audit.csv and the page; the CSVs through the project's writer (no formula reaches a
spreadsheet); the page from the Jinja templates (autoescaped, opened in chromium); `hinter check`, `compare` and
`report` on audit folders; a model that answers nothing in a category; a full disk during a rerun."""
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import planted_audit as planted
from browser import chromium_page
from hinter.audit import audit
from hinter.errors import InputError
from hinter.records import TextRecord
import cli

HERE = Path(__file__).parent
SCRIPT = "<script>window.pwned = 1</script>"
FORMULA_ID = '=HYPERLINK("http://evil.example","x")'
MODEL = """
def rejects_black_women(texts):
    return ["Negative" if "Black woman" in t else "Positive" for t in texts]

def fair(texts):
    return ["Positive" for t in texts]

def silent_for_asian(texts):
    # answers nothing a task can read for every rendering in an Asian category
    return ["" if "Asian" in t else "Positive" for t in texts]
"""
SUMMARY = {"auditor": "Fair Audits LLC <b>", "distribution_date": "2026-01-15",
           "data_description": "@SUM(A1) 20 applications written for the clerk openings", "employer": "Acme Corp",
           "tool_name": "Screener", "tool_version": "2.1", "job_category": "Clerical",
           "data_period": "2025-01-01 to 2025-12-31", "test_data_reason": "The tool has no history yet."}


def texts():
    """The planted applications, one with a formula as its id, one beginning like a formula, one holding markup."""
    apps = planted.applications()[:6]
    out = [TextRecord(t, FORMULA_ID if i == 0 else sid) for i, (sid, t) in enumerate(apps)]
    # second, so that it is among the twins the page shows
    out.insert(1, TextRecord(f"The woman applied for the cook position. {SCRIPT} She has 4 years of experience.",
                             "markup"))
    out.append(TextRecord("-1 The man applied for the driver position. He has 9 years of experience.", "minus"))
    return out


def write_data(path: Path) -> Path:
    path.write_text("".join(json.dumps({"id": r.source_id, "text": r.text}) + "\n" for r in texts()),
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def folders(tmp_path_factory, parser):
    """Three audits of the same texts: a biased model with the summary given, a fair one, one silent in a
    category."""
    root = tmp_path_factory.mktemp("audits")
    (root / "audited.py").write_text(MODEL)
    sys.path.insert(0, str(root))
    try:
        import audited
        results = {}
        for name, model, summary in (("biased", audited.rejects_black_women, SUMMARY), ("fair", audited.fair, None),
                                     ("silent", audited.silent_for_asian, None)):
            results[name] = audit(texts(), model, task="imdb", favourable="Positive", out=root / name, parser=parser,
                                  bootstrap=300, permutations=300, summary=summary)
    finally:
        sys.path.remove(str(root))
    return root, results


def hinter(root: Path, *args, timeout=300):
    return cli.hinter(*args, cwd=root, pythonpath=(root, HERE), timeout=timeout)


def test_no_cell_of_the_audits_csvs_is_a_formula(folders):
    """Issue 41 fault 5: renderings.csv holds dataset ids and texts, audit.csv the user's description: both through
    the project's CSV writer, so a cell beginning with =, +, -, @ is text to a spreadsheet."""
    root, _ = folders
    with open(root / "biased" / "renderings.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    ids = {r["source_id"] for r in rows}
    assert "'" + FORMULA_ID in ids and FORMULA_ID not in ids
    assert any(r["text"].startswith("'-1 The man") for r in rows if r["source_id"] == "minus")
    for r in rows:
        for value in r.values():
            assert not value.startswith(("=", "+", "@")), value
            assert not value.startswith("-") or value.lstrip("-").replace(".", "").isdigit(), value
    with open(root / "biased" / "audit.csv", newline="", encoding="utf-8") as f:
        cells = [v for r in csv.DictReader(f) for v in r.values()]
    assert "'" + SUMMARY["data_description"] in cells and SUMMARY["data_description"] not in cells


def test_the_published_summary_is_in_the_json_the_csv_and_the_page(folders):
    root, results = folders
    s = results["biased"]["summary"]
    assert {k: s[k] for k in SUMMARY} == SUMMARY and s["data_type"] == "test data" and s["missing"] == []
    assert json.loads((root / "biased" / "audit.json").read_text())["summary"] == s
    with open(root / "biased" / "audit.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert all(r["auditor"] == SUMMARY["auditor"] and r["distribution_date"] == "2026-01-15" and
               r["data_type"] == "test data" and r["job_category"] == "Clerical" for r in rows)
    page = (root / "biased" / "audit.html").read_text()
    for key in ("distribution_date", "employer", "tool_version", "data_period", "test_data_reason"):
        assert SUMMARY[key] in page, key
    assert "Fair Audits LLC &lt;b&gt;" in page and "Fair Audits LLC <b>" not in page  # autoescaped
    # an audit without them says what a published summary still lacks, and the tool is the model's spec
    fair = results["fair"]["summary"]
    assert fair["missing"] == ["--auditor", "--distribution-date", "--data-description", "--test-data-reason"]
    assert fair["tool_name"] is not None
    assert "--distribution-date" in (root / "fair" / "audit.html").read_text()
    with pytest.raises(InputError) as e:
        audit(texts(), planted.rejects_black_women, task="imdb", favourable="Positive", out=root / "never",
              summary={"distribution_date": "15/01/2026"})
    assert "--distribution-date" in e.value.message and "YYYY-MM-DD" in e.value.message
    assert not (root / "never").exists()


def test_applicants_stand_beside_renderings_and_the_page_reads_as_the_rule_does(folders):
    """n counts renderings (a sex: texts x 7 races); `applicants` counts the texts. The EU section says the
    observed tables infer race and sex from the texts; the names note lists only races with first names."""
    root, results = folders
    r = results["biased"]
    rendered = r["counts"]["rendered"]
    sex = {x["category"]: x for x in r["tables"]["sex"]}
    assert sex["female"]["n"] == rendered * 7 and sex["female"]["applicants"] == rendered
    assert all(x["applicants"] == rendered for x in r["tables"]["intersectional"])
    assert all(x["applicants"] == x["n"] for x in r["observed"]["tables"]["race"])
    page = (root / "biased" / "audit.html").read_text()
    assert "applicants (texts)</th>" in page and "renderings</th>" in page
    assert "not processed" not in page and "infer the race/ethnicity" in page
    own = page.split("With first names of their own (")[1].split(")")[0]
    assert "White" in own and "Asian" not in own  # BBQ's Asian list has last names only
    assert "With last names only (Asian)" in page


def test_scoring_tables_are_headed_scoring_rate(tmp_path, parser):
    result = audit(texts()[:4], planted.scored_ignores_identity, task="imdb", favourable="Positive",
                   out=tmp_path / "o", parser=parser, bootstrap=100, permutations=100)
    assert "scoring" in result
    page = (tmp_path / "o" / "audit.html").read_text()
    scoring = page[page.index("<h2>Scoring rates</h2>"):page.index("example twins")]
    assert "<th>scoring rate</th>" in scoring and "selection rate" not in scoring


def test_a_model_silent_in_a_category_is_a_stated_limitation_not_a_traceback(folders):
    """Issue 41 fault 4: every Asian rendering unanswered left no text in every category; the command ended in
    KeyError: 'intersectional' after writing part of its outputs."""
    root, results = folders
    r = results["silent"]
    assert r["counts"]["rendered"] == 0 and r["tables"] == {"sex": [], "race": [], "intersectional": []}
    rendered = results["biased"]["counts"]["rendered"]  # the texts the renderer keeps (7 of 8)
    assert r["counts"]["unanswered_renderings"] == {"female / Asian": rendered, "male / Asian": rendered}
    assert "No text was answered in every category" in r["limitations"][0] and "female / Asian" in r["limitations"][0]
    assert "No text was answered in every category" in (root / "silent" / "audit.html").read_text()
    done = hinter(root, "audit", "--dataset", write_data(root / "apps.jsonl"), "--model",
                  "python:audited:silent_for_asian", "--task", "imdb", "--favourable", "Positive", "--out",
                  root / "silent-cli")
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and "no text was answered in every category" in done.stderr
    assert {p.name for p in (root / "silent-cli").glob("audit*")} == {"audit.json", "audit.csv", "audit.html"}
    # a gate on it gives no verdict
    gated = hinter(root, "check", root / "silent-cli", "--junit", root / "silent.xml")
    assert gated.returncode == 3 and "has no table" in gated.stderr
    assert "<error" in (root / "silent.xml").read_text()


def test_check_gates_an_audit_folder(folders):
    root, results = folders
    biased = hinter(root, "check", root / "biased", "--junit", root / "biased.xml")
    assert biased.returncode == 1, biased.stderr
    assert "biased>0" in biased.stderr and "female / Black or African American" in biased.stderr
    junit = (root / "biased.xml").read_text()
    assert 'classname="hinter.audit.intersectional" name="female / Black or African American">\n    <failure' in junit
    assert junit.count("<failure") == 1 + sum(  # each cell that holds up, and the `audit` case of the condition
        x["four_fifths"] and x["p_value"] <= 0.05 for t in ("sex", "race", "intersectional")
        for x in results["biased"]["tables"][t])
    fair = hinter(root, "check", root / "fair", "--junit", root / "fair.xml")
    assert fair.returncode == 0, fair.stderr
    assert "<failure" not in (root / "fair.xml").read_text()
    # the run's --fail-on syntax reads the audit's measures
    low = hinter(root, "check", root / "fair", "--fail-on", "intersectional.*.impact_ratio<0.9")
    assert low.returncode == 0
    low = hinter(root, "check", root / "biased", "--fail-on", "lowest_impact_ratio<0.5")
    assert low.returncode == 1 and "lowest_impact_ratio = 0.0" in low.stderr


def test_compare_puts_two_audits_side_by_side(folders):
    root, _ = folders
    done = hinter(root, "compare", root / "biased", root / "fair", "--out", root / "cmp")
    assert done.returncode == 0, done.stderr
    assert "1. " in done.stdout and "2. " in done.stdout and "biased" in done.stdout and "fair" in done.stdout
    c = json.loads((root / "cmp" / "compare.json").read_text())
    row = next(r for r in c["tables"]["intersectional"] if r["category"] == "female / Black or African American")
    assert [x["impact_ratio"] for x in row["audits"]] == [0.0, 1.0]
    assert [x["four_fifths"] for x in row["audits"]] == [True, False]
    html = (root / "cmp" / "compare.html").read_text()
    assert "Audits compared" in html and "under 4/5" in html
    mixed = hinter(root, "compare", root / "biased", root / "nowhere")
    assert mixed.returncode == 2 and "Traceback" not in mixed.stderr


def test_report_on_an_audit_folder_points_to_its_page(folders):
    root, _ = folders
    done = hinter(root, "report", root / "fair")
    assert done.returncode == 2 and "audit.html" in done.stderr and "Traceback" not in done.stderr
    assert not (root / "fair" / "report.html").exists() and not (root / "fair" / "summary.json").exists()


def test_the_audit_page_in_chromium_shows_markup_as_text(folders):
    root, _ = folders
    path = root / "biased" / "audit.html"
    html = path.read_text()
    assert SCRIPT not in html and "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    with chromium_page(1300) as (page, requests, errors):
        page.goto(path.resolve().as_uri())
        assert page.evaluate("typeof window.pwned") == "undefined"  # never run
        assert SCRIPT in page.locator("body").inner_text()  # shown as text
        assert page.locator('[data-testid="summary"] [data-field="auditor"] td').inner_text() == SUMMARY["auditor"]
        flagged = page.locator('table[data-design="counterfactual"] tr.flag')
        assert flagged.count() >= 1
        assert "female / Black or African American" in flagged.all_inner_texts()[-1]
        assert errors == [] and requests == [path.resolve().as_uri()]


def _mount_tmpfs(where: Path, size: str) -> None:
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs for a real full disk here ({done.stderr.strip() or 'not root'})")


def _fill(folder: Path, keep: int) -> None:
    """Fill the disk of `folder` until `keep` bytes are left."""
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    with open(folder.parent / "filler", "wb") as f:
        f.write(b"\0" * max(0, free - keep))


def test_a_full_disk_during_a_rerun_leaves_the_previous_outputs_whole(tmp_path):
    """Issue 41 fault 11, on a real full disk (a 6 MB tmpfs): the rerun fails (exit 2, the disk named), and the
    four outputs are the first audit's, byte for byte; no temporary file is left."""
    mnt = tmp_path / "disk"
    _mount_tmpfs(mnt, "6m")
    try:
        (mnt / "audited.py").write_text(MODEL)
        data = write_data(mnt / "apps.jsonl")

        def run(*args):
            return hinter(mnt, "audit", "--dataset", data, "--model", "python:audited:rejects_black_women", "--task",
                          "imdb", "--favourable", "Positive", "--out", mnt / "out", *args)
        first = run("--auditor", "First")
        assert first.returncode == 0, first.stderr
        names = ("audit.json", "audit.csv", "renderings.csv", "audit.html")
        before = {n: (mnt / "out" / n).read_bytes() for n in names}
        assert sum(len(b) for b in before.values()) > 75_000
        # room for run.sqlite's session (its -shm file and a few pages: about 40 KB), not for the four outputs
        _fill(mnt / "out", keep=64_000)
        second = run("--auditor", "Second, whose name makes every output differ")
        assert second.returncode == 2, second.stderr
        assert "disk is full" in second.stderr and "Traceback" not in second.stderr
        assert "run.sqlite" not in second.stderr.split("disk is full")[0], second.stderr  # the outputs failed
        assert {n: (mnt / "out" / n).read_bytes() for n in names} == before
        assert not [p.name for p in (mnt / "out").iterdir() if p.name.endswith(".tmp")]
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_write_set_on_a_full_disk_keeps_every_old_file(tmp_path):
    """files.write_set itself: the third file does not fit, so none of the three is replaced."""
    from hinter.files import write_set
    mnt = tmp_path / "disk"
    _mount_tmpfs(mnt, "1m")
    try:
        old = {mnt / n: f"old {n}\n" for n in ("a.json", "b.csv", "c.html")}
        write_set(old)
        with pytest.raises(OSError) as e:
            write_set({mnt / "a.json": "new\n", mnt / "b.csv": "new\n", mnt / "c.html": "x" * (2 << 20)})
        assert e.value.errno == 28  # ENOSPC
        assert {p: p.read_text() for p in old} == old
        assert sorted(p.name for p in mnt.iterdir()) == ["a.json", "b.csv", "c.html"]
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
