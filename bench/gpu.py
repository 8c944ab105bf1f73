"""A suite run on a GPU: hinter's model stage against the raw batched forward pass of the same model.

Meant for a GPU machine with torch and transformers but no spaCy (see README, "Run a suite on a GPU machine"):
it fine-tunes an IMDB sentiment classifier from all-MiniLM-L6-v2 on the bundled IMDB sample (on the GPU), runs
the suite against it with `hinter run --suite` on the GPU and on the CPU, then times the raw forward pass
(tokenizer + model, the same batch size, the same texts: every original and mutant hinter asked) and compares
the two runs' labels wherever the logit margin exceeds 1e-3. Prints a markdown table; writes gpu.json to --out.

    python bench/gpu.py --suite imdb.suite --base .gpu/minilm16 --out /tmp/gpu
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


def hinter_run(suite: str, model: str, out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "hinter.cli", "run", "--suite", suite, "--model", model, "--out",
                           str(out), "--overwrite"], env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"hinter run failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return time.perf_counter() - t0


def asked_texts(out: Path) -> tuple[list[str], dict[str, tuple]]:
    """Every distinct text the run asked (originals, then mutants), and each text's scores (logits)."""
    store = open_run(out)
    scores: dict[str, tuple] = {}
    for t in store.texts():
        scores.setdefault(t.text, t.scores)
    for m in store.tested_mutants():
        scores.setdefault(m.text, m.scores)
    store.close()
    return list(scores), scores


def raw_forward(folder: Path, texts: list[str], device: str, batch_size: int, max_length: int) -> tuple[float, float]:
    """Seconds for the raw batched pass: (tokenizer + forward, forward alone), after one warm-up batch."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).to(device).eval()
    batches = [texts[i:i + batch_size] for i in range(0, len(texts), batch_size)]
    with torch.inference_mode():
        model(**tok(batches[0], truncation=True, max_length=max_length, padding=True, return_tensors="pt").to(device))
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        forward = 0.0
        t0 = time.perf_counter()
        for b in batches:
            enc = tok(b, truncation=True, max_length=max_length, padding=True, return_tensors="pt").to(device)
            t1 = time.perf_counter()
            model(**enc).logits.float().cpu()  # the logits back on the host, as any user needs them
            forward += time.perf_counter() - t1
        total = time.perf_counter() - t0
    return total, forward


def margin(scores: tuple) -> float:
    values = sorted(v for _, v in scores)
    return values[-1] - values[-2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--base", default=None, help="MiniLM encoder folder (default: the PyPI package's)")
    ap.add_argument("--out", default="runs/gpu")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--devices", default="cuda,cpu")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import torch
    from train_minilm import train
    devices = args.devices.split(",")
    train_device = devices[0]
    t0 = time.perf_counter()
    folder = train("imdb", out / "minilm-imdb", base=args.base, device=train_device)
    train_s = time.perf_counter() - t0
    rows, runs = [], {}
    for device in devices:
        run_dir = out / f"run-{device}"
        wall = hinter_run(args.suite, f"hf:{folder}?device={device}&batch_size={args.batch_size}", run_dir)
        store = open_run(run_dir)
        stats = store.stats()
        store.close()
        texts, scores = asked_texts(run_dir)
        runs[device] = scores
        raw_total, raw_forward_s = raw_forward(folder, texts, device, args.batch_size, 512)
        hinter_s = stats["seconds_model"]
        rows.append({"device": device, "texts": len(texts), "model_calls": int(stats.get("model_calls", 0)),
                     "hinter_model_s": hinter_s, "hinter_texts_per_s": len(texts) / hinter_s,
                     "raw_s": raw_total, "raw_texts_per_s": len(texts) / raw_total, "raw_forward_s": raw_forward_s,
                     "hinter_of_raw": raw_total / hinter_s, "run_wall_s": wall})
    agreement = None
    if len(runs) == 2:
        a, b = (runs[d] for d in devices)
        decisive = [t for t in a if a[t] and b.get(t) and margin(a[t]) > 1e-3]
        same = sum(max(a[t], key=lambda x: x[1])[0] == max(b[t], key=lambda x: x[1])[0] for t in decisive)
        max_diff = max((abs(x[1] - y[1]) for t in a if a[t] and b.get(t) for x, y in zip(a[t], b[t])), default=0.0)
        agreement = {"texts": len(a), "decisive": len(decisive), "same_label": same, "max_logit_diff": max_diff}
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    print(f"\nGPU: {gpu}; torch {torch.__version__}; fine-tuning on {train_device}: {train_s:.1f} s; batch size "
          f"{args.batch_size}\n")
    print("| device | texts asked | hinter model stage s | hinter texts/s | raw pass s | raw texts/s | "
          "hinter / raw | raw forward alone s | whole `run --suite` s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['device']} | {r['texts']} | {r['hinter_model_s']:.2f} | {r['hinter_texts_per_s']:.0f} | "
              f"{r['raw_s']:.2f} | {r['raw_texts_per_s']:.0f} | {r['hinter_of_raw']:.0%} | {r['raw_forward_s']:.2f} | "
              f"{r['run_wall_s']:.1f} |")
    if agreement:
        print(f"\n{devices[0]} vs {devices[1]}: {agreement['same_label']} of {agreement['decisive']} texts with a "
              f"logit margin over 1e-3 get the same label ({agreement['texts']} texts in all; largest logit "
              f"difference {agreement['max_logit_diff']:.2e})")
    (out / "gpu.json").write_text(json.dumps({"gpu": gpu, "torch": torch.__version__, "train_s": train_s,
                                              "rows": rows, "agreement": agreement}, indent=1))


if __name__ == "__main__":
    main()
