"""hinter dictionary lint (issue 15): one planted case of every kind is found once, and nothing else; who a word
refers to, from the real spaCy parse; evaluative pairs marked in a real run and left out on demand."""
import json
from pathlib import Path

import pytest

from hinter.mutation import lint
from hinter.config import RunConfig
from hinter.mutation.dictionary import Pair, load_dictionary
from cli import hinter



def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A dictionary with one case of each kind, and texts on which only the planted words misbehave."""
    root = tmp_path_factory.mktemp("lint")
    d = root / "dict"
    write(d / "gender" / "male_female.csv", "man;woman\nboy;boy\nman;woman\nking;queen\nprince;princess\n"
                                            "husband;Wife\n")  # a common word with a capital: "her Wife"
    write(d / "gender" / "female_male.csv", "woman;man\nprincess;prince\nwife;husband\n")  # no queen;king: asymmetric
    write(d / "gender" / "male_female_job.csv", "writer;authoress\n")
    write(d / "body" / "common_uncommon.csv", "person;ugly person\n")
    write(d / "race" / "majority_minority.csv", "black;white\n")
    texts = ["The man laughed and a boy ran home.", "The woman smiled at the king.", "The princess sang.",
             "Its Co-writer is a kind person.", "She wore a black coat.", "The black car was fast.",
             "A black dog barked at us.", "Her husband and his wife left."]
    data = write(root / "texts.jsonl", "".join(json.dumps({"text": t}) + "\n" for t in texts))
    return d, data


def test_every_planted_kind_is_found_once_and_nothing_else(planted):
    d, data = planted
    r = hinter("dictionary", "lint", str(d), "--dataset", str(data), "--format", "json")
    assert r.returncode == 1, r.stderr  # the self-pair: `hinter run` refuses the dictionary
    found = json.loads(r.stdout)
    assert all(set(f) == {"kind", "attribute", "file", "line", "word", "replacement", "detail"} for f in found)
    got = sorted((f["kind"], f["attribute"], Path(f["file"]).name, f["line"], f["word"], f["replacement"])
                 for f in found)
    assert got == sorted([
        ("self-pair", "gender", "male_female.csv", 2, "boy", "boy"),
        ("capitalised", "gender", "male_female.csv", 6, "husband", "Wife"),
        ("duplicate", "gender", "male_female.csv", 3, "man", "woman"),
        ("asymmetric", "gender", "male_female.csv", 4, "king", "queen"),
        ("never-matches", "gender", "male_female.csv", 5, "prince", "princess"),
        ("inside-word", "gender", "male_female_job.csv", 1, "writer", "authoress"),
        ("evaluative", "body", "common_uncommon.csv", 1, "person", "ugly person"),
        ("not-a-person", "race", "majority_minority.csv", 1, "black", "white"),
    ]), found
    detail = {f["kind"]: f["detail"] for f in found}
    assert "'ugly'" in detail["evaluative"] and "Co-writer" in detail["inside-word"]
    assert "'her husband' would become 'her Wife'" in detail["capitalised"]
    assert detail["not-a-person"].startswith("3 of 3 occurrences")


def test_text_format_and_the_static_kinds_without_a_dataset(planted):
    d, _ = planted
    r = hinter("dictionary", "lint", str(d))
    assert r.returncode == 1, r.stderr
    assert ("In all: 1 self-pair, 1 duplicate, 1 capitalised replacement, 1 asymmetric pair, 1 evaluative "
            "replacement.") in r.stdout
    assert "`hinter run` refuses this dictionary: 1 self-pair" in " ".join(r.stdout.split())
    assert "male_female.csv:4  gender: king -> queen" in r.stdout
    bad = hinter("dictionary", "lint", str(d), "--format", "xml")
    assert bad.returncode == 2 and "--format" in bad.stderr


def test_every_bad_line_is_reported_with_the_fix_of_its_format(tmp_path):
    folder = tmp_path / "dict"
    write(folder / "gender" / "male_female.csv", "man;woman\nboy,girl\nhe;she\nson;daughter;child\n;her\n")
    r = hinter("dictionary", "lint", str(folder), "--format", "json")
    assert r.returncode == 1, r.stderr  # `hinter run` stops at the first of them
    bad = [(f["line"], f["detail"]) for f in json.loads(r.stdout) if f["kind"] == "bad-line"]
    assert [line for line, _ in bad] == [2, 4, 5]
    assert "found 1 field(s) in 'boy,girl'" in bad[0][1] and "one semicolon" in bad[0][1]
    assert "empty word" in bad[2][1] and "`word;replacement`" in bad[2][1]
    one_file = write(tmp_path / "pairs.csv", "attribute,source_group,target_group,word,replacement\n"
                                             "gender,male,female,Man, the hero,woman\n"   # an unquoted comma
                                             "gender,male,female,boy,\n"                  # an empty replacement
                                             "gender,male,female,he,she\n")
    r = hinter("dictionary", "lint", str(one_file))
    said = " ".join(r.stdout.split())
    assert r.returncode == 1 and "2 lines hinter run refuses" in said, r.stdout + r.stderr
    assert "pairs.csv:2 the row has 6 fields where the header has 5" in said and "quote a value" in said
    # the fix of a one-file dictionary names its columns, not the folder format's `word;replacement`
    assert "pairs.csv:3 empty replacement. Every row needs the columns attribute" in said
    assert "`word;replacement`" not in said


def test_packs_are_linted_with_the_dictionary(tmp_path):
    r = hinter("dictionary", "lint", "--packs", "religion", "--attributes", "religion,gender")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("built-in+religion dictionary:")
    unknown = hinter("dictionary", "lint", "--packs", "klingon")
    assert unknown.returncode == 2 and "unknown identity pack 'klingon'" in unknown.stderr


def test_pairs_keep_their_file_and_line_without_changing_their_identity(planted):
    d, _ = planted
    pairs = load_dictionary(d, strict=False).pairs
    assert len(pairs) == 12  # lenient: the self-pair and the duplicate kept for the lint
    from hinter.errors import InputError
    with pytest.raises(InputError, match="to itself"):  # a run still refuses it
        load_dictionary(d)
    king = next(p for p in pairs if p.word == "king")
    assert (Path(king.file).name, king.line) == ("male_female.csv", 4)
    plain = Pair("gender", "male", "female", "king", "queen")
    assert king == plain and king.id == plain.id and hash(king) == hash(plain)


def test_evaluative_is_the_sentiment_a_replacement_adds_or_removes():
    lex = lint.vader_lexicon()
    assert "ugly" in lint.evaluative_reason(Pair("body", "common", "uncommon", "man", "ugly man"), lex)
    assert "removes 'ugly'" in lint.evaluative_reason(Pair("body", "uncommon", "common", "ugly man", "man"), lex)
    # equally positive words swapped: no change of sentiment
    assert lint.evaluative_reason(Pair("gender", "male", "female", "hero", "heroine"), lex) is None
    assert lint.evaluative_reason(Pair("gender", "male", "female", "man", "woman"), lex) is None


@pytest.fixture(scope="module")
def parse():
    return lint.spacy_parse()


@pytest.mark.parametrize("sentence, word, person", [
    ("She wore a black coat.", "black", False),
    ("He met a black woman in Paris.", "black", True),
    ("He speaks Spanish at home.", "Spanish", False),
    ("The Spanish director won.", "Spanish", True),
    ("She is black.", "black", True),
    ("We drank white wine.", "white", False),
    ("Black and white actors share the stage.", "white", True),
    ("The old man smiled.", "man", True),
])
def test_who_a_word_refers_to(parse, sentence, word, person):
    doc = parse([sentence])[0]
    start = sentence.index(word)
    span = doc.char_span(start, start + len(word))
    nouns = lint.person_nouns([Pair("gender", "male", "female", "man", "woman")])
    assert lint.refers_to_person(span, nouns) is person


def test_a_new_option_at_its_default_changes_no_recorded_config():
    assert "exclude_evaluative" not in RunConfig().recorded()
    assert RunConfig(exclude_evaluative=True).recorded()["exclude_evaluative"] is True
    assert RunConfig.from_recorded(RunConfig(exclude_evaluative=True).recorded()).exclude_evaluative


RUN = ("run", "--dataset", "imdb", "--limit", "20", "-a", "body,gender", "--max-pairs-per-text", "4",
       "-m", "python:planted:negative_word")


def pair_ids(out: Path) -> list[tuple[set[str], bool | None]]:
    """Each stored mutant's pair ids and bias, read through the store (it alone knows the schema)."""
    from hinter.store import open_run
    store = open_run(out)
    try:
        return [({x.pair_id for x in r.replacements}, r.bias) for r in store.mutants()]
    finally:
        store.close()


def test_evaluative_flips_are_marked_and_left_out_on_demand(tmp_path):
    """The planted model turns negative on "ugly", "illness"...: every flip comes from an evaluative pair, is
    counted as such per combination, marked in the report, and gone with --exclude-evaluative."""
    out = tmp_path / "marked"
    r = hinter(*RUN, "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "evaluative replacements" in r.stderr and "hinter dictionary lint" in r.stderr
    s = json.loads((out / "summary.json").read_text())
    evaluative = set(s["settings"]["checks.evaluative"]["pairs"])
    assert evaluative == lint.evaluative_ids(load_dictionary().restrict(["body", "gender"]).pairs)
    biased = s["totals"]["atomic"]["biased"] + s["totals"]["intersectional"]["biased"]
    ev = s["evaluative"]["totals"]
    assert biased > 0 and ev["atomic"]["biased"] + ev["intersectional"]["biased"] == biased
    rows = pair_ids(out)
    for combo, m in {**s["atomic"], **s["intersectional"]}.items():
        assert m["evaluative"]["biased"] <= m["evaluative"]["valid"] <= m["evaluative"]["mutants"] <= m["mutants"]
    assert sum(m["evaluative"]["mutants"] for m in {**s["atomic"], **s["intersectional"]}.values()) == \
        sum(1 for ids, _ in rows if ids & evaluative)
    assert all(ids & evaluative for ids, bias in rows if bias)
    assert any(f.get("evaluative_flips") for f in s["findings"])
    assert "Evaluative pairs" in r.stdout
    html = (out / "report.html").read_text()
    assert 'data-testid="evaluative"' in html
    assert html.count('data-evaluative="1"') == biased and 'data-evaluative="0"' not in html

    out2 = tmp_path / "excluded"
    r2 = hinter(*RUN, "--exclude-evaluative", "-o", str(out2))
    assert r2.returncode == 0, r2.stderr
    s2 = json.loads((out2 / "summary.json").read_text())
    assert s2["settings"]["exclude_evaluative"] is True and s2["settings"]["checks.evaluative"]["pairs"] == []
    assert s2["settings"]["config"]["exclude_evaluative"] is True
    assert s2["totals"]["atomic"]["biased"] + s2["totals"]["intersectional"]["biased"] == 0
    assert not any(ids & evaluative for ids, _ in pair_ids(out2))
    assert s2["totals"]["atomic"]["valid"] > 0
    again = hinter("resume", str(out2))  # the recorded option is taken back
    assert again.returncode == 0, again.stderr


def test_extract_builds_the_expected_pairs_from_annotations(tmp_path):
    """A hand-made SBIC-style file: groups per category, words per group, pairs between the groups of a
    category; rare groups and unknown categories left out; the result loads and is compared with the built-in."""
    rows = [("p1", "black folks", "race"), ("p2", "black folks", "race"), ("p3", "asian folks", "race"),
            ("p4", "asian folks", "race"), ("p5", "women", "gender"), ("p6", "women", "gender"),
            ("p7", "men", "gender"), ("p8", "men", "gender"), ("p9", "overweight/fat folks", "body"),
            ("p10", "old folks", "body"), ("p11", "old folks", "body"), ("p12", "fat folks", "body"),
            ("p13", "martians", "race"), ("p14", "rich folks", "social"), ("p15", "", "")]
    sbic = write(tmp_path / "annotations.csv", "post,targetMinority,targetCategory\n"
                 + "".join(f"{p},{t},{c}\n" for p, t, c in rows))
    out = tmp_path / "extracted"
    r = hinter("dictionary", "extract", "--sbic", str(sbic), "--out", str(out), "--min-count", "2",
               "--json", str(tmp_path / "overlap.json"))
    assert r.returncode == 0, r.stderr
    got = {(p.attribute, p.source_group, p.target_group, p.word, p.replacement) for p in load_dictionary(out).pairs}
    assert got == {
        ("race", "black", "asian", "black", "asian"), ("race", "asian", "black", "asian", "black"),
        ("race", "black", "asian", "black folks", "asian folks"), ("race", "asian", "black", "asian folks", "black folks"),
        ("gender", "women", "men", "women", "men"), ("gender", "men", "women", "men", "women"),
        ("body", "fat", "old", "fat", "old"), ("body", "old", "fat", "old", "fat"),
        ("body", "fat", "old", "fat folks", "old folks"), ("body", "old", "fat", "old folks", "fat folks"),
    }
    assert (out / "race" / "black.csv").read_text().splitlines() == ["black", "black folks"]
    assert not (out / "social").exists()  # one annotation: under --min-count
    o = json.loads((tmp_path / "overlap.json").read_text())["overlap"]
    assert o["gender"]["pairs"]["both"] == 2 and o["gender"]["pairs"]["only_extracted"] == 0  # man;woman's plural
    assert o["race"]["pairs"]["both"] == 0 and o["race"]["pairs"]["only_extracted"] == 4
    assert "black" in o["race"]["shared_words"] and "asian folks" not in o["race"]["shared_words"]
    assert "Overlap with the built-in dictionary" in r.stdout


def test_capitalised_is_a_common_word_with_a_capital_not_an_acronym_or_a_proper_word():
    common = lint.common_words()
    def reason(word, replacement):
        return lint.capitalised_reason(Pair("gender", "female", "male", word, replacement), common)
    assert "'Wife'" in reason("husband", "Wife") and "'Old'" in reason("young", "Old People")
    assert reason("assistant", "CEO") is None  # an acronym stays in capitals
    assert reason("husband", "wife") is None and reason("Chinese", "Cuban") is None  # proper words keep theirs
    assert reason("mrs", "Mr") is None  # an honorific, capitalised before a name
    assert all(p.attribute != "gender" or reason(p.word, p.replacement) is None for p in load_dictionary().pairs)


def test_a_repaired_mutant_counts_in_its_findings_evaluative_marks(tmp_path):
    """A mutant's cell is its dictionary pairs: its repairs (a/an, number: --repair) are edits, not components, so
    a repaired mutant that uses an evaluative pair counts in its finding's evaluative marks as any other."""
    out, data = tmp_path / "repaired", tmp_path / "angry.jsonl"
    # gender's evaluative pair angry -> hysterical needs "an" -> "a" before it: a repair of every such mutant
    data.write_text("".join(json.dumps({"id": f"a{i}", "text": f"We met an angry man at the station on day {i}. "
                                        "He was late."}) + "\n" for i in range(8)))
    r = hinter("run", "--dataset", str(data), "-a", "gender", "-m", "python:planted:negative_word", "--repair",
               "-o", str(out))
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    evaluative = set(s["settings"]["checks.evaluative"]["pairs"])
    from hinter.records import dictionary_replacements
    from hinter.store import open_run
    store = open_run(out)
    try:
        used = [m for m in store.tested_mutants() if evaluative & {x.pair_id for x in m.replacements}]
    finally:
        store.close()
    assert any(len(dictionary_replacements(m.replacements)) < len(m.replacements) for m in used), \
        "no repaired mutant uses an evaluative pair here: the test needs another campaign"
    assert sum(f["evaluative_tested"] for f in s["findings"]) == len(used)
