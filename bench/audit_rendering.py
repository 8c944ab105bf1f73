"""The share of texts `hinter audit` renders in every category, and why the others are not, on application texts
written as a new user would (bench/data/audit_applications_{en,fr}*.csv: capitals, lower case, pronoun-only,
first names, several sentences, the text's own origin word, both sexes). No model is asked: this is the audit's
rendering and validity step alone, with the real parsers. The held-out files were written after the rules
(_fr_heldout2.csv after the French pass of issue 39) and measured as they came.

    PYTHONPATH=src python bench/audit_rendering.py                       # every file, English and French
    PYTHONPATH=src python bench/audit_rendering.py bench/data/audit_applications_en_heldout.csv --show
"""
from __future__ import annotations

import argparse
import collections
import csv
import time
from pathlib import Path

from hinter.audit import load_categories
from hinter.audit.render import render_texts
from hinter.languages import get_language
from hinter.records import TextRecord
from hinter.validity import SpacyParser, Validator

DATA = Path(__file__).parent / "data"
DEFAULT = [DATA / f"audit_applications_{name}.csv" for name in ("en", "en_heldout", "fr", "fr_heldout", "fr_heldout2")]


def measure(path: Path, show: bool) -> None:
    language = "fr" if "_fr" in path.name else "en"
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    records = [TextRecord(r["text"], r["id"]) for r in rows]
    cats = load_categories(language=language)
    parser = SpacyParser(get_language(language).spacy_model)
    start = time.perf_counter()
    try:
        validator = Validator(parser)
        rendered = render_texts(records, cats, validator.reasons, None, validator.disagree, parse=parser.parse)
    finally:
        parser.close()
    seconds = time.perf_counter() - start
    done = [t for t in rendered if t.renderings]
    print(f"{path.name}: {len(done)} of {len(rendered)} texts rendered ({100 * len(done) / len(rendered):.0f}%), "
          f"{seconds:.1f} s")
    kinds = collections.defaultdict(lambda: [0, 0])
    for row, t in zip(rows, rendered):
        kinds[row.get("kind", "")][0] += bool(t.renderings)
        kinds[row.get("kind", "")][1] += 1
    print("  by kind: " + ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(kinds.items())))
    reasons = collections.Counter(t.reason.split(" (")[0] for t in rendered if t.reason)
    for reason, n in reasons.most_common():
        print(f"  not rendered, {reason}: {n}")
    if show:
        first = cats.cells[0], cats.cells[-1]
        for row, t in zip(rows, rendered):
            if t.renderings:
                print(f"  {row['id']} rendered: {t.renderings[first[0]]!r}\n{' ' * 16}{t.renderings[first[1]]!r}")
            else:
                print(f"  {row['id']} NOT: {t.reason}: {t.text!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT)
    ap.add_argument("--show", action="store_true", help="print each text's outcome and two of its renderings")
    args = ap.parse_args()
    for path in args.files:
        measure(path, args.show)


if __name__ == "__main__":
    main()
