"""Reading datasets: JSONL, CSV, Parquet or a Hugging Face `datasets` folder, and the bundled samples."""
from __future__ import annotations

import csv
import io
import json
from importlib import resources
from pathlib import Path

from .engine import TextRecord
from .errors import InputError

# Samples of the paper's five datasets (see each folder's SOURCE.md); all use the fields id, text, label.
BUNDLED = {name: f"data/{name}/sample.jsonl" for name in ("imdb", "ecthr", "eurlex", "ledgar", "scotus")}
FORMATS = "a JSONL, CSV or Parquet file, or a Hugging Face datasets folder (save_to_disk)"


def bundled_path(name: str) -> Path:
    if name not in BUNDLED:
        raise InputError(f"no bundled dataset named {name!r}", where="--dataset",
                         fix=f"Bundled datasets: {', '.join(BUNDLED)}; or give {FORMATS}.")
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


def _rows_from_table(table, where: str, class_names: dict[str, list[str]]):
    """Rows of a pyarrow Table (Parquet, or a datasets folder), with their row numbers; class indices as names."""
    for i, row in enumerate(table.to_pylist(), start=1):
        for column, names in class_names.items():
            v = row.get(column)
            if isinstance(v, int) and 0 <= v < len(names):
                row[column] = names[v]
            elif isinstance(v, list):
                row[column] = [names[x] if isinstance(x, int) and 0 <= x < len(names) else x for x in v]
        yield row, f"{where}, row {i}"


def _hf_folder_table(p: Path):
    """A `datasets.save_to_disk` folder: one Dataset, or a DatasetDict whose split must be chosen."""
    try:
        import datasets as hf_datasets
    except ImportError:
        raise InputError("reading a Hugging Face datasets folder needs the datasets package", where=f"dataset {p}",
                         fix="pip install 'hinter[data]' (or pip install datasets).") from None
    try:
        ds = hf_datasets.load_from_disk(str(p))
    except (FileNotFoundError, ValueError) as e:
        raise InputError(f"not a Hugging Face datasets folder ({e})", where=f"dataset {p}",
                         fix=f"Give {FORMATS}.") from None
    if isinstance(ds, hf_datasets.DatasetDict):
        splits = list(ds)
        if len(splits) != 1:
            raise InputError(f"the folder holds several splits ({', '.join(splits)})", where=f"dataset {p}",
                             fix=f"Give one split's folder, e.g. --dataset {p / splits[0]}.")
        ds = ds[splits[0]]
    class_names = {}  # ClassLabel columns store indices: read them as their names
    for column, feature in ds.features.items():
        feature = getattr(feature, "feature", feature)  # Sequence(ClassLabel) for multi-label
        if isinstance(feature, hf_datasets.ClassLabel):
            class_names[column] = feature.names
    return ds.with_format("arrow")[:], class_names


def load_dataset(path: str | Path, text_field: str = "text", label_field: str | None = "label",
                 id_field: str = "id", limit: int | None = None) -> list[TextRecord]:
    """Read texts from a file or folder (see FORMATS) or a bundled dataset's name. Errors name the file and line."""
    p = Path(path)
    if not p.exists() and str(path) in BUNDLED:
        p = bundled_path(str(path))
    if not p.exists():
        raise InputError("no such file", where=f"dataset {path}",
                         fix=f"Give {FORMATS}, or a bundled dataset ({', '.join(BUNDLED)}).")
    records: list[TextRecord] = []
    suffix = p.suffix.lower()
    if p.is_dir() or suffix in {".parquet", ".pq"}:
        class_names: dict[str, list[str]] = {}
        if p.is_dir():
            table, class_names = _hf_folder_table(p)
        else:
            try:
                import pyarrow.parquet as pq
            except ImportError:
                raise InputError("reading Parquet needs pyarrow", where=f"dataset {p}",
                                 fix="pip install 'hinter[data]' (or pip install pyarrow).") from None
            try:
                table = pq.read_table(p)
            except Exception as e:  # pyarrow.ArrowInvalid and friends
                raise InputError(f"not a readable Parquet file ({e})", where=f"dataset {p}", fix="Check the file.") from None
        if limit is not None:
            table = table.slice(0, limit)
        for row, where in _rows_from_table(table, str(p), class_names):
            records.append(_record(row, where, text_field, label_field, id_field))
        if not records:
            raise InputError("the dataset holds no records", where=str(p), fix="Add at least one record with a text.")
        return records
    try:
        content = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        line = p.read_bytes()[: e.start].count(b"\n") + 1
        raise InputError(f"invalid UTF-8 at byte {e.start}", where=f"{p}, line {line}",
                         fix="Save the file as UTF-8.") from None
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
        raise InputError(f"unknown dataset format {p.suffix!r}", where=str(p), fix=f"Give {FORMATS}.")
    if not records:
        raise InputError("the dataset holds no records", where=str(p), fix="Add at least one record with a text.")
    return records
