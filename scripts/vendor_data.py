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


# --- The four LexGLUE samples (issue 4). Uniform fields: id, text, label (a list for multi-label tasks, in
# the label names of hinter's task presets), plus a few provenance fields. Chosen by a fixed rule, no shuffling.
sys.path.insert(0, str(pkg.parents[1]))
from hinter.models.tasks import EUROVOC_CONCEPTS  # noqa: E402


def read_jsonl(name):
    return [json.loads(line) for line in (shared / "data" / name / "sample.jsonl").read_text(encoding="utf-8").splitlines()]


def write_bundle(name, rows, note):
    dst = pkg / name
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "sample.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    src_note = (shared / "data" / name / "SOURCE.md").read_text(encoding="utf-8")
    (dst / "SOURCE.md").write_text(src_note + "\n## In this package (scripts/vendor_data.py)\n\n" + note + "\n", encoding="utf-8")
    print(f"{name}: {len(rows)} records, {(dst / 'sample.jsonl').stat().st_size // 1024} KiB")


def article(a):
    return "Article 1 of Protocol 1" if a == "P1-1" else f"Article {a}"


ecthr = [{"id": r["id"], "text": r["text"], "label": [article(a) for a in r["labels"]],
          "label_ecthr_b": [article(a) for a in r["labels_ecthr_b"]], "title": r.get("title"), "split": r.get("split"),
          "source": r.get("source")} for r in read_jsonl("ecthr")]
write_bundle("ecthr", ecthr, f"All {len(ecthr)} records, texts unchanged. `label` = the ECtHR-A labels (`labels` above) "
             "written as hinter's `ecthr` task names them (`Article 6`, `Article 1 of Protocol 1`); `label_ecthr_b` "
             "likewise. Licence: as stated above (cc-by-nc-sa-4.0 for ecthr_cases, cc-by-4.0 for lex_glue); "
             "redistributed with this attribution.")

eurlex_src = read_jsonl("eurlex")
level2 = [r for r in eurlex_src if "level-2" in r["label_space"] or "lexglue" in r["label_space"]]
k57 = [r for r in eurlex_src if r not in level2 and len(r["text"]) <= 20000][: 200 - len(level2)]
dropped_ids = sorted({x for r in level2 for x in r["labels"] if x not in EUROVOC_CONCEPTS})
eurlex = [{"id": r["id"], "text": r["text"], "label": [EUROVOC_CONCEPTS[x] for x in r["labels"] if x in EUROVOC_CONCEPTS],
           "label_ids": r["labels"], "label_space": r["label_space"], "split": r.get("split"), "source": r.get("source")}
          for r in level2]
eurlex += [{"id": r["id"], "text": r["text"], "label": None, "eurlex57k_descriptors": r["labels"],
            "label_space": r["label_space"], "split": r.get("split"), "source": r.get("source")} for r in k57]
write_bundle("eurlex", eurlex, f"{len(level2)} records in the LexGLUE label space (the LexGLUE and MultiEURLEX ones): "
             "`label` = their EuroVoc level-2 concepts by name, as hinter's `eurlex` task names them (concepts outside "
             f"LexGLUE's 100, here {', '.join(dropped_ids) or 'none'}, dropped as LexGLUE does; `label_ids` keeps the "
             f"original ids). Then the first {len(k57)} EURLEX57K records with at most 20,000 characters of text: "
             "their descriptors are another label space, so `label` is null and `eurlex57k_descriptors` keeps them. "
             "Texts unchanged. Licence: as stated above (cc-by-sa-4.0 / cc-by-4.0); redistributed with this attribution.")

ledgar = [{"id": r["id"], "text": r["text"], "label": r["label"], "split": r.get("split"), "source": r.get("source")}
          for r in read_jsonl("ledgar")[:200]]
write_bundle("ledgar", ledgar, "The first 200 records, texts and labels unchanged. Licence: cc-by-4.0 (LexGLUE); "
             "redistributed with this attribution.")

scotus = [{"id": r["id"], "text": r["text"], "label": r["label"], "issue_area": r.get("issue_area"),
           "split": r.get("split"), "source": r.get("source")} for r in read_jsonl("scotus") if r["id"].startswith("lexglue_")]
write_bundle("scotus", scotus, f"Only the {len(scotus)} LexGLUE records (full opinions, cc-by-4.0, redistributed with "
             "this attribution). The Oyez case summaries are NOT shipped: their source states no licence. Tests may "
             "read them from ../shared/data/scotus/ where that folder exists.")
