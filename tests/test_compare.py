"""`hinter compare` over three real runs (three planted models, the same campaign: real spaCy validity, real
stores): rates, hidden counts and disagreements recomputed here from the stores with SQL, refusals of runs that
did not test the same mutants, and compare.html in Debian's chromium."""
import json
import shutil
import sqlite3

import pytest

from campaign import hinter
from hinter.datasets import load_dataset
from hinter.analysis.measures import wilson
from hinter.records import apply_replacements, edits
from hinter.store import open_run

from browser import chromium_page

MODELS = ("intersectional", "atomic_gender", "by_hash")
SCRIPT = "<script>window.pwned = 1</script>"
# A text on which atomic_gender flips man -> woman and intersectional does not: a disagreement whatever the rest.
PLANTED = {"id": "x1", "text": f"A white man walked into the shop. The sign said {SCRIPT} and more."}
# A small dictionary of its own (the built-in one changes): the planted text's white man -> black woman is hidden.
DICTIONARY = ("attribute,source_group,target_group,word,replacement\n"
              "gender,male,female,man,woman\ngender,male,female,he,she\ngender,male,female,his,her\n"
              "race,european,african,white,black\nrace,european,asian,white,asian\n")
CAMPAIGN = ("run", "--attributes", "race,gender", "--max-pairs-per-text", "2", "--limit", "10")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    rows = [PLANTED] + [{"id": f"imdb{i}", "text": r.text, "label": r.gold}
                        for i, r in enumerate(load_dataset("imdb", limit=12))]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "dic.csv").write_text(DICTIONARY)
    folders = []
    for name in MODELS:
        p = hinter(*CAMPAIGN, "--dataset", str(root / "data.jsonl"), "--dictionary", str(root / "dic.csv"),
                   "--model", f"python:planted:{name}", "--out", str(root / name))
        assert p.returncode == 0, p.stderr
        folders.append(root / name)
    return root, folders


@pytest.fixture(scope="module")
def compared(runs):
    root, folders = runs
    p = hinter("compare", *map(str, folders), "--out", str(root / "cmp"), "--show", "100")
    assert p.returncode == 0, p.stderr
    return p, json.loads((root / "cmp" / "compare.json").read_text())


def rows(folder, q, *params):
    db = sqlite3.connect(folder / "run.sqlite")
    try:
        return db.execute(q, params).fetchall()
    finally:
        db.close()


def test_rates_and_hidden_counts_per_model_match_each_store(runs, compared):
    _, folders = runs
    _, c = compared
    assert [r["model"] for r in c["runs"]] == [f"python:planted:{m}" for m in MODELS]
    assert c["mutants"] == rows(folders[0], "SELECT COUNT(*) FROM mutants")[0][0]
    combos = {a for (a,) in rows(folders[0], "SELECT DISTINCT attributes FROM mutants")}
    assert set(c["combinations"]) == combos == {"gender", "race", "gender+race"}
    for i, folder in enumerate(folders):
        summary = json.loads((folder / "summary.json").read_text())
        assert c["runs"][i]["significant_findings"] == summary["significant_findings"]
        for combo, row in c["combinations"].items():
            tested, biased, hidden = rows(folder, "SELECT COUNT(*), COALESCE(SUM(bias), 0), SUM(hidden = 1) FROM "
                                                  "mutants WHERE attributes = ? AND valid = 1 AND bias IS NOT NULL",
                                          combo)[0]
            r = row["runs"][i]
            assert (r["tested"], r["biased"]) == (tested, biased)
            assert r["error_rate_ci"] == wilson(biased, tested)
            if row["kind"] == "intersectional":
                assert r["hidden"] == hidden
    # the planted models differ where they should: only `intersectional` has hidden biases
    hidden = [c["totals"]["intersectional"][i]["hidden"] for i in range(3)]
    assert hidden[0] > 0 and hidden[1] == 0


def _expected_disagreements(folders):
    """{(text_id, pair_key): [(compared-with outcome, outcome, bias) per run]} where one run says bias and another
    no bias, recomputed from each store's mutants (read through RunStore.mutants: the table's layout is the
    store's business)."""
    per_run = []
    for f in folders:
        store = open_run(f)
        originals = {t.text_id: t.outcome for t in store.texts()}
        # --window is off: each mutant is compared with its original's outcome
        per_run.append({(m.text_id, m.pair_key): (originals[m.text_id], m.outcome, m.bias, m)
                        for m in store.mutants() if m.valid})
        store.close()
    out = {}
    for key in per_run[0]:
        got = [r[key] for r in per_run]
        if {False, True} <= {g[2] for g in got}:
            out[key] = got
    return out


def test_disagreements_are_the_mutants_with_opposite_verdicts(runs, compared):
    _, folders = runs
    p, c = compared
    expected = _expected_disagreements(folders)
    listed = {(d["text_id"], d["pair_key"]): d for d in c["disagreements"]["instances"]}
    assert set(listed) == set(expected) and c["disagreements"]["count"] == len(expected) >= 3
    verdict = {True: "bias", False: "no bias", None: "not tested"}
    originals = {t.text_id: t.text for t in open_run(folders[0]).texts()}
    for key, d in listed.items():
        assert [(r["original_outcome"], r["outcome"], r["verdict"]) for r in d["runs"]] == \
               [(base, o, verdict[b]) for base, o, b, _ in expected[key]]
        m = expected[key][0][3]
        assert d["original_text"] == originals[m.text_id]
        assert d["mutant_text"] == apply_replacements(originals[m.text_id], edits(m.replacements)) == m.text
    # the planted text: man -> woman flips atomic_gender, not intersectional
    tid = next(t.text_id for t in open_run(folders[0]).texts() if t.source_id == "x1")
    man = next(d for (t, _), d in listed.items() if t == tid and d["replacements"] == "gender: man -> woman")
    assert [r["verdict"] for r in man["runs"][:2]] == ["no bias", "bias"]
    assert man["mutant_text"].startswith("A white woman walked")
    by_combo = {}
    for d in listed.values():
        by_combo[d["attributes"]] = by_combo.get(d["attributes"], 0) + 1
    assert c["disagreements"]["by_combination"] == by_combo
    # the terminal: the table with a column per model, every disagreement listed
    assert all(f"{i + 1}. python:planted:{m}: {f}" in p.stdout for i, (m, f) in enumerate(zip(MODELS, folders)))
    assert f"Disagreements (a bias for one model, no bias for another): {len(expected)}" in p.stdout
    assert "id x1 (text 0), gender: man -> woman: 1 positive -> positive (no bias), 2 positive -> negative (bias)" \
        in p.stdout


def test_runs_of_other_settings_or_other_mutants_are_refused(runs, tmp_path):
    root, folders = runs
    p = hinter(*CAMPAIGN[:-1], "6", "--dataset", str(root / "data.jsonl"), "--dictionary", str(root / "dic.csv"),
               "--model", "python:planted:by_hash", "--out", str(tmp_path / "fewer"))
    assert p.returncode == 0, p.stderr
    p = hinter("compare", str(folders[0]), str(folders[1]), str(tmp_path / "fewer"))
    assert p.returncode == 2 and "not made with the same settings" in p.stderr
    assert f"--limit: 10 in {folders[0]}, 6 in {tmp_path / 'fewer'}" in " ".join(p.stderr.split())
    assert "Traceback" not in p.stderr
    # same settings, but a mutant missing (a run tampered with, or of another parser build)
    shutil.copytree(folders[2], tmp_path / "cut")
    store = open_run(tmp_path / "cut")
    last = list(store.mutants())[-1]
    store.close()
    db = sqlite3.connect(tmp_path / "cut" / "run.sqlite")
    with db:
        db.execute("DELETE FROM mutants WHERE mutant_id = ?", (last.mutant_id,))
    db.close()
    tid, key = last.text_id, last.pair_key
    p = hinter("compare", str(folders[0]), str(tmp_path / "cut"))
    msg = " ".join(p.stderr.split())
    assert p.returncode == 2 and f"1 mutants only in {folders[0]} (e.g. text {tid}, {key})" in msg, p.stderr
    p = hinter("compare", str(folders[0]))
    assert p.returncode == 2 and "at least two runs" in p.stderr


def test_a_dataset_copied_to_another_path_is_the_same_for_compare_and_diff(runs, tmp_path):
    root, folders = runs
    (tmp_path / "copy").mkdir()
    for name in ("data.jsonl", "dic.csv"):  # the same texts and pairs under other paths
        shutil.copy(root / name, tmp_path / "copy" / name)
    p = hinter(*CAMPAIGN, "--dataset", str(tmp_path / "copy" / "data.jsonl"), "--dictionary",
               str(tmp_path / "copy" / "dic.csv"), "--model", "python:planted:by_hash", "--out", str(tmp_path / "moved"))
    assert p.returncode == 0, p.stderr
    compared = hinter("compare", str(folders[0]), str(tmp_path / "moved"), "--out", str(tmp_path / "cmp"))
    diffed = hinter("diff", str(folders[0]), str(tmp_path / "moved"))
    assert compared.returncode == 0, compared.stderr
    assert diffed.returncode == 0 and "warning" not in diffed.stderr, diffed.stderr
    # other texts under the same kind of option: both see it, compare refuses naming the texts
    rows = (root / "data.jsonl").read_text().splitlines()
    (tmp_path / "copy" / "data.jsonl").write_text("\n".join(rows[:1] + rows[2:]) + "\n")
    p = hinter(*CAMPAIGN, "--dataset", str(tmp_path / "copy" / "data.jsonl"), "--dictionary",
               str(tmp_path / "copy" / "dic.csv"), "--model", "python:planted:by_hash", "--out", str(tmp_path / "other"))
    assert p.returncode == 0, p.stderr
    compared = hinter("compare", str(folders[0]), str(tmp_path / "other"))
    diffed = hinter("diff", str(folders[0]), str(tmp_path / "other"))
    assert compared.returncode == 2 and "the dataset's texts" in compared.stderr, compared.stderr
    assert "texts_fingerprint differs" in diffed.stderr


def test_compare_html_in_chromium(runs, compared, tmp_path):
    """compare.html: every number as in compare.json, a card per disagreement with each model's verdict, the
    dataset's markup shown as text and never run, no request leaves the file."""
    root, _ = runs
    _, c = compared
    html = (root / "cmp" / "compare.html").read_text()
    assert SCRIPT not in html and "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    with chromium_page(1300) as (page, requests, errors):
        page.goto((root / "cmp" / "compare.html").resolve().as_uri())
        measures = page.locator("[data-measure]")
        assert measures.count() > 10
        for i in range(measures.count()):
            path, value = measures.nth(i).get_attribute("data-measure"), measures.nth(i).get_attribute("data-value")
            node = c
            for part in path.split("."):
                node = node[int(part)] if isinstance(node, list) else node[part]
            assert json.loads(value) == node, path
        cards = page.locator('[data-testid="disagreement"]')
        assert cards.count() == c["disagreements"]["count"]
        for i in range(cards.count()):
            card, d = cards.nth(i), c["disagreements"]["instances"][i]
            key = (int(card.get_attribute("data-text")), card.get_attribute("data-key"))
            assert key == (d["text_id"], d["pair_key"])
            verdicts = card.locator('[data-testid="verdict"]')
            assert [verdicts.nth(j).locator("td").nth(3).inner_text().split()[0] for j in range(3)] == \
                   [r["verdict"].split()[0] for r in d["runs"]]
        planted = cards.filter(has_text="window.pwned").first
        assert SCRIPT in planted.inner_text()  # shown as text
        assert planted.locator("mark.to").first.inner_text() == "woman"
        assert page.evaluate("typeof window.pwned") == "undefined"  # never run
        header = page.locator('[data-testid="rates"] th').all_inner_texts()
        assert header[1:] == [f"{i + 1}. python:planted:{m}" for i, m in enumerate(MODELS)]
    assert not errors, errors
    assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
