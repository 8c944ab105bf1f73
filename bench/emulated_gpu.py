"""A whole `hinter run --suite` with an emulated GPU, this tree against a baseline checkout, alternated on one
machine: what the driver's structure (the feeder thread, groups of calls, the next group asked while this one is
stored) does to the run when no device is at hand. Not a measure of a GPU: each forward batch is a `time.sleep`
(which lets go of the GIL, as a wait for the GPU does) of --gpu-ms per 512 rows of 256 tokens, and the logits a
cheap planted rule; the feeder thread, the tokenizing thread and four calls a group are set as on CUDA.

Each run is bench/driver.py of its own tree in a process of its own; the table gives each tree's whole run and
model stage (mean and standard deviation over --runs), and the paired difference with SciPy's paired t-test.

    git worktree add /tmp/baseline 195cc54
    python bench/emulated_gpu.py --suite imdb-rgb.suite --model runs/minilm-imdb --baseline /tmp/baseline
"""
from __future__ import annotations

import argparse
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(src: Path, suite: str, model: str, out: Path, report: Path, gpu_ms: float, switch: float | None) -> None:
    """In this process: `src`'s hf: classifier with the emulated GPU, then `src`'s bench/driver.py."""
    sys.path.insert(0, str(src / "src"))
    if switch is not None:
        sys.setswitchinterval(switch)
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    import torch
    from hinter.models import hf
    marked: list = []

    def run(self, rows, width):  # padded as the real _run pads (its host cost kept), then the GPU's wait
        if not marked:
            marked.append(np.array(sorted({i for w in (" she", " her", " woman", " black", " fat", " muslim")
                                           for i in self.tokenizer(w, add_special_tokens=False)["input_ids"]})))
        ids = np.zeros((len(rows), width), dtype=np.int64)
        for r, row in enumerate(rows):
            ids[r, :len(row)] = row
        lengths = np.array([len(row) for row in rows])
        logits = np.stack([np.zeros(len(rows)), np.isin(ids, marked[0]).sum(axis=1) - 0.5 + (lengths % 3) * 0.1],
                          axis=1).astype(np.float32)
        time.sleep(gpu_ms / 1000 * len(rows) * width / (512 * 256))
        return torch.from_numpy(logits)

    init = hf.HFClassifier.__init__

    def cuda_like(self, *args, **kwargs):  # CUDA's threads and groups, on the CPU
        init(self, *args, **kwargs)
        self._feeder = ThreadPoolExecutor(1, thread_name_prefix="hinter-hf-feeder")
        self._pool = self._pool or ThreadPoolExecutor(1, thread_name_prefix="hinter-hf-tokenizer")
        self.asks_ahead = hf.ASKS_AHEAD * self.batch_size

    hf.HFClassifier._run, hf.HFClassifier._warm_up, hf.HFClassifier.__init__ = run, lambda self: None, cuda_like
    sys.argv = ["driver.py", "--suite", suite, "--model", f"hf:{model}?device=cpu&batch_size=512", "--out", str(out),
                "--no-compare", "--json", str(report)]
    runpy.run_path(str(src / "bench" / "driver.py"), run_name="__main__")


def measure(src: Path, args, tmp: Path) -> dict[str, float]:
    report = tmp / "driver.json"
    done = subprocess.run([sys.executable, __file__, "--child", str(src), "--suite", args.suite, "--model",
                           args.model, "--gpu-ms", str(args.gpu_ms), "--out", str(tmp / "run")]
                          + ([] if args.switch is None else ["--switch", str(args.switch)]), capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": ""})
    if done.returncode != 0:
        raise SystemExit(f"the run of {src} failed:\n{done.stderr[-3000:]}")
    got = json.loads(report.read_text())
    times, stats = got["times"], got["stats"]
    return {"whole": times["import hinter"] + times["whole run (after import)"],
            "asking": stats["seconds_model"], "at work": times.get("model stage, busy", stats["seconds_model"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", required=True)
    ap.add_argument("--model", required=True, help="an hf: classifier's folder (its tokenizer is what counts)")
    ap.add_argument("--baseline", type=Path, help="a checkout of the commit to compare with")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--gpu-ms", type=float, default=12.0, help="the emulated forward pass per 512 x 256 tokens")
    ap.add_argument("--switch", type=float, default=None, help="sys.setswitchinterval in the runs (default 5 ms)")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.suite, args.model, args.out, args.out.parent / "driver.json", args.gpu_ms,
                     args.switch)
    trees = {"this tree": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for i in range(args.runs):
        for name, src in (trees.items() if i % 2 == 0 else reversed(trees.items())):  # alternated
            with tempfile.TemporaryDirectory() as tmp:
                runs[name].append(measure(src, args, Path(tmp)))
            print(f"run {i + 1}, {name}: whole {runs[name][-1]['whole']:.2f} s", flush=True)

    def cell(name, key):
        values = [r[key] for r in runs[name]]
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.mean(values):.2f} ± {sd:.2f}"
    lines = ["", f"Emulated GPU ({args.gpu_ms:g} ms per 512 x 256 tokens), {args.runs} runs each, seconds (mean ± sd):",
             "", "| tree | whole process | model stage: the driver asking | model stage at work |", "|---|---|---|---|"]
    lines += [f"| {name} | {cell(name, 'whole')} | {cell(name, 'asking')} | {cell(name, 'at work')} |"
              for name in trees]
    if args.baseline and args.runs > 1:
        from scipy.stats import ttest_rel
        base, now = ([r["whole"] for r in runs[n]] for n in ("baseline", "this tree"))
        diff = [b - n for b, n in zip(base, now)]
        lines.append(f"\nwhole run, baseline less this tree: {statistics.mean(diff):.2f} s (sd {statistics.stdev(diff):.2f}"
                     f" over {len(diff)} pairs), paired t-test p = {ttest_rel(base, now).pvalue:.3f}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
