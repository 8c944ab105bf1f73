"""Hugging Face causal language models (`AutoModelForCausalLM`) from a folder on disk, with the paper's prompts.

Like the GGUF backend: the task's plain few-shot completion prompt; for a single-label task whose labels
start with distinct tokens, one forward pass, and the label whose first token has the highest logit wins;
otherwise greedy decoding up to the end of the answer line, parsed by the task. Each text is run alone (no
padding), so its outcome never depends on the other texts of its batch.

Outcomes: in the first-token mode `scores` are the labels' first-token logits (the answer has the highest);
decoded answers have none. A text longer than the model's positions leave beside the prompt and the answer is
cut to its first tokens, and `seen` is the number of its characters the model read (see reading.py); None when
the whole text fits. Option: device (`hf-causal:FOLDER?device=cpu`; default cuda when present).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Sequence

from ..errors import ModelError
from ..tasks import Task
from .base import Outcome
from .hf import DEVICE, folder_fingerprint, load_pretrained, use_device
from .reading import read_extent
from .registry import Backend, register_backend


class HFCausalLM:
    batch_size = 8

    def __init__(self, path: str | Path, task: Task, max_answer_tokens: int = 48, device: str | None = None):
        path = Path(path)
        torch, self.tokenizer, self.model = load_pretrained(path, "hf-causal", "AutoModelForCausalLM",
                                                            "causal language model")
        self.torch, self.task, self.max_answer_tokens = torch, task, max_answer_tokens
        self.device = use_device(torch, device, f"hf-causal:{path}")
        self.model.to(self.device).eval()
        head, tail = task.prompt_prefix_and_suffix()
        bos = [self.tokenizer.bos_token_id] if self.tokenizer.bos_token_id is not None else []
        self._head = bos + self._encode(head)
        self._tail = self._encode(tail)
        firsts = [self._encode(" " + label)[0] for label in task.labels]
        self._label_tokens = firsts if not task.multi_label and len(set(firsts)) == len(firsts) else None
        limit = getattr(self.model.config, "max_position_embeddings", None) or 2048
        self._room = limit - len(self._head) - len(self._tail) - max_answer_tokens
        if self._room < 16:
            raise ModelError(f"the prompt leaves no room for a text in the model's {limit} positions",
                             fix="Use a task with shorter examples, or a model with a longer context.")
        mode = "logits" if self._label_tokens else "greedy"
        self.fingerprint = f"hf-causal:{path.name}:{folder_fingerprint(path)}:{task.name}:{mode}"

    def _encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _ids(self, text: str):
        return self._prepare(text)[0]

    def _prepare(self, text: str):
        """The prompt's token ids for `text`, and how many of the text's characters they hold (None: all)."""
        body = self._encode(text)
        seen = None
        if len(body) > self._room:  # keep the start of long texts, alike for originals and mutants
            seen = read_extent(text, body, self._room, self._encode)
            body = body[:self._room]
        return self.torch.tensor([self._head + body + self._tail], device=self.device), seen

    def _one(self, text: str) -> Outcome:
        torch = self.torch
        ids, seen = self._prepare(text)
        with torch.inference_mode():
            if self._label_tokens:
                logits = self.model(input_ids=ids).logits[0, -1].float().cpu()
                scores = [float(logits[t]) for t in self._label_tokens]
                best = max(range(len(scores)), key=scores.__getitem__)
                raw = self.task.labels[best] + "  (first-token logits: " + ", ".join(
                    f"{lab}={s:.3f}" for lab, s in zip(self.task.labels, scores)) + ")"
                return Outcome(self.task.labels[best], raw, scores=tuple(zip(self.task.labels, scores)), seen=seen)
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=self.max_answer_tokens,
                                      do_sample=False, pad_token_id=self.tokenizer.pad_token_id or 0)
        answer = self.tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True).split("\n")[0]
        outcome = self.task.parse_answer(answer)
        return outcome if seen is None else replace(outcome, seen=seen)

    def predict(self, texts: Sequence[str]) -> list[Outcome]:
        return [self._one(t) for t in texts]


def load(rest: str, *, task=None, device: str | None = None, **_) -> HFCausalLM:
    """hf-causal:FOLDER, with the task's plain prompt (default imdb)."""
    import torch  # noqa: F401  (missing: load_model names the extra to install)
    import transformers  # noqa: F401
    from ..tasks import get_task
    return HFCausalLM(rest, get_task(task or "imdb"), device=device)


BACKEND = register_backend(Backend(
    prefix="hf-causal", loader=load, usage="hf-causal:FOLDER",
    summary="a Hugging Face causal LM, plain prompt",
    example="hf-causal:runs/tiny-llama", extra="hf", options=(DEVICE,)))
