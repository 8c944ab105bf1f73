"""Why a mutant was discarded: each reason on a hand case (real spaCy), and per combination on a real campaign."""
import json
import sqlite3
import sys
from pathlib import Path

import hinter
from hinter.validity import ReferenceValidator, Validator, changed_sentences
from hinter.validity.invariant import DEPS, INFLECTION, POS, SELF_COMPARISON, SENTENCE_COUNT

sys.path.insert(0, str(Path(__file__).parent))
import planted  # noqa: E402

ORIGINAL = "The man loved his dog. He was Muslim."
HAND = {
    "The man loved her dog. He was Muslim.": None,             # tags and labels kept: valid
    "The man loved him dog. He was Muslim.": POS,              # "him" for "his": a tag changes (Figure 3)
    "The man loved his dog. He was Christian.": DEPS,          # same tags, acomp -> attr
    "The man loved his dog. Then. He was Muslim.": SENTENCE_COUNT,
    # both sentences fail: the engine stops at the first failing one, the reference loop names the first too
    "The man loved him dog. He was Christian.": POS,
}


def test_each_reason_on_a_hand_case(parser):
    mutants = list(HAND)
    v = Validator(parser)
    assert v.reasons([changed_sentences(ORIGINAL, m) for m in mutants]) == list(HAND.values())
    # cached verdicts keep their reason
    assert v.reasons([changed_sentences(ORIGINAL, m) for m in mutants]) == list(HAND.values())
    assert v.validate([changed_sentences(ORIGINAL, m) for m in mutants]) == [r is None for r in HAND.values()]
    assert ReferenceValidator(parser).reasons_text(ORIGINAL, mutants) == list(HAND.values())


def test_reasons_summed_equal_discarded_on_a_real_campaign(parser, imdb_texts, tmp_path):
    run = hinter.run(imdb_texts[:12], planted.intersectional, attributes=("gender", "race"), order=2, parser=parser,
                     out=tmp_path)
    s = json.loads((tmp_path / "summary.json").read_text())
    seen = set()
    for kind in ("atomic", "intersectional"):
        for combo, m in list(s[kind].items()) + [("all", s["totals"][kind])]:
            assert sum(m["discarded_by"].values()) == m["discarded"], (kind, combo)
            seen.update(m["discarded_by"])
    # inflection: an English pronoun whose person the mutant may leave (issue 40); self_comparison: a group compared
    # with itself
    assert s["totals"]["atomic"]["discarded"] > 0 and {POS, DEPS} <= seen <= {POS, DEPS, SENTENCE_COUNT, INFLECTION,
                                                                               SELF_COMPARISON}
    db = sqlite3.connect(tmp_path / "run.sqlite")
    # stored per mutant: a reason for every discarded one, none for the valid ones
    assert db.execute("SELECT COUNT(*) FROM mutants WHERE (valid = 0) != (discard_reason IS NOT NULL)").fetchone() == (0,)
    rows = {(m.text_id, m.order, m.attributes, m.text): m for m in run.store.mutants()}
    for (tid, _, _, text), m in rows.items():
        if m.changed_sentences is None:
            assert m.discard_reason == SENTENCE_COUNT
        else:
            assert (m.discard_reason is None) == m.valid
    # a store written before reasons existed: its discarded mutants count as unrecorded, still summing up
    db.execute("UPDATE mutants SET discard_reason = NULL")
    db.commit()
    again = run.summary()
    assert again["totals"]["atomic"]["discarded_by"] == {"unrecorded": again["totals"]["atomic"]["discarded"]}
    # the page shows them per combination; the CLI table too
    from hinter.cli.campaign import print_summary
    from hinter.report import write_report
    write_report(tmp_path, summary_=s)
    page = (tmp_path / "report.html").read_text()
    assert "Why changed texts were discarded" in page
    assert f'data-measure="totals.atomic.discarded_by.pos"' not in page  # per combination rows, not totals
    combo = next(iter(s["atomic"]))
    for r, n in s["atomic"][combo]["discarded_by"].items():
        assert f'data-measure="atomic.{combo}.discarded_by.{r}" data-value="{n}"' in page
    from rich.console import Console
    import hinter.cli.campaign as campaign
    console = Console(record=True, width=200)
    old, campaign.out_console = campaign.out_console, console
    try:
        print_summary(s, tmp_path, 1.0)
    finally:
        campaign.out_console = old
    text = console.export_text()
    assert "discarded by" in text and f"pos {s['totals']['atomic']['discarded_by']['pos']}" in text


def test_a_group_compared_with_itself_is_discarded_for_that_reason_by_a_real_run(parser, tmp_path):
    # "Women ... than men" -> "Men ... than men" (and back): decided at mutation, in every language
    run = hinter.run(["Women are paid less than men in this company.", "The woman was happy with the service."],
                     planted.intersectional, attributes=("gender",), order=1, parser=parser, out=tmp_path)
    by_text = {}
    for m in run.store.mutants():
        by_text.setdefault(m.text_id, []).append(m)
    assert {m.discard_reason for m in by_text[0]} == {SELF_COMPARISON}
    assert SELF_COMPARISON not in {m.discard_reason for m in by_text[1]}
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["totals"]["atomic"]["discarded_by"][SELF_COMPARISON] == len(by_text[0])
