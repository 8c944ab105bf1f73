"""The audit on the embedded model (gguf:default, Gemma 3 270M) and small samples, for docs/audit.md:

1. the imdb task on the first N bundled reviews (favourable: Positive);
2. the reference-letter task: on the bundled biographies (bios) it renders nothing (they name their person and use
   pronouns, without a person noun: the audit stops with its error, printed here), so it runs on M of the planted
   applications of tests/planted_audit.py (written to a JSONL), one greedy letter per rendering
   (bench/reference-letter-audit.yaml), judged by the embedded model with the judge rubric.

Each prints its wall and CPU time (this process and its children) and the rows the audit finds.

    PYTHONPATH=src:tests python bench/audit_embedded.py [N] [M] [OUT] [PARTS]

PARTS: a comma-separated subset of imdb,bios,letters (default: all three, one after the other).
"""
import json
import resource
import sys
import time
from pathlib import Path

import hinter
from hinter.errors import InputError

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100
M = int(sys.argv[2]) if len(sys.argv) > 2 else 5
OUT = Path(sys.argv[3]) if len(sys.argv) > 3 else Path("runs/audit-bench")
PARTS = sys.argv[4].split(",") if len(sys.argv) > 4 else ["imdb", "bios", "letters"]
HERE = Path(__file__).parent


def cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(name, **kw):
    w, c = time.time(), cpu()
    try:
        result = hinter.audit(**kw)
    except InputError as e:
        print(f"{name}: {e.message}")
        return None
    print(f"{name}: {time.time() - w:.1f} s wall, {cpu() - c:.1f} s CPU")
    counts = result["counts"]
    print(f"  texts {counts['texts']}, rendered {counts['rendered']}, not rendered {counts['not_rendered']}, "
          f"names {result['names']['texts_naming_the_person']}, model calls {result['usage']['calls']}"
          + (f", judge calls {result['usage']['judge']['calls']}" if result["usage"].get("judge") else ""))
    for table in ("sex", "race", "intersectional"):
        for r in result["tables"][table]:
            if table != "intersectional" or r["impact_ratio"] < 1 or r["four_fifths"]:
                print(f"  {table:<14} {r['category']:<52} {r['selected']:>4}/{r['n']:<4} rate {r['rate']:.3f} "
                      f"ratio {r['impact_ratio']:.3f} [{r['impact_ratio_ci'][0]:.2f}, {r['impact_ratio_ci'][1]:.2f}] "
                      f"p {r['p_value']:.3f}{'  UNDER 4/5' if r['four_fifths'] else ''}")
    for t in result["twins"][:4]:
        print(f"  twin {t['category']} vs {t['reference']}: {t['outcome']!r} / {t['reference_outcome']!r}")
    return result


if __name__ == "__main__":
    if "imdb" in PARTS:
        timed(f"imdb, first {N} reviews", dataset="imdb", model="gguf:default", task="imdb", favourable="Positive",
              limit=N, out=OUT / "imdb")
    if "bios" in PARTS:
        timed("reference-letter on bios", dataset="bios", model="gguf:default",
              task=str(HERE / "reference-letter-audit.yaml"), out=OUT / "bios")
    if "letters" not in PARTS:
        sys.exit(0)
    import planted_audit
    data = OUT / "applications.jsonl"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in planted_audit.applications()[:M]))
    timed(f"reference-letter on {M} applications", dataset=str(data), model="gguf:default",
          task=str(HERE / "reference-letter-audit.yaml"), out=OUT / "letters")
