"""Validity stage: the fast engine against the reference tool's loop, in one process and one run.

Usage: python bench/validity.py [--shared ../shared] [--sample 1000] [--processes 2]

Campaigns (as in issue 3's prototype: race = european->arab, gender = male->female, body = common->disorder):
IMDB (first 500 reviews) race x gender and body x gender; ECtHR (all 63 cases) body x gender and race x gender.
Each campaign's mutants are its atomic mutants of both attributes and its order-2 intersectional ones.

The literal reference loop would take hours on the full ECtHR campaigns, so it runs on a seeded uniform
sample of each campaign's mutants (whole texts' worth of its original-sentence cache, as in the reference
tool), and its time for the whole campaign is extrapolated: the exact number of single-sentence parses
the full loop would make (counted without parsing) times the mean time of one single-sentence parse
measured on the sample. Verdicts are compared on the sample.

The parse floor is the time to run the full spaCy pipeline once, in one batch (same worker processes),
over exactly the distinct sentences the fast engine analysed: the engine's overhead over pure parsing.
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from hinter.mutation.dictionary import load_dictionary  # noqa: E402
from hinter.mutation.mutants import generate  # noqa: E402
from hinter.validity import (ReferenceValidator, SpacyParser, Validator, changed_sentence_pairs,  # noqa: E402
                             sentence_spans)

GROUPS = {"race": ("european", "arab"), "gender": ("male", "female"), "body": ("common", "disorder")}
CAMPAIGNS = [("imdb", 500, ("gender", "race")), ("imdb", 500, ("body", "gender")),
             ("ecthr", None, ("body", "gender")), ("ecthr", None, ("gender", "race"))]


class RecordingParser:
    """Passes calls through, remembering every sentence analysed (for the parse floor)."""

    def __init__(self, inner):
        self.inner, self.fingerprint, self.seen = inner, inner.fingerprint, []

    def tag(self, sentences):
        self.seen.extend(sentences)
        return self.inner.tag(sentences)

    def parse(self, sentences):
        self.seen.extend(s for s in sentences)
        return self.inner.parse(sentences)


def load_texts(shared: Path, name: str, limit: int | None) -> list[str]:
    rows = [json.loads(line) for line in (shared / "data" / name / "sample.jsonl").read_text().splitlines() if line]
    return [r["text"] for r in rows[:limit]]


def campaign_dictionary(attributes):
    d = load_dictionary().restrict(attributes, include_occupational=False)
    pairs = tuple(p for p in d.pairs if (p.source_group, p.target_group) == GROUPS[p.attribute])
    return type(d)(pairs, f"bench {'+'.join(attributes)}")


def reference_parse_count(mutants_by_text, splits) -> int:
    """Single-sentence parses the reference loop makes: every changed sentence of every mutant, plus each
    changed original sentence once per text."""
    n = 0
    for tid, muts in mutants_by_text.items():
        originals = set()
        for m in muts:
            pairs = changed_sentence_pairs(m.original, *splits[tid], m.edits)
            if pairs is None:
                continue
            n += len(pairs)
            originals.update(c for c, _ in pairs)
        n += len(originals)
    return n


def run_campaign(name, limit, attributes, shared, fast_parser, single_parser, sample_size, seed=0):
    texts = load_texts(shared, name, limit)
    d = campaign_dictionary(attributes)
    t0 = time.perf_counter()
    mutants_by_text = defaultdict(list)
    for tid, text in enumerate(texts):
        mutants_by_text[tid].extend(generate(tid, text, d, attributes, 2).mutants)
    gen_s = time.perf_counter() - t0
    flat = [(tid, m) for tid, ms in mutants_by_text.items() for m in ms]

    # fast engine, as the run engine drives it: batches of 32 texts, sentence-by-sentence mutated pairs
    recorder = RecordingParser(fast_parser)
    engine = Validator(recorder)
    t0 = time.perf_counter()
    fast = {}
    splits = {}
    tids = sorted(mutants_by_text)
    for i in range(0, len(tids), 32):
        batch = tids[i:i + 32]
        for tid in batch:
            spans = sentence_spans(texts[tid])
            splits[tid] = (spans, [texts[tid][a:b] for a, b in spans])
        items = [(tid, m) for tid in batch for m in mutants_by_text[tid]]
        verdicts = engine.validate([changed_sentence_pairs(m.original, *splits[tid], m.edits) for tid, m in items])
        fast.update(((tid, m.key), v) for (tid, m), v in zip(items, verdicts))
    fast_s = time.perf_counter() - t0

    # parse floor: the same distinct sentences, full pipeline, one batch, same processes
    floor_sentences = list(dict.fromkeys(recorder.seen))
    t0 = time.perf_counter()
    fast_parser.parse(floor_sentences)
    floor_s = time.perf_counter() - t0

    # reference loop on a seeded sample, grouped by text so its per-text original cache works as in the tool
    rng = random.Random(seed)
    sample = flat if len(flat) <= sample_size else rng.sample(flat, sample_size)
    by_text = defaultdict(list)
    for tid, m in sample:
        by_text[tid].append(m)
    reference = ReferenceValidator(single_parser)
    t0 = time.perf_counter()
    identical = True
    for tid, ms in by_text.items():
        got = reference.validate_text(texts[tid], [m.text for m in ms])
        identical &= got == [fast[(tid, m.key)] for m in ms]
    ref_sample_s = time.perf_counter() - t0
    full_parses = reference_parse_count(mutants_by_text, splits)
    per_parse = ref_sample_s / max(1, reference.sentences_parsed)
    ref_s = full_parses * per_parse if len(sample) < len(flat) else ref_sample_s
    return {
        "campaign": f"{name} {' x '.join(attributes)}", "texts": len(texts), "mutants": len(flat),
        "valid": sum(fast.values()), "gen_s": gen_s,
        "ref_parses": full_parses, "ref_s": ref_s, "ref_sampled": len(sample),
        "fast_tagged": engine.sentences_tagged, "fast_parsed": engine.sentences_parsed, "fast_s": fast_s,
        "floor_s": floor_s, "speedup": ref_s / fast_s, "floor_ratio": fast_s / floor_s, "identical": identical,
    }


def memory_campaign(shared: Path, processes: int) -> None:
    """A whole engine run (generation, validity, a constant model, the store) on ECtHR with all three attribute
    pairs; prints this process tree's peak resident memory in MiB."""
    import tempfile

    import hinter

    texts = load_texts(shared, "ecthr", None)
    attributes = ("body", "gender", "race")
    with tempfile.TemporaryDirectory() as out:
        run = hinter.run(texts, lambda batch: ["same"] * len(batch), attributes=attributes, order=2,
                         dictionary=campaign_dictionary(attributes), out=out,
                         parser=SpacyParser(n_process=processes))
        n = run.summary()["totals"]
        mutants = n["atomic"]["mutants"] + n["intersectional"]["mutants"]
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"mutants": mutants, "main_mib": own, "largest_worker_mib": children,
                      "total_mib": own + processes * children}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--sample", type=int, default=1000, help="reference-loop sample per campaign (mutants)")
    ap.add_argument("--processes", type=int, default=2, help="spaCy worker processes of the fast engine")
    ap.add_argument("--only", default=None, help="run only campaigns whose name contains this")
    ap.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        memory_campaign(args.shared, args.processes)
        return
    fast_parser = SpacyParser(n_process=args.processes)
    single_parser = SpacyParser(n_process=1)
    rows = []
    for name, limit, attributes in CAMPAIGNS:
        if args.only and args.only not in name:
            continue
        row = run_campaign(name, limit, attributes, args.shared, fast_parser, single_parser, args.sample)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    fast_parser.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    head = ("campaign", "mutants", "valid", "ref parses*", "ref s*", "fast tagged", "fast dep-parsed", "fast s",
            "mutants/s", "speed-up", "floor s", "fast/floor", "identical")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print(f"| {r['campaign']} | {r['mutants']} | {r['valid']} | {r['ref_parses']} | {r['ref_s']:.1f} | "
              f"{r['fast_tagged']} | {r['fast_parsed']} | {r['fast_s']:.1f} | {r['mutants'] / r['fast_s']:.0f} | "
              f"{r['speedup']:.0f}x | {r['floor_s']:.1f} | {r['floor_ratio']:.2f} | "
              f"{'yes' if r['identical'] else 'NO'} (on {r['ref_sampled']}) |")
    print("\n* reference loop: run on a seeded sample of each campaign's mutants (the 'on N' column); its time for "
          "the whole campaign = the exact count of its single-sentence parses x their mean time on the sample.")
    print(f"peak memory: main process {peak:.0f} MiB, largest worker {peak_children:.0f} MiB")
    import subprocess
    t0 = time.perf_counter()
    child = subprocess.run([sys.executable, __file__, "--memory-child", "--shared", str(args.shared), "--processes",
                            str(args.processes)], capture_output=True, text=True)
    if child.returncode == 0:
        mem = json.loads(child.stdout.strip().splitlines()[-1])
        print(f"peak memory of a whole run on ECtHR with all three attribute pairs ({mem['mutants']} mutants, "
              f"{time.perf_counter() - t0:.0f} s): main {mem['main_mib']:.0f} MiB + {args.processes} workers of at "
              f"most {mem['largest_worker_mib']:.0f} MiB = at most {mem['total_mib']:.0f} MiB")
    else:
        print(f"memory campaign failed: {child.stderr[-500:]}")
    speed = defaultdict(list)
    for r in rows:
        speed[r["campaign"].split()[0]].append(r["speedup"])
    parts = [f"{k}={min(v):.0f}" for k, v in speed.items()]
    floor_ratio = max(r["floor_ratio"] for r in rows)
    identical = all(r["identical"] for r in rows)
    print(f"speedup {' '.join(parts)} floor_ratio={floor_ratio:.2f} identical={'yes' if identical else 'no'}")


if __name__ == "__main__":
    main()
