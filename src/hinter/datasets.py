"""Reading datasets: JSONL or CSV files with a text column, and the bundled IMDB sample."""
from __future__ import annotations

import csv
import io
import json
from importlib import resources
from pathlib import Path

from .engine import TextRecord
from .errors import InputError

BUNDLED = {"imdb": "data/imdb/sample.jsonl"}


def bundled_path(name: str) -> Path:
    if name not in BUNDLED:
        raise InputError(f"no bundled dataset named {name!r}", where="--dataset",
                         fix=f"Bundled datasets: {', '.join(BUNDLED)}; or give a path to a JSONL or CSV file.")
    return Path(str(resources.files("hinter") / BUNDLED[name]))


def _record(row: dict, where: str, text_field: str, label_field: str | None, id_field: str) -> TextRecord:
    if text_field not in row:
        raise InputError(f"no field {text_field!r} (fields: {', '.join(map(str, row)) or 'none'})", where=where,
                         fix="Name the text column with --text-field.")
    text = row[text_field]
    if not isinstance(text, str):
        raise InputError(f"field {text_field!r} is {type(text).__name__}, not text", where=where,
                         fix="Make every text a string, or remove the row.")
    if not text.strip():
        raise InputError(f"field {text_field!r} is empty", where=where, fix="Fill in the text or remove the row.")
    label = row.get(label_field) if label_field else None
    source_id = row.get(id_field)
    return TextRecord(text, None if source_id is None else str(source_id),
                      None if label is None else json.dumps(label) if not isinstance(label, str) else label)


def load_dataset(path: str | Path, text_field: str = "text", label_field: str | None = "label",
                 id_field: str = "id", limit: int | None = None) -> list[TextRecord]:
    """Read texts from a JSONL or CSV file (or a bundled dataset's name). Errors name the file and line."""
    p = Path(path)
    if not p.exists() and str(path) in BUNDLED:
        p = bundled_path(str(path))
    if not p.exists():
        raise InputError("no such file", where=f"dataset {path}",
                         fix=f"Give a JSONL or CSV file, or a bundled dataset ({', '.join(BUNDLED)}).")
    if p.is_dir():
        raise InputError("is a folder, not a file", where=f"dataset {path}", fix="Give a JSONL or CSV file.")
    try:
        content = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        line = p.read_bytes()[: e.start].count(b"\n") + 1
        raise InputError(f"invalid UTF-8 at byte {e.start}", where=f"{p}, line {line}",
                         fix="Save the file as UTF-8.") from None
    records: list[TextRecord] = []
    suffix = p.suffix.lower()
    if suffix in {".jsonl", ".json", ".ndjson"}:
        for lineno, line in enumerate(content.splitlines(), start=1):
            if limit is not None and len(records) >= limit:
                break
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"not valid JSON ({e.msg})", where=f"{p}, line {lineno}",
                                 fix="Write one JSON object per line.") from None
            if not isinstance(row, dict):
                raise InputError("expected a JSON object", where=f"{p}, line {lineno}",
                                 fix='Write one object per line, e.g. {"text": "..."}.')
            records.append(_record(row, f"{p}, line {lineno}", text_field, label_field, id_field))
    elif suffix in {".csv", ".tsv"}:
        reader = csv.DictReader(io.StringIO(content), delimiter="\t" if suffix == ".tsv" else ",")
        for row in reader:
            if limit is not None and len(records) >= limit:
                break
            records.append(_record(row, f"{p}, line {reader.line_num}", text_field, label_field, id_field))
    else:
        raise InputError(f"unknown dataset format {p.suffix!r}", where=str(p), fix="Use a .jsonl or .csv file.")
    if not records:
        raise InputError("the dataset holds no records", where=str(p), fix="Add at least one record with a text.")
    return records
