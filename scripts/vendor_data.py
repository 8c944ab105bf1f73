"""Copy the reference dictionary and the IMDB demo sample from ../shared into the package.

Run once by a maintainer (not at install time): `python scripts/vendor_data.py ../shared`.
Cleaning: CRLF -> LF, surrounding spaces stripped, empty lines and exact duplicate lines
dropped, and pairs that map a word to itself (`teenage;teenage`) dropped, since they can
never change a text.
"""
import json
import shutil
import sys
from pathlib import Path

shared = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared")
pkg = Path(__file__).resolve().parents[1] / "src" / "hinter" / "data"
src_dict = shared / "data" / "hinter-dictionary"
dst_dict = pkg / "dictionary"
if dst_dict.exists():
    shutil.rmtree(dst_dict)
dropped = []
for f in sorted(src_dict.glob("*/*.csv")):
    out, seen = [], set()
    for line in f.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.split(";")]
        clean = ";".join(cells)
        if not clean or clean in seen:
            continue
        if len(cells) == 2 and cells[0].lower() == cells[1].lower():
            dropped.append(f"{f.parent.name}/{f.name}: {clean}")
            continue
        seen.add(clean)
        out.append(clean)
    target = dst_dict / f.parent.name / f.name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
note = (src_dict / "SOURCE.md").read_text(encoding="utf-8")
note += "\n## Cleaning done for this package (scripts/vendor_data.py)\n\nCRLF line ends and surrounding spaces removed, duplicate lines dropped, and these pairs that map a word to itself dropped:\n\n"
note += "".join(f"- {d}\n" for d in dropped)
(dst_dict / "SOURCE.md").write_text(note, encoding="utf-8")

imdb_dst = pkg / "imdb"
imdb_dst.mkdir(parents=True, exist_ok=True)
rows = (shared / "data" / "imdb" / "sample.jsonl").read_text(encoding="utf-8").splitlines()[:200]
(imdb_dst / "sample.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
src_note = (shared / "data" / "imdb" / "SOURCE.md").read_text(encoding="utf-8")
(imdb_dst / "SOURCE.md").write_text(
    src_note + "\n## In this package\n\nThe first 200 records of that `sample.jsonl`, unchanged.\n", encoding="utf-8")
print(f"dictionary files: {len(list(dst_dict.glob('*/*.csv')))}, dropped self-pairs: {len(dropped)}, imdb rows: {len(rows)}")
