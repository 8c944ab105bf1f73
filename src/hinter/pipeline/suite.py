"""Suites (issue 14): mutants and their validity verdicts, built once, then run against any number of models.

The mutants and verdicts of a campaign depend on its texts, dictionary, settings and parser, never on the model
under test. `build_suite` runs mutation and the dependency invariant (spaCy) and writes them to one portable file;
`hinter run --suite FILE` (`hinter.run(suite=..., model=...)`) then runs only the model stage and the oracle,
with the same results as a plain run with the same settings, on a machine without spaCy (a GPU box).

The file: gzip-compressed JSON lines (Python's standard library alone reads it, and gzip's CRC catches a damaged
copy). Line 1 the header: format, format version, hinter version, the build's config and the settings a run
records from them (dictionary, parser...), the fingerprints of dataset, dictionary, parser, splitter and validity
mode. Then one line per text: its record, its mutants as edits ([pair number, start, end, ...] per replacement,
pair numbers into the trailer's pair table), each with its verdict, changed-sentence count and discard reason, and
the build's counters. Last line the trailer: the pair table, counts, and the SHA-256 of every line before it.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, NamedTuple, Sequence

from hinter.config import MODEL, RunConfig, option_fields
from hinter.pipeline.engine import build_verdicts
from hinter.errors import InputError
from hinter.pipeline.gcpause import keeping
from hinter.mutation.mutants import Mutant
from hinter.pipeline.stages import TextBatch, Verdicts
from hinter.records import Replacement, TextRecord, texts_fingerprint
from hinter.validity import reference, sentences
from hinter.version import __version__

MAGIC = "hinter-suite"
FORMAT_VERSION = 1
# Options of the model stage: given to `run --suite`, not fixed by the suite.
MODEL_STAGE = tuple(f.name for f in option_fields(MODEL))
# The build's counters a suite run adds to its own, as a plain run does (timings are the run's own).
CARRIED_STATS_PREFIXES = ("overlaps_skipped", "sentences_tagged", "sentences_parsed", "person_only_skipped", "repairs.")


def _fix(path) -> str:
    return f"Rebuild it with this hinter: hinter suite build ... --out {path}"


def splitter_fingerprint() -> str:
    """The sentence splitters' code (a change to it may change verdicts)."""
    h = hashlib.sha256(Path(sentences.__file__).read_bytes())
    try:
        h.update(Path(reference.__file__).read_bytes())
    except ImportError:  # pragma: no cover - a hinter without --validity reference
        pass
    return h.hexdigest()[:16]


class SuiteMutant(NamedTuple):
    """One mutant as the suite holds it (a named tuple: reading a suite makes one per mutant, and a tuple is made
    faster than a frozen dataclass)."""

    replacements: tuple[Replacement, ...]  # pairs then repairs, as the mutant was generated
    changed: int | None                     # changed sentences (None: the sentence count changed)
    valid: bool
    reason: str | None                      # why it was discarded (None: valid, or not recorded)


class RecordedParser:
    """The parser of a suite run: every verdict is in the suite, so nothing is parsed (no spaCy); its fingerprint
    is the one the suite was built with, as the run records it."""

    def __init__(self, fingerprint: str):
        self.fingerprint = fingerprint

    def tag(self, sentences):
        raise RuntimeError("a suite run parses nothing: its verdicts are in the suite")

    parse = tag


@dataclass
class Suite:
    path: Path
    header: dict
    records: list                                  # engine.TextRecord per text, in text_id order
    mutants: dict[int, list[SuiteMutant]]          # by text_id
    stats: dict[int, dict[str, float]]             # the build's counters, by the first text of each build batch
    fingerprint: str                               # of the content: a suite run records it, resume checks it

    @property
    def config(self) -> RunConfig:
        """The build's settings (dataset, dictionary, attributes, order, limit, sampling, validity)."""
        return RunConfig.from_recorded(self.header["config"])

    @property
    def settings(self) -> dict:
        """What a run records from the dictionary and the parser, as the build had them."""
        return self.header["settings"]

    @property
    def evaluative(self) -> dict | None:
        return self.header.get("checks.evaluative")

    def parser(self) -> RecordedParser:
        return RecordedParser(self.header["parser_fingerprint"])

    def run_config(self, **model_stage) -> RunConfig:
        """The run's config: the build's, with the model stage's options (model, task, window...)."""
        unknown = set(model_stage) - set(MODEL_STAGE)
        if unknown:
            raise ValueError(f"not options of the model stage: {sorted(unknown)}")
        return self.config.replace(**model_stage)

    def verdicts(self, batches) -> Iterator[tuple]:
        """The pipeline's source of verdicts (pipeline.VerdictSource): per batch of the suite's texts, its
        mutants rebuilt from their edits and their recorded verdicts, with the build's counters of those texts."""
        for start, texts in batches:
            mutants, stored, counters = [], [], Counter()
            for text_id, rec in texts:
                for m in self.mutants.get(text_id, ()):
                    mutants.append(Mutant(text_id, m.replacements, rec.text))
                    stored.append(m)
                counters.update(self.stats.get(text_id, {}))
            tagged, parsed = counters.pop("sentences_tagged", 0), counters.pop("sentences_parsed", 0)
            counters["overlaps_skipped"] += 0  # always counted, as a plain run counts it
            yield (TextBatch(start, texts, mutants, [m.changed for m in stored], None, counters),
                   Verdicts([m.valid for m in stored], [m.reason for m in stored], int(tagged), int(parsed)))


# ---------------------------------------------------------------- writing

class SuiteWriter:
    """Writes a suite as the engine validates each batch (`add`), then the trailer (`close`)."""

    def __init__(self, out: Path, header: dict):
        self.out, self.tmp = out, out.with_name(out.name + ".part")
        self._raw = open(self.tmp, "wb")
        # no name nor time in the gzip header: the same campaign gives the same bytes whatever the file is called
        self._gz = gzip.GzipFile(filename="", fileobj=self._raw, mode="wb", compresslevel=9, mtime=0)
        self._sha = hashlib.sha256()
        self.pairs: dict[tuple, int] = {}
        self.texts = self.mutant_count = 0
        self._line(header)

    def _line(self, obj: dict, hashed: bool = True) -> None:
        data = (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        if hashed:
            self._sha.update(data)
        self._gz.write(data)

    def _number(self, r: Replacement) -> int:
        key = (r.attribute, r.source_group, r.target_group, r.word, r.replacement)
        return self.pairs.setdefault(key, len(self.pairs))

    def add(self, result) -> None:
        """A sink of the pipeline: one validated batch (pipeline.BatchResult, no model stage)."""
        batch, verdicts, stats = result.batch, result.verdicts, result.stats
        by_text: dict[int, list] = {text_id: [] for text_id, _ in batch.texts}
        for m, changed, v, reason in zip(batch.mutants, batch.changed, verdicts.valid, verdicts.reasons):
            edits = [[self._number(r), *(x for span in r.spans for x in span)] for r in m.replacements]
            by_text[m.text_id].append([edits, changed, int(v), None if v else reason])
        first = True
        for text_id, rec in batch.texts:
            line = {"id": text_id, "text": rec.text, "source_id": rec.source_id, "gold": rec.gold,
                    "mutants": by_text[text_id]}
            if first:  # the batch's counters, once
                line["stats"] = {k: v for k, v in stats.items() if v and k.startswith(CARRIED_STATS_PREFIXES)}
                first = False
            self._line(line)
            self.texts += 1
            self.mutant_count += len(by_text[text_id])

    def close(self) -> None:
        pairs = [list(k) for k, _ in sorted(self.pairs.items(), key=lambda kv: kv[1])]
        self._sha.update(json.dumps(pairs, separators=(",", ":"), ensure_ascii=False).encode())
        self._line({"end": True, "pairs": pairs, "texts": self.texts, "mutants": self.mutant_count,
                    "sha256": self._sha.hexdigest()}, hashed=False)
        self._gz.close()
        self._raw.close()
        os.replace(self.tmp, self.out)

    def abort(self) -> None:
        self._gz.close()
        self._raw.close()
        self.tmp.unlink(missing_ok=True)


def build_suite(texts: Sequence | None = None, *, out: str | Path, config: RunConfig | None = None,
                dictionary=None, parser=None, executor=None,
                progress: Callable[[str, int, int], None] | None = None, **options) -> Path:
    """Mutate and validate a campaign, and write its suite to `out` (no model). The campaign: `config` (a
    RunConfig; its dataset is read when `texts` is None), or the options of `hinter.run` (attributes, order,
    dictionary, pairs_per_attribute, max_pairs_per_text, seed, include_occupational, validity...) on `texts`.
    `dictionary`: a Dictionary object instead of config.dictionary. Returns the suite's path."""
    if config is None:
        if isinstance(options.get("attributes"), (list, tuple)):
            options["attributes"] = tuple(options["attributes"])
        config = RunConfig(**options)
    elif options:
        config = config.replace(**options)
    config = config.replace(model=None, task=None, query_discarded=False, window=None, repeats=1)
    if texts is None:
        if config.dataset is None:
            raise InputError("no texts to build a suite from", where="--dataset", fix="Give a dataset.")
        texts = config.read_dataset().records
    out = Path(out)
    if out.is_dir():
        raise InputError("the suite's path is a folder", where=str(out), fix="Give --out a file's path, e.g. imdb.suite.")
    if out.exists() and not is_suite_file(out):  # a suite is rebuilt in its place; any other file is the user's
        raise InputError("the file exists and is not a hinter suite: building would replace it", where=str(out),
                         fix="Give --out a new file's path (e.g. imdb.suite), or the path of a suite to rebuild.")
    out.parent.mkdir(parents=True, exist_ok=True)
    writer: SuiteWriter | None = None

    def start(records, derived: dict, parser_fingerprint: str, evaluative) -> Callable:
        nonlocal writer
        from hinter.validity.grammar import checker_fingerprint
        header = {
            "format": MAGIC, "format_version": FORMAT_VERSION, "hinter_version": __version__,
            "config": config.recorded(), "settings": derived, "parser_fingerprint": parser_fingerprint,
            "checks.evaluative": evaluative, "texts": len(records),
            "fingerprints": {"dataset": texts_fingerprint(records), "dictionary": derived["dictionary_fingerprint"],
                             "parser": parser_fingerprint, "splitter": splitter_fingerprint(),
                             "validity": config.validity, "hinter": __version__,
                             # --grammar: the checker whose verdicts the suite holds (Harper's version)
                             **({"grammar": checker_fingerprint()} if config.grammar is not None else {})},
        }
        writer = SuiteWriter(out, header)
        return writer.add

    try:
        build_verdicts(config, texts, start, dictionary=dictionary, parser=parser, executor=executor,
                       progress=progress)
        writer.close()
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    return out


# ---------------------------------------------------------------- reading

# Decompression is bounded: a 2 MB gzip bomb named .suite once took 4.3 GB of memory and 17 s to be called "not a
# hinter suite". The header line is read first (a few KB; at most MAX_HEADER_BYTES); a file whose header is not a
# suite's is read on for gzip's CRC without keeping anything, and no file is inflated past `inflate_limit`:
# INFLATE_RATIO times its size, at least INFLATE_FLOOR (a suite hinter writes compresses 5 to 20 times).
MAX_HEADER_BYTES = 1 << 20
INFLATE_FLOOR = 256 << 20
INFLATE_RATIO = 100
_CHUNK = 1 << 20


class _TooLarge(Exception):
    """The file inflates past its limit."""


def inflate_limit(path: Path) -> int:
    return max(INFLATE_FLOOR, INFLATE_RATIO * path.stat().st_size)


def _inflate(f, limit: int, keep: bool = True) -> bytes:
    """The rest of the gzip stream `f` (b"" when not `keep`); _TooLarge past `limit` bytes."""
    chunks, total = [], 0
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            raise _TooLarge
        if keep:
            chunks.append(chunk)


def _suite_header(first: bytes) -> dict | None:
    """The header of a suite from its first line; None when the line is not a suite's header."""
    try:
        header = json.loads(first)
    except ValueError:
        return None
    return header if isinstance(header, dict) and header.get("format") == MAGIC else None


def is_suite_file(path: Path) -> bool:
    """Whether `path` begins as a suite hinter wrote (its header alone is read: bounded)."""
    try:
        with gzip.open(path, "rb") as f:
            return _suite_header(f.readline(MAX_HEADER_BYTES)) is not None
    except (OSError, EOFError, zlib.error):
        return False


def suite_counts(path: str | Path) -> tuple[int, int]:
    """(texts, mutants) a suite just written holds, read from its trailer alone (no check: load_suite checks)."""
    with gzip.open(path, "rb") as f:
        trailer = json.loads(f.read().rsplit(b"\n", 2)[-2])
    return trailer["texts"], trailer["mutants"]


def load_suite(path: str | Path, where: str | None = None) -> Suite:
    """Read a suite, checking that it is whole and that this hinter can run it; InputError naming the file and
    what to do otherwise."""
    with keeping():  # its mutants live as long as the run: collections over them were most of its reading
        return _load_suite(path, where)


def _load_suite(path: str | Path, where: str | None = None) -> Suite:
    path = Path(path)
    where = where or str(path)
    if not path.is_file():
        raise InputError(f"no suite file {path}", where=where,
                         fix="Give the file `hinter suite build --out FILE` wrote.")
    not_suite = InputError(f"{path} is not a hinter suite", where=where,
                           fix="Give the file `hinter suite build --out FILE` wrote (a .suite file).")
    damaged = "is truncated or damaged"
    limit = inflate_limit(path)
    try:  # all of it first: gzip's CRC, checked at the end, tells a damaged file from a foreign one
        with gzip.open(path, "rb") as f:
            first = f.readline(MAX_HEADER_BYTES)
            header = _suite_header(first)
            if header is None:  # read on, kept nowhere, for the CRC: a damaged suite is not called foreign
                _inflate(f, limit - len(first), keep=False)
                raise not_suite
            data = first + _inflate(f, limit - len(first))
    except _TooLarge:
        if header is None:
            raise not_suite from None
        raise InputError(f"{path} decompresses to more than {limit >> 20:,} MB, {INFLATE_RATIO} times its "
                         "size: not a suite hinter wrote (a compressed file made to fill the memory)",
                         where=where, fix=f"Rebuild the suite: hinter suite build ... --out {path}") from None
    except (OSError, EOFError, zlib.error) as e:
        if "Not a gzipped file" in str(e):  # BadGzipFile also says "CRC check failed": damaged
            raise not_suite from None
        raise InputError(f"{path} {damaged} ({e})", where=where,
                         fix=f"Copy it again, or rebuild it: hinter suite build ... --out {path}") from None
    lines = data.splitlines(keepends=True)
    del data
    first = lines.pop(0)
    if header.get("format_version") != FORMAT_VERSION:
        raise InputError(f"{path} is a suite of format {header.get('format_version')} (built by hinter "
                         f"{header.get('hinter_version')}); this hinter ({__version__}) reads format "
                         f"{FORMAT_VERSION}", where=where, fix=_fix(path))
    if header.get("hinter_version") != __version__:
        raise InputError(f"{path} was built by hinter {header.get('hinter_version')}, this is hinter "
                         f"{__version__}: its mutants and verdicts may differ from this version's",
                         where=where, fix=_fix(path) + f", or run it with hinter {header.get('hinter_version')}.")
    sha = hashlib.sha256(first)
    trailer_line = lines.pop() if lines else b""
    try:
        trailer = json.loads(trailer_line)
        assert isinstance(trailer, dict) and trailer.get("end") is True
        for line in lines:
            sha.update(line)
        sha.update(json.dumps(trailer["pairs"], separators=(",", ":"), ensure_ascii=False).encode())
        assert sha.hexdigest() == trailer["sha256"] and len(lines) == trailer["texts"] == header["texts"]
        pairs = [tuple(p) for p in trailer["pairs"]]
        records, mutants, stats = [], {}, {}
        for i, line in enumerate(lines):
            t = json.loads(line)
            assert t["id"] == i
            records.append(TextRecord(t["text"], t["source_id"], t["gold"]))
            # each of the text's replacements made once, by its edit: its intersectional mutants share their atomic
            # ones', as a plain run's do (their pair ids are then computed, and the store packs them, once)
            made: dict[tuple, Replacement] = {}
            mutants[i] = [SuiteMutant(tuple(made.get(e) or made.setdefault(e, Replacement(
                *pairs[e[0]], tuple(zip(e[1::2], e[2::2])))) for e in map(tuple, edits)), changed, bool(valid), reason)
                for edits, changed, valid, reason in t["mutants"]]
            if t.get("stats"):
                stats[i] = t["stats"]
        assert sum(map(len, mutants.values())) == trailer["mutants"]
    except (ValueError, KeyError, IndexError, TypeError, AssertionError):
        raise InputError(f"{path} {damaged} (its content does not match its checksum)", where=where,
                         fix="Copy it again, or rebuild it: hinter suite build ... --out " + str(path)) from None
    return Suite(path.resolve(), header, records, mutants, stats, trailer["sha256"][:16])
