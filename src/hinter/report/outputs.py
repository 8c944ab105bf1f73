"""What a run writes for tools: summary.json and biases.csv (every run), instances.csv/.parquet (hinter report)."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from ..measures import summary
from ..store import RunStore
from ..triage import attach
from .instances import ASPECT_COLUMNS, answers_json, export_columns, export_rows, load_instances, shown_id

BIAS_COLUMNS = ("text_id", "source_id", "order", "attributes", "replacements", "hidden", "strictly_hidden",
                "original_outcome", "mutant_outcome", "original_text", "mutant_text", "mutant_raw")
# a generative run's: its answers are texts, every sample kept (JSON lists), and its verdicts are per aspect
FREE_BIAS_COLUMNS = ("text_id", "source_id", "order", "attributes", "replacements", "hidden", "strictly_hidden",
                     "differs_on", "hidden_on", "original_answers", "mutant_answers", "original_text", "mutant_text")


def run_aspects(settings: dict) -> list[str] | None:
    """A generative run's aspects, in the order judged (None: a label run)."""
    generative = settings.get("generative")
    return None if not generative else list(generative.get("aspects") or [])


def write_summary(folder: Path, s: dict) -> Path:
    path = Path(folder) / "summary.json"
    path.write_text(json.dumps(s, indent=2) + "\n", encoding="utf-8")
    return path


def write_outputs(run) -> dict:
    """Write summary.json and biases.csv (every valid mutant that exposes bias) into the run folder; returns
    the summary."""
    s = summary(run.store)
    write_summary(run.out_dir, s)
    originals = {t.text_id: t for t in run.store.texts()}
    if run_aspects(run.store.settings()) is not None:
        _write_free_biases(run.store, run.out_dir / "biases.csv", originals)
        return s
    with open(run.out_dir / "biases.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(BIAS_COLUMNS)
        for m in run.store.biased_mutants():
            reps = "; ".join(r.describe() for r in m.replacements)
            o = originals[m.text_id]
            w.writerow((m.text_id, shown_id(o), m.order, m.attributes, reps, "" if m.hidden is None else int(m.hidden),
                        "" if m.strictly_hidden is None else int(m.strictly_hidden), o.outcome,
                        m.outcome, o.text, m.text, m.raw))
    return s


def _write_free_biases(store: RunStore, path: Path, originals: dict) -> None:
    """A generative run's biases.csv: every answer of the original and of the mutant (they are texts: the outcome
    column would hold one sample), and the aspects on which the mutant differs and is hidden."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(FREE_BIAS_COLUMNS)
        text_id, detail = None, ((), {})
        for m in store.biased_mutants(by_text=True):
            if m.text_id != text_id:
                text_id, detail = m.text_id, store.free_text(m.text_id)
            answers, aspects = detail[1].get(m.pair_key, ((), None))
            o = originals[m.text_id]
            w.writerow((m.text_id, shown_id(o), m.order, m.attributes, "; ".join(r.describe() for r in m.replacements),
                        "" if m.hidden is None else int(m.hidden),
                        "" if m.strictly_hidden is None else int(m.strictly_hidden),
                        "+".join(k for k, r in (aspects or {}).items() if r.differs),
                        "+".join(k for k, r in (aspects or {}).items() if r.hidden),
                        answers_json(detail[0]), answers_json(answers), o.text, m.text))


def write_exports(store: RunStore, out_dir: Path, instances=None) -> list[Path]:
    """instances.csv, and instances.parquet when pyarrow is installed (the `parquet` extra): one row per bias,
    with its groups, hidden flags, attribution and component outcomes (a generative run: answers and aspects)."""
    aspects = run_aspects(store.settings())
    columns = export_columns(aspects)
    rows = export_rows(instances if instances is not None else load_instances(store), aspects)
    written = [out_dir / "instances.csv"]
    with open(written[0], "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, columns)
        w.writeheader()
        w.writerows({k: "" if v is None else (int(v) if isinstance(v, bool) else v) for k, v in r.items()}
                    for r in rows)
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
    pq.write_table(table, out_dir / "instances.parquet")
    return written + [out_dir / "instances.parquet"]


def write_report(folder: str | Path, baseline: str | Path | None = None, summary_: dict | None = None,
                 alpha: float | None = None, label: str | None = None) -> dict:
    """report.html (and instances.csv/.parquet, summary.json refreshed from the store; diff.json with a baseline)
    for the run in `folder`. `summary_`: the run's summary just computed and written (by write_outputs), so it is
    neither computed nor written again. Returns {"summary", "files", "diff"}."""
    from ..store import open_run
    from .diff import diff
    from .html import render
    folder = Path(folder)
    store = open_run(folder, "RUN_DIR")
    try:
        s = summary_
        if s is None:
            # derived data: refreshed so that the page and summary.json always agree (and old runs upgrade)
            s = attach(summary(store, alpha, label), store, folder)
            write_summary(folder, s)
        else:
            attach(s, store, folder)  # a reviewer's verdicts (triage.json): on the page and for the gate
        instances = load_instances(store)
        files = [folder / "summary.json"] + write_exports(store, folder, instances)
        d = None
        if baseline is not None:
            base = open_run(baseline, "--baseline")
            try:
                d = diff(base, store, Path(baseline).name or str(baseline), folder.name or str(folder))
            finally:
                base.close()
            (folder / "diff.json").write_text(json.dumps(d, indent=2) + "\n", encoding="utf-8")
            files.append(folder / "diff.json")
        (folder / "report.html").write_text(render(s, instances, folder.resolve().name, d), encoding="utf-8")
        files.insert(0, folder / "report.html")
        return {"summary": s, "files": files, "diff": d}
    finally:
        store.close()
