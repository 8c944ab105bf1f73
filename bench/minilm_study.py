"""The MiniLM study, timed: a classifier fine-tuned per dataset, each run on its own dataset's suite by
`hinter study`, the paper's tables (docs/reproduction.md, "MiniLM classifiers"; docs/study.md says how).

1. The models: each study file's `models_by_dataset` names an `hf:FOLDER` per dataset; each is trained there
   (scripts/train_minilm.py: last encoder layer, pooler and head, a seeded 30% of the labelled texts held out and
   scored), or rebuilt from the trained weights another machine wrote (--from-parts: the same model, where the
   whole one cannot travel), or kept when --keep and already there.
2. Each study: `hinter study --study YAML --out DIR`, a process of its own, timed from its start to its tables
   (models loaded, every mutant asked, tables and page written). DIR should hold the study's suites, built where
   spaCy is (`hinter study --study YAML --out DIR --suites-only`): a GPU machine without spaCy cannot build them,
   and the wall time here is the runs' and the tables', not the suites'. DIR must hold no finished runs (a
   finished run asks its model nothing again).

Prints a markdown table and writes minilm_study.json (and accuracy.json) to --report. On the GPU machine
(docs/study.md, "On a GPU machine"):

    python bench/minilm_study.py --device cuda --base .gpu/fixloop/minilm16 --parts $OUT/parts \\
        --study bench/minilm_study.yaml .gpu/study/s8 --report $OUT
and on a CPU with the GPU's models:

    python bench/minilm_study.py --from-parts parts --base .gpu/fixloop/minilm16 \\
        --study bench/minilm_study.yaml .gpu/study/s8-cpu --report runs/minilm-cpu
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "scripts")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def model_folders(study_files: list[str]) -> dict[str, Path]:
    """Dataset -> the folder its hf: model is read from, from the study files' models_by_dataset."""
    from hinter.study import read_study_file
    folders: dict[str, Path] = {}
    for path in study_files:
        for dataset, specs in read_study_file(path)["models_by_dataset"].items():
            for spec in specs:
                if spec.startswith("hf:"):
                    folders[dataset] = Path(spec[3:].split("?")[0])
    return folders


def machine(device: str) -> str:
    import torch
    cpus = os.cpu_count()
    if device.startswith("cuda") and torch.cuda.is_available():
        return f"{torch.cuda.get_device_name(0)}, {cpus} CPU cores"
    return f"{platform.processor() or platform.machine()}, {cpus} CPU cores, torch threads {torch.get_num_threads()}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", nargs=2, action="append", metavar=("YAML", "DIR"), required=True,
                    help="a study file and its folder (holding its suites); repeat for several studies")
    ap.add_argument("--device", default="cpu", help="where training runs (the study's hf: models take cuda when "
                                                   "there is one)")
    ap.add_argument("--base", default=None, help="the encoder's folder (default: the PyPI package's)")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--max-length", type=int, default=512, help="tokens read in training and testing (512: what "
                                                               "hinter's hf: backend reads by default)")
    ap.add_argument("--test-share", type=float, default=0.3)
    ap.add_argument("--parts", default=None, help="write each model's trained weights to DIR/DATASET.safetensors")
    ap.add_argument("--from-parts", default=None, help="rebuild the models from DIR/DATASET.safetensors")
    ap.add_argument("--keep", action="store_true", help="keep a model already in its folder")
    ap.add_argument("--report", default="runs/minilm-study")
    args = ap.parse_args()
    import train_minilm
    report = Path(args.report)
    report.mkdir(parents=True, exist_ok=True)
    record: dict = {"machine": machine(args.device), "models": {}, "studies": {}}
    print(f"machine: {record['machine']}", flush=True)

    accuracy = {}
    for dataset, folder in model_folders([y for y, _ in args.study]).items():
        t0 = time.perf_counter()
        if args.from_parts:
            how = "rebuilt"
            train_minilm.rebuild(Path(args.from_parts) / f"{dataset}.safetensors", args.base, folder)
        elif args.keep and (folder / "config.json").exists():
            how = "kept"
        else:
            how = "trained"
            train_minilm.train(dataset, folder, epochs=args.epochs, max_length=args.max_length, base=args.base,
                               device=args.device, test_share=args.test_share)
        seconds = round(time.perf_counter() - t0, 2)
        if args.parts:
            Path(args.parts).mkdir(parents=True, exist_ok=True)
            train_minilm.save_part(folder, Path(args.parts) / f"{dataset}.safetensors")
        accuracy[dataset] = json.loads((folder / "training.json").read_text(encoding="utf-8"))
        record["models"][dataset] = {"how": how, "seconds": seconds, "folder": str(folder)}
        print(f"{dataset}: {how} in {seconds:.1f} s; {json.dumps(accuracy[dataset].get('scores'))}", flush=True)
    (report / "accuracy.json").write_text(json.dumps(accuracy, indent=1), encoding="utf-8")

    for yaml, folder in args.study:
        if not (Path(folder) / "suites").is_dir():
            print(f"{folder} has no suites/: the study builds them (spaCy needed), inside its wall time", flush=True)
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "hinter.cli", "study", "--study", yaml, "--out", folder],
                              env=env(), cwd=ROOT, capture_output=True, text=True)
        wall = round(time.perf_counter() - t0, 2)
        print(done.stdout[-4000:], done.stderr[-4000:], sep="\n", flush=True)
        if done.returncode != 0:
            sys.exit(f"hinter study failed ({done.returncode})")
        steps = json.loads((Path(folder) / "study.json").read_text(encoding="utf-8"))["seconds"]
        record["studies"][yaml] = {"folder": folder, "wall_s": wall, "steps": steps}

    rows = [("step", "seconds")]
    rows += [(f"model {d} ({m['how']})", m["seconds"]) for d, m in record["models"].items()]
    for yaml, s in record["studies"].items():
        rows += [(f"{yaml}: {k}", v) for k, v in s["steps"].items() if k.startswith("run ")]
        rows.append((f"{yaml}: whole study (process start to tables)", s["wall_s"]))
    print("\n".join(f"| {a} | {b} |" for a, b in rows[:1] + [("---", "---")] + rows[1:]), flush=True)
    (report / "minilm_study.json").write_text(json.dumps(record, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
