"""Hugging Face sequence classifiers (`AutoModelForSequenceClassification`) from a folder on disk.

Single-label models answer the label with the highest logit; multi-label models (config `problem_type`
"multi_label_classification", or a multi-label task) answer every label whose logit is >= 0, i.e. whose
sigmoid is >= 0.5, as in the paper. Texts are truncated to the model's maximum length, keeping their start:
an original and its mutants are cut the same way.

An outcome must depend on its text alone, never on the batch it was computed in (see gguf.py for the same
concern): texts are padded to a length bucket that depends only on the text's own token count, and each
bucket is run as its own batch.

Outcomes: `scores` are the logits of every label, in the model's id2label order (single-label: the answer has the
highest; multi-label: the answer is the labels whose logit is >= 0; the logits may differ in their last digits
with the shape of the batch, the raw answer rounds them to 4 decimals). A text longer than max_length tokens
(the special tokens included) is cut to its first tokens, and `seen` is the number of its characters the model
read (see reading.py); None when the whole text fits.

Speed (bench/gpu.py, docs/gpu.md): on a GPU the tokenizer, not the forward pass, was most of the time. A fast
tokenizer's texts are encoded by its Rust tokenizer in batch calls (a copy of it; checked at load against
transformers' own call, which it replaces). A run hands predict() each mutant's original and edits (`derived`):
with a tokenizer whose tokens never cross whitespace (BERT's), each original is tokenized once and each mutant's
ids are spliced from its original's tokens and the re-tokenized words around its edits (splice.py), exactly the
ids a full tokenization gives; any other text is tokenized whole. The same token spans give what a cut text's
model read. On CUDA a thread tokenizes the next group of texts while the GPU runs (_parts), texts wait by length
bucket and run as soon as a bucket holds a forward batch of at most TOKEN_BUDGET tokens (_Batches), the ids go
from pinned memory without the host waiting, the attention mask goes to the model ready for its attention (_mask:
transformers' own build of it waited for the GPU at every batch), attention avoids cuDNN's kernels (_attention),
a forward pass per length bucket at load takes CUDA's first-use costs (_warm_up), each bucket's full forward batch
is replayed from a CUDA graph captured there (_capture_graphs: one launch, not a few milliseconds of Python op by
op), a feeder thread tokenizes and launches each call while the caller stores the one before (`submit`), and the
logits come back to the host in one copy per call. A call takes PREDICT_BATCHES forward batches' worth of texts,
and on CUDA the pipeline gathers ASKS_AHEAD calls' worth (asks_ahead).

Options (`hf:FOLDER?max_length=256&device=cuda&batch_size=16&dtype=float32`): max_length, the tokens read
(default: the model's own limit, 512 for BERT-like models; at most that; part of the fingerprint); device
(default: cuda when present, else cpu); batch_size, texts per forward pass (default 512 on CUDA, 32 elsewhere;
outcomes do not depend on it); dtype, the precision of the weights and the forward pass (DTYPE_HELP says which is
the default where, and why; part of the fingerprint when it is not float32).
"""
from __future__ import annotations

import hashlib
import json
from contextlib import nullcontext
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from hinter.errors import InputError, ModelError
from hinter.models import startup
from hinter.models.tasks import Task, get_task
from hinter.models.base import Outcome
from hinter.models.reading import last_word_end, read_extent
from hinter.models.registry import Backend, Option, register_backend
from hinter.models.splice import Encoded, is_boundary, rebuilds, regions, splice, splices


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


def load_pretrained(path: Path, spec: str, model_class: str, kind: str, dtype: str | None = None):
    """(torch, tokenizer, model) from a save_pretrained() folder, with errors that say what to do; transformers'
    load reports and progress bars are silenced (they would drown the CLI's output). `dtype`: the weights are
    loaded in it (not as float32 first, then converted: start-up time)."""
    if not (path / "config.json").is_file():
        raise InputError("no Hugging Face model folder here (no config.json)", where=f"--model {spec}:{path}",
                         fix="Give a folder written by save_pretrained() holding config.json, the weights and "
                             "the tokenizer files.")
    startup.join()  # torch's import and CUDA's start, begun early (startup.begin): its errors are raised here
    try:
        with startup.timed("load_import"):
            import torch
            import transformers
            from transformers.utils import logging as hf_logging
    except ImportError:
        raise ModelError("the Hugging Face backend needs torch and transformers", fix="pip install 'hinter[hf]'.") from None
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        with startup.timed("load_tokenizer"):
            tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
        with startup.timed("load_weights"):
            model = getattr(transformers, model_class).from_pretrained(
                path, local_files_only=True, **({"dtype": getattr(torch, dtype)} if dtype else {}))
    except (OSError, ValueError, KeyError) as e:
        raise ModelError(f"transformers cannot load {path} ({str(e).splitlines()[0]})",
                         fix=f"Check that the folder holds a {kind} and its tokenizer.") from None
    return torch, tokenizer, model


BUCKET = 32  # tokens; padding granularity (see the module docstring)
PREDICT_BATCHES = 16  # forward batches per predict() call (see the module docstring)
ASKS_AHEAD = 4  # predict() calls' worth of texts the pipeline asks together on CUDA (asks_ahead)
FORWARD_BATCH = {"cuda": 512, "other": 32}  # default texts per forward pass: a GPU wants large ones
PIPELINE = 512  # texts per group on CUDA: tokenized by a thread while the GPU runs the group before (see _parts)
TOKEN_BUDGET = 128 * 512  # tokens per forward batch on CUDA (_rows)
DTYPES = ("float32", "float16", "bfloat16")
CUDA_DTYPE = "float16"  # the default on CUDA (DTYPE_HELP says why)
DTYPE_HELP = ("the precision of the weights and the forward pass: float32, float16 or bfloat16, changes results; "
              "float16 on CUDA: on an H200 as fast as bfloat16 and 1.5x float32, and it gave float32's label to "
              "all 6,555 texts of the bundled IMDB suite (logits within 0.02), where bfloat16 changed 11 (4 with a "
              "float32 margin over 0.05; logits moved up to 0.25), docs/gpu.md; float32 elsewhere")
# Texts whose tokenization by the Rust tokenizer is checked against transformers' call at load.
PROBES = ("Hello, World! The old WOMAN's café: naïve résumés cost 12.5%...", "tabs\tand\nnew lines  here ",
          "An african-american man, a Black woman & a 42-year-old (ELDERLY?) person.")


def default_dtype(device: str) -> str:
    return CUDA_DTYPE if device.startswith("cuda") else "float32"


def batch_tokenizer(tokenizer, max_length: int):
    """A copy of a fast tokenizer's Rust tokenizer that cuts at max_length (keeping the start) and adds the
    special tokens, as `tokenizer(texts, truncation=True, max_length=max_length)` does; None for a slow tokenizer
    or when the copy encodes PROBES otherwise (a tokenizer class that prepares texts in Python first)."""
    backend = getattr(tokenizer, "backend_tokenizer", None) if getattr(tokenizer, "is_fast", False) else None
    if backend is None:
        return None
    try:
        from tokenizers import Tokenizer
        rust = Tokenizer.from_str(backend.to_str())
        rust.no_padding()
        rust.enable_truncation(max_length, strategy="longest_first", direction="right")
        probes = [*PROBES, "word " * (2 * max_length)]
        same = [e.ids for e in rust.encode_batch(probes)] == tokenizer(probes, truncation=True,
                                                                         max_length=max_length)["input_ids"]
    except Exception:  # an older tokenizers without these calls: transformers' own call does the work
        return None
    return rust if same else None


def splicing_tokenizer(rust, max_length: int):
    """(a copy of `rust` that neither cuts nor adds special tokens, the special ids before and after a text's
    own) when a mutant's tokens can be spliced from its original's (splice.py); None otherwise. Checked at load:
    the special ids around the first tokens of PROBES must give `rust`'s ids."""
    if rust is None or not splices(rust.to_str()):
        return None
    from tokenizers import Tokenizer
    plain = Tokenizer.from_str(rust.to_str())
    plain.no_truncation()
    plain.no_padding()
    one = rust.encode("a")
    mask = one.special_tokens_mask
    if 0 not in mask:
        return None
    first, last = mask.index(0), len(mask) - 1 - mask[::-1].index(0)
    prefix, suffix = one.ids[:first], one.ids[last + 1:]
    room = max_length - len(prefix) - len(suffix)
    probes = [*PROBES, "word " * (2 * max_length), "a [SEP] b"]
    for cut, own in zip(rust.encode_batch(probes), plain.encode_batch(probes, add_special_tokens=False)):
        if cut.ids != prefix + own.ids[:room] + suffix:
            return None
    return plain, np.asarray(prefix, dtype=np.int64), np.asarray(suffix, dtype=np.int64)


BASES_KEPT = 4096  # originals' encodings kept between predict() calls (their mutants may come in a later one)


class HFClassifier:
    reads_edits = True  # predict() takes a mutant's original and edits (OutcomeCache passes them)
    graphs = True  # on CUDA, full forward batches replayed from CUDA graphs (_capture_graphs; bench/gpu.py: off)
    # submit(): OutcomeCache launches its next calls before it reads this one (asked_ahead), and the pipeline the next
    # group's before it judges and stores this one (pipeline._asked)
    launches_ahead = True

    def __init__(self, path: str | Path, task: Task | None = None, batch_size: int | None = None,
                 max_length: int | None = None, device: str | None = None, dtype: str | None = None):
        path = Path(path)
        startup.join()
        import torch  # load() checked that it is there
        self.device = use_device(torch, device, f"hf:{path}")
        if dtype is not None and dtype not in DTYPES:
            raise InputError(f"unknown dtype {dtype!r}", where=f"--model hf:{path}",
                             fix=f"Give one of {', '.join(DTYPES)}.")
        self.dtype = dtype or default_dtype(self.device)
        torch, self.tokenizer, self.model = load_pretrained(path, "hf", "AutoModelForSequenceClassification",
                                                            "sequence-classification model", self.dtype)
        self.torch = torch
        with startup.timed("load_to_device"):
            self.model.to(self.device, dtype=getattr(torch, self.dtype)).eval()
        config = self.model.config
        self.labels = [str(config.id2label[i]) for i in range(config.num_labels)]
        self._keys = [json.dumps(label) for label in self.labels]  # the raw answer's keys (_decide)
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
        self._rust = batch_tokenizer(self.tokenizer, self.max_length)
        # tokenize what changed: a mutant's ids from its original's and its edits (splice.py)
        self._splice = splicing_tokenizer(self._rust, self.max_length)
        self._bases: dict[str, Encoded] = {}
        self.tokenized = {"spliced": 0, "whole": 0}  # texts tokenized each way (tests, bench/gpu.py)
        self.forward_batch = batch_size or FORWARD_BATCH["cuda" if self.device.startswith("cuda") else "other"]
        self.batch_size = self.forward_batch * PREDICT_BATCHES  # texts per predict() call, for OutcomeCache
        cuda = self.device.startswith("cuda")
        # on CUDA the pipeline asks several batches of texts together (pipeline._grouped): a call of a few hundred
        # texts leaves the forward batches part-empty and the GPU idle while the host tokenizes
        # (several calls: while the feeder launches one, the cache stores the one before)
        self.asks_ahead = ASKS_AHEAD * self.batch_size if cuda else 0
        self._pool = None
        self._ready_mask: str | None = None  # _mask: "bool" or "float" once _warm_up has checked it (CUDA)
        # (rows, width) -> a full forward batch's CUDA graph (_capture_graphs; empty elsewhere, or where it failed)
        self._graphs: dict[tuple[int, int], tuple] = {}
        self._graph_pool = None
        from concurrent.futures import ThreadPoolExecutor
        if cuda and self._rust is not None:  # the Rust tokenizer lets go of the GIL: a thread overlaps the GPU
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="hinter-hf-tokenizer")
        # submit's feeder (CUDA): tokenizes and launches a call while the caller stores the one before
        self._feeder = ThreadPoolExecutor(1, thread_name_prefix="hinter-hf-feeder") if cuda else None
        if cuda:
            with startup.timed("load_warm_up"):
                self._warm_up()
        mode = "multi" if self.multi_label else "single"
        precision = "" if self.dtype == "float32" else f":{self.dtype}"  # float32 runs keep their fingerprints
        self.fingerprint = f"hf:{path.name}:{folder_fingerprint(path)}:{mode}:{self.max_length}{precision}"

    # ------------------------------------------------------------------ tokenizing

    def _encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def input_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids the model reads for each text: special tokens included, cut at max_length."""
        if self._rust is not None:
            return [e.ids for e in self._rust.encode_batch(list(texts))]
        return self.tokenizer(list(texts), truncation=True, max_length=self.max_length)["input_ids"]

    def _tokenize(self, texts: Sequence[str]) -> tuple[list[list[int]], list[int | None]]:
        """Each text's input ids and `seen`: with a fast tokenizer, both from one batch encoding."""
        if self._rust is None:
            ids = self.input_ids(texts)
            return ids, [read_extent(t, self._encode(t), self._room, self._encode) if len(e) >= self.max_length
                         else None for t, e in zip(texts, ids)]
        encodings = self._rust.encode_batch(list(texts))
        ids = [e.ids for e in encodings]
        return ids, self._seen(texts, ids, encodings)

    def _seen(self, texts: Sequence[str], ids: list[list[int]], encodings: list) -> list[int | None]:
        """Characters of each text the model read (None: all); only a text that filled max_length may be cut."""
        seen: list[int | None] = [None] * len(texts)
        kept: dict[int, tuple[int, list[int]]] = {}  # text -> (end of its last kept token, its kept tokens)
        for i, e in enumerate(encodings):
            if len(ids[i]) < self.max_length:
                continue
            special = e.special_tokens_mask
            # the text's own tokens lie between the special ones ([CLS] ... [SEP]): slices, not a loop per token
            first = special.index(0) if 0 in special else len(special)
            last = len(special) - 1
            while last >= first and special[last]:
                last -= 1
            if 1 in special[first:last + 1]:  # a special token among the text's own: let read_extent decide
                seen[i] = read_extent(texts[i], self._encode(texts[i]), self._room, self._encode)
                continue
            # the end of the last kept token (offsets grow along the text): the last character read
            kept[i] = (e.offsets[last][1] if last >= first else 0, ids[i][first:last + 1])
        return self._seen_at(texts, kept, seen)

    def _seen_at(self, texts: Sequence[str], kept: dict[int, tuple[int, list[int]]],
                 seen: list[int | None], splits: bool = False) -> list[int | None]:
        """`seen` of the texts that filled max_length, from the end of their last kept token and their kept tokens.

        A cut text's answer is the last word end within its kept tokens, checked by tokenizing that prefix, each
        distinct prefix once, all in one call: read_extent's dozens of prefix tokenizations per text cost more than
        a GPU's forward pass. read_extent decides where the check fails (never, on the IMDB and ECtHR samples).
        `splits`: the tokenizer never lets a token cross whitespace (splice.splices), so a prefix that ends before
        whitespace tokenizes as the text's tokens before it, all of them kept: the check cannot fail."""
        candidates: dict[int, tuple[int, list[int]]] = {}  # text -> (last word end read, its kept tokens)
        for i, (end, tokens) in kept.items():
            if not texts[i][end:].strip():
                continue  # every character was read: nothing cut
            c = last_word_end(texts[i], end)
            if c == 0 or (splits and is_boundary(texts[i][c])):
                seen[i] = c
            else:
                candidates[i] = (c, tokens)
        if not candidates:
            return seen
        prefixes = list(dict.fromkeys(texts[i][:c] for i, (c, _) in candidates.items()))
        encode = getattr(self._rust, "encode_batch_fast", self._rust.encode_batch)  # no offsets needed here
        encoded = {p: e.ids for p, e in zip(prefixes, encode(prefixes, add_special_tokens=False))}
        for i, (c, tokens) in candidates.items():
            prefix = encoded[texts[i][:c]]
            if len(prefix) <= self._room and np.array_equal(prefix, tokens[:len(prefix)]):
                seen[i] = c
            else:
                seen[i] = read_extent(texts[i], self._encode(texts[i]), self._room, self._encode)
        return seen

    def _bases_of(self, derived: dict[str, tuple[str, list]] | None) -> None:
        """Encode the originals of `derived`'s mutants not yet encoded, in one call (kept for later calls)."""
        if not derived or self._splice is None:
            return
        missing = list(dict.fromkeys(b for b, _ in derived.values() if b not in self._bases))
        if not missing:
            return
        plain = self._splice[0]
        self.tokenized["whole"] += len(missing)
        for text, e in zip(missing, plain.encode_batch(missing, add_special_tokens=False)):
            self._bases[text] = Encoded.of(e, text)
        while len(self._bases) > BASES_KEPT:  # the oldest go first (dicts keep their insertion order)
            del self._bases[next(iter(self._bases))]

    def _tokenize_spliced(self, texts: Sequence[str], derived: dict[str, tuple[str, list]] | None
                          ) -> tuple[list[Sequence[int]], list[int | None]]:
        """`_tokenize` from splices: a mutant of a known original from its tokens and the re-tokenized regions
        around its edits, any other text whole (exactly as `_tokenize`: splice.py; tests/test_splice.py)."""
        plain, prefix, suffix = self._splice
        room = self._room
        plans: dict[int, tuple[Encoded, list]] = {}
        wanted: set[str] = set()
        for i, text in enumerate(texts):
            if derived is None or text not in derived:
                continue
            base_text, edits = derived[text]
            base = self._bases.get(base_text)
            found = regions(base_text, text, edits, base.cuts) if base is not None else None
            if found is None or not rebuilds(base_text, text, found):
                continue  # tokenized whole: correct first
            plans[i] = (base, found)
            for g in found:
                wanted.add(g.text)
        own: dict[str, Encoded] = {}
        if wanted:
            strings = list(wanted)
            own = {g: Encoded.of(e) for g, e in zip(strings, plain.encode_batch(strings, add_special_tokens=False))}
        ids: list[Sequence[int] | None] = [None] * len(texts)
        kept: dict[int, tuple[int, list[int]]] = {}  # a text that fills max_length: (end of its last kept token, them)
        for i, (base, found) in plans.items():
            done = splice(base, [(g, own[g.text]) for g in found], room)
            if done is not None:
                ids[i] = np.concatenate((prefix, done[0], suffix))
                if done[1] is not None:
                    kept[i] = (done[1], done[0])
        whole = [i for i, e in enumerate(ids) if e is None]
        self.tokenized["spliced"] += len(texts) - len(whole)
        by_text: dict[int, Encoded] = {}
        for i in whole:
            if texts[i] in self._bases:  # an original whose mutants are asked: encoded once
                by_text[i] = self._bases[texts[i]]
        rest = [i for i in whole if i not in by_text]
        self.tokenized["whole"] += len(rest)
        if rest:
            for i, e in zip(rest, plain.encode_batch([texts[i] for i in rest], add_special_tokens=False)):
                by_text[i] = e  # an Encoding: its offsets only read when it is cut
        for i, e in by_text.items():
            own_ids = e.ids
            ids[i] = np.concatenate((prefix, own_ids[:room], suffix))
            if len(own_ids) >= room:
                kept[i] = ((e.ends[room - 1] if isinstance(e, Encoded) else e.offsets[room - 1][1]), own_ids[:room])
        return ids, self._seen_at(texts, kept, [None] * len(texts), splits=True)

    # ------------------------------------------------------------------ the forward pass

    def _rows(self, width: int) -> int:
        """Texts per forward pass of a bucket: batch_size, and on CUDA at most TOKEN_BUDGET tokens (wide buckets
        in fewer rows: the reference pass's token-budget batches); elsewhere batch_size alone (CPU outcomes
        unchanged)."""
        if self.device.startswith("cuda"):
            return max(1, min(self.forward_batch, TOKEN_BUDGET // width))
        return self.forward_batch

    def _run(self, rows: list[np.ndarray], width: int):
        """The logits (on the device, not waited for) of one forward batch of texts' ids, padded to `width`. The
        ids go in one array (pinned on CUDA: the copy then runs without the host waiting), the attention mask is
        made where the model runs from the lengths."""
        torch = self.torch
        cuda = self.device.startswith("cuda")
        buffer = torch.empty((len(rows), width), dtype=torch.int64, pin_memory=cuda)
        lengths = torch.empty(len(rows), dtype=torch.int64, pin_memory=cuda)
        ids, n = buffer.numpy(), lengths.numpy()
        ids.fill(self.tokenizer.pad_token_id or 0)
        for r, row in enumerate(rows):
            ids[r, :len(row)] = row
            n[r] = len(row)
        graph = self._graphs.get((len(rows), width)) if self._graphs else None
        if graph is not None:  # a full batch of a bucket: its forward pass replayed, not launched op by op
            g, ids_d, lengths_d, logits = graph
            ids_d.copy_(buffer, non_blocking=True)
            lengths_d.copy_(lengths, non_blocking=True)
            g.replay()
            return logits.clone()  # the graph writes the same memory at its next replay
        return self._forward(buffer.to(self.device, non_blocking=True), lengths.to(self.device, non_blocking=True),
                             width)

    def _forward(self, ids_d, lengths_d, width: int):
        """The logits of padded ids on the device, the mask made there from the lengths."""
        keep = self.torch.arange(width, device=self.device)[None, :] < lengths_d[:, None]
        return self.model(input_ids=ids_d, attention_mask=self._mask(keep)).logits

    def _capture(self, rows: int, width: int):
        """A CUDA graph of the forward pass of `rows` texts padded to `width`: (graph, its ids, its lengths, its
        logits). Launching a BERT forward pass op by op is a few milliseconds of the host's Python, which the
        host's other work (tokenizing, the cache) then waits for; a replay is one launch."""
        torch = self.torch
        pad = self.tokenizer.pad_token_id or 0
        ids = torch.full((rows, width), pad + 1, dtype=torch.int64, device=self.device)
        lengths = torch.full((rows,), width, dtype=torch.int64, device=self.device)
        if self._graph_pool is None:
            self._graph_pool = torch.cuda.graph_pool_handle()
        g = torch.cuda.CUDAGraph()
        # captured off the default stream, as torch.cuda.graph does, without its full garbage collection per graph
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            self._forward(ids, lengths, width)  # a pass first, off the capture (lazy initialisations)
            g.capture_begin(pool=self._graph_pool)  # the graphs share memory: they run one at a time
            try:
                logits = self._forward(ids, lengths, width)
            finally:
                g.capture_end()
        torch.cuda.current_stream(self.device).wait_stream(side)
        return g, ids, lengths, logits

    def _capture_graphs(self, widths: Sequence[int]) -> None:
        """Each bucket's full forward batch as a CUDA graph, checked against the forward pass launched op by op
        on texts of several lengths (the same labels, logits within float16's rounding); if a capture or the
        check fails, every batch is launched op by op, as before."""
        torch = self.torch
        try:
            graphs = {(self._rows(w), w): self._capture(self._rows(w), w) for w in widths}
            width = widths[len(widths) // 2]
            rows = [np.arange(1000, 1000 + n) % self.model.config.vocab_size
                    for n in np.linspace(1, width, self._rows(width)).astype(int)]
            eager = self._run(rows, width).float()
            self._graphs = graphs
            replayed = self._run(rows, width).float()
            if not ((replayed.argmax(-1) == eager.argmax(-1)).all() and (replayed - eager).abs().max() <= 0.02):
                self._graphs = {}
        except Exception:  # a model whose forward pass cannot be captured (it waits for the GPU, say)
            self._graphs = {}
        torch.cuda.synchronize(self.device)

    def _mask(self, keep):
        """The attention mask the model is given for `keep` (rows x width, True where a token is read). On CUDA, once
        _warm_up has checked that the model takes it, the mask as attention uses it, (rows, 1, 1, width): True where
        read for PyTorch's attention (sdpa), else 0 where read and a large negative where not, added to the scores.
        From the plain 0/1 mask transformers builds that one after asking whether any token is padding, and that
        question waits for the GPU to finish all it was given: the host then prepared no batch while the GPU ran
        (on an H200 the classifier took the host's time plus the GPU's, 9.5 s on the large campaign, 7.3 s after)."""
        if self._ready_mask is None:
            return keep.to(self.torch.int64)
        if self._ready_mask == "bool":
            return keep[:, None, None, :]
        torch, dtype = self.torch, self.model.dtype
        added = torch.zeros(keep.shape, dtype=dtype, device=keep.device)
        return added.masked_fill_(~keep, torch.finfo(dtype).min)[:, None, None, :]

    def _attention(self):
        return attention_without_cudnn(self.device)

    def _warm_up(self) -> None:
        """CUDA loads a kernel the first time it runs, and the matrix library picks kernels by shape: a forward
        pass per length bucket, at a few batch sizes, takes that cost at load rather than in the first batches
        (on an H200 it had made the first suite run's model stage several times slower than the next). First, the
        ready mask (_mask: bool for PyTorch's attention, else additive) is checked against the plain one on rows
        of several lengths: the same labels and logits within float16's rounding, else the plain mask stays."""
        pad = self.tokenizer.pad_token_id or 0
        with self.torch.inference_mode(), self._attention():
            width = min(64, self.max_length)
            rows = [np.arange(1000, 1000 + min(n, width)) % self.model.config.vocab_size for n in (3, 17, 40)]
            plain = self._run(rows, width).float()
            sdpa = getattr(self.model.config, "_attn_implementation", None) == "sdpa"
            for kind in ("bool", "float") if sdpa else ("float",):
                self._ready_mask = kind
                try:
                    ready = self._run(rows, width).float()
                    if (ready.shape == plain.shape and (ready.argmax(-1) == plain.argmax(-1)).all()
                            and (ready - plain).abs().max() <= 0.02):
                        break
                except Exception:  # a model class that does not take a prepared mask: the plain one
                    pass
                self._ready_mask = None
            widths = range(BUCKET, -(-self.max_length // BUCKET) * BUCKET + 1, BUCKET)
            for width in widths:
                row = np.full(min(width, self.max_length), pad + 1, dtype=np.int64)
                for rows in sorted({1, min(64, self._rows(width)), self._rows(width)}):
                    self._run([row] * rows, width)
            if self.graphs:
                self._capture_graphs(widths)
        if self._feeder is not None:  # the thread that will launch the run's batches, warmed up in turn
            self._feeder.submit(self._warm_up_feeder).result()
        self.torch.cuda.synchronize(self.device)

    def _warm_up_feeder(self) -> None:
        """A forward pass in the feeder's thread (CUDA's libraries make their handles per thread, on its first
        pass), and each graph replayed once (a graph goes to the GPU at its first replay): costs of the load, not of
        the run's first call."""
        pad = self.tokenizer.pad_token_id or 0
        with self.torch.inference_mode(), self.torch.cuda.device(self.device), self._attention():
            self._run([np.full(min(BUCKET, self.max_length), pad + 1, dtype=np.int64)], BUCKET)
            for g, *_ in self._graphs.values():
                g.replay()

    def _parts(self, texts: list[str]) -> list[list[int]]:
        """The texts' positions in the groups tokenized together. On CUDA, groups of PIPELINE texts by character
        length (token counts follow it), so that a thread tokenizes the next group while the GPU runs this one;
        elsewhere one group, as before (CPU outcomes unchanged)."""
        if self._pool is None:
            return [list(range(len(texts)))]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        return [order[i:i + PIPELINE] for i in range(0, len(order), PIPELINE)]

    def predict(self, texts: Sequence[str], derived: dict[str, tuple[str, list]] | None = None) -> list[Outcome]:
        """Each text's outcome. `derived` (optional; OutcomeCache passes a run's): for a mutant's text, its
        original's text and the edits that make it, so that only what changed is tokenized (splice.py); the
        outcomes are the same with or without it."""
        return self.submit(texts, derived)()

    def submit(self, texts: Sequence[str], derived: dict[str, tuple[str, list]] | None = None
               ) -> Callable[[], list[Outcome]]:
        """`predict` in two steps: start tokenizing the texts and launching their forward passes, and return the
        function that waits for their logits and gives the outcomes. OutcomeCache launches its next call before it
        reads and stores this one's answers. On CUDA a thread (the feeder) tokenizes and launches, calls in the order
        they came, while the caller stores the call before: the GPU's queue holds only a few forward batches, so the
        host that launched them itself waited for the GPU most of the time (on an H200, 4.2 s of a large campaign's
        7.7 s in the classifier) and stored nothing meanwhile. The logits are copied to pinned host memory right
        behind the call's last forward pass, so the next call's passes do not hold them up. Elsewhere the work is
        done before it returns."""
        if not texts:
            return lambda: []
        startup.first_call()
        texts = list(texts)
        if self._feeder is None:
            return self._launch(texts, derived)
        launched = self._feeder.submit(self._launch, texts, derived)
        return lambda: launched.result()()

    def _launch(self, texts: list[str], derived: dict[str, tuple[str, list]] | None) -> Callable[[], list[Outcome]]:
        """`submit`'s work: tokenize, launch the forward passes, start the copy of their logits; the reader."""
        self._bases_of(derived)
        parts = self._parts(texts)

        def tokenize(part: list[int]):
            chosen = [texts[i] for i in part]
            return self._tokenize_spliced(chosen, derived) if self._splice is not None else self._tokenize(chosen)

        seen: list[int | None] = [None] * len(texts)
        batches = _Batches(self)
        pending = self._pool.submit(tokenize, parts[0]) if self._pool is not None else None
        torch = self.torch
        cuda = self.device.startswith("cuda")
        # the feeder's thread has its own current device (cuda:N) and grad mode
        with torch.inference_mode(), torch.cuda.device(self.device) if cuda else nullcontext():
            for k, part in enumerate(parts):
                try:
                    ids, part_seen = pending.result() if pending is not None else tokenize(part)
                except Exception as e:
                    raise ModelError(f"the tokenizer failed ({e})") from None
                if self._pool is not None and k + 1 < len(parts):
                    pending = self._pool.submit(tokenize, parts[k + 1])
                for i, value in zip(part, part_seen):
                    seen[i] = value
                batches.add(part, ids)
            logits, rows = batches.result()
            if not cuda:
                values = logits.float().cpu().numpy()
                return lambda: self._outcomes(values, rows, seen)
            # the one copy to the host, not waited for here
            host = torch.empty(logits.shape, dtype=torch.float32, pin_memory=True)
            host.copy_(logits.float(), non_blocking=True)
            copied = torch.cuda.Event()
            copied.record()

        def outcomes() -> list[Outcome]:
            copied.synchronize()
            return self._outcomes(host.numpy(), rows, seen)
        return outcomes

    def _outcomes(self, logits: np.ndarray, rows: np.ndarray, seen: list[int | None]) -> list[Outcome]:
        """The outcomes of the texts whose logits came in `rows`' order."""
        result = np.empty_like(logits)
        result[rows] = logits
        finite = np.isfinite(result).all(axis=1)
        if not finite.all():
            fix = ("float16's range is too small for this model: give dtype=bfloat16 or dtype=float32 "
                   "(hf:FOLDER?dtype=float32)." if self.dtype == "float16" else
                   "Check the model's weights (they give NaN or infinite logits)" +
                   (", or give dtype=float32." if self.dtype != "float32" else "."))
            raise ModelError(f"the model's logits are not finite for {int((~finite).sum())} of {len(result)} "
                             f"texts (dtype {self.dtype}, device {self.device})", fix=fix, fatal=True)
        if self.multi_label:
            return [self._decide(row, s) for row, s in zip(result.tolist(), seen)]
        # single-label, in bulk: the label of each row's first highest logit (numpy's argmax, as _decide's max),
        # each Outcome made as Outcome(...) makes it from these checked values (finite floats, a label's name, a
        # character count or None), without its per-text checks: on a large campaign _decide was about a tenth of
        # the host's work per text
        labels, keys, new = self.labels, self._keys, object.__new__
        outcomes = []
        for logits, best, s in zip(result.tolist(), result.argmax(axis=1).tolist(), seen):
            o = new(Outcome)
            o.__dict__.update(value=labels[best], error=False, seen=None if s is None else int(s),
                              raw="{" + ", ".join([f"{key}: {round(v, 4)!r}" for key, v in zip(keys, logits)]) + "}",
                              scores=tuple(zip(labels, logits)))
            outcomes.append(o)
        return outcomes

    def _decide(self, logits: list[float], seen: int | None = None) -> Outcome:
        # json.dumps({label: round(v, 4)}) written out (the logits are finite floats): a text's outcome was more
        # host time than its forward pass
        raw = "{" + ", ".join([f"{key}: {round(v, 4)!r}" for key, v in zip(self._keys, logits)]) + "}"
        scores = tuple(zip(self.labels, logits))
        if self.multi_label:
            return Outcome(frozenset(label for label, v in zip(self.labels, logits) if v >= 0.0), raw, scores=scores,
                           seen=seen)
        best = max(range(len(logits)), key=logits.__getitem__)
        return Outcome(self.labels[best], raw, scores=scores, seen=seen)


class _Batches:
    """Texts' ids gathered by length bucket (the padded width depends on a text's own token count alone) and run
    a forward batch at a time as soon as a bucket holds one (HFClassifier._rows), the rest at the end: on CUDA
    the batches fill across the groups a thread tokenizes, and the GPU works while the next group is tokenized.
    Within a bucket texts keep their order, so the batches are those of the texts sorted by bucket (stably) and
    cut every _rows texts. The logits stay on the device until result()."""

    def __init__(self, model: HFClassifier):
        self.model = model
        self.waiting: dict[int, tuple[list[int], list]] = {}  # width -> (positions, ids)
        self.outputs: list = []
        self.positions: list[list[int]] = []
        self.full: dict[int, int] = {}

    def add(self, positions: Sequence[int], ids: Sequence[Sequence[int]]) -> None:
        full = self.full  # a bucket's rows per forward batch (_rows), looked up once a width, not once a text
        with self.model._attention():
            for position, row in zip(positions, ids):
                width = -(-len(row) // BUCKET) * BUCKET
                where, rows = self.waiting.setdefault(width, ([], []))
                where.append(position)
                rows.append(row)
                if len(rows) >= (full.get(width) or full.setdefault(width, self.model._rows(width))):
                    self._launch(width)

    def _launch(self, width: int) -> None:
        where, rows = self.waiting.pop(width)
        self.outputs.append(self.model._run(rows, width))
        self.positions.append(where)

    def result(self):
        """The logits on the device, and the position of each row."""
        with self.model._attention():
            for width in sorted(self.waiting):
                self._launch(width)
        return self.model.torch.cat(self.outputs), np.concatenate(self.positions)


def attention_without_cudnn(device: str):
    """On CUDA, attention by any kernel but cuDNN's: cuDNN builds a plan for each new batch shape (a classifier's
    rows and width vary from batch to batch, a generate call's key length grows at every token), which made the
    half-precision model stage of a suite run on an H200 four times slower than the same texts given in one call
    (bench/gpu.py), and a generative run's model stage half as fast as the same generate calls at shapes seen
    before (bench/generation_gpu.py)."""
    if not device.startswith("cuda"):
        return nullcontext()
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:  # an older torch, without cuDNN attention either
        return nullcontext()
    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


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


def load(rest: str, *, task=None, max_length: int | None = None, device: str | None = None,
         batch_size: int | None = None, dtype: str | None = None, **_) -> HFClassifier:
    """hf:FOLDER; a task only tells whether it is multi-label (the labels are the model's)."""
    before = dict(startup.phases)
    startup.join()
    with startup.timed("load_import"):
        import torch  # noqa: F401  (missing: load_model names the extra to install)
        import transformers  # noqa: F401
    model = HFClassifier(rest, get_task(task) if task else None, batch_size=batch_size, max_length=max_length,
                        device=device, dtype=dtype)
    model.load_seconds = startup.phases_since(before)  # this load's phases (the run's stats: seconds_load_*)
    return model


BACKEND = register_backend(Backend(
    prefix="hf", loader=load, usage="hf:FOLDER",
    summary="a Hugging Face sequence classifier", example="hf:runs/minilm-imdb",
    extra="hf", options=(
        Option("max_length", None, "tokens read, special ones included, longer texts are cut, changes results",
               minimum=2, affects_results=True, auto="the model's limit, 512 for BERT"),
        DEVICE,
        Option("batch_size", None, "texts per forward pass", minimum=1, auto="512 on CUDA, 32 elsewhere"),
        Option("dtype", None, DTYPE_HELP, kind=str, pattern="|".join(DTYPES), affects_results=True,
               auto=f"{CUDA_DTYPE} on CUDA, float32 elsewhere"),
    )))
