"""hinter's `hf:` model stage on a GPU against the best pass written by hand, in the same run on the same texts.

Meant for a GPU machine with torch and transformers but no spaCy (docs/gpu.md says how to carry hinter there):
it fine-tunes an IMDB sentiment classifier from all-MiniLM-L6-v2 on the bundled IMDB sample (on the GPU), runs
the suite with `hinter run --suite` once per precision (`hf:FOLDER?dtype=float32|float16|bfloat16`), then, in
this process, on every text those runs asked (originals and valid mutants):

- the hand-written passes of issue 25's table, from the weakest (fp32, dataset order, batch 64, transformers'
  tokenizer per batch) to the best (bf16 weights, sorted by length, batch 512, all texts tokenized first by the
  Rust tokenizer's `encode_batch_fast`), each with its logits copied back to the host, max_length 512, timed
  after a warm-up, the best of --repeat tries;
- hinter's classifier alone (`HFClassifier.predict` over all the texts, in predict() calls of its batch_size);
- each precision's labels against float32's, wherever float32's logit margin exceeds --margin, and overall.

hinter's stage is the run's own `seconds_model` (on CUDA the engine hands the model 8,192 texts at a time: several
batches of 32 originals and their mutants). With --big-suite, also bench/driver.py's breakdown of a whole
`run --suite` on it.

With --reference (the reference pass, `../shared/tools/gpu_best_pass.py`, copied beside the checkout: it is not
part of the project), that pass runs in its own process on the float16 run and the big run, with the same
classifier: issue 32's tables, hinter's model stage and classifier (with and without the mutants' edits) against
it, and the forward passes alone. --hand-passes adds issue 25's hand-written passes. Prints markdown tables;
writes gpu.json to --out.

    python bench/gpu.py --suite imdb.suite --big-suite imdb-rgb.suite --base .gpu/minilm16 \
        --reference .gpu/gpu_best_pass.py --out /tmp/gpu
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "scripts")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hinter.store import open_run  # noqa: E402

DTYPES = ("float32", "float16", "bfloat16")
MAX_LENGTH = 512


def env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def hinter_run(suite: str, model: str, out: Path) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "hinter.cli", "run", "--suite", suite, "--model", model, "--out",
                           str(out), "--overwrite"], env=env(), cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1, 3):  # 1, 3: the gate's verdict on the model, not a failure of the run
        sys.exit(f"hinter run failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return time.perf_counter() - t0


def asked_texts(out: Path) -> dict[str, tuple]:
    """Every distinct text the run asked (originals, then mutants), with its scores (logits)."""
    store = open_run(out)
    scores: dict[str, tuple] = {}
    for t in store.texts():
        scores.setdefault(t.text, t.scores)
    for m in store.tested_mutants():
        scores.setdefault(m.text, m.scores)
    store.close()
    return scores


# ---------------------------------------------------------------------- the hand-written passes

def passes(folder: Path, texts: list[str], repeat: int, device: str,
           only_best: bool = False) -> tuple[list[dict], dict]:
    """Issue 25's table as a function: each pass's seconds (best of `repeat`) over `texts` on `device`; and the
    best pass's logits."""
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(folder)
    fp32 = AutoModelForSequenceClassification.from_pretrained(folder, dtype=torch.float32).to(device).eval()
    bf16 = AutoModelForSequenceClassification.from_pretrained(folder, dtype=torch.bfloat16).to(device).eval()
    rust = Tokenizer.from_str(tok.backend_tokenizer.to_str())
    rust.no_padding()
    rust.enable_truncation(MAX_LENGTH)
    by_length = sorted(texts, key=len)

    def per_batch(model, order, size, autocast=False):
        """transformers' tokenizer on each batch, then the forward pass."""
        tokenize = forward = 0.0
        for i in range(0, len(order), size):
            t0 = time.perf_counter()
            enc = tok(order[i:i + size], truncation=True, max_length=MAX_LENGTH, padding=True, return_tensors="pt")
            t1 = time.perf_counter()
            with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=autocast):
                model(**enc.to(device)).logits.float().cpu()
            tokenize, forward = tokenize + t1 - t0, forward + time.perf_counter() - t1
        return tokenize, forward

    def pretokenized(model, size, autocast=False, fast=False):
        """All texts tokenized first (one call), sorted by token count, then the forward passes."""
        t0 = time.perf_counter()
        if fast:
            ids = [e.ids for e in rust.encode_batch_fast(texts)]
        else:
            ids = tok(texts, truncation=True, max_length=MAX_LENGTH)["input_ids"]
        ids.sort(key=len)
        t1 = time.perf_counter()
        pad = tok.pad_token_id or 0
        for i in range(0, len(ids), size):
            chunk = ids[i:i + size]
            width = len(chunk[-1])
            batch = torch.tensor([e + [pad] * (width - len(e)) for e in chunk])
            mask = torch.tensor([[1] * len(e) + [0] * (width - len(e)) for e in chunk])
            with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=autocast):
                model(input_ids=batch.to(device), attention_mask=mask.to(device)).logits.float().cpu()
        return t1 - t0, time.perf_counter() - t1

    table = [
        ("fp32, dataset order, batch 64 (the old bench's raw pass)", lambda: per_batch(fp32, texts, 64)),
        ("fp32, sorted by length, batch 64", lambda: per_batch(fp32, by_length, 64)),
        ("bf16 autocast, sorted, batch 256", lambda: per_batch(fp32, by_length, 256, autocast=True)),
        ("the same, all texts tokenized by one transformers call first",
         lambda: pretokenized(fp32, 256, autocast=True)),
        ("**best pass**: bf16 weights, batch 512, all texts tokenized by `encode_batch_fast` first",
         lambda: pretokenized(bf16, 512, fast=True)),
    ][-1 if only_best else 0:]
    rows = []
    with torch.inference_mode():
        if not only_best:  # warm-up: CUDA context, kernels, the tokenizer's caches (only_best: done before)
            per_batch(fp32, texts[:256], 64)
            pretokenized(bf16, 512, fast=True)
        for name, run in table:
            tries = []
            for _ in range(repeat):
                sync()
                t0 = time.perf_counter()
                tokenize, forward = run()
                sync()
                tries.append((time.perf_counter() - t0, tokenize, forward))
            seconds, tokenize, forward = min(tries)
            rows.append({"pass": name, "seconds": seconds, "tokenize_s": tokenize, "forward_s": forward,
                         "texts_per_s": len(texts) / seconds, "all_s": [t[0] for t in tries]})
            print(f"pass: {rows[-1]}", flush=True)
        if only_best:
            return rows, {}
        # the best pass's logits, for the precision table
        ids = [e.ids for e in rust.encode_batch_fast(texts)]
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        labels = {}
        for i in range(0, len(order), 512):
            chunk = order[i:i + 512]
            width = max(len(ids[k]) for k in chunk)
            batch = torch.tensor([ids[k] + [0] * (width - len(ids[k])) for k in chunk])
            mask = torch.tensor([[1] * len(ids[k]) + [0] * (width - len(ids[k])) for k in chunk])
            logits = bf16(input_ids=batch.to(device), attention_mask=mask.to(device)).logits.float().cpu().tolist()
            for k, row in zip(chunk, logits):
                labels[texts[k]] = tuple(zip([bf16.config.id2label[j] for j in range(len(row))], row))
    return rows, labels


def sync() -> None:
    import torch
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def classifier_alone(folder: Path, texts: list[str], dtype: str, repeat: int, device: str,
                     derived: dict | None = None, answers: list | None = None, graphs: bool = True) -> float:
    """Seconds for hinter's classifier over all texts, in predict() calls of its batch_size (best of `repeat`);
    with `derived` (each mutant's original and edits, as a run hands them) it tokenizes only what changed.
    `answers`: filled with the last try's outcomes. `graphs`: False launches every forward batch op by op (no
    CUDA graphs), for the comparison."""
    from hinter.models.hf import HFClassifier
    HFClassifier.graphs = graphs
    try:
        model = HFClassifier(folder, dtype=dtype, device=device)
    finally:
        HFClassifier.graphs = True
    model.predict(texts[:model.forward_batch])  # warm-up
    tries = []
    import gc
    for _ in range(repeat):
        model._bases.clear()  # each try tokenizes the originals again
        gc.freeze()  # the bench's own objects left out of the collections, as a run's pipeline does (per batch)
        sync()
        t0 = time.perf_counter()
        outcomes = []
        for i in range(0, len(texts), model.batch_size):
            chunk = texts[i:i + model.batch_size]
            outcomes += model.predict(chunk, {t: derived[t] for t in chunk if t in derived} if derived else None)
        tries.append(time.perf_counter() - t0)
        gc.unfreeze()
    if answers is not None:
        answers[:] = outcomes
    print(f"classifier alone, {dtype}{', with edits' if derived else ''}: {', '.join(f'{t:.2f}' for t in tries)} s; "
          f"texts tokenized {model.tokenized}; CUDA graphs {len(model._graphs)}", flush=True)
    del model
    return min(tries)


def derivations(out: Path) -> dict[str, tuple[str, list]]:
    """Each tested mutant's text: its original's text and its edits, as a run hands them to the model."""
    from hinter.records import edits
    store = open_run(out)
    originals = {t.text_id: t.text for t in store.texts()}
    derived = {m.text: (originals[m.text_id], edits(m.replacements)) for m in store.tested_mutants()}
    store.close()
    return derived


def reference(tool: str, folder: Path, run_dir: Path, out: Path, repeat: int) -> dict:
    """The reference pass (its own process) on a run's texts: its JSON row."""
    target = out / f"reference-{run_dir.name}.json"
    done = subprocess.run([sys.executable, tool, "--model", str(folder), "--run", str(run_dir), "--src",
                           str(ROOT / "src"), "--repeat", str(repeat), "--json", str(target)], env=env(), cwd=ROOT,
                          capture_output=True, text=True)
    print(done.stdout[-2000:], done.stderr[-2000:] if done.returncode else "", flush=True)
    if done.returncode != 0:
        return {}
    return json.loads(target.read_text())["runs"][0]


def reference_table(title: str, row: dict, stage_s: float, alone_edits_s: float | None) -> list[str]:
    """Issue 32's table: hinter's figures against the reference pass on the same texts."""
    n = row["texts"]
    best = min(row["best_seq_s"], row["overlap_s"])
    lines = [f"| {title} ({n:,} texts asked) | texts/s | of the reference pass |", "|---|---|---|",
             f"| reference pass (gpu_best_pass.py: best of sequential {row['best_seq_s']:.2f} s and overlapped "
             f"{row['overlap_s']:.2f} s; tokenizing alone {row['tok_s']:.2f} s) | {n / best:,.0f} | 100% |",
             f"| **hinter float16 (default), model stage of `run --suite`** ({stage_s:.2f} s) | {n / stage_s:,.0f} | "
             f"**{best / stage_s:.0%}** |"]
    if alone_edits_s:
        lines.append(f"| hinter float16, the classifier alone with the mutants' edits ({alone_edits_s:.2f} s) | "
                     f"{n / alone_edits_s:,.0f} | {best / alone_edits_s:.0%} |")
    lines += [f"| hinter float16, the classifier alone without them (the reference tool's `predict()` over all "
              f"texts, {row['hinter_alone_s']:.2f} s) | {n / row['hinter_alone_s']:,.0f} | "
              f"{best / row['hinter_alone_s']:.0%} |",
              f"| the forward passes alone, pre-tokenized ({row['fwd_s']:.2f} s) | {n / row['fwd_s']:,.0f} | "
              f"{best / row['fwd_s']:.0%} |"]
    return lines


# ---------------------------------------------------------------------- labels against float32

def top(scores: tuple) -> str:
    return max(scores, key=lambda s: s[1])[0]


def margin(scores: tuple) -> float:
    values = sorted(v for _, v in scores)
    return values[-1] - values[-2]


def agreement(reference: dict[str, tuple], other: dict[str, tuple], at: float) -> dict:
    common = [t for t in reference if reference[t] and other.get(t)]
    decisive = [t for t in common if margin(reference[t]) > at]
    return {"texts": len(common), "differ": sum(top(reference[t]) != top(other[t]) for t in common),
            "decisive": len(decisive), "differ_decisive": sum(top(reference[t]) != top(other[t]) for t in decisive),
            "max_logit_shift": max((abs(x[1] - y[1]) for t in common for x, y in zip(reference[t], other[t])),
                                   default=0.0)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--big-suite", default=None, help="also break a whole run --suite on this one down")
    ap.add_argument("--base", default=None, help="MiniLM encoder folder (default: the PyPI package's)")
    ap.add_argument("--out", default="runs/gpu")
    ap.add_argument("--repeat", type=int, default=3, help="tries of each in-process pass (the best is shown)")
    ap.add_argument("--train-limit", type=int, default=None, help="train on the first N reviews (a quick check)")
    ap.add_argument("--device", default="cuda", help="cpu: a quick check of this script on a small suite")
    ap.add_argument("--margin", type=float, default=0.05, help="float32 logit margin of the precision table")
    ap.add_argument("--reference", default=None, help="gpu_best_pass.py: issue 32's reference pass, in its own process")
    ap.add_argument("--hand-passes", action="store_true", help="also issue 25's passes written by hand")
    ap.add_argument("--big-repeat", type=int, default=2, help="tries of each pass on --big-suite's texts")
    ap.add_argument("--no-whole-check", action="store_true",
                    help="leave out the big run's texts tokenized whole (the check that splicing changes no answer)")
    ap.add_argument("--dtypes", default=",".join(DTYPES),
                    help="the precisions run on the suite (float16 is needed; the label table needs float32)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import tokenizers
    import torch
    import transformers
    from train_minilm import train
    t0 = time.perf_counter()
    folder = train("imdb", out / "minilm-imdb", base=args.base, device=args.device, limit=args.train_limit)
    train_s = time.perf_counter() - t0

    dtypes = tuple(d for d in DTYPES if d in args.dtypes.split(","))
    runs, scores = {}, {}
    for dtype in dtypes:
        run_dir = out / f"run-{dtype}"
        wall = hinter_run(args.suite, f"hf:{folder}?dtype={dtype}&device={args.device}", run_dir)
        store = open_run(run_dir)
        stats = store.stats()
        store.close()
        scores[dtype] = asked_texts(run_dir)
        runs[dtype] = {"wall_s": wall, "seconds_model": stats["seconds_model"],
                       "model_calls": int(stats.get("model_calls", 0))}
        print(f"run --suite, {dtype}: {runs[dtype]}", flush=True)
    texts = list(scores[dtypes[0]])
    n = len(texts)
    derived = derivations(out / "run-float16")
    pass_rows, best_labels = passes(folder, texts, args.repeat, args.device) if args.hand_passes else ([], {})
    for dtype in dtypes:
        try:
            runs[dtype]["alone_s"] = classifier_alone(folder, texts, dtype, args.repeat, args.device, derived)
        except Exception as e:  # the runs' own figures still stand
            print(f"classifier alone, {dtype}: {type(e).__name__}: {e}", flush=True)
            runs[dtype]["alone_s"] = float("nan")
    precision = ({f"hinter {d}": agreement(scores["float32"], scores[d], args.margin) for d in dtypes[1:]}
                 if "float32" in scores else {})
    if best_labels:
        precision["best pass (bf16 weights)"] = agreement(scores["float32"], best_labels, args.margin)
    references = {}
    if args.reference:
        references["suite"] = reference(args.reference, folder, out / "run-float16", out, args.repeat)

    gpu = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else args.device
    lines = [f"GPU: {gpu}; torch {torch.__version__}, transformers {transformers.__version__}, tokenizers "
             f"{tokenizers.__version__}; {n:,} texts (every original and valid mutant of {args.suite}), max_length "
             f"{MAX_LENGTH}; classifier fine-tuned there in {train_s:.1f} s; in-process passes: best of {args.repeat}"]
    if pass_rows:
        lines += ["", "| pass | texts/s | seconds | of which tokenizing |", "|---|---|---|---|"]
        lines += [f"| {r['pass']} | {r['texts_per_s']:,.0f} | {r['seconds']:.2f} | {r['tokenize_s']:.2f} |"
                  for r in pass_rows]
    if references.get("suite"):
        lines += ["", *reference_table("on the IMDB suite", references["suite"], runs["float16"]["seconds_model"],
                                       runs["float16"]["alone_s"])]
    lines += ["", "hinter by precision (classifier alone: predict() over all texts, with the mutants' edits):", "",
              "| hinter, dtype | model stage of `run --suite` (seconds_model) | classifier alone | whole "
              "`run --suite` |", "|---|---|---|---|"]
    for d in dtypes:
        r = runs[d]
        stage, alone = n / r["seconds_model"], n / r["alone_s"]
        lines.append(f"| {d} | {r['seconds_model']:.2f} s, {stage:,.0f} texts/s | {r['alone_s']:.2f} s, "
                     f"{alone:,.0f} texts/s | {r['wall_s']:.1f} s |")
    lines += ["", f"Labels against hinter's float32 run (margin: float32's logit margin over {args.margin}):", "",
              "| precision | texts | labels differ | texts over the margin | labels differ there | largest logit "
              "shift |", "|---|---|---|---|---|---|"]
    for name, a in precision.items():
        lines.append(f"| {name} | {a['texts']:,} | {a['differ']} | {a['decisive']:,} | {a['differ_decisive']} | "
                     f"{a['max_logit_shift']:.3f} |")
    driver = driver_best = None
    if args.big_suite:
        done = subprocess.run([sys.executable, str(ROOT / "bench" / "driver.py"), "--suite", args.big_suite,
                               "--model", f"hf:{folder}?device={args.device}", "--out", str(out / "run-big"),
                               "--json", str(out / "driver.json"), "--no-compare"], env=env(), cwd=ROOT, capture_output=True,
                              text=True)
        out_lines = done.stdout.splitlines()
        first = next((i for i, line in enumerate(out_lines) if " model calls" in line and " texts, " in line), None)
        driver = "\n".join(out_lines[first:]) if first is not None else done.stdout[-3000:]
        lines += ["", f"A whole `run --suite {args.big_suite}` (default dtype), by phase (bench/driver.py):", "",
                  driver]
        if done.returncode != 0:
            lines.append(f"(driver.py exited {done.returncode}: {done.stderr[-2000:]})")
        else:  # the reference pass on that run's texts: its model stage against it
            # the stage at work (bench/driver.py's Busy): the run's seconds_model leaves out what the GPU answered
            # while the driver judged and stored the group before
            measured = json.loads((out / "driver.json").read_text())
            stage = measured["times"].get("model stage, busy", measured["stats"]["seconds_model"])
            if args.reference:
                big_derived = derivations(out / "run-big")
                stored = asked_texts(out / "run-big")  # the run's answers, asked by the pipeline through the cache
                big_texts = list(stored)
                spliced, whole = [], []
                alone = classifier_alone(folder, big_texts, "float16", args.big_repeat, args.device, big_derived,
                                         spliced)
                shift = max(abs(x - y) for t, a in zip(big_texts, spliced) for (_, x), (_, y) in zip(a.scores, stored[t]))
                lines += ["", f"The big run's stored answers against the classifier alone on the same "
                              f"{len(big_texts):,} texts: {sum(a.value == top(stored[t]) for t, a in zip(big_texts, spliced)):,} "
                              f"give the same label, the largest logit difference {shift:.4f}."]
                eager: list = []
                alone_eager = classifier_alone(folder, big_texts, "float16", 1, args.device, big_derived, eager,
                                               graphs=False)
                shift = max(abs(x - y) for a, b in zip(spliced, eager) for (_, x), (_, y) in zip(a.scores, b.scores))
                lines += ["", f"The classifier alone with the mutants' edits, float16, on the big run's "
                              f"{len(big_texts):,} texts: {alone:.2f} s with full forward batches replayed from CUDA "
                              f"graphs, {alone_eager:.2f} s with every batch launched op by op; "
                              f"{sum(a.value == b.value for a, b in zip(spliced, eager)):,} texts give the same label "
                              f"both ways, the largest logit difference {shift:.4f}."]
                if not args.no_whole_check:
                    classifier_alone(folder, big_texts, "float16", 1, args.device, None, whole)
                    same = sum((a.raw, a.seen) == (b.raw, b.seen) for a, b in zip(spliced, whole))
                    lines += ["", f"Tokenizing what changed against whole texts, float16, on the big run's "
                                  f"{len(big_texts):,} texts: {same:,} give the same raw answer (logits to 4 "
                                  f"decimals) and the same `seen`, {len(big_texts) - same:,} differ."]
                references["big"] = reference(args.reference, folder, out / "run-big", out, args.big_repeat)
                if references["big"]:
                    lines += ["", *reference_table(f"on {args.big_suite}", references["big"], stage, alone)]
            elif args.hand_passes:
                big = asked_texts(out / "run-big")
                (big_best,), _ = passes(folder, list(big), 1, args.device, only_best=True)
                lines.append(f"\nOn that run's {len(big):,} texts: the best pass {big_best['seconds']:.2f} s "
                             f"({big_best['texts_per_s']:,.0f} texts/s, tokenizing {big_best['tokenize_s']:.2f} s); "
                             f"hinter's model stage {stage:.2f} s ({len(big) / stage:,.0f} texts/s), "
                             f"{big_best['seconds'] / stage:.0%} of the best pass")
                driver_best = {"texts": len(big), "best": big_best, "seconds_model": stage}
    print("\n".join(lines))
    (out / "gpu.md").write_text("\n".join(lines) + "\n")
    (out / "gpu.json").write_text(json.dumps({"gpu": gpu, "torch": torch.__version__, "train_s": train_s,
                                              "texts": n, "passes": pass_rows, "runs": runs, "precision": precision,
                                              "margin": args.margin, "driver": driver,
                                              "driver_best": driver_best, "references": references}, indent=1))


if __name__ == "__main__":
    main()
