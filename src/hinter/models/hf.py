"""Hugging Face sequence classifiers (`AutoModelForSequenceClassification`) from a folder on disk.

Single-label models answer the label with the highest logit; multi-label models (config `problem_type`
"multi_label_classification", or a multi-label task) answer every label whose logit is >= 0, i.e. whose
sigmoid is >= 0.5, as in the paper. Texts are truncated to the model's maximum length, keeping their start:
an original and its mutants are cut the same way.

An outcome must depend on its text alone, never on the batch it was computed in (see gguf.py for the same
concern): texts are padded to a length bucket that depends only on the text's own token count, and each
bucket is run as its own batch.

Outcomes: `scores` are the logits of every label, in the model's id2label order (single-label: the answer has the
highest; multi-label: the answer is the labels whose logit is >= 0; the float32 logits may differ in their last
digits with the shape of the batch, the raw answer rounds them to 4 decimals). A text longer than max_length
tokens (the special tokens included) is cut to its first tokens, and `seen` is the number of its characters the
model read (see reading.py); None when the whole text fits.

Options (`hf:FOLDER?max_length=256&device=cuda&batch_size=16`): max_length, the tokens read (default: the
model's own limit, 512 for BERT-like models; at most that; part of the fingerprint); device (default: cuda when
present, else cpu); batch_size, texts per forward pass (outcomes do not depend on it). Neither of the last two
is in the fingerprint. predict() takes PREDICT_BATCHES forward batches' worth of texts at a time and groups them
by length bucket itself: handed one forward batch at a time, the buckets split it into many small passes, which
cost a GPU most of its speed (63% of the raw pass on an H200, measured with bench/gpu.py).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import InputError, ModelError
from ..tasks import Task
from .base import Outcome
from .reading import last_word_end, read_extent
from .registry import Backend, Option, register_backend

BUCKET = 32  # tokens; padding granularity (see the module docstring)
PREDICT_BATCHES = 16  # forward batches per predict() call (see the module docstring)


def folder_fingerprint(path: Path) -> str:
    """Config, tokenizer files and the head and tail of each weights file identify a model folder."""
    h = hashlib.sha256()
    for f in sorted(path.iterdir()):
        if not f.is_file():
            continue
        h.update(f.name.encode())
        h.update(str(f.stat().st_size).encode())
        with open(f, "rb") as fh:
            h.update(fh.read(1 << 20))
            if f.stat().st_size > 2 << 20:
                fh.seek(-(1 << 20), 2)
                h.update(fh.read())
    return h.hexdigest()[:16]


def load_pretrained(path: Path, spec: str, model_class: str, kind: str):
    """(torch, tokenizer, model) from a save_pretrained() folder, with errors that say what to do; transformers'
    load reports and progress bars are silenced (they would drown the CLI's output)."""
    if not (path / "config.json").is_file():
        raise InputError("no Hugging Face model folder here (no config.json)", where=f"--model {spec}:{path}",
                         fix="Give a folder written by save_pretrained() holding config.json, the weights and "
                             "the tokenizer files.")
    try:
        import torch
        import transformers
        from transformers.utils import logging as hf_logging
    except ImportError:
        raise ModelError("the Hugging Face backend needs torch and transformers", fix="pip install 'hinter[hf]'.") from None
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = getattr(transformers, model_class).from_pretrained(path, local_files_only=True)
    except (OSError, ValueError, KeyError) as e:
        raise ModelError(f"transformers cannot load {path} ({str(e).splitlines()[0]})",
                         fix=f"Check that the folder holds a {kind} and its tokenizer.") from None
    return torch, tokenizer, model


class HFClassifier:
    def __init__(self, path: str | Path, task: Task | None = None, batch_size: int = 32, max_length: int | None = None,
                 device: str | None = None):
        path = Path(path)
        torch, self.tokenizer, self.model = load_pretrained(path, "hf", "AutoModelForSequenceClassification",
                                                            "sequence-classification model")
        self.torch = torch
        self.device = use_device(torch, device, f"hf:{path}")
        self.model.to(self.device).eval()
        config = self.model.config
        self.labels = [str(config.id2label[i]) for i in range(config.num_labels)]
        self.multi_label = config.problem_type == "multi_label_classification" or bool(task and task.multi_label)
        limits = [n for n in (getattr(config, "max_position_embeddings", None), self.tokenizer.model_max_length)
                  if isinstance(n, int) and 0 < n < 1_000_000]
        # BERT-like position tables sometimes count padding offsets (RoBERTa: 514): stay within what they hold.
        limit = min(limits) if limits else 512
        if getattr(config, "model_type", "") in {"roberta", "xlm-roberta", "camembert"}:
            limit = min(limit, 512)
        if max_length is not None and max_length > limit:
            raise InputError(f"max_length={max_length} exceeds the {limit} tokens the model reads",
                             where=f"--model hf:{path}", fix=f"Give max_length at most {limit}, or leave it out.")
        self.max_length = max_length or limit
        # the text's own tokens that fit beside the special ones ([CLS] ... [SEP])
        self._room = self.max_length - self.tokenizer.num_special_tokens_to_add(pair=False)
        if self._room < 1:
            raise InputError(f"max_length={self.max_length} leaves no room for a text beside the special tokens",
                             where=f"--model hf:{path}", fix="Give a larger max_length.")
        self.tokenizer.truncation_side = "right"  # keep the start of long texts (seen counts from it)
        self.forward_batch = batch_size
        self.batch_size = batch_size * PREDICT_BATCHES  # texts per predict() call, for OutcomeCache
        mode = "multi" if self.multi_label else "single"
        self.fingerprint = f"hf:{path.name}:{folder_fingerprint(path)}:{mode}:{self.max_length}"

    def _logits(self, encodings: list[list[int]], width: int):
        torch = self.torch
        pad = self.tokenizer.pad_token_id or 0
        ids = np.full((len(encodings), width), pad, dtype=np.int64)  # numpy rows: a torch.tensor per row costs
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for i, e in enumerate(encodings):
            ids[i, :len(e)] = e
            mask[i, :len(e)] = 1
        ids, mask = torch.from_numpy(ids), torch.from_numpy(mask)
        with torch.inference_mode():
            out = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device))
        return out.logits.float().cpu()

    def _encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _seen(self, texts: Sequence[str], encoded: list[list[int]]) -> list[int | None]:
        """Characters of each text the model read (None: all); only a text that filled max_length may be cut.

        With a fast tokenizer, a cut text's answer is the last word end within its kept tokens (their offsets),
        checked by tokenizing that prefix, all prefixes in one call: read_extent's dozens of prefix tokenizations
        per text, or even one call per text, cost more than a GPU's forward pass. read_extent decides where there
        are no offsets or the check fails (never, on the IMDB and ECtHR samples)."""
        seen: list[int | None] = [None] * len(texts)
        full = [i for i, e in enumerate(encoded) if len(e) >= self.max_length]
        undecided = full
        if full and getattr(self.tokenizer, "is_fast", False):
            enc = self.tokenizer([texts[i] for i in full], truncation=True, max_length=self.max_length,
                                 return_offsets_mapping=True, return_special_tokens_mask=True)
            candidates: dict[int, tuple[int, list[int]]] = {}  # text -> (last word end read, its kept tokens)
            for j, i in enumerate(full):
                special = enc["special_tokens_mask"][j]
                # the end of the last kept token (offsets grow along the text): the last character read
                end = next((b for (_, b), sp in zip(reversed(enc["offset_mapping"][j]), reversed(special)) if not sp), 0)
                if not texts[i][end:].strip():
                    continue  # every character was read: nothing cut
                c = last_word_end(texts[i], end)
                if c == 0:
                    seen[i] = 0
                else:
                    candidates[i] = (c, [t for t, sp in zip(encoded[i], special) if not sp])
            prefixes = self.tokenizer([texts[i][:c] for i, (c, _) in candidates.items()],
                                      add_special_tokens=False)["input_ids"] if candidates else []
            undecided = []
            for (i, (c, kept)), prefix in zip(candidates.items(), prefixes):
                if len(prefix) <= self._room and prefix == kept[:len(prefix)]:
                    seen[i] = c
                else:
                    undecided.append(i)
        for i in undecided:
            seen[i] = read_extent(texts[i], self._encode(texts[i]), self._room, self._encode)
        return seen

    def predict(self, texts: Sequence[str]) -> list[Outcome]:
        try:
            encoded = self.tokenizer(list(texts), truncation=True, max_length=self.max_length)["input_ids"]
            seen = self._seen(texts, encoded)
        except Exception as e:
            raise ModelError(f"the tokenizer failed ({e})") from None
        buckets: dict[int, list[int]] = {}
        for i, e in enumerate(encoded):
            buckets.setdefault(-(-len(e) // BUCKET) * BUCKET, []).append(i)
        outcomes: list[Outcome | None] = [None] * len(encoded)
        for width, members in buckets.items():
            for start in range(0, len(members), self.forward_batch):
                chunk = members[start:start + self.forward_batch]
                logits = self._logits([encoded[i] for i in chunk], width)
                for i, row in zip(chunk, logits.tolist()):
                    outcomes[i] = self._decide(row, seen[i])
        return outcomes  # type: ignore[return-value]

    def _decide(self, logits: list[float], seen: int | None = None) -> Outcome:
        raw = json.dumps({label: round(v, 4) for label, v in zip(self.labels, logits)})
        scores = tuple(zip(self.labels, logits))
        if self.multi_label:
            return Outcome(frozenset(label for label, v in zip(self.labels, logits) if v >= 0.0), raw, scores=scores,
                           seen=seen)
        best = max(range(len(logits)), key=logits.__getitem__)
        return Outcome(self.labels[best], raw, scores=scores, seen=seen)


def use_device(torch, device: str | None, where: str) -> str:
    """The torch device to run on: `device` as given (checked), else cuda when present, else cpu."""
    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"device={device}, but torch sees no CUDA device here", where=f"--model {where}",
                         fix="Leave device out (cuda when present, else cpu), or give device=cpu.")
    if device == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise InputError("device=mps, but torch sees no MPS device here", where=f"--model {where}",
                         fix="Leave device out, or give device=cpu.")
    return device


DEVICE = Option("device", None, "cpu, cuda, cuda:N or mps", kind=str, pattern=r"cpu|cuda(:\d+)?|mps",
                auto="cuda if present, else cpu")


def load(rest: str, *, task=None, max_length: int | None = None, device: str | None = None, batch_size: int = 32,
         **_) -> HFClassifier:
    """hf:FOLDER; a task only tells whether it is multi-label (the labels are the model's)."""
    import torch  # noqa: F401  (missing: load_model names the extra to install)
    import transformers  # noqa: F401
    from ..tasks import get_task
    return HFClassifier(rest, get_task(task) if task else None, batch_size=batch_size, max_length=max_length,
                        device=device)


BACKEND = register_backend(Backend(
    prefix="hf", loader=load, usage="hf:FOLDER",
    summary="a Hugging Face sequence classifier", example="hf:runs/minilm-imdb",
    extra="hf", options=(
        Option("max_length", None, "tokens read, special ones included, longer texts are cut, changes results",
               minimum=2, affects_results=True, auto="the model's limit, 512 for BERT"),
        DEVICE,
        Option("batch_size", 32, "texts per forward pass", minimum=1),
    )))
