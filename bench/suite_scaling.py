"""`hinter suite build --workers N` on every core (issue 43, item 1): wall seconds per worker count, the speed-up
over one worker measured in the same run, and whether each suite is byte-identical to the one worker's.

Usage: python bench/suite_scaling.py --dataset imdb --attributes race,gender,body --workers 1,2,4,8,16
       python bench/suite_scaling.py ... --baseline /tmp/old/src --baseline-workers 16   # another source tree too

Each build is its own `hinter` process (the CLI a user runs, its start-up and spaCy's load included), timed from
start to exit; every suite is written under the same file name in its own folder, so that the files compare
byte for byte. Prints a markdown table; exits 1 if a suite differs from the one-worker build.

    python bench/suite_scaling.py --contention 1,2,4,8,16

measures the machine instead of hinter: N processes started together, each doing the same fixed work alone (no
pool, no pipe, nothing shared): spaCy's tagger and parser on the same 1,000 IMDB sentences, and a loop of pure
Python that touches no memory. How much slower each is at N than alone is what N cores give any process-parallel
work here (shared caches, memory bandwidth, the clock under load, SMT siblings).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cpu_of_children() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime, usage.ru_stime


def build(src: Path, campaign: list[str], workers: int, out: Path) -> tuple[float, tuple[float, float], str]:
    """Wall seconds, CPU seconds (user, system: the build's processes together) and the suite's SHA-256."""
    out.parent.mkdir(parents=True, exist_ok=True)
    user, system = cpu_of_children()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))}
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "hinter.cli", "suite", "build", *campaign, "--workers", str(workers),
                        "--out", str(out)], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"the build with {workers} workers failed ({p.returncode}):\n{p.stderr[-3000:]}")
    user2, system2 = cpu_of_children()
    return seconds, (user2 - user, system2 - system), hashlib.sha256(out.read_bytes()).hexdigest()


def timeline(args) -> None:
    """One `hinter suite build` process with N workers, the CLI a user runs, with the seconds since its start at
    which the interpreter was up, the CLI imported, the parser loading and loaded, each batch written, the command
    done, the interpreter's exit begun, and the process gone: where a build with many workers waits (start-up,
    the longest text, the writer, the exit)."""
    campaign = ["--dataset", args.dataset, "--attributes", args.attributes, *args.extra.split()]
    if args.limit:
        campaign += ["--limit", str(args.limit)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(args.src), os.environ.get("PYTHONPATH")])),
           "HINTER_TIMELINE_T0": repr(time.time())}
    out = args.out / f"timeline{args.timeline}" / "campaign.suite"
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, __file__, "--in-cli", "suite", "build", *campaign, "--workers",
                        str(args.timeline), "--out", str(out)], env=env, text=True, capture_output=True)
    gone = time.perf_counter() - t0
    if p.returncode:
        raise SystemExit(f"the build failed ({p.returncode}):\n{p.stderr[-3000:]}")
    tasks = [line.split() for line in p.stderr.splitlines() if line.startswith("task ") and len(line.split()) == 6]
    print("\n".join(line for line in p.stderr.splitlines() if not line.startswith("task ")).strip())
    print(f"{gone:6.2f} s  process gone")
    tasks = [(int(pid), kind, float(a), float(b), float(c)) for _, pid, kind, a, b, c in tasks]
    if not tasks:
        return
    first, last = min(t[2] for t in tasks), max(t[3] for t in tasks)
    procs = sorted({t[0] for t in tasks})
    busy = {pid: sum(t[3] - t[2] for t in tasks if t[0] == pid) for pid in procs}
    print(f"\ntasks from {first:.2f} s to {last:.2f} s in {len(procs)} processes: busy {sum(busy.values()):.1f} s of "
          f"{len(procs) * (last - first):.1f} ({sum(busy.values()) / (len(procs) * (last - first)):.0%}); "
          f"each process's busy seconds {min(busy.values()):.1f} to {max(busy.values()):.1f}; the processes' last "
          f"tasks ended from {min(max(t[3] for t in tasks if t[0] == pid) for pid in procs):.2f} s on")
    print("| task | count | wall s | CPU s | longest s |")
    print("|---|---|---|---|---|")
    for kind in ("plan", "text", "sentences", "cut"):
        of = [t for t in tasks if t[1] == kind]
        if of:
            print(f"| {kind} | {len(of)} | {sum(t[3] - t[2] for t in of):.1f} | {sum(t[4] for t in of):.1f} | "
                  f"{max(t[3] - t[2] for t in of):.2f} |")
    print("the last tasks to end: " + "; ".join(f"{kind} {a:.2f}-{b:.2f} s" for _, kind, a, b, _ in
                                                  sorted(tasks, key=lambda t: t[3])[-6:]))


def in_cli(argv: list[str]) -> None:
    """The child of --timeline: hinter's CLI with time stamps on stderr."""
    import atexit

    t0 = float(os.environ["HINTER_TIMELINE_T0"])

    def stamp(what: str) -> None:
        print(f"{time.time() - t0:6.2f} s  {what}", file=sys.stderr, flush=True)
    stamp("interpreter up")
    atexit.register(stamp, "interpreter exit begins")
    from hinter.cli.main import main as cli_main
    import hinter.pipeline.suite
    stamp("CLI imported")
    build_verdicts = hinter.pipeline.suite.build_verdicts

    def timed(*a, **kw):
        kw["progress"] = lambda stage, done, total: stamp(f"{stage} {done}/{total}")
        return build_verdicts(*a, **kw)
    hinter.pipeline.suite.build_verdicts = timed
    # each task of the build (a text's plan, its verdicts, a cut text's slice or its Validator), wherever it runs:
    # one line on stderr, read back by `timeline` (the tasks' wall and CPU seconds per process)
    import hinter.pipeline.engine
    for kind in ("_plan", "_text", "_sentences", "_cut"):
        def task(self, payload, _run=getattr(hinter.pipeline.engine.SpreadVerdicts, kind), _kind=kind[1:]):
            start, cpu = time.time(), time.process_time()
            try:
                return _run(self, payload)
            finally:
                # one write of one line: 16 processes share the pipe, and print() writes the newline apart
                os.write(2, f"task {os.getpid()} {_kind} {start - t0:.4f} {time.time() - t0:.4f} "
                            f"{time.process_time() - cpu:.4f}\n".encode())
        setattr(hinter.pipeline.engine.SpreadVerdicts, kind, task)
    sys.argv = ["hinter", *argv]
    try:
        cli_main()
    finally:
        stamp("command done")
        usage = resource.getrusage(resource.RUSAGE_SELF)
        stamp(f"the driver's own CPU: {usage.ru_utime:.2f} s user, {usage.ru_stime:.2f} s system")


def probe(kind: str, at: float) -> None:
    """One process of --contention: loads what `kind` needs, waits until `at` (time.time()), does its work, prints
    its wall and CPU seconds."""
    if kind == "spacy":
        sys.path.insert(0, str(ROOT / "src"))
        from hinter.config import RunConfig
        from hinter.pipeline.engine import _cpu_only
        from hinter.validity.parsers import DEFAULT_SPACY_MODEL, SpacyParser
        from hinter.validity.sentences import sentence_spans
        texts = [r.text for r in RunConfig(dataset="imdb").read_dataset().records]
        sentences = list(dict.fromkeys(t[a:b] for t in texts for a, b in sentence_spans(t)))[:1000]
        with _cpu_only():
            parser = SpacyParser(DEFAULT_SPACY_MODEL)

        def work() -> None:
            parser.tag(sentences)
            parser.parse(sentences)
    else:
        def work() -> None:
            x = 0
            for i in range(20_000_000):
                x = (x + i * 7) % 1_000_003
    time.sleep(max(0.0, at - time.time()))
    t, c = time.perf_counter(), time.process_time()
    work()
    print(f"{time.perf_counter() - t:.4f} {time.process_time() - c:.4f}", flush=True)


def contention(counts: list[int]) -> None:
    """N processes of each probe started together, for each N: the median process's wall seconds against one alone."""
    import statistics

    print(f"{os.cpu_count()} cores; each process alone vs N together (median process; wall s, CPU s)", flush=True)
    rows = {}
    for kind in ("python", "spacy"):
        for n in counts:
            at = time.time() + (4.0 if kind == "spacy" else 0.5) + 0.05 * n
            procs = [subprocess.Popen([sys.executable, __file__, "--probe", kind, "--at", str(at)], text=True,
                                      stdout=subprocess.PIPE) for _ in range(n)]
            outs = [p.communicate()[0].split() for p in procs]
            walls, cpus = [float(o[0]) for o in outs], [float(o[1]) for o in outs]
            rows[kind, n] = (statistics.median(walls), max(walls), statistics.median(cpus))
            print(f"  {kind} x{n}: median {rows[kind, n][0]:.2f} s, slowest {rows[kind, n][1]:.2f} s", flush=True)
    print("\n| processes at once | pure Python loop: s (x alone) | spaCy tag+parse, 1,000 sentences: s (x alone) | "
          "slowest spaCy process |")
    print("|---|---|---|---|")
    for n in counts:
        py, sp = rows["python", n], rows["spacy", n]
        print(f"| {n} | {py[0]:.2f} ({py[0] / rows['python', counts[0]][0]:.2f}x) | {sp[0]:.2f} "
              f"({sp[0] / rows['spacy', counts[0]][0]:.2f}x) | {sp[1]:.2f} |")


def main() -> None:
    if sys.argv[1:2] == ["--in-cli"]:
        return in_cli(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="imdb")
    ap.add_argument("--attributes", default="race,gender,body")
    ap.add_argument("--limit", type=int, default=None, help="the dataset's first N texts")
    ap.add_argument("--extra", default="", help="more options of suite build, e.g. '--max-pairs-per-text 6'")
    ap.add_argument("--workers", default="1,2,4,8,16", help="worker counts; 1 is always measured, first")
    ap.add_argument("--baseline", type=Path, default=None, help="another tree's src folder, timed at --baseline-workers")
    ap.add_argument("--baseline-workers", default="16")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "suite-scaling")
    ap.add_argument("--timeline", type=int, default=None, metavar="N",
                    help="instead: one build's process with N workers, printing when each stage ended")
    ap.add_argument("--contention", default=None, metavar="N,N",
                    help="instead: the machine's slow-down of N processes of fixed work at once (1 first)")
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="the source tree --timeline runs")
    ap.add_argument("--probe", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--at", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        return probe(args.probe, args.at)
    if args.contention:
        return contention([int(n) for n in args.contention.split(",")])
    if args.timeline:
        return timeline(args)
    campaign = ["--dataset", args.dataset, "--attributes", args.attributes, *args.extra.split()]
    if args.limit:
        campaign += ["--limit", str(args.limit)]
    counts = [1] + [int(w) for w in args.workers.split(",") if int(w) != 1]
    base_counts = [int(w) for w in args.baseline_workers.split(",")] if args.baseline else []
    print(f"hinter suite build {' '.join(campaign)}; {os.cpu_count()} cores", flush=True)
    seconds, cpu, digests = {}, {}, {}
    base, base_cpu, base_digests = {}, {}, {}
    for w in counts:  # each baseline build right after this tree's with as many workers: alternated
        seconds[w], cpu[w], digests[w] = build(ROOT / "src", campaign, w, args.out / f"w{w}" / "campaign.suite")
        print(f"  {w} workers: {seconds[w]:.1f} s ({cpu[w][0]:.1f} s user, {cpu[w][1]:.1f} s system)", flush=True)
        if w in base_counts:
            base[w], base_cpu[w], base_digests[w] = build(args.baseline, campaign, w,
                                                          args.out / f"baseline{w}" / "campaign.suite")
            print(f"  baseline, {w} workers: {base[w]:.1f} s", flush=True)
    for w in base_counts:
        if w not in base:
            base[w], base_cpu[w], base_digests[w] = build(args.baseline, campaign, w,
                                                          args.out / f"baseline{w}" / "campaign.suite")
            print(f"  baseline, {w} workers: {base[w]:.1f} s", flush=True)
    sys.path.insert(0, str(ROOT / "src"))
    from hinter.pipeline.suite import load_suite
    suite = load_suite(args.out / "w1" / "campaign.suite")
    mutants = sum(map(len, suite.mutants.values()))
    print(f"\n{len(suite.records):,} texts, {mutants:,} mutants\n")
    print("| tree | workers | seconds | speed-up (over its own 1 worker) | mutants/s | CPU seconds, user + system "
          "(all processes) | byte-identical to this tree's 1 worker |")
    print("|---|---|---|---|---|---|---|")
    for w in counts:
        print(f"| this | {w} | {seconds[w]:.1f} | {seconds[1] / seconds[w]:.2f}x | {mutants / seconds[w]:,.0f} | "
              f"{cpu[w][0]:.1f} + {cpu[w][1]:.1f} | {'yes' if digests[w] == digests[1] else 'NO'} |")
    for w in base_counts:
        own = f"{base[1] / base[w]:.2f}x" if 1 in base else ""
        print(f"| baseline | {w} | {base[w]:.1f} | {own} | {mutants / base[w]:,.0f} | "
              f"{base_cpu[w][0]:.1f} + {base_cpu[w][1]:.1f} | {'yes' if base_digests[w] == digests[1] else 'NO'} |")
    if any(d != digests[1] for d in [*digests.values(), *base_digests.values()]):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
