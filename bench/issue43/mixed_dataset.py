"""The 2-million-mutant campaign's texts (docs/gpu.md, issue 43's second round), as JSONL on stdout: the bundled
EUR-Lex and SCOTUS samples, the ECtHR cases under 9,000 characters, then the IMDB reviews (B.sh takes the first
381: all the legal texts and 144 reviews).

    python bench/issue43/mixed_dataset.py > .gpu/g43/mixed.jsonl
"""
import json
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "src" / "hinter" / "data"
for name in ("eurlex", "scotus", "ecthr", "imdb"):
    for i, line in enumerate((DATA / name / "sample.jsonl").read_text(encoding="utf-8").splitlines()):
        record = json.loads(line)
        if name == "ecthr" and len(record["text"]) > 9000:
            continue
        sys.stdout.write(json.dumps({"id": f"{name}-{record.get('id', i)}", "text": record["text"]}) + "\n")
