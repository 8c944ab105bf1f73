"""English mutant quality (issue 40 item 3): a seeded random sample of the kept mutants of campaigns on the bundled
review and legal samples, for a reader to label grammatical or not and right in meaning or not.

    python bench/mutant_quality.py draw VERSION [--out bench/data/english_quality_VERSION.jsonl] [--any-occurrence]
                                        [--held-out | --held-out2 | --held-out3 | --held-out5 | --held-out6 |
                                         --held-out7]
    python bench/mutant_quality.py sample before after [--n 240] [--csv bench/data/english_quality_sample.csv]
                                          [--held-out2 | --held-out3 | --held-out5 | --held-out6 | --held-out7]
    python bench/mutant_quality.py table [--csv bench/data/english_quality_sample.csv]

`draw` runs the campaigns with the hinter on PYTHONPATH (run it once on the commit before the change, once after):
the built-in dictionary, gender and race, atomic mutants, at most 2 pairs per text and attribute (seed 3), on imdb
(200 reviews), ledgar (200 clauses) and ecthr (63 cases); each mutant with its verdict (the invariant's,
or the mutation's own discard) and its changed sentences. `sample` draws the same seeded order of mutants for
both versions (a mutant's rank is a hash of its dataset, text and key) and keeps the first kept ones per dataset
(imdb 65%, ecthr 25%, ledgar 10%: ledgar has few) into one CSV; a row whose original and mutant sentences equal a row already
labelled keeps its label (labels survive a redraw). `label` columns: grammatical (1/0), meaning (1/0: the person
or group changed as the pair says, nothing else), error (what is wrong). `table` prints the precision (share
grammatical and right in meaning) per version, and the share of gender mutants kept, then by dataset.

Held-out sets (texts no rule's author read): `--held-out` (HELD_OUT), and `--held-out2` (HELD_OUT2: imdb 400-700,
ledgar 400-700, scotus 24-60, eurlex 0-60 from ../shared/data, and bench/data/english_texts_fresh.txt, 30 texts
written after the rules, one a line); `sample --held-out2` keeps every kept mutant of the fresh texts and spreads
the rest over imdb (half) and scotus, eurlex, ledgar (a sixth each, a short one's place taken by the others):

    python bench/mutant_quality.py draw held-out2 --held-out2
    python bench/mutant_quality.py sample held-out2 --held-out2 --n 210 --csv bench/data/english_quality_held_out2.csv
    python bench/mutant_quality.py table --csv bench/data/english_quality_held_out2.csv

`--held-out3` (HELD_OUT3: imdb 700-1200, ledgar 700-800, scotus 60-200, eurlex 60-120, and
bench/data/english_texts_fresh3.txt, 40 texts written before their author read the rules), drawn the same way:

    python bench/mutant_quality.py draw held-out3 --held-out3
    python bench/mutant_quality.py sample held-out3 --held-out3 --n 220 --csv bench/data/english_quality_held_out3.csv

`--held-out5` (HELD_OUT5: imdb 1200-1500, scotus 200-340, eurlex 120-180, and
bench/data/english_texts_fresh5.txt, 40 texts written by someone who did not read the rules), drawn the same way:

    python bench/mutant_quality.py draw held-out5 --held-out5
    python bench/mutant_quality.py sample held-out5 --held-out5 --n 200 --csv bench/data/english_quality_held_out5.csv

`--held-out6` (HELD_OUT6: bench/data/english_texts_fresh6.txt alone, 40 texts written by someone who did not read
the rules), every kept mutant labelled:

    python bench/mutant_quality.py draw held-out6 --held-out6
    python bench/mutant_quality.py sample held-out6 --held-out6 --n 200 --csv bench/data/english_quality_held_out6.csv
    python bench/mutant_quality.py table --csv bench/data/english_quality_held_out6.csv

`--held-out7` (HELD_OUT7: bench/data/english_texts_fresh7.txt alone, 60 texts written by someone who did not read
the rules: job applications, reference letters, reviews, news briefs, police blotters, dating profiles...), every
kept mutant labelled:

    python bench/mutant_quality.py draw held-out7 --held-out7
    python bench/mutant_quality.py sample held-out7 --held-out7 --n 300 --csv bench/data/english_quality_held_out7.csv
    python bench/mutant_quality.py table --csv bench/data/english_quality_held_out7.csv
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data"
CAMPAIGNS = (("imdb", 200), ("ledgar", 200), ("ecthr", None))
# --held-out: texts nobody read while writing the rules (dataset, first, end), from ../shared/data's larger samples
# (their first 200 are the bundled ones): the next 200 reviews and clauses, and 20 Supreme Court opinions
SHARED = ROOT.parent / "shared" / "data"
# each held-out set: its texts as (dataset, first, end) and, for `sample`, each dataset's share of the rows (None: all
# its kept mutants; the shares are of the rows left after those)
HELD_OUT = (("imdb", 200, 400), ("ledgar", 200, 400), ("scotus", 4, 24))
# --held-out2, read by nobody before the measure: the next 300 reviews and clauses, 36 opinions, 60 EU acts, and
# 30 texts written after the rules (FRESH, one a line)
HELD_OUT2 = (("imdb", 400, 700), ("ledgar", 400, 700), ("scotus", 24, 60), ("eurlex", 0, 60), ("fresh", 0, 30))
FRESH = DATA / "english_texts_fresh.txt"
# --held-out3, read by nobody before its measure, none of the rows above nor the rule-writing ones: the next 500
# reviews, the last 100 clauses (ledgar has 800), 140 opinions, 60 EU acts, and 40 texts written before their author
# read the English rules (FRESH3)
HELD_OUT3 = (("imdb", 700, 1200), ("ledgar", 700, 800), ("scotus", 60, 200), ("eurlex", 60, 120), ("fresh3", 0, 40))
FRESH3 = DATA / "english_texts_fresh3.txt"
# --held-out4: 40 texts written on 2026-11-29 without reading the rules (capitals, pronouns, names, several
# sentences, both directions), every kept mutant labelled
HELD_OUT4 = (("fresh4", 0, 40),)
FRESH4 = DATA / "english_texts_fresh4.txt"
# --held-out5, read by nobody before its measure, none of the rows above: the last 300 reviews (imdb has 1500), 140
# opinions, 60 EU acts, and 40 texts written by someone who did not read the English rules (FRESH5)
HELD_OUT5 = (("imdb", 1200, 1500), ("scotus", 200, 340), ("eurlex", 120, 180), ("fresh5", 0, 40))
FRESH5 = DATA / "english_texts_fresh5.txt"
# --held-out6: 40 texts written by someone who did not read the English rules (registers of real users: chats,
# tenancy disputes, school reports, discharge notes, obituaries...), every kept mutant labelled
HELD_OUT6 = (("fresh6", 0, 40),)
FRESH6 = DATA / "english_texts_fresh6.txt"
# --held-out7: 60 texts written by someone who did not read the English rules (job applications, reference letters,
# reviews, news briefs, police blotters, dating profiles, forum posts, bios, incident reports), every kept mutant
# labelled
HELD_OUT7 = (("fresh7", 0, 60),)
FRESH7 = DATA / "english_texts_fresh7.txt"
SHARES = {"imdb": 0.65, "ecthr": 0.25, "ledgar": 0.1, "scotus": 0.25}
SHARES2 = {"fresh": None, "imdb": 0.5, "scotus": 1 / 6, "eurlex": 1 / 6, "ledgar": 1 / 6}
SHARES3 = {"fresh3": None, "imdb": 0.5, "scotus": 1 / 6, "eurlex": 1 / 6, "ledgar": 1 / 6}
SHARES4 = {"fresh4": None}
SHARES5 = {"fresh5": None, "imdb": 0.5, "scotus": 0.25, "eurlex": 0.25}
SHARES6 = {"fresh6": None}
SHARES7 = {"fresh7": None}
FIELDS = ("version", "dataset", "text_id", "key", "original", "mutant", "grammatical", "meaning", "error")


def _texts(name: str, first: int, end: int | None, held_out: bool) -> list[tuple[int, str]]:
    """(text id, text) of a dataset's texts first..end: a held-out set's from ../shared/data (or FRESH, a text a
    line), the bundled sample's otherwise."""
    from hinter.datasets import read_dataset

    if name in ("fresh", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7"):
        lines = {"fresh": FRESH, "fresh3": FRESH3, "fresh4": FRESH4, "fresh5": FRESH5, "fresh6": FRESH6,
                 "fresh7": FRESH7}[name].read_text(encoding="utf-8").splitlines()
        texts = [line.strip() for line in lines if line.strip()]
    else:
        texts = [r.text for r in read_dataset(SHARED / name / "sample.jsonl" if held_out else name, limit=end).records]
    return list(enumerate(texts))[first:end]


def draw(version: str, out: Path, person_only: bool = True, held_out: tuple | None = None) -> None:
    from hinter.mutation.dictionary import load_dictionary
    from hinter.mutation.mutants import generate
    from hinter.validity import SpacyParser, Validator, changed_sentence_pairs, sentence_spans

    d = load_dictionary().restrict(("gender", "race"))
    validator = Validator(SpacyParser())
    person = None
    if person_only:  # a word replaced only where it refers to a person (hinter run's default; not --any-occurrence)
        from hinter.mutation.person import PersonFilter
        person = PersonFilter()
    rows, seconds = [], {"mutation": 0.0, "validity": 0.0}
    for name, first, end in (held_out or [(name, 0, limit) for name, limit in CAMPAIGNS]):
        for tid, text in _texts(name, first, end, held_out is not None):
            t0 = time.perf_counter()
            try:
                gen = generate(tid, text, d, ("gender", "race"), 1, 2, 3, person=person)
            except Exception as e:  # a rule's crash on one text: counted and named, the measure goes on
                seconds.setdefault("crashed", []).append(f"{name} {tid}: {type(e).__name__} {e}")
                print(f"{name} text {tid} crashed the mutation: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            seconds["mutation"] += time.perf_counter() - t0
            spans = sentence_spans(text)
            sentences = [text[a:b] for a, b in spans]
            pairs = [changed_sentence_pairs(text, spans, sentences, m.edits) for m in gen.mutants]
            t0 = time.perf_counter()
            reasons = validator.reasons(pairs)
            seconds["validity"] += time.perf_counter() - t0
            for i, (m, p, reason) in enumerate(zip(gen.mutants, pairs, reasons)):
                early = getattr(gen, "uninflected", {}).get(i)
                rows.append({"dataset": name, "text_id": tid, "key": "|".join(m.key), "attribute": m.attributes[0],
                             "kept": early is None and reason is None, "reason": early or reason,
                             # the sentences only of kept mutants: the sample draws from those
                             **({"original": " ".join(c for c, _ in p or ()), "mutant": " ".join(x for _, x in p or ())}
                                if early is None and reason is None else {})})
            seconds.setdefault("person_skipped", 0)
            seconds["person_skipped"] += gen.person_skipped
            for why in gen.uninflected.values():  # the mutants discarded at mutation, by rule
                seconds.setdefault(f"discarded.{_rule(why)}", 0)
                seconds[f"discarded.{_rule(why)}"] += 1
            for rule, n in getattr(gen, "not_mutated", {}).items():
                seconds.setdefault(f"not_mutated.{rule}", 0)
                seconds[f"not_mutated.{rule}"] += n
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    gender = [r for r in rows if r["attribute"] == "gender"]
    print(json.dumps({"version": version, "mutants": len(rows), "kept": sum(r["kept"] for r in rows),
                      "gender": len(gender), "gender_kept": sum(r["kept"] for r in gender),
                      "reasons": Counter(r["reason"] for r in rows if not r["kept"]), **seconds}))


def _rule(why: str) -> str:
    """The rule of languages.english.carry that discarded a mutant, from the start of its reason."""
    from hinter.languages import english
    from hinter.languages.english import EITHER_REASON
    from hinter.mutation.mutants import SELF_COMPARISON

    # a commit before the named-person rule has no NAMED_REASON (draw runs on the commit before a change too)
    named = getattr(english, "NAMED_REASON", None) or "\0"
    named_noun = getattr(english, "NAMED_NOUN_REASON", None) or "\0"
    for start, rule in ((SELF_COMPARISON, "new word already in its sentence"),
                        (EITHER_REASON, "another person's pronoun"), (named, "pronoun, named person"),
                        (named_noun, "noun, named person"), ("the male pronouns may", "pronoun, person noun"),
                        ("the female pronouns may", "pronoun, person noun"), ("the pronouns after", "not followed"),
                        ("the '", "pronoun before the noun"), ("cannot read", "pronoun unread")):
        if why.startswith(start):
            return rule
    return "other"


def _rank(row: dict) -> str:
    return hashlib.sha256(f"{row['dataset']}:{row['text_id']}:{row['key']}".encode()).hexdigest()


def sample(versions: list[str], n: int, path: Path, shares: dict | None = None) -> None:
    labelled = {}
    if path.exists():
        for r in csv.DictReader(path.open(encoding="utf-8")):
            if r["grammatical"] != "":
                labelled[(r["original"], r["mutant"])] = (r["grammatical"], r["meaning"], r["error"])
    out = []
    for version in versions:
        rows = [json.loads(line) for line in (DATA / f"english_quality_{version}.jsonl").open(encoding="utf-8")]
        for name, r in _pick(rows, n, shares or SHARES):
            g, m, e = labelled.get((r["original"], r["mutant"]), ("", "", ""))
            out.append((version, name, r["text_id"], r["key"], r["original"], r["mutant"], g, m, e))
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(FIELDS)
        w.writerows(out)
    print(f"{len(out)} rows ({Counter(r[1] for r in out)}), {sum(1 for r in out if r[6] == '')} unlabelled -> {path}")


def _pick(rows: list[dict], n: int, shares: dict) -> list[tuple[str, dict]]:
    """(dataset, row) of the kept mutants drawn, in each dataset's seeded order: all of a dataset whose share is
    None; then each other dataset's share of the n rows left; with `shares` summing to 1 (held-out sets), a dataset
    short of its share leaves its place to the others' next rows (in the same seeded order), so n are drawn where
    there are n."""
    kept = {name: sorted((r for r in rows if r["dataset"] == name and r["kept"]), key=_rank) for name in shares}
    take = {name: len(kept[name]) for name, share in shares.items() if share is None}
    left = n - sum(take.values())
    for name, share in shares.items():
        if share is not None:
            take[name] = min(len(kept[name]), round(left * share))
    if abs(sum(s for s in shares.values() if s is not None) - 1) < 1e-9:
        spare = sorted((r for name in shares for r in kept[name][take[name]:]), key=_rank)
        for r in spare[:max(0, n - sum(take.values()))]:
            take[r["dataset"]] += 1
    return [(name, r) for name in shares for r in kept[name][:take[name]]]


def table(path: Path) -> None:
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    print("| version | labelled | grammatical | right in meaning | precision | gender precision | race precision | "
          "gender kept |")
    print("|---|---|---|---|---|---|---|---|")
    for version in dict.fromkeys(r["version"] for r in rows):
        vs = [r for r in rows if r["version"] == version and r["grammatical"] != ""]
        gender = [r for r in _drawn(version) if r["attribute"] == "gender"]
        good = sum(r["grammatical"] == "1" and r["meaning"] == "1" for r in vs)

        def precision(attribute):
            rs = [r for r in vs if r["key"].startswith(attribute + ":")]
            ok = sum(r["grammatical"] == "1" and r["meaning"] == "1" for r in rs)
            return f"{ok / max(1, len(rs)):.3f} ({ok} of {len(rs)})"
        print(f"| {version} | {len(vs)} | {sum(r['grammatical'] == '1' for r in vs)} | "
              f"{sum(r['meaning'] == '1' for r in vs)} | {good / max(1, len(vs)):.3f} | {precision('gender')} | "
              f"{precision('race')} | "
              f"{sum(r['kept'] for r in gender)} of {len(gender)} ({sum(r['kept'] for r in gender) / max(1, len(gender)):.0%}) |")
    if len({r["dataset"] for r in rows}) > 1:  # the same by dataset
        print()
        print("| version | dataset | labelled | precision | gender precision | race precision | gender kept |")
        print("|---|---|---|---|---|---|---|")
        for version, name in dict.fromkeys((r["version"], r["dataset"]) for r in rows):
            vs = [r for r in rows if r["version"] == version and r["dataset"] == name and r["grammatical"] != ""]
            gender = [r for r in _drawn(version) if r["attribute"] == "gender" and r["dataset"] == name]
            kept = sum(r["kept"] for r in gender)
            print(f"| {version} | {name} | {len(vs)} | {_precision(vs)} | "
                  f"{_precision([r for r in vs if r['key'].startswith('gender:')])} | "
                  f"{_precision([r for r in vs if r['key'].startswith('race:')])} | "
                  f"{kept} of {len(gender)} ({kept / max(1, len(gender)):.0%}) |")
    # the errors by kind (an error reads "kind (the case)"), then each case
    labelled = [r for r in rows if r["grammatical"] != "" and r["error"]]
    kinds = Counter((r["version"], r["error"].split(" (")[0]) for r in labelled)
    for (version, kind), k in sorted(kinds.items(), key=lambda x: (x[0][0], -x[1], x[0][1])):
        print(f"{version}: {k} x {kind}")
        cases = Counter(r["error"] for r in labelled if r["version"] == version and r["error"].split(" (")[0] == kind)
        for error, n in sorted(cases.items()):
            if error != kind:
                print(f"    {n} x {error[len(kind):].strip()}")


def _drawn(version: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / f"english_quality_{version}.jsonl").open(encoding="utf-8")]


def _precision(rows: list[dict]) -> str:
    ok = sum(r["grammatical"] == "1" and r["meaning"] == "1" for r in rows)
    return f"{ok / len(rows):.3f} ({ok} of {len(rows)})" if rows else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("draw")
    d.add_argument("version")
    d.add_argument("--out", type=Path)
    d.add_argument("--any-occurrence", action="store_true", help="as hinter run --any-occurrence: every occurrence "
                   "replaced, not only those that refer to a person (the runs before the person filter became the "
                   "default were drawn so, or with --person-only)")
    d.add_argument("--held-out", action="store_true", help="the texts of HELD_OUT instead (read by no rule's author)")
    d.add_argument("--held-out2", action="store_true", help="the texts of HELD_OUT2 instead (read by nobody before "
                   "the measure, FRESH written after the rules)")
    d.add_argument("--held-out3", action="store_true", help="the texts of HELD_OUT3 instead (read by nobody before "
                   "the measure, FRESH3 written before its author read the rules)")
    d.add_argument("--held-out4", action="store_true", help="the texts of HELD_OUT4 instead (FRESH4 alone)")
    d.add_argument("--held-out5", action="store_true", help="the texts of HELD_OUT5 instead (read by nobody before "
                   "the measure, FRESH5 written by someone who did not read the rules)")
    d.add_argument("--held-out6", action="store_true", help="the texts of HELD_OUT6 instead (FRESH6 alone, written by "
                   "someone who did not read the rules)")
    d.add_argument("--held-out7", action="store_true", help="the texts of HELD_OUT7 instead (FRESH7 alone, written by "
                   "someone who did not read the rules)")
    s = sub.add_parser("sample")
    s.add_argument("versions", nargs="+")
    s.add_argument("--n", type=int, default=230)
    s.add_argument("--csv", type=Path, default=DATA / "english_quality_sample.csv")
    s.add_argument("--held-out2", action="store_true", help="draw with SHARES2 (every kept mutant of FRESH, then "
                   "imdb half the rest)")
    s.add_argument("--held-out3", action="store_true", help="draw with SHARES3 (every kept mutant of FRESH3, then "
                   "imdb half the rest)")
    s.add_argument("--held-out4", action="store_true", help="draw with SHARES4 (every kept mutant of FRESH4)")
    s.add_argument("--held-out5", action="store_true", help="draw with SHARES5 (every kept mutant of FRESH5, then "
                   "imdb half the rest, scotus and eurlex a quarter each)")
    s.add_argument("--held-out6", action="store_true", help="draw with SHARES6 (every kept mutant of FRESH6)")
    s.add_argument("--held-out7", action="store_true", help="draw with SHARES7 (every kept mutant of FRESH7)")
    t = sub.add_parser("table")
    t.add_argument("--csv", type=Path, default=DATA / "english_quality_sample.csv")
    args = ap.parse_args()
    if args.command == "draw":
        draw(args.version, args.out or DATA / f"english_quality_{args.version}.jsonl", not args.any_occurrence,
             HELD_OUT7 if args.held_out7 else HELD_OUT6 if args.held_out6 else HELD_OUT5 if args.held_out5 else HELD_OUT4 if args.held_out4 else HELD_OUT3 if args.held_out3 else HELD_OUT2 if args.held_out2 else HELD_OUT if args.held_out else None)
    elif args.command == "sample":
        sample(args.versions, args.n, args.csv, SHARES7 if args.held_out7 else SHARES6 if args.held_out6 else SHARES5 if args.held_out5 else SHARES4 if args.held_out4 else SHARES3 if args.held_out3 else
               SHARES2 if args.held_out2 else None)
    else:
        table(args.csv)


if __name__ == "__main__":
    sys.exit(main())
