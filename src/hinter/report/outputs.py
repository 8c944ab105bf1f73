"""What a run writes for tools: summary.json and biases.csv (every run), instances.csv/.parquet (hinter report)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from hinter.files import json_text, write_atomic, write_csv, write_dict_csv
from hinter.pipeline.gcpause import paused
from hinter.analysis.measures import summary
from hinter.store import RunStore, open_run, seal
from hinter.analysis.triage import attach
from hinter.report.diff import diff
from hinter.report.html import render
from hinter.report.instances import ASPECT_COLUMNS, answers_json, export_columns, export_rows, load_instances, shown_id

# One layout for every run, label or free text (docs/summary-schema.md): `measure` says what changed (`outcome`: a
# label task's answer flipped; else the aspects on which a free-text mutant's answers differ); every answer is kept
# (JSON lists: a free-text task's samples, a label task's repeats). The columns each kind had before keep their order.
BIAS_COLUMNS = ("text_id", "source_id", "order", "attributes", "replacements", "hidden", "strictly_hidden", "measure",
                "original_outcome", "mutant_outcome", "differs_on", "hidden_on", "original_answers", "mutant_answers",
                "original_text", "mutant_text", "mutant_raw")
FREE_BIAS_COLUMNS = BIAS_COLUMNS  # deprecated: the one layout


def run_aspects(settings: dict) -> list[str] | None:
    """A generative run's aspects, in the order judged (None: a label run)."""
    aspects = (settings.get("generative") or {}).get("aspects")  # recorded by a free-text run only
    return None if aspects is None else list(aspects)


def write_summary(folder: Path, s: dict) -> Path:
    return write_atomic(Path(folder) / "summary.json", json_text(s, indent=2) + "\n")  # never NaN in JSON


def raw_csv(store: RunStore, raw: bool | None = None) -> bool:
    """Whether the CSVs keep cells as they are (--raw-csv, given now or recorded with the run) rather than safe
    for spreadsheets."""
    return bool(raw if raw is not None else store.settings().get("analysis.raw_csv"))


@paused()  # a row per stored mutant, several times over: freed by their reference count as it returns
def write_outputs(run) -> dict:
    """Write summary.json and biases.csv (every valid mutant that exposes bias) into the run folder; returns
    the summary. Both are computed before either is written: a damaged store changes neither."""
    s = summary(run.store)
    originals = {t.text_id: t for t in run.store.texts()}
    rows = list(_bias_rows(run.store, originals))
    write_summary(run.out_dir, s)
    write_csv(run.out_dir / "biases.csv", BIAS_COLUMNS, rows, raw_csv(run.store))
    seal(run.store)  # report and check then know whether run.sqlite is still the file these outputs came from
    return s


def _bias_rows(store: RunStore, originals: dict):
    """biases.csv's rows (BIAS_COLUMNS), in the order stored: each bias with its outcomes, every answer of the
    original and of the mutant, and the aspects it differs and is hidden on (judged mutants only)."""
    text_id, detail = None, ((), {})
    for m in store.biased_mutants():
        if m.text_id != text_id:  # a text's mutants are stored together: its answers are read once
            text_id, detail = m.text_id, store.answers_of_text(m.text_id)
        answers, judged = detail[1].get(m.pair_key, ((), None))  # judged: {aspect: record}, None for a label
        differs = "+".join(k for k, r in (judged or {}).items() if r.differs)
        o = originals[m.text_id]
        yield (m.text_id, shown_id(o), m.order, m.attributes, "; ".join(r.describe() for r in m.replacements),
               None if m.hidden is None else int(m.hidden),
               None if m.strictly_hidden is None else int(m.strictly_hidden),
               differs or "outcome", o.outcome, m.outcome, differs,
               "+".join(k for k, r in (judged or {}).items() if r.hidden),
               answers_json(detail[0]), answers_json(answers), o.text, m.text, m.raw)


def write_exports(store: RunStore, out_dir: Path, instances=None, raw: bool | None = None) -> list[Path]:
    """instances.csv, and instances.parquet when pyarrow is installed (the `parquet` extra): one row per bias,
    with its groups, hidden flags, attribution and component outcomes (a generative run: answers and aspects)."""
    aspects = run_aspects(store.settings())
    columns = export_columns(aspects)
    rows = export_rows(instances if instances is not None else load_instances(store), aspects)
    written = [out_dir / "instances.csv"]
    write_dict_csv(written[0], columns, ({k: int(v) if isinstance(v, bool) else v for k, v in r.items()}
                                         for r in rows), raw_csv(store, raw))
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return written
    types = {"mutant_id": pa.int64(), "text_id": pa.int64(), "order": pa.int64(), "hidden": pa.bool_(),
             "strictly_hidden": pa.bool_()}
    for a in aspects or ():
        types.update({f"{a}_{c}": pa.bool_() if c in ("differs", "hidden") else pa.float64() for c in ASPECT_COLUMNS})
    schema = pa.schema([(c, types.get(c, pa.string())) for c in columns])
    table = pa.Table.from_pylist(rows, schema=schema)
    tmp = out_dir / f".instances.parquet.{os.getpid()}.tmp"  # renamed over the old one once whole
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, out_dir / "instances.parquet")
    finally:
        tmp.unlink(missing_ok=True)
    return written + [out_dir / "instances.parquet"]


@paused()
def write_report(folder: str | Path, baseline: str | Path | None = None, summary_: dict | None = None,
                 alpha: float | None = None, label: str | None = None, raw_csv: bool | None = None) -> dict:
    """report.html (and instances.csv/.parquet, summary.json refreshed from the store; diff.json with a baseline)
    for the run in `folder`. `summary_`: the run's summary just computed and written (by write_outputs), so it is
    neither computed nor written again. `raw_csv`: --raw-csv given now (None: as recorded with the run). Returns
    {"summary", "files", "diff"}. Everything is read and rendered before any file is written: a store that fails
    to read (a damaged run.sqlite) leaves every output as it was."""
    folder = Path(folder)
    store = open_run(folder, verify=True)
    try:
        s = summary_
        if s is None:
            # derived data: refreshed so that the page and summary.json always agree (and old runs upgrade)
            s = attach(summary(store, alpha, label), store, folder)
        else:
            attach(s, store, folder)  # a reviewer's verdicts (triage.json): on the page and for the gate
        instances = load_instances(store)
        d = None
        if baseline is not None:
            base = open_run(baseline, "--baseline")
            try:
                d = diff(base, store, Path(baseline).name or str(baseline), folder.name or str(folder))
            finally:
                base.close()
        html = render(s, instances, folder.resolve().name, d)
        if summary_ is None:
            write_summary(folder, s)
        files = [folder / "summary.json"] + write_exports(store, folder, instances, raw_csv)
        if d is not None:
            files.append(write_atomic(folder / "diff.json", json_text(d, indent=2) + "\n"))
        files.insert(0, write_atomic(folder / "report.html", html))
        return {"summary": s, "files": files, "diff": d}
    finally:
        store.close()
