"""Does fr_core_news_md carry the French agreement better than fr_core_news_sm, and at what cost (issue 40)?

For each pipeline, the agreement is carried with its parse (languages.french.grammar.french_nlp is pointed at it) on:
- the hand-written constructions of tests/test_french.py (CASES, BOTH_WAYS both ways, OBJECT_PRONOUNS): how many
  come out as expected (the text, not refused);
- the quality campaign's texts (bench/mutant_quality_fr.py: the avis sample, the bundled sentences, the texts
  written after the rules): gender mutants made and refused at mutation, and the seconds per text of mutation (its
  parse included: each text is parsed once, batched), the fastest of --repeats.

    python bench/french_parser_compare.py [--models fr_core_news_sm fr_core_news_md] [--repeats 3]
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cases() -> list[tuple[str, str]]:
    spec = importlib.util.spec_from_file_location("test_french", ROOT / "tests" / "test_french.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = [(o, e) for _c, o, e in module.CASES] + [(o, e) for _c, o, e in module.OBJECT_PRONOUNS]
    out += [pair for _c, man, woman in module.BOTH_WAYS for pair in ((man, woman), (woman, man))]
    return out


def use(model: str) -> None:
    import spacy

    from hinter.languages.french import grammar as french

    @lru_cache(maxsize=1)
    def nlp():
        return spacy.load(model, exclude=["ner"])
    french.french_nlp = nlp
    nlp()


def measure(model: str, repeats: int) -> dict:
    from hinter.mutation.dictionary import load_dictionary
    from hinter.mutation.mutants import generate
    sys.path.insert(0, str(ROOT / "bench"))
    from mutant_quality_fr import texts

    use(model)
    fr = load_dictionary(language="fr")
    right = 0
    for original, expected in cases():
        gen = generate(0, original, fr, ("gender",), 1, language="fr")
        right += any(m.text == expected and i not in gen.uninflected for i, m in enumerate(gen.mutants))
    docs = [t for _s, t in texts()]
    best, made, refused = float("inf"), 0, 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        made = refused = 0
        for i, text in enumerate(docs):
            gen = generate(i, text, fr, ("gender",), 1, language="fr")
            made += len(gen.mutants)
            refused += len(gen.uninflected)
        best = min(best, time.perf_counter() - t0)
    return {"model": model, "cases": len(cases()), "right": right, "texts": len(docs), "gender_mutants": made,
            "refused": refused, "ms_per_text": 1000 * best / len(docs)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=["fr_core_news_sm", "fr_core_news_md"])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print("| pipeline | constructions right | gender mutants refused at mutation | ms per text (mutation) |")
    print("|---|---|---|---|")
    for model in args.models:
        r = measure(model, args.repeats)
        print(f"| {r['model']} | {r['right']}/{r['cases']} | {r['refused']}/{r['gender_mutants']} | "
              f"{r['ms_per_text']:.1f} |")


if __name__ == "__main__":
    main()
