"""Mutation: the paper's example and the edge cases of matching and replacing."""

from hinter.mutation.dictionary import Dictionary, Pair, WordMatcher, load_dictionary
from hinter.mutation.mutants import apply_replacements, generate, match_case


def d(*pairs):
    return Dictionary(tuple(Pair(*p) for p in pairs), "test")


PAPER = d(("body", "common", "uncommon", "people", "trans women"), ("race", "european", "asian", "British", "Pakistani"))


def texts(gen):
    return {tuple(r.word for r in m.pairs): m.text for m in gen.mutants}  # keyed by its pairs, not its a/an edits


def test_paper_figure_1_atomic_and_intersectional():
    c = "British people are friendly and the film shows it."
    gen = generate(0, c, PAPER, ("body", "race"), 2)
    assert texts(gen) == {
        ("people",): "British trans women are friendly and the film shows it.",
        ("British",): "Pakistani people are friendly and the film shows it.",
        ("people", "British"): "Pakistani trans women are friendly and the film shows it.",
    }
    orders = sorted(m.order for m in gen.mutants)
    assert orders == [1, 1, 2]


def test_case_pattern_is_kept():
    assert match_case("man", "woman") == "woman"
    assert match_case("Man", "woman") == "Woman"
    assert match_case("MAN", "woman") == "WOMAN"
    # an acronym is spelt in capitals, not shouted (english held-out4: "The new CEO" -> "The new EDITOR")
    assert match_case("CEO", "editor", mid_sentence=True) == "editor"
    assert match_case("CEO", "editor") == "Editor"
    assert match_case("CEO", "assistant", mid_sentence=True) == "assistant"
    g = generate(0, "Man arrived; the man and the MAN.", d(("gender", "male", "female", "man", "woman")), ("gender",), 1)
    assert [m.text for m in g.mutants] == ["Woman arrived; the woman and the WOMAN."]
    # inside a sentence a capital makes the word an office's or a name's ("appointed by the President"): left, and
    # the same word left alone elsewhere, since it may be the same office
    g = generate(0, "The man, the Man and the MAN.", d(("gender", "male", "female", "man", "woman")), ("gender",), 1)
    assert g.mutants == []


def test_multi_word_replacements_are_cased_as_english_writes_them():
    race = d(("race", "asian", "african", "asian", "south african"), ("race", "european", "american", "white",
                                                                        "native american"))
    texts = {m.text for m in generate(0, "The Asian actress met A White man.", race, ("race",), 1).mutants}
    # a capital inside a sentence marks a proper word: every word of the replacement gets one
    assert texts == {"The South African actress met A White man.", "The Asian actress met A Native American man."}
    # at a sentence's start only the first letter follows ("Ugly men", not "Ugly Men"); lower case stays lower
    body = d(("body", "common", "uncommon", "men", "ugly men"), ("race", "asian", "african", "asian", "south african"))
    texts = {m.text for m in generate(0, "Men like asian food. \"Men!\" he said.", body, ("body", "race"), 1).mutants}
    assert texts == {"Ugly men like asian food. \"Ugly men!\" he said.", "Men like south african food. \"Men!\" he said."}
    # the replacement's own capitals are kept, whatever the case of the replaced word
    assert match_case("man", "African-American") == "African-American"
    assert match_case("White", "african-american", mid_sentence=True) == "African-American"
    assert match_case("Black", "people of color", mid_sentence=True) == "People of Color"
    assert match_case("WHITE", "south african", mid_sentence=True) == "SOUTH AFRICAN"


def test_multi_word_terms_and_punctuation():
    dic = d(("body", "old", "young", "old folks", "young people"), ("gender", "male", "female", "men", "women"))
    g = generate(0, "(Old folks) and men, men!", dic, ("body", "gender"), 2)
    t = texts(g)
    assert t[("old folks",)] == "(Young people) and men, men!"
    assert t[("men",)] == "(Old folks) and women, women!"
    assert t[("old folks", "men")] == "(Young people) and women, women!"


def test_word_inside_another_word_is_not_matched():
    dic = d(("gender", "male", "female", "man", "woman"))
    assert generate(0, "A manager and a German.", dic, ("gender",), 1).mutants == []
    assert WordMatcher(["man"]).find("man-made, the man's") == {"man": ((0, 3), (14, 17))}


def test_overlapping_spans_are_skipped_and_counted():
    dic = d(("body", "old", "young", "old men", "young men"), ("gender", "male", "female", "men", "women"))
    g = generate(0, "The old men left.", dic, ("body", "gender"), 2)
    assert g.overlaps_skipped == 1
    assert sorted(m.text for m in g.mutants) == ["The old women left.", "The young men left."]


def test_replacement_containing_a_dictionary_word_is_not_rematched():
    # "he" -> "the man" inserts "man", which the gender pair man -> woman must not rewrite.
    dic = d(("gender", "male", "female", "he", "the man"), ("race", "european", "asian", "man", "asian man"))
    g = generate(0, "he met a man", dic, ("gender", "race"), 2)
    assert texts(g)[("he", "man")] == "the man met an asian man"  # a/an follows (issue 40)


def test_apply_replacements_is_simultaneous():
    assert apply_replacements("ab cd", [(3, 5, "ab"), (0, 2, "cd")]) == "cd ab"


def test_higher_order_combinations():
    dic = d(("race", "a", "b", "white", "black"), ("gender", "male", "female", "man", "woman"),
            ("body", "young", "old", "young", "old"))
    g = generate(0, "A young white man.", dic, ("body", "gender", "race"), 3)
    by_order = {}
    for m in g.mutants:
        by_order.setdefault(m.order, []).append(m.text)
    assert len(by_order[1]) == 3 and len(by_order[2]) == 3
    assert by_order[3] == ["An old black woman."]  # a/an follows the new word (issue 40)


def test_builtin_dictionary_is_clean():
    dic = load_dictionary()
    assert set(dic.attributes) == {"body", "gender", "race"}
    assert len({p.id for p in dic.pairs}) == len(dic.pairs)
    assert all(p.word == p.word.strip() and p.word.lower() != p.replacement.lower() for p in dic.pairs)
    gender = [p for p in dic.pairs if p.attribute == "gender"]
    assert any(p.occupational for p in gender) and any(not p.occupational for p in gender)
    # group files such as gender/male_job.csv are word lists, not pairs
    assert all(p.source_group in {"male", "female"} for p in gender)


def test_a_group_compared_with_itself_is_discarded_in_every_language():
    # mutants.self_comparison: the new word is already in the sentence as a word of the attribute the mutant leaves
    gd = d(("gender", "female", "male", "women", "men"), ("gender", "male", "female", "men", "women"),
           ("gender", "female", "male", "woman", "man"))
    gen = generate(0, "Women earn less than men. A woman spoke.", gd, ("gender",), 1)
    why = {m.text: gen.uninflected.get(i) for i, m in enumerate(gen.mutants)}
    assert why["Men earn less than men. A woman spoke."] == \
        "self-comparison: 'women' -> 'men' beside 'men' in the same sentence"
    assert why["Women earn less than women. A woman spoke."].startswith("self-comparison: 'men' -> 'women'")
    assert why["Women earn less than men. A man spoke."] is None  # "men" is in another sentence
    assert len(gen.self_compared) == 2
