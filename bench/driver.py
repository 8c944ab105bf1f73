"""Where a `hinter run --suite` spends its time: start-up, suite reading, model stage, oracle and store writes,
summary and findings, report (issue 25, item 3).

Runs the CLI's `run --suite` in this process, as a user would from a shell, and times its phases by wrapping the
functions that do them (no change to hinter): importing the CLI, `load_suite` (reading and checking the suite
file), the executor's start (loading the model), `execute` (the campaign: the determinism probe, the suite's
verdicts, the model stage, the oracle and the store writes, whose split the run's own stats give), `write_outputs`
(the summary, findings, biases.csv, summary.json), `write_report` (report.html) and the gate. Prints a markdown
table, and with --profile the functions where the time went (cProfile; the profiler slows Python code down, so
its seconds are larger than the table's, which is measured without it).

Then the phases after the model (summary and findings, report.html, `hinter report`) again on a copy of the
finished run, twice in turn: with the read path before issue 25's driver work (`old_read_path`: every reader
unpacks every mutant's edits, a query per component) and with the current one, and checks that both write the
same bytes (summary.json, biases.csv, instances.csv, report.html). --run-dir compares on a finished run alone.

    python bench/driver.py --suite imdb-rgb.suite --model hf:runs/minilm-imdb --out runs/driver
    PYTHONPATH=tests python bench/driver.py --suite imdb-rgb.suite --model python:planted:female_negative
    python bench/driver.py --run-dir runs/driver    # the post-model comparison alone
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
import types
from pathlib import Path

STARTED = time.perf_counter()
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

PHASES = (  # (module, function, phase): each wrapped function's time is its phase's
    # where the run's code calls them (campaign.py and cli/campaign.py import them by name)
    ("hinter.pipeline.suite", "load_suite", "suite reading"),
    ("hinter.executor", "LocalExecutor.start", "model load"),
    ("hinter.campaign", "execute", "campaign"),
    ("hinter.campaign", "write_outputs", "summary, findings, biases.csv"),
    ("hinter.cli.campaign", "write_report", "report.html"),
    ("hinter.cli.campaign", "gate", "gate"),
    # inside the model load (hf: only): its parts, reported apart
    ("hinter.models.hf", "load_pretrained", "load: tokenizer and weights"),
    ("hinter.models.hf", "HFClassifier._warm_up", "load: warm-up"),
)


def wrap(times: dict[str, float], module: str, name: str, phase: str) -> None:
    import importlib
    owner = importlib.import_module(module)
    attr = name
    if "." in name:
        cls, attr = name.split(".")
        owner = getattr(owner, cls)
    original = getattr(owner, attr)

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            times[phase] = times.get(phase, 0.0) + time.perf_counter() - t0

    setattr(owner, attr, timed)


class Busy:
    """When the model stage was at work: the union of the driver's asking (pipeline.start_asking and the function
    it returns, which waits for the answers) and, for each hf: call, the span from its submit to its logits on the
    host (on CUDA read from the GPU's own clock: CUDA events). The run's seconds_model counts the driver's asking
    alone; since the next group's texts are sent before a group is judged and stored, the GPU answers some of them
    while the driver does other work, which seconds_model no longer sees but this does."""

    def __init__(self):
        self.spans: list[tuple[float, float]] = []
        self.submitted: list[float] = []
        self.ended: list = []  # per call: a host time, or a CUDA event
        self.reference = None  # (a CUDA event, the host time it completed at)

    def install(self) -> None:
        from hinter.pipeline import stages as pipeline
        from hinter.models import hf
        start_asking, submit, launch = pipeline.start_asking, hf.HFClassifier.submit, hf.HFClassifier._launch
        spans, busy = self.spans, self

        def timed_start(*args, **kwargs):
            t0 = time.perf_counter()
            finish = start_asking(*args, **kwargs)
            spans.append((t0, time.perf_counter()))

            def timed_finish():
                t1 = time.perf_counter()
                try:
                    return finish()
                finally:
                    spans.append((t1, time.perf_counter()))
            return timed_finish

        def timed_submit(model, texts, *args):
            if texts:
                busy.submitted.append(time.perf_counter())
            return submit(model, texts, *args)

        def timed_launch(model, *args):  # the feeder's thread on CUDA, in submit's order
            torch = model.torch
            cuda = model.device.startswith("cuda")
            if cuda and busy.reference is None:  # the GPU idle: its clock read against the host's
                ref = torch.cuda.Event(enable_timing=True)
                with torch.cuda.device(model.device):
                    ref.record()
                ref.synchronize()
                busy.reference = (ref, time.perf_counter())
            try:
                return launch(model, *args)
            finally:  # a failed launch too, so that each call's end pairs with its submit
                if cuda:
                    end = torch.cuda.Event(enable_timing=True)
                    with torch.cuda.device(model.device):  # the stream the call ran on
                        end.record()  # behind the call's copy of its logits to the host
                    busy.ended.append(end)
                else:
                    busy.ended.append(time.perf_counter())

        pipeline.start_asking, hf.HFClassifier.submit, hf.HFClassifier._launch = timed_start, timed_submit, timed_launch

    def seconds(self) -> float:
        spans = list(self.spans)
        for submitted, end in zip(self.submitted, self.ended):
            if not isinstance(end, float):
                ref, at = self.reference
                end.synchronize()
                end = at + ref.elapsed_time(end) / 1000
            spans.append((submitted, end))
        total, reach = 0.0, float("-inf")
        for a, b in sorted(spans):
            if b > reach:
                total += b - max(a, reach)
                reach = b
        return total


def measure(suite: str, model: str, out: Path, task: str | None) -> tuple[dict[str, float], dict]:
    """Each phase's seconds, and the run's stats."""
    t0 = time.perf_counter()
    import hinter.cli
    times = {"import hinter": time.perf_counter() - t0}
    for module, name, phase in PHASES:
        wrap(times, module, name, phase)
    busy = Busy()
    busy.install()
    argv = ["run", "--suite", suite, "--model", model, "--out", str(out), "--overwrite"]
    argv += ["--task", task] if task else []
    t0 = time.perf_counter()
    sys.argv = ["hinter", *argv]
    try:
        hinter.cli.main()
    except SystemExit as e:
        if e.code not in (0, None, 1, 3):  # 1, 3: the gate failed, which is the model's business here
            raise
    times["whole run (after import)"] = time.perf_counter() - t0
    times["model stage, busy"] = busy.seconds()
    from hinter.store import open_run
    store = open_run(out)
    stats = store.stats()
    store.close()
    return times, stats


def table(times: dict[str, float], stats: dict, summary: dict) -> list[str]:
    campaign = times.get("campaign", 0.0)
    model, oracle, verdicts = (stats.get(k, 0.0) for k in ("seconds_model", "seconds_oracle_store", "seconds_validity"))
    rows = [("import hinter", times["import hinter"]),
            ("suite reading (load_suite)", times.get("suite reading", 0.0)),
            ("model load", times.get("model load", 0.0)),
            ("suite verdicts per batch (the run's seconds_validity)", verdicts),
            ("model stage: the driver asking (the run's seconds_model)", model),
            ("oracle and store writes (the run's seconds_oracle_store)", oracle),
            ("rest of the campaign (determinism probe, store set-up, mutation counters)",
             campaign - times.get("model load", 0.0) - verdicts - model - oracle - stats.get("seconds_mutation", 0.0)),
            ("summary, findings, biases.csv (write_outputs)", times.get("summary, findings, biases.csv", 0.0)),
            ("report.html (write_report)", times.get("report.html", 0.0)),
            ("gate", times.get("gate", 0.0))]
    whole = times["import hinter"] + times["whole run (after import)"]
    rows.append(("other (console output, settings)", whole - sum(s for _, s in rows)))
    totals = summary.get("totals", {})
    mutants = sum(t.get("mutants", 0) for t in totals.values())
    valid = sum(t.get("valid", 0) for t in totals.values())
    lines = [f"{summary.get('texts', '?')} texts, {mutants:,} mutants ({valid:,} valid), "
             f"{int(stats.get('model_calls', 0)):,} model calls", "",
             "| phase | seconds | share |", "|---|---|---|"]
    lines += [f"| {name} | {s:.2f} | {s / whole:.0%} |" for name, s in rows]
    lines.append(f"| **whole process** | **{whole:.2f}** | 100% |")
    if "load: tokenizer and weights" in times:
        weights, warm = times["load: tokenizer and weights"], times.get("load: warm-up", 0.0)
        lines.append(f"\nmodel load {times.get('model load', 0.0):.2f} s: tokenizer and weights (load_pretrained) "
                     f"{weights:.2f} s, warm-up {warm:.2f} s, the rest (importing torch and transformers, CUDA's "
                     f"start, the copy to the device) {times.get('model load', 0.0) - weights - warm:.2f} s")
    start_up = times["import hinter"] + times.get("model load", 0.0)
    busy = times.get("model stage, busy", model)
    lines.append(f"\nmodel stage at work (the driver asking, or the model answering a call: Busy) {busy:.2f} s, "
                 f"of which {busy - model:.2f} s while the driver judged and stored the group before")
    lines.append(f"whole run / (model stage at work + start-up {start_up:.2f} s): {whole / (busy + start_up):.2f}x"
                 f" (with the driver's asking alone, seconds_model: {whole / (model + start_up):.2f}x)")
    return lines


@contextlib.contextmanager
def old_read_path():
    """The store's keyed reads replaced by the read path before them, for a baseline in the same process: every
    mutant's verdicts read with its edits unpacked (twice in a run: the summary, then the report's instances),
    every tested mutant's too (the findings), each component of a bias in a query of its own, each pair id
    parsed again for each observation."""
    from hinter.analysis import findings
    from hinter.analysis.measures import verdicts
    from hinter.report import outputs
    from hinter.records import dictionary_replacements
    from hinter.store.rows import KeyedVerdict, TestedRow, scores_from_json

    def _bool(v):
        return None if v is None else bool(v)
    from hinter.store import RunStore

    def verdict_rows(store):  # the removed RunStore.verdict_rows: every mutant's edits unpacked
        for text_id, order, attrs, reps, valid, bias, hidden, strict in store.db.execute(
                "SELECT text_id, ord, attributes, edits, valid, bias, hidden, strictly_hidden FROM mutants"
                " ORDER BY mutant_id"):
            yield types.SimpleNamespace(text_id=text_id, order=order, attributes=attrs,
                                        replacements=store._replacements(reps), valid=bool(valid), bias=_bool(bias),
                                        hidden=_bool(hidden), strictly_hidden=_bool(strict))

    def finding_rows(store):  # the removed RunStore.finding_rows: every tested mutant's edits unpacked
        for tid, reps, base, outcome, base_scores, scores, base_answers, answers in store.db.execute(
                """SELECT m.text_id, m.edits, COALESCE(m.base_outcome, t.outcome), m.outcome,
                          CASE WHEN m.base_outcome IS NULL THEN t.scores ELSE m.base_scores END, m.scores,
                          CASE WHEN m.base_outcome IS NULL THEN t.answers END, m.answers
                   FROM mutants m JOIN texts t USING (text_id) WHERE m.valid = 1 AND m.bias IS NOT NULL
                   ORDER BY m.mutant_id"""):
            yield (tid, store._replacements(reps), base, outcome, scores_from_json(base_scores),
                   scores_from_json(scores), tuple(json.loads(base_answers)) if base_answers else (base,),
                   tuple(json.loads(answers)) if answers else (outcome,))

    def keyed_verdicts(self):
        for r in verdict_rows(self):
            pairs = dictionary_replacements(r.replacements)
            yield KeyedVerdict(r.text_id, r.order, r.attributes, tuple(x.pair_id for x in pairs),
                               tuple(x.target_group for x in pairs), r.valid, r.bias, r.hidden, r.strictly_hidden)

    def tested_rows(self):
        for i, (tid, reps, *compared) in enumerate(finding_rows(self)):
            yield TestedRow(i, tid, tuple(x.pair_id for x in dictionary_replacements(reps)), *compared)

    def components_of(self, keys):
        return {k: c for k in keys for c in [self.component(*k)] if c is not None}

    load_instances = outputs.load_instances

    def load_instances_after_every_verdict(store, limit=None):
        verdicts(store)  # the instances read every mutant's verdicts first (the attribution's input)
        return load_instances(store, limit)

    patches = [(outputs, "load_instances", load_instances_after_every_verdict),
               (RunStore, "keyed_verdicts", keyed_verdicts), (RunStore, "tested_rows", tested_rows),
               (RunStore, "components_of", components_of),
               (findings, "component_of", findings.Component.from_pair_id)]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, new in patches:
        setattr(owner, name, new)
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


POST_PHASES = ("summary, findings, biases.csv (write_outputs)", "report.html after a run (write_report)",
               "hinter report (summary, findings, report.html, exports)")
OUTPUTS = ("summary.json", "biases.csv", "instances.csv", "report.html")


def post_model(run_dir: Path, repeats: int) -> list[str]:
    """The post-model phases on copies of the run in `run_dir`, with the old read path and the current one in turn
    (the best of `repeats` each, in wall-clock and in this process's CPU seconds), and whether both wrote the same
    bytes."""
    from hinter.report import write_outputs, write_report
    from hinter.store import open_run
    import hinter.report.html  # noqa: F401  (imported before timing: the run imported it too)
    best = {(variant, clock): [float("inf")] * 3 for variant in ("before", "now") for clock in ("wall", "cpu")}
    with tempfile.TemporaryDirectory() as tmp:
        folders = {}
        for variant in ("before", "now"):  # the same folder name: the page's title is the run folder's name
            folders[variant] = Path(tmp) / variant / run_dir.resolve().name
            folders[variant].mkdir(parents=True)
            shutil.copy(run_dir / "run.sqlite", folders[variant] / "run.sqlite")
        for _ in range(repeats):
            for variant, folder in folders.items():
                with old_read_path() if variant == "before" else contextlib.nullcontext():
                    marks = [(time.perf_counter(), time.process_time())]
                    store = open_run(folder)
                    try:
                        s = write_outputs(types.SimpleNamespace(store=store, out_dir=folder))
                    finally:
                        store.close()
                    marks.append((time.perf_counter(), time.process_time()))
                    write_report(folder, summary_=s)
                    marks.append((time.perf_counter(), time.process_time()))
                    write_report(folder)
                    marks.append((time.perf_counter(), time.process_time()))
                for c, clock in enumerate(("wall", "cpu")):
                    took = [marks[i + 1][c] - marks[i][c] for i in range(3)]
                    best[variant, clock] = [min(a, b) for a, b in zip(best[variant, clock], took)]
        same = [name for name in OUTPUTS
                if (folders["before"] / name).read_bytes() == (folders["now"] / name).read_bytes()]
    lines = [f"\nPhases after the model, on a copy of the finished run (best of {repeats}): with the read path "
             "before (every reader unpacks every mutant's edits) and now; CPU: this process's CPU seconds", "",
             "| phase | before s | now s | before / now | before CPU s | now CPU s |", "|---|---|---|---|---|---|"]

    def row(name, pick):
        b, a = (pick(best[v, "wall"]) for v in ("before", "now"))
        bc, ac = (pick(best[v, "cpu"]) for v in ("before", "now"))
        return f"| {name} | {b:.2f} | {a:.2f} | {b / a:.2f}x | {bc:.2f} | {ac:.2f} |"

    lines += [row(name, lambda t, i=i: t[i]) for i, name in enumerate(POST_PHASES)]
    lines.append(row("**a run's phases after the model (the first two)**", lambda t: t[0] + t[1]))
    differ = [name for name in OUTPUTS if name not in same]
    lines.append("\nSame bytes before and now: " + ("yes (" + ", ".join(same) + ")" if not differ
                                                     else "NO: " + ", ".join(differ) + " differ"))
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", help="the suite to run (required unless --run-dir)")
    ap.add_argument("--model", help="the model to run it with (required unless --run-dir)")
    ap.add_argument("--run-dir", type=Path, default=None,
                    help="compare the post-model phases on this finished run only (no run)")
    ap.add_argument("--repeats", type=int, default=2, help="runs of each post-model variant (the best is shown)")
    ap.add_argument("--no-compare", action="store_true", help="leave out the post-model before/now comparison")
    ap.add_argument("--task", default=None)
    ap.add_argument("--out", default="runs/driver")
    ap.add_argument("--profile", default=None, help="also write a cProfile of the whole run here, print its top")
    ap.add_argument("--json", default=None, help="write the phases and stats here")
    args = ap.parse_args()
    if args.run_dir is not None:
        print("\n".join(post_model(args.run_dir, args.repeats)))
        return
    if not (args.suite and args.model):
        ap.error("--suite and --model are required (or --run-dir)")
    out = Path(args.out)
    if args.profile:
        import cProfile
        import pstats
        profiler = cProfile.Profile()
        profiler.enable()
        times, stats = measure(args.suite, args.model, out, args.task)
        profiler.disable()
        profiler.dump_stats(args.profile)
        print("\ncProfile, top 25 by own time:")
        pstats.Stats(args.profile).sort_stats("tottime").print_stats(25)
    else:
        times, stats = measure(args.suite, args.model, out, args.task)
    summary = json.loads((out / "summary.json").read_text())
    print("\n".join(table(times, stats, summary)))
    if not args.no_compare:
        print("\n".join(post_model(out, args.repeats)))
    if args.json:
        Path(args.json).write_text(json.dumps({"times": times, "stats": stats}, indent=1))


if __name__ == "__main__":
    main()
