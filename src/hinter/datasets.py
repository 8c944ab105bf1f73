"""Reading datasets: JSONL, CSV, Parquet or a Hugging Face `datasets` folder, and the bundled samples."""
from __future__ import annotations

import codecs
import csv
import io
import json
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from hinter.records import TextRecord
from hinter.errors import InputError

# Samples of the paper's five datasets, and Bias in Bios for generative tasks (see each folder's SOURCE.md); all use
# the fields id, text (and label, where there is one).
BUNDLED = {name: f"data/{name}/sample.jsonl" for name in ("imdb", "ecthr", "eurlex", "ledgar", "scotus", "bios",
                                                           "avis")}
FORMATS = "a JSONL, CSV or Parquet file, or a Hugging Face datasets folder (save_to_disk)"


def decode_utf8(raw: bytes) -> str:
    """A user's file as text: UTF-8, a leading byte-order mark dropped (Excel's "CSV UTF-8" and Notepad write one;
    kept, it became part of the first column's name and the first JSON line). A UnicodeDecodeError's `start` is
    the offset in `raw`."""
    bom = raw.startswith(codecs.BOM_UTF8)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if bom:  # utf-8-sig counts from after the mark
            e.start, e.end = e.start + len(codecs.BOM_UTF8), e.end + len(codecs.BOM_UTF8)
        raise


def bundled_path(name: str) -> Path:
    if name not in BUNDLED:
        raise InputError(f"no bundled dataset named {name!r}", where="--dataset",
                         fix=f"Bundled datasets: {', '.join(BUNDLED)}; or give {FORMATS}.")
    return Path(str(resources.files("hinter") / BUNDLED[name]))


ID_FIELD = "id"  # the id column read when present (--id-field names another, which every row must then have)
MAX_TEXT_CHARS = 1_000_000  # spaCy's own limit for one text; longer ones need splitting by the user


@dataclass
class DatasetRead:
    records: list[TextRecord]
    skipped: list[str] = field(default_factory=list)  # "where: problem" for every row left out


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
    if len(text) > MAX_TEXT_CHARS:
        raise InputError(f"the text has {len(text):,} characters, more than {MAX_TEXT_CHARS:,}", where=where,
                         fix="Split it into several records (e.g. by section), or skip it with --skip-bad-rows.")
    label = row.get(label_field) if label_field else None
    source_id = row.get(id_field)
    if id_field != ID_FIELD and (source_id is None or source_id == ""):  # a column named by --id-field: every
        # row has it, filled in
        problem = f"field {id_field!r} is empty" if id_field in row else \
            f"no field {id_field!r} (fields: {', '.join(map(str, row)) or 'none'})"
        raise InputError(problem, where=where, fix="Name the id column with --id-field, or leave --id-field out (ids "
                         f"are optional under its default name {ID_FIELD!r}: texts without one are numbered).")
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
    return read_dataset(path, text_field, label_field, id_field, limit).records


def sample_records(records: list, n: int | None, seed: int = 0) -> list:
    """A seeded random sample of at most `n` of `records`, in their order (None: all of them)."""
    if n is None or n >= len(records):
        return list(records)
    import random
    # a seed of its own: the text sample does not move with the pair samples drawn from the same --seed
    return [records[i] for i in sorted(random.Random(f"texts:{seed}").sample(range(len(records)), n))]


def read_dataset(path: str | Path, text_field: str = "text", label_field: str | None = "label",
                 id_field: str = "id", limit: int | None = None, skip_bad_rows: bool = False,
                 sample: int | None = None, seed: int = 0) -> DatasetRead:
    """Like load_dataset; with `skip_bad_rows`, a bad row (no text, a repeated id, ...) is left out and listed
    in `skipped` instead of stopping the read. Valid rows are never dropped silently. `sample`: a seeded random
    sample of at most that many of the records read (of the first `limit` with a limit), in the dataset's order."""
    result = _read_dataset(path, text_field, label_field, id_field, limit, skip_bad_rows)
    result.records = sample_records(result.records, sample, seed)
    return result


def _read_dataset(path: str | Path, text_field: str, label_field: str | None, id_field: str, limit: int | None,
                  skip_bad_rows: bool) -> DatasetRead:
    result = DatasetRead([])
    seen_ids: dict[str, str] = {}

    def add(row_reader) -> None:
        try:
            rec = row_reader()
        except InputError as e:
            if not skip_bad_rows:
                raise
            result.skipped.append(e.message)
            return
        if rec.source_id is not None:
            if rec.source_id in seen_ids:
                where = _where(row_reader)
                e = InputError(f"the id {rec.source_id!r} was already used at {seen_ids[rec.source_id]}", where=where,
                               fix="Give each record its own id, or skip repeats with --skip-bad-rows.")
                if not skip_bad_rows:
                    raise e
                result.skipped.append(e.message)
                return
            seen_ids[rec.source_id] = _where(row_reader).rsplit(", ", 1)[-1]
        result.records.append(rec)

    records = result.records
    p = _dataset_file(path)
    rows = _rows(p, limit) if limit is None or limit > 0 else iter(())
    for row, where in rows:
        add(_reader(row, where, text_field, label_field, id_field))
        if limit is not None and len(records) >= limit:  # before the next row is read: nothing past it can fail
            break
    if not records:
        if p.is_dir() or p.suffix.lower() in {".parquet", ".pq"}:
            raise InputError("the dataset holds no usable records", where=str(p),
                             fix="Add at least one record with a text.")
        problem = "the dataset holds no records" if not result.skipped else "every row was skipped"
        raise InputError(problem, where=str(p), fix="Add at least one record with a text.")
    return result


def _dataset_file(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists() and str(path) in BUNDLED:
        p = bundled_path(str(path))
    if not p.exists():
        raise InputError("no such file", where=f"dataset {path}",
                         fix=f"Give {FORMATS}, or a bundled dataset ({', '.join(BUNDLED)}).")
    return p


def table_rows(path: str | Path):
    """Every row of a JSONL, CSV or Parquet file (or datasets folder) as a dict, with where it is ("FILE, line N"):
    the reader of `--dataset`, for tables that are not texts (`hinter audit --decisions`). A row that does not
    parse is an InputError naming the file, the line and the fix."""
    p = _dataset_file(path)
    for row, where in _rows(p, None):
        if not isinstance(row, dict):
            _reader(row, where, "text", None, ID_FIELD)()  # raises the row's own error
        yield row, where


def _rows(p: Path, limit: int | None):
    """(row, where) of the file `p`: a dict, or a _BadJSON, _BadCSVRow or _NotAnObject for a row that does not
    parse (its error is raised, or skipped, by the caller, in order). `limit`: Parquet rows read at most."""
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
        yield from _rows_from_table(table, str(p), class_names)
        return
    raw = p.read_bytes()
    try:
        content = decode_utf8(raw)
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(f"invalid UTF-8 at byte {e.start}", where=f"{p}, line {line}",
                         fix="Save the file as UTF-8.") from None
    if suffix in {".jsonl", ".json", ".ndjson"}:
        for lineno, line in enumerate(content.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                row = _BadJSON(e.msg)
            if not isinstance(row, dict):
                row = _NotAnObject(row)
            yield row, f"{p}, line {lineno}"
    elif suffix in {".csv", ".tsv"}:
        csv.field_size_limit(sys.maxsize)  # long texts are checked by _record, with a clear message
        reader = csv.DictReader(io.StringIO(content), delimiter="\t" if suffix == ".tsv" else ",")
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as e:
                raise InputError(f"not valid CSV ({e})", where=f"{p}, line {reader.line_num}",
                                 fix="Quote fields that hold commas, quotes or line breaks.") from None
            if None in row or None in row.values():  # more fields than the header (restkey None), or fewer
                row = _BadCSVRow(len(reader.fieldnames or ()), len([v for k, v in row.items() if k is not None
                                                                    and v is not None]) + len(row.get(None) or ()),
                                 "tabs" if suffix == ".tsv" else "commas")
            yield row, f"{p}, line {reader.line_num}"
    else:
        raise InputError(f"unknown dataset format {p.suffix!r}", where=str(p), fix=f"Give {FORMATS}.")


class _BadJSON(str):
    """A JSONL line that does not parse (kept so that the error is raised, or skipped, in order)."""


class _BadCSVRow:
    """A CSV row whose field count differs from its header's (an unquoted comma cut its text)."""

    def __init__(self, expected: int, found: int, separators: str):
        self.expected, self.found, self.separators = expected, found, separators


class _NotAnObject:
    def __init__(self, value):
        self.value = value


def _reader(row, where: str, text_field: str, label_field: str | None, id_field: str):
    def read() -> TextRecord:
        if isinstance(row, _BadJSON):
            raise InputError(f"not valid JSON ({row})", where=where, fix="Write one JSON object per line.")
        if isinstance(row, _BadCSVRow):
            raise InputError(f"the row has {row.found} field{'s' if row.found != 1 else ''} where the header has {row.expected} (a field holding "
                             f"{row.separators} was cut there)", where=where,
                             fix=f"Quote the fields that hold {row.separators} (\"Man, what a film\"), or leave "
                                 "the row out with --skip-bad-rows.")
        if isinstance(row, _NotAnObject):
            raise InputError("expected a JSON object", where=where,
                             fix='Write one object per line, e.g. {"text": "..."}.')
        return _record(row, where, text_field, label_field, id_field)

    read.where = where
    return read


def _where(reader) -> str:
    return reader.where
