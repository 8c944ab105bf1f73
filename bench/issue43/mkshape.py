"""all-MiniLM-L6-v2's architecture and tokenizer with random weights (seeded), as an IMDB classifier's shape:
its forward passes are the real model's work, its answers noise (the fine-tuned weights do not fit one call's
carry beside spaCy)."""
import shutil, sys
from pathlib import Path
import torch
from transformers import AutoConfig, AutoModelForSequenceClassification
src, out = Path(sys.argv[1]), Path(sys.argv[2])
labels = ["Positive", "Negative"]
cfg = AutoConfig.from_pretrained(src, num_labels=2, id2label=dict(enumerate(labels)),
                                 label2id={l: i for i, l in enumerate(labels)})
torch.manual_seed(0)
model = AutoModelForSequenceClassification.from_config(cfg)
model.save_pretrained(out)
for f in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
    shutil.copy(src / f, out / f)
print("shape saved", out, sum(p.numel() for p in model.parameters()), "parameters")
