"""The start-up of `hinter run --suite S --model hf:DIR` (or hf-causal:): seconds from the command to the model's
first call, with and without the early start (hinter.models.startup), alternated, in the same run (issue 43,
items 2 and 4).

Each try is a fresh process (`python bench/startup.py --child SRC -- run --suite ...`) that wraps the backends'
first call (HFClassifier.submit, HFCausalLM.predict) to note when it came, in seconds since the process started;
the parent times the whole process. Variants (--variants), one try of each per round, in turn:
- `this`: this tree as a user runs it (bytecode kept in hinter's cache where Python may not write it);
- `no-bytecode`: this tree with HINTER_BYTECODE=0 (every module Python has no bytecode for compiled again);
- `early`: this tree with HINTER_EARLY_START=1 (torch's import and CUDA's start in a background thread);
- `baseline`: another tree's src (--baseline-src, e.g. a `git worktree` of main at b09922c), when given;
- NAME, for each --with-path NAME=DIR: this tree with DIR first on PYTHONPATH (another transformers, say).
One untimed process of `this` runs first (its cold cache's cost is printed).
This tree's tries also give hinter's own breakdown (HINTER_TIMINGS=1: import, tokenizer, weights, to the
device, warm-up). Every try's summary.json must be the same but for its `seconds` (outcomes identical): the
table says so. --first-call-only stops each process at its first call (the start-up alone, e.g. on a slow CPU).

    python bench/startup.py --suite imdb.suite --model-dir /tmp/shape --rounds 3 --out /tmp/startup
    python bench/startup.py --suite bios.suite --model-dir /tmp/smol --prefix hf-causal --task bios --rounds 2
    python bench/startup.py --make-shape .gpu/g43/shape /tmp/shape ...   # random weights from a config first
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST = "startup-bench first call at "
MARKS = "startup-bench marks: "


def child(src: str, cli_args: list[str], first_only: bool) -> None:
    """Run the CLI in this process from `src`, saying when the model is first asked."""
    sys.path.insert(0, src)
    sys.argv = ["hinter", *cli_args]
    import runpy
    import hinter.models.hf as hf
    import hinter.models.hf_causal as hf_causal

    def process_seconds() -> float:
        with open("/proc/self/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")

    said = []
    marks: dict[str, float] = {}  # phase -> seconds since the process started, at its start and end

    def noting(original):
        def first(self, texts, *args, **kwargs):
            if texts and not said:
                said.append(1)
                print(MARKS + json.dumps(marks), file=sys.stderr, flush=True)
                print(FIRST + f"{process_seconds():.3f}", file=sys.stderr, flush=True)
                if first_only:
                    try:  # hinter's own line (this tree), before the process stops
                        from hinter.models import startup
                        startup.first_call()
                    except ImportError:
                        pass
                    os._exit(0)
            return original(self, texts, *args, **kwargs)
        return first

    def marked(owner, name: str, phase: str) -> None:
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            marks.setdefault(phase + " from", round(process_seconds(), 3))
            try:
                return original(*args, **kwargs)
            finally:
                marks[phase + " to"] = round(process_seconds(), 3)
        setattr(owner, name, timed)

    import hinter.models
    import hinter.pipeline.suite
    marks["hinter imported"] = round(process_seconds(), 3)
    marked(hinter.pipeline.suite, "load_suite", "suite reading")
    marked(hinter.models, "load_model", "model load")
    hf.HFClassifier.submit = noting(hf.HFClassifier.submit)
    hf_causal.HFCausalLM.predict = noting(hf_causal.HFCausalLM.predict)
    runpy.run_module("hinter.cli", run_name="__main__")


# SmolLM2-135M's architecture (generation_gpu.py's model), with the vocabulary of the tokenizer it is given
SMOLLM2 = dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
               num_key_value_heads=3, max_position_embeddings=8192, rope_theta=100000.0, tie_word_embeddings=True,
               rms_norm_eps=1e-5, architectures=["LlamaForCausalLM"])


def make_shape(config_dir: Path, out: Path, causal_like_smollm2: bool = False) -> None:
    """A model of `config_dir`'s architecture and tokenizer with random weights (seeded), saved to `out`; with
    `causal_like_smollm2`, SmolLM2-135M's architecture (bfloat16, as its weights are) beside `config_dir`'s
    tokenizer (a speed measure: its answers are noise)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSequenceClassification, LlamaConfig
    if causal_like_smollm2:
        from transformers import AutoTokenizer
        tokenizer = AutoTokenizer.from_pretrained(config_dir)
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(LlamaConfig(vocab_size=len(tokenizer), **SMOLLM2,
                                                             pad_token_id=tokenizer.pad_token_id))
        model.to(torch.bfloat16).save_pretrained(out)
        tokenizer.save_pretrained(out)
        return
    config = AutoConfig.from_pretrained(config_dir)
    causal = any(a.endswith("ForCausalLM") for a in (config.architectures or []))
    if not causal:
        labels = ["Positive", "Negative"]
        config = AutoConfig.from_pretrained(config_dir, num_labels=2, id2label=dict(enumerate(labels)),
                                            label2id={label: i for i, label in enumerate(labels)})
    torch.manual_seed(0)
    model = (AutoModelForCausalLM if causal else AutoModelForSequenceClassification).from_config(config)
    model.save_pretrained(out)
    for f in config_dir.iterdir():
        if f.name != "config.json" and not f.name.endswith((".safetensors", ".bin")) and f.is_file():
            shutil.copy(f, out / f.name)


# each variant's environment over this process's: the tree as it is, without its bytecode cache, with the early start
VARIANT_ENV = {"this": {}, "no-bytecode": {"HINTER_BYTECODE": "0"}, "early": {"HINTER_EARLY_START": "1"},
               "baseline": {}}


def one_try(variant: str, src: str, cli: list[str], out: Path, first_only: bool) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HINTER_TIMINGS": "1", "PYTHONUNBUFFERED": "1",
           **VARIANT_ENV[variant]}
    t0 = time.perf_counter()
    flag = ["--first-call-only"] if first_only else []
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", src, *flag, "--",
                           *cli, "--out", str(out), "--overwrite"], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    row: dict = {"variant": variant, "wall": wall, "rc": done.returncode}
    for line in done.stderr.splitlines():
        if line.startswith(FIRST):
            row["first_call"] = float(line[len(FIRST):])
        elif line.startswith(MARKS):
            row["marks"] = json.loads(line[len(MARKS):])
        elif line.startswith("hinter startup: "):
            row["hinter"] = json.loads(line[len("hinter startup: "):])
    if "first_call" not in row:
        sys.exit(f"{variant}: no model call (rc {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    summary = out / "summary.json"
    if not first_only and summary.is_file():
        s = json.loads(summary.read_text())
        row["seconds"] = s.pop("seconds", {})
        row["summary"] = json.dumps(s, sort_keys=True)
    return row


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        rest = sys.argv[3:]
        first_only = rest[:1] == ["--first-call-only"]
        rest = rest[first_only:]
        return child(sys.argv[2], rest[1:] if rest[:1] == ["--"] else rest, first_only)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", type=Path, required=True)
    ap.add_argument("--model-dir", type=Path, required=True, help="a save_pretrained() folder (made by --make-shape)")
    ap.add_argument("--make-shape", type=Path, help="a folder with config.json and the tokenizer: random weights")
    ap.add_argument("--prefix", default="hf", choices=("hf", "hf-causal"),
                    help="hf-causal with --make-shape: SmolLM2-135M's architecture beside the folder's tokenizer")
    ap.add_argument("--options", default="", help="the spec's options, e.g. max_length=64&device=cpu")
    ap.add_argument("--task", help="--task for the run (a generative suite's, e.g. bios)")
    ap.add_argument("--baseline-src", help="another tree's src folder, run as the `baseline` variant")
    ap.add_argument("--with-path", action="append", default=[], metavar="NAME=DIR",
                    help="a variant NAME: this tree with DIR first on PYTHONPATH (e.g. another transformers)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default="this,no-bytecode",
                    help=f"of {','.join(v for v in VARIANT_ENV if v != 'baseline')}, in each round's order")
    ap.add_argument("--first-call-only", action="store_true", help="stop each process at its first model call")
    ap.add_argument("--out", type=Path, default=Path("/tmp/hinter-startup"))
    args = ap.parse_args()
    if args.make_shape:
        t0 = time.perf_counter()
        make_shape(args.make_shape, args.model_dir, causal_like_smollm2=args.prefix == "hf-causal")
        print(f"random-weight model in {args.model_dir} ({time.perf_counter() - t0:.1f} s)", flush=True)
    spec = f"{args.prefix}:{args.model_dir.resolve()}" + (f"?{args.options}" if args.options else "")
    cli = ["run", "--suite", str(args.suite.resolve()), "--model", spec, *(["--task", args.task] if args.task else [])]
    variants = [(v, str(ROOT / "src")) for v in args.variants.split(",")]
    for spec in args.with_path:
        name, _, folder = spec.partition("=")
        VARIANT_ENV[name] = {"PYTHONPATH": os.pathsep.join(p for p in (str(Path(folder).resolve()),
                                                                       os.environ.get("PYTHONPATH")) if p)}
        variants.append((name, str(ROOT / "src")))
    if args.baseline_src:
        variants.append(("baseline", str(Path(args.baseline_src).resolve())))
    rows: list[dict] = []
    # one process first, not timed with the rest: what a cold cache costs once (hinter compiling the bytecode
    # Python may not write beside torch's sources); the rounds then start from the warm disk the issue asks
    cold = one_try("this", str(ROOT / "src"), cli, args.out / "cold", args.first_call_only)
    print(f"first process (cold bytecode cache): first call at {cold['first_call']:.2f} s, "
          f"process {cold['wall']:.2f} s; hinter: {cold.get('hinter')}", flush=True)
    for r in range(args.rounds):
        for variant, src in (variants if r % 2 == 0 else variants[::-1]):  # alternated, each order in turn
            row = one_try(variant, src, cli, args.out / f"{variant}-{r}", args.first_call_only)
            rows.append(row)
            print(f"round {r + 1} {variant}: first call at {row['first_call']:.2f} s, process {row['wall']:.2f} s; "
                  f"{row.get('marks')}" + (f"; hinter: {row['hinter']}" if "hinter" in row else ""), flush=True)
    print(table(rows, [v for v, _ in variants]))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "startup.json").write_text(json.dumps([{k: v for k, v in r.items() if k != "summary"} for r in rows],
                                                      indent=1))


def table(rows: list[dict], variants: list[str]) -> str:
    """Medians per variant; the phases are hinter's own (this tree); outcomes: the summaries against the first."""
    phases = sorted({k for r in rows for k in r.get("hinter", {}) if k.startswith("load_")})
    head = ["variant", "tries", "first call (s)", "process (s)", *phases]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for v in variants:
        mine = [r for r in rows if r["variant"] == v]
        med = lambda xs: f"{statistics.median(xs):.2f}" if xs else "-"  # noqa: E731
        cells = [v, str(len(mine)), med([r["first_call"] for r in mine]), med([r["wall"] for r in mine]),
                 *(med([r["hinter"][p] for r in mine if p in r.get("hinter", {})]) for p in phases)]
        lines.append("| " + " | ".join(cells) + " |")
    summaries = {r["summary"] for r in rows if "summary" in r}
    if summaries:
        lines.append(f"\nsummaries (less their seconds): {'all the same' if len(summaries) == 1 else 'DIFFER'} "
                     f"across {sum('summary' in r for r in rows)} runs")
    for v in variants:
        mine = [r["first_call"] for r in rows if r["variant"] == v]
        lines.append(f"{v}: first call at " + ", ".join(f"{x:.2f}" for x in mine) + " s")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
