"""Hugging Face causal language models (`AutoModelForCausalLM`) from a folder on disk, with the paper's prompts.

Like the GGUF backend: the task's plain few-shot completion prompt; for a single-label task whose labels
start with distinct tokens, one forward pass, and the label whose first token has the highest logit wins;
otherwise greedy decoding up to the end of the answer line, parsed by the task. Each text is run alone (no
padding), so its outcome never depends on the other texts of its batch.

Outcomes: in the first-token mode `scores` are the labels' first-token logits (the answer has the highest);
decoded answers have none. A text longer than the model's positions leave beside the prompt and the answer is
cut to its first tokens, and `seen` is the number of its characters the model read (see reading.py); None when
the whole text fits.

A generative task (tasks.GenerativeTask) gets its plain prompt and `generate` with up to `max_tokens` new tokens,
greedy at temperature 0, else plain temperature sampling (no top-k, no top-p) and each call a fresh sample. Its
texts are generated a batch at a time, left-padded: on a GPU that is what makes generation fast. At temperature 0
a padded batch can change an answer where two tokens are all but tied (the padding changes the float sums), so a
greedy answer is not guaranteed to be the same in another batch. Answers are cut at the task's first stop
string; an empty one is a model error. On a GPU the texts of one predict() call are generated in batches of
`batch_size` (default 512 on CUDA, 8 elsewhere) sorted by prompt length, so a batch pads little and its rows end
together more often; the answers come back in the texts' order.
Options: device (`hf-causal:FOLDER?device=cpu`; default cuda when present), dtype (GEN_DTYPE_HELP), batch_size.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Sequence

from hinter.errors import ModelError
from hinter.models import startup
from hinter.models.tasks import Task, get_task
from hinter.models.base import Outcome
from hinter.models.hf import DEVICE, DTYPES, attention_without_cudnn, folder_fingerprint, load_pretrained, use_device
from hinter.models.reading import read_extent
from hinter.models.registry import Backend, Option, register_backend

GEN_DTYPE = "bfloat16"  # on CUDA: float16's range can overflow in a causal LM's activations; bfloat16's cannot
GEN_DTYPE_HELP = ("the precision of the weights: float32, float16 or bfloat16, changes results; bfloat16 for a "
                  "generative task on CUDA (a causal LM's activations can overflow float16's range), float32 "
                  "otherwise")
CUDA_BATCH, CPU_BATCH = 512, 8


class HFCausalLM:
    batch_size = CPU_BATCH

    def __init__(self, path: str | Path, task: Task, max_answer_tokens: int = 48, device: str | None = None,
                 dtype: str | None = None, batch_size: int | None = None):
        path = Path(path)
        startup.join()
        import torch  # load() checked that it is there
        self.device = use_device(torch, device, f"hf-causal:{path}")
        cuda = self.device.startswith("cuda")
        # a label's logits are compared in float32; a free-text task's answers are written in GEN_DTYPE on a GPU
        self.dtype = dtype or (GEN_DTYPE if cuda and not task.scored else "float32")
        torch, self.tokenizer, self.model = load_pretrained(path, "hf-causal", "AutoModelForCausalLM",
                                                            "causal language model", self.dtype)
        max_answer_tokens = task.answer_tokens(max_answer_tokens)
        self.torch, self.task, self.max_answer_tokens = torch, task, max_answer_tokens
        self.batch_size = batch_size or (CUDA_BATCH if cuda else CPU_BATCH)
        with startup.timed("load_to_device"):
            self.model.to(self.device, dtype=getattr(torch, self.dtype)).eval()
        head, tail = task.prompt_prefix_and_suffix()
        bos = [self.tokenizer.bos_token_id] if self.tokenizer.bos_token_id is not None else []
        self._head = bos + self._encode(head)
        self._tail = self._encode(tail)
        firsts = [self._encode(" " + label)[0] for label in task.labels]
        self._label_tokens = firsts if firsts and not task.multi_label and len(set(firsts)) == len(firsts) else None
        limit = getattr(self.model.config, "max_position_embeddings", None) or 2048
        self._room = limit - len(self._head) - len(self._tail) - max_answer_tokens
        if self._room < 16:
            raise ModelError(f"the prompt leaves no room for a text in the model's {limit} positions",
                             fix="Use a task with shorter examples, or a model with a longer context.")
        mode = "logits" if self._label_tokens else "greedy"
        if task.generation_settings():  # a free-text task's settings change its answers: in the fingerprint
            import hashlib
            mode = "generate-" + hashlib.sha256(repr((head, tail, sorted(task.settings().items()))).encode()
                                                ).hexdigest()[:12]
        precision = "" if self.dtype == "float32" else f":{self.dtype}"  # float32 runs keep their fingerprints
        self.fingerprint = f"hf-causal:{path.name}:{folder_fingerprint(path)}:{task.name}:{mode}{precision}"
        if cuda and not task.scored:  # written in batches (`_write_batch`)
            with startup.timed("load_warm_up"):
                self._warm_up()

    def _warm_up(self) -> None:
        """CUDA loads its kernels and libraries on first use: a short greedy generate at one row and at a full
        batch takes that at load (about 1.5 s with the model's load, on an H200), not in the run's first batch.
        Greedy: no random draw is spent."""
        torch = self.torch
        row = self._head + self._encode("A short text.") + self._tail
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else (
            self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0)
        with torch.inference_mode(), attention_without_cudnn(self.device):
            for rows in sorted({1, self.batch_size}):
                ids = torch.tensor([row] * rows, device=self.device)
                self.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=4, do_sample=False,
                                    pad_token_id=pad)
        torch.cuda.synchronize(self.device)

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

    def _write_batch(self, texts: Sequence[str]) -> list[Outcome]:
        """A generative task's answers for a batch of texts, generated together (left padding)."""
        torch = self.torch
        prepared = [self._prepare(t) for t in texts]
        rows = [ids[0].tolist() for ids, _ in prepared]
        width = max(len(r) for r in rows)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else (
            self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0)
        ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=self.device)
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=self.device)
        sampling = self.task.temperature > 0
        kwargs = dict(do_sample=True, temperature=self.task.temperature, top_k=0, top_p=1.0) if sampling else dict(
            do_sample=False)
        with torch.inference_mode(), attention_without_cudnn(self.device):  # a new key length at every token
            out = self.model.generate(ids, attention_mask=mask, max_new_tokens=self.max_answer_tokens,
                                      pad_token_id=pad, **kwargs)
        outcomes = []
        for row, (_, seen) in zip(out, prepared):
            outcome = self.task.answer(self.tokenizer.decode(row[width:], skip_special_tokens=True))
            outcomes.append(outcome if seen is None else replace(outcome, seen=seen))
        return outcomes

    def predict(self, texts: Sequence[str]) -> list[Outcome]:
        if texts:
            startup.first_call()
        if self.task.scored:  # a label: one text at a time (its first token's logits, or one greedy line)
            return [self._one(t) for t in texts]
        # by length, in batches: little padding, and rows of a batch tend to end together
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[Outcome | None] = [None] * len(texts)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            for i, outcome in zip(chunk, self._write_batch([texts[i] for i in chunk])):
                out[i] = outcome
        return out


def load(rest: str, *, task=None, device: str | None = None, dtype: str | None = None,
         batch_size: int | None = None, **_) -> HFCausalLM:
    """hf-causal:FOLDER, with the task's plain prompt (default imdb)."""
    before = dict(startup.phases)
    startup.join()
    with startup.timed("load_import"):
        import torch  # noqa: F401  (missing: load_model names the extra to install)
        import transformers  # noqa: F401
    model = HFCausalLM(rest, get_task(task or "imdb"), device=device, dtype=dtype, batch_size=batch_size)
    model.load_seconds = startup.phases_since(before)  # this load's phases (the run's stats: seconds_load_*)
    return model


BACKEND = register_backend(Backend(
    prefix="hf-causal", loader=load, usage="hf-causal:FOLDER",
    summary="a Hugging Face causal LM, plain prompt",
    example="hf-causal:runs/tiny-llama", prompted=True, extra="hf", options=(
        DEVICE,
        Option("dtype", None, GEN_DTYPE_HELP, kind=str, pattern="|".join(DTYPES), affects_results=True,
               auto=f"{GEN_DTYPE} for a generative task on CUDA, float32 otherwise"),
        Option("batch_size", None, "a generative task's texts generated together", minimum=1,
               auto=f"{CUDA_BATCH} on CUDA, {CPU_BATCH} elsewhere"),
    )))
