"""`hinter audit --decisions`: recorded decisions whose rates are known exactly give the three tables, the 2% rule,
the unknown category with its values and the scoring rate; the command line and the files as the model's audit."""
import csv
import json
from pathlib import Path

import pytest

from hinter.audit.decisions import DecisionsInput, audit_decisions
from hinter.errors import InputError
import cli

HERE = Path(__file__).parent

# (sex, race, applicants, hired): 100 rows. Hired rows of a White applicant score 2, other hired rows 1, the rest 0
# (the sample's median is 1: exactly the 29 White hires score above it).
GROUPS = [("female", "White", 20, 12), ("Male", "white", 20, 16), ("F", "Black", 15, 6),
          ("male", "Black or African American", 15, 9), ("female", "Hispanic or Latino", 10, 5),
          ("M", "Hispanic", 10, 8), ("male", "Native Hawaiian or Other Pacific Islander", 1, 0),
          ("female", "Asian", 3, 0),
          ("", "White", 2, 1), ("<x>", "Black", 1, 0),  # unknown sex: empty twice, "<x>" once
          ("female", "", 1, 1), ("male", "Martian", 2, 0)]  # unknown race: empty once, "Martian" twice


def rows():
    out = []
    for sex, race, n, hired in GROUPS:
        for i in range(n):
            yes = i < hired
            out.append({"id": len(out), "gender": sex, "ethnicity": race, "decision": "Advanced" if yes else
                        "Rejected", "score": (2 if race.lower() == "white" else 1) if yes else 0})
    return out


def write_csv(path: Path) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, ["id", "gender", "ethnicity", "decision", "score"])
        w.writeheader()
        w.writerows(rows())
    return path


FIELDS = dict(sex_field="gender", race_field="ethnicity", selected_field="decision")


def by(rows_):
    return {r["category"]: r for r in rows_}


def test_recorded_decisions_give_the_tables_exactly_with_the_2_percent_rule_and_the_unknown_values(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    data = tmp_path / "decisions.parquet"
    pq.write_table(pa.Table.from_pylist(rows()), data)
    result = audit_decisions(DecisionsInput(str(data), score_field="score", **FIELDS), favourable="advanced",
                             out=tmp_path / "out")
    assert result["data_type"] == "historical" and result["counts"] == {"rows": 100, "selected": 58}
    sex = by(result["tables"]["sex"])
    assert (sex["female"]["n"], sex["female"]["selected"], sex["male"]["n"], sex["male"]["selected"]) == (49, 24,
                                                                                                        48, 33)
    assert sex["female"]["impact_ratio"] == pytest.approx((24 / 49) / (33 / 48), abs=1e-6)
    assert sex["female"]["four_fifths"] and sex["female"]["too_few"] is None
    race = by(result["tables"]["race"])
    assert (race["White"]["n"], race["White"]["selected"]) == (42, 29)
    assert (race["Black or African American"]["n"], race["Black or African American"]["selected"]) == (31, 15)
    assert race["Black or African American"]["impact_ratio"] == pytest.approx((15 / 31) / (29 / 42), abs=1e-6)
    assert race["Hispanic or Latino"]["impact_ratio"] == pytest.approx(0.65 / (29 / 42), abs=1e-6)
    # the 2% rule: one Hawaiian applicant of 100 rows stays in the table, out of the ratios, with the reason
    hawaiian = race["Native Hawaiian or Other Pacific Islander"]
    assert (hawaiian["n"], hawaiian["selected"], hawaiian["impact_ratio"]) == (1, 0, None)
    assert hawaiian["excluded"] == "under 2% of the data (1 of 100)"
    assert {"table": "race", "category": "Native Hawaiian or Other Pacific Islander",
            "reason": "under 2% of the data (1 of 100)"} in result["excluded"]
    inter = by(result["tables"]["intersectional"])
    assert inter["male / White"]["rate"] == 0.8 and inter["male / White"]["impact_ratio"] == 1.0
    assert inter["female / Black or African American"]["impact_ratio"] == pytest.approx(0.5)
    assert inter["male / Native Hawaiian or Other Pacific Islander"]["excluded"].startswith("under 2%")
    asian = inter["female / Asian"]
    assert (asian["n"], asian["impact_ratio"], asian["four_fifths"]) == (3, 0.0, True)
    assert asian["too_few"] == "too few: 3 applicants, under 5"
    # the unknown category: counted, and every value that made it unknown listed
    assert result["unknown"]["sex"] == {"count": 3, "values": {"(empty)": 2, "<x>": 1}}
    assert result["unknown"]["race"] == {"count": 3, "values": {"Martian": 2, "(empty)": 1}}
    assert result["unknown"]["intersectional"]["count"] == 6
    # the scoring rate: above the sample's median score (1), the White hires alone
    scoring = result["scoring"]
    assert scoring["median"] == 1.0
    s_race = by(scoring["tables"]["race"])
    assert (s_race["White"]["selected"], s_race["Black or African American"]["selected"]) == (29, 0)
    s_sex = by(scoring["tables"]["sex"])
    assert (s_sex["female"]["selected"], s_sex["male"]["selected"]) == (12, 16)
    # the files
    out = tmp_path / "out"
    assert json.loads((out / "audit.json").read_text())["tables"] == result["tables"]
    with open(out / "audit.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert {r["design"] for r in table} == {"historical", "scoring"} and len(table) == 2 * (2 + 7 + 14)
    assert next(r for r in table if r["category"] == "female / Asian" and r["design"] == "historical")[
        "too_few"] == "too few: 3 applicants, under 5"
    page = (out / "audit.html").read_text()
    assert "historical" in page and "&lt;x&gt;: 1" in page and "<x>" not in page
    assert "under 2% of the data (1 of 100)" in page and "Scoring rate: Sex" in page


def test_the_command_line_audits_a_decisions_file_and_names_what_is_wrong(tmp_path):
    data = write_csv(tmp_path / "decisions.csv")

    def hinter(*args):
        return cli.hinter("audit", "--decisions", data, "--out", tmp_path / "out", *args, timeout=300)
    ok = hinter("--sex-field", "gender", "--race-field", "ethnicity", "--selected-field", "decision",
                "--favourable", "Advanced")
    assert ok.returncode == 0, ok.stderr
    assert "100 applicants, 58 selected" in ok.stdout and "UNDER 4/5 (too few)" in ok.stdout
    result = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert result["manifest"]["data_type"] == "historical" and "scoring" not in result
    assert by(result["tables"]["race"])["White"]["selected"] == 29
    typo = hinter("--sex-field", "sex", "--race-field", "ethnicity", "--selected-field", "decision",
                  "--favourable", "Advanced")
    assert typo.returncode == 2 and "Traceback" not in typo.stderr
    assert "no column 'sex'" in typo.stderr and "line 2" in typo.stderr and "--sex-field" in typo.stderr
    wrong = hinter("--sex-field", "gender", "--race-field", "ethnicity", "--selected-field", "decision",
                   "--favourable", "Hired")
    assert wrong.returncode == 2 and "Advanced (58)" in wrong.stderr and "Rejected (42)" in wrong.stderr
    both = hinter("--sex-field", "gender", "--race-field", "ethnicity", "--selected-field", "decision",
                  "--favourable", "Advanced", "--model", "python:x:y")
    assert both.returncode == 2 and "--model cannot be given" in both.stderr


def test_a_decision_row_without_its_outcome_or_with_a_bad_score_names_the_line(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"g": "female", "r": "White", "d": "yes", "s": 3}) + "\n" +
                    json.dumps({"g": "male", "r": "White", "d": "", "s": 2}) + "\n")
    with pytest.raises(InputError, match=r"d\.jsonl, line 2: the decision \('d'\) is empty"):
        audit_decisions(DecisionsInput(str(data), "g", "r", "d"), favourable="yes", out=tmp_path / "o")
    data.write_text(json.dumps({"g": "female", "r": "White", "d": "yes", "s": "high"}) + "\n")
    with pytest.raises(InputError, match="line 1: the score .* not a number"):
        audit_decisions(DecisionsInput(str(data), "g", "r", "d", "s"), favourable="yes", out=tmp_path / "o")
    with pytest.raises(InputError, match="--decisions needs --race-field"):
        audit_decisions(DecisionsInput(str(data), "g", None, "d"), favourable="yes", out=tmp_path / "o")


def test_check_and_compare_read_an_audit_of_recorded_decisions(tmp_path):
    """An audit of recorded decisions counts decision rows, not texts: `hinter check` gates it (the Asian cells,
    none hired of 3, hold up, marked too few) and `hinter compare` sets it beside the audit after a fix."""
    def hinter(*args):
        return cli.hinter(*args, timeout=300)

    def audit(data, out):
        done = hinter("audit", "--decisions", data, "--out", out, "--sex-field", "gender", "--race-field",
                      "ethnicity", "--selected-field", "decision", "--favourable", "Advanced")
        assert done.returncode == 0, done.stderr

    audit(write_csv(tmp_path / "before.csv"), tmp_path / "before")
    fixed = [dict(r, decision="Advanced") if r["ethnicity"] == "Asian" else r for r in rows()]
    with open(tmp_path / "after.csv", "w", newline="") as f:
        w = csv.DictWriter(f, list(fixed[0]))
        w.writeheader()
        w.writerows(fixed)
    audit(tmp_path / "after.csv", tmp_path / "after")

    gated = hinter("check", tmp_path / "before", "--junit", tmp_path / "before.xml")
    assert gated.returncode == 1, gated.stderr
    assert "race Asian: impact ratio 0.000" in gated.stderr and "(too few: 3 applicants, under 5)" in gated.stderr
    assert "texts=100 rendered=100" in (tmp_path / "before.xml").read_text()
    assert hinter("check", tmp_path / "after").returncode == 0

    done = hinter("compare", tmp_path / "before", tmp_path / "after", "--out", tmp_path / "cmp")
    assert done.returncode == 0, done.stderr
    c = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert [a["data_type"] for a in c["audits"]] == ["historical", "historical"]
    assert [a["rendered"] for a in c["audits"]] == [100, 100]
    row = next(r for r in c["tables"]["race"] if r["category"] == "Asian")
    assert [x["impact_ratio"] for x in row["audits"]] == [0.0, 1.0]  # all 3 hired: the highest rate, the reference
    assert "(historical)" in (tmp_path / "cmp" / "compare.html").read_text()


def test_serve_lists_an_audit_and_serves_its_page(tmp_path):
    """`hinter serve AUDIT_DIR`: the audit is listed in /api/runs and on the page, and /audit shows its audit.html
    (in-process through Starlette's TestClient: the routes are what is tested, the server is test_serve's)."""
    from starlette.testclient import TestClient

    from hinter.serve.app import create_app
    audit_decisions(DecisionsInput(str(write_csv(tmp_path / "d.csv")), **FIELDS), favourable="Advanced",
                    out=tmp_path / "screener")
    client = TestClient(create_app([tmp_path / "screener"], token="t"), base_url="http://127.0.0.1")
    listed = client.get("/api/runs").json()
    assert listed["runs"] == [] and [a["name"] for a in listed["audits"]] == ["screener"]
    page = client.get(listed["audits"][0]["page"])
    assert page.status_code == 200 and page.text == (tmp_path / "screener" / "audit.html").read_text()
    assert "historical" in page.text and "default-src 'none'" in page.headers["Content-Security-Policy"]
    assert 'href="audit?audit=0">screener</a>' in client.get("/").text
    missing = client.get("/audit?audit=3")
    assert missing.status_code == 404 and missing.json()["error"] == "no audit 3: 1 served"
    assert client.get("/audit?audit=1e400").status_code == 400
