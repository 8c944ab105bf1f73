"""English mutants a native reader accepts (issue 40 item 2): a/an follows the new word, a pronoun's other forms
follow it (or the mutant is discarded), and names, verbs and languages are left alone. Real spaCy parses."""
import pytest

from hinter.mutation.dictionary import Dictionary, Pair
from hinter.languages.english import indefinite_article
from hinter.mutation.mutants import SELF_COMPARISON, generate

PAIRS = (Pair("race", "asian", "european", "Asian", "European"),
         Pair("race", "minority", "majority", "black", "indigenous"),
         Pair("race", "european", "asian", "English", "Asian"),
         Pair("race", "european", "african", "European", "African"),
         Pair("race", "european", "asian", "French", "Chinese"),
         Pair("gender", "male", "female", "he", "she"),
         Pair("gender", "male", "female", "him", "her"),
         Pair("gender", "male", "female", "his", "her"),
         Pair("gender", "male", "female", "his", "hers"),
         Pair("gender", "female", "male", "she", "he"),
         Pair("gender", "female", "male", "her", "his"),
         Pair("gender", "female", "male", "her", "him"),
         Pair("gender", "male", "female", "actor", "actress"),
         Pair("gender", "female", "male", "actress", "actor"),
         Pair("gender", "male", "female", "cook", "cashier", occupational=True))
DIC = Dictionary(PAIRS, "english-test")


def mutants(text, attributes=("race", "gender")):
    """{pair ids: mutant text}, and {pair ids: why discarded} of the atomic mutants."""
    gen = generate(0, text, DIC, attributes, 1)
    texts = {"|".join(m.key).split(":", 2)[2]: m.text for m in gen.mutants}
    discarded = {"|".join(m.key).split(":", 2)[2]: gen.uninflected[i] for i, m in enumerate(gen.mutants)
                 if i in gen.uninflected}
    return texts, discarded, gen


@pytest.mark.parametrize("word, article", [
    ("European", "a"), ("honest", "an"), ("unicorn", "a"), ("Asian", "an"), ("indigenous", "an"), ("hour", "an"),
    ("uninformed", "an"), ("unique", "a"), ("one-off", "a"), ("Ukrainian", "a"), ("FBI", "an"), ("UN", "a"),
    ("80-year-old", "an"), ("man", "a")])
def test_indefinite_article_by_sound(word, article):
    assert indefinite_article(word) == article


def test_a_and_an_follow_the_new_word_both_ways_and_capitalised():
    texts, _, _ = mutants("An Asian woman met a black man.", ("race",))
    assert texts["Asian>European"] == "A European woman met a black man."
    assert texts["black>indigenous"] == "An Asian woman met an indigenous man."


def test_he_to_she_carries_every_form_across_sentences():
    texts, discarded, _ = mutants("He lost his way, so he blamed himself. The map was his. His friend laughed.",
                                  ("gender",))
    want = "She lost her way, so she blamed herself. The map was hers. Her friend laughed."
    assert texts["he>she"] == want
    assert texts["his>her"] == want  # "his" as a determiner: the pair his -> her
    assert texts["his>hers"] == want  # "The map was his": the pair his -> hers
    assert not discarded


def test_she_to_he_reads_her_by_its_role():
    texts, discarded, _ = mutants("She told her brother the news. Later we saw her at the station.", ("gender",))
    want = "He told his brother the news. Later we saw him at the station."
    assert texts["she>he"] == want
    assert texts["her>his"] == want and texts["her>him"] == want
    assert not discarded


def test_a_pronoun_pair_of_the_wrong_form_is_not_applied():
    texts, _, gen = mutants("The car is his.", ("gender",))
    assert texts == {"his>hers": "The car is hers."}  # never "The car is her."
    assert gen.not_mutated == {"pronoun form": 1}


def test_a_pronoun_that_may_be_a_gendered_nouns_is_discarded_with_its_reason():
    texts, discarded, _ = mutants("My brother said he would come. He never did.", ("gender",))
    assert "he>she" in discarded and "brother" in discarded["he>she"]


@pytest.mark.parametrize("text, key, noun", [
    # english held-out4 (texts written after the rules): a landlady's pronoun changed alone, the noun left
    ("Our landlady is strict, but she fixes everything within a day.", "she>he", "landlady"),
    ("Our landlord is strict, but he fixes everything within a day.", "he>she", "landlord"),
    ("The duchess smiled when she saw the garden.", "she>he", "duchess"),
])
def test_a_pronoun_of_a_gendered_noun_added_since_is_discarded(text, key, noun):
    _, discarded, _ = mutants(text, ("gender",))
    assert key in discarded and noun in discarded[key]


def test_a_person_nouns_pronouns_follow_it_both_ways():
    texts, discarded, _ = mutants("The actor arrived late. He said his car broke down.", ("gender",))
    assert texts["actor>actress"] == "The actress arrived late. She said her car broke down."
    texts, discarded, _ = mutants("The actress waved. She smiled at her fans and they cheered her.", ("gender",))
    assert texts["actress>actor"] == "The actor waved. He smiled at his fans and they cheered him."
    assert "actress>actor" not in discarded
    # the pronouns' own mutants would leave "actress" before them: discarded
    assert set(discarded) == {"she>he", "her>his", "her>him"}


def test_a_pronoun_before_the_noun_in_its_sentence_discards_the_mutant():
    texts, discarded, _ = mutants("He is a fine actor.", ("gender",))
    assert "actor>actress" in discarded


def test_a_name_a_verb_and_a_language_are_left_alone():
    texts, _, gen = mutants("Peter Cook is funny. You can cook your own rice, or ask the cook.", ("gender",))
    assert texts == {"cook>cashier": "Peter Cook is funny. You can cook your own rice, or ask the cashier."}
    assert gen.not_mutated == {"name": 1, "verb": 1}
    texts, _, gen = mutants("They speak English at home and French at work. The English man was silent.",
                            ("race",))
    assert texts == {"English>Asian": "They speak English at home and French at work. The Asian man was silent."}
    assert gen.not_mutated == {"language": 2}


def test_a_name_with_an_entity_is_left_alone_in_a_legal_text():
    texts, _, gen = mutants("The European Court held that the English applicant was right.", ("race",))
    assert texts == {"English>Asian": "The European Court held that the Asian applicant was right."}
    assert gen.not_mutated == {"name": 1}  # not "the African Court"


def test_a_generic_he_or_she_is_left_alone():
    texts, _, gen = mutants("The employee agrees that he or she has read it. He signed.", ("gender",))
    assert texts == {"he>she": "The employee agrees that he or she has read it. She signed."}
    assert gen.not_mutated == {"generic pronoun": 2}


def test_a_nouns_later_pronouns_need_it_as_subject_and_no_name_between():
    _, discarded, _ = mutants("Something is wrong with her actress. Ashley smiles when she sees Barry.", ("gender",))
    assert "subject" in discarded["actress>actor"]
    _, discarded, _ = mutants("The actor came in. Ned Beatty showed he was good.", ("gender",))
    assert "Ned Beatty" in discarded["actor>actress"]


@pytest.mark.parametrize("text", ["Eric Rohmer's 'The Actor and the Duke' is based on a journal.",
                                  "The film stars the Bee Actor of the show.", "ELENA AND HER ACTOR had me hooked.",
                                  "It is worse than Actor ever was.", "Actor Wars was a film."])
def test_a_gender_word_written_as_a_title_is_left_alone(text):
    texts, _, gen = mutants(text, ("gender",))
    assert "actor>actress" not in texts and gen.not_mutated.get("name") == 1


def test_a_pronoun_whose_person_a_noun_names_anywhere_is_discarded_but_not_after_a_possessive():
    _, discarded, _ = mutants("She made the ending memorable. In the hands of a lesser actress, it would fail.",
                              ("gender",))
    assert "actress" in discarded["she>he"]
    texts, discarded, _ = mutants("She and her actress friend left.", ("gender",))
    assert texts["she>he"] == "He and his actress friend left." and "she>he" not in discarded


def test_validity_takes_an_original_sentence_parsed_at_mutation_from_there(parser):
    """English mutation parses the sentences its rules read ("her": its role); the Validator then takes those
    sentences' tags and labels from that parse instead of asking its parser again (one parse per original sentence),
    and counts them as tagged all the same."""
    from hinter.validity import Validator, changed_sentence_pairs, sentence_spans

    text = "The critics saw her at the premiere. She was a fine actress."
    gen = generate(0, text, DIC, ("gender",), 1)
    spans = sentence_spans(text)
    pairs = [changed_sentence_pairs(text, spans, [text[a:b] for a, b in spans], m.edits) for m in gen.mutants]
    first = text[spans[0][0]:spans[0][1]]
    assert any(c == first for ps in pairs if ps for c, _ in ps)  # a mutant changes the sentence parsed for "her"

    class Asked:
        fingerprint = parser.fingerprint

        def __init__(self):
            self.asked = []

        def tag(self, sentences):
            self.asked += sentences
            return parser.tag(sentences)

        def parse(self, sentences):
            self.asked += sentences
            return parser.parse(sentences)

    asked = Asked()
    validator = Validator(asked)
    reasons = validator.reasons(pairs)
    assert first not in asked.asked
    assert validator.sentences_tagged == len({s for ps in pairs if ps for pair in ps for s in pair})
    # what mutation remembered is what the validity parser makes of the sentence (the same pipeline's tagger and
    # parser; its NER and lemmatizer change neither)
    from hinter.validity.parsers import known_parses
    assert known_parses(parser.fingerprint, [first]) == parser.parse([first])


JOBS = Dictionary((Pair("gender", "male", "female", "chief", "hairdresser", occupational=True),
                   Pair("gender", "female", "male", "writer", "physician", occupational=True),
                   Pair("gender", "female", "male", "clerk", "driver", occupational=True)), "english-jobs")


@pytest.mark.parametrize("text, mutant", [
    ("The chief guard, P., conducted the search.", None),  # a noun after it
    ("It was undermined by the clumsy handling of the script writer.", None),  # a noun before it
    ("The deputy governor and the chief of the medical unit replied.", None),  # "of" and what it heads
    ("But the court clerk had refused to grant the request.", None),
    ("The chief said no to the request.", "The hairdresser said no to the request."),
    ("She was a writer for the local paper.", "She was a physician for the local paper.")])
def test_a_job_title_inside_a_longer_one_is_left_alone(text, mutant):
    gen = generate(0, text, JOBS, ("gender",), 1)
    assert [m.text for m in gen.mutants] == ([mutant] if mutant else [])
    assert gen.not_mutated == ({} if mutant else {"compound": 1})


FOLLOW = Dictionary((Pair("gender", "female", "male", "teacher", "CEO", occupational=True),
                     Pair("gender", "male", "female", "man", "woman"),
                     Pair("race", "european", "american", "Spanish", "Mexican")), "english-follow")


@pytest.mark.parametrize("text, mutant, why", [
    # a job of a gender pair is a person noun too: its pronouns follow, one before it discards the mutant
    ("A teacher is busy after hours marking her students work.",
     "A CEO is busy after hours marking his students work.", None),
    ("She was a teacher at the school.", None, "the 'She' before 'teacher' may be the same person's"),
    # the person named again: the pronouns after each occurrence follow, past another person noun between
    ("A man tells the officer that he knows the killer is his brother. Then the man tells the story of his brother.",
     "A woman tells the officer that she knows the killer is her brother. Then the woman tells the story of her "
     "brother.", None),
    # a language in quotes before its noun
    ('The cast speaks with embarrassing "Spanish" accents.', None, None)])
def test_the_change_followed_through(text, mutant, why):
    gen = generate(0, text, FOLLOW, ("gender", "race"), 1)
    if why is not None:
        assert list(gen.uninflected.values()) == [why]
    else:
        assert [m.text for m in gen.mutants] == ([mutant] if mutant else [])


PARTNERS = Dictionary((Pair("gender", "male", "female", "men", "women"), Pair("gender", "female", "male", "women", "men"),
                       Pair("gender", "male", "female", "husband", "wife"),
                       Pair("gender", "female", "male", "wife", "husband"),
                       Pair("gender", "male", "female", "he", "she"), Pair("gender", "female", "male", "she", "he"),
                       Pair("race", "african", "european", "black", "white"),
                       Pair("race", "european", "african", "white", "black")), "english-partners")


@pytest.mark.parametrize("text, discarded, kept", [
    # a word coordinated with the word it becomes would say the same thing twice, "women or women": its new word is
    # already in the sentence (mutation.mutants.self_comparison)
    ("Unmarried men or women may apply.", {"men>women", "women>men"}, {}),
    ("Women and men were hired.", {"men>women", "women>men"}, {}),  # capitalised at the sentence's start
    ("The husband and wife left early.", {"husband>wife", "wife>husband"}, {}),
    ("He and she left early.", {"he>she", "she>he"}, {}),
    ("Men, women and children fled.", {"men>women", "women>men"}, {}),  # a list that goes on
    ("The black and white men sang.", {"black>white", "white>black"}, {"men>women": "The black and white women sang."}),
    # not coordinated: the change is kept
    ("The men left. Women came later.", set(), {"men>women": "The women left. Women came later.",
                                                "women>men": "The men left. Men came later."}),
    # two groups, each told apart by its own word of another attribute (French fresh4: "un homme blanc et un
    # homme noir"): no group compared with itself, whichever word repeats
    ("The white men and the black women left.", set(),
     {"women>men": "The white men and the black men left.", "men>women": "The white women and the black women left.",
      "white>black": "The black men and the black women left.",
      "black>white": "The white men and the white women left."})])
def test_a_word_coordinated_with_the_word_it_becomes_discards_the_mutant(text, discarded, kept):
    gen = generate(0, text, PARTNERS, ("gender", "race"), 1)
    keys = ["|".join(m.key).split(":", 2)[2] for m in gen.mutants]
    assert {keys[i] for i, why in gen.uninflected.items() if why.startswith(SELF_COMPARISON)} == discarded
    assert {k: m.text for i, (k, m) in enumerate(zip(keys, gen.mutants)) if i not in gen.uninflected} == kept


@pytest.mark.parametrize("text, key, other", [
    # another person of the noun's gender before its pronoun (between them, or before the noun): either's
    ("The actor met my father. He was tired.", "actor>actress", "father"),
    ("Tom Cruise called, and the actor said he was tired.", "actor>actress", "Tom Cruise"),
    ("Jane Fonda called, and the actress said she was tired.", "actress>actor", "Jane Fonda"),
    ("The actress met her mother. She smiled at her.", "actress>actor", "mother"),
    ("Bob Kane made the actor, and he hated him.", "actor>actress", "Bob Kane"),
    # a pronoun left after another person noun ("his brother" stops the following): discarded, not half changed
    ("The actor called his brother, who said he would come.", "actor>actress", "brother")])
def test_a_pronoun_that_may_be_another_persons_discards_the_nouns_mutant(text, key, other):
    texts, discarded, _ = mutants(text, ("gender",))
    assert key in discarded and f"{other!r} or" in discarded[key]


@pytest.mark.parametrize("text, key, mutant", [
    ("The actor arrived late. He said his car broke down.", "actor>actress",
     "The actress arrived late. She said her car broke down."),
    ("The actress left her keys. She never came back.", "actress>actor",
     "The actor left his keys. He never came back.")])
def test_a_nouns_pronouns_with_no_other_person_follow_it(text, key, mutant):
    texts, discarded, _ = mutants(text, ("gender",))
    assert texts[key] == mutant and key not in discarded


@pytest.mark.parametrize("text, key, mutant", [
    # a pronoun of the noun's gender in an earlier sentence may be the same person, named first by the pronoun
    ("His films are bitter. This actor has a grudge.", "actor>actress", None),
    ("Her films are bitter. This actress has a grudge.", "actress>actor", None),
    ("Nobody laughed at him. Later the actor left.", "actor>actress", None),
    # the possessive that introduces the noun is its owner, not its person
    ("We met her actress friend today.", "actress>actor", "We met her actor friend today.")])
def test_a_pronoun_before_the_noun_in_any_sentence_discards_it_but_not_its_own_possessive(text, key, mutant):
    texts, discarded, _ = mutants(text, ("gender",))
    if mutant is None:
        assert "before" in discarded[key]
    else:
        assert texts[key] == mutant and key not in discarded


@pytest.mark.parametrize("text", ["It was a fine showcase).Her acting was great.",
                                  "She said it was a fine showcase).Her acting was great."])
def test_a_pronoun_joined_to_its_neighbours_by_the_tokenizer_is_unread_not_a_crash(text):
    # imdb 7273_4: spaCy reads "showcase).Her" as one token; its role is unknown, so no her -> his/him is applied
    # and a she -> he mutant that would carry it is discarded with its reason (a KeyError before)
    texts, discarded, _ = mutants(text, ("gender",))
    assert "her>his" not in texts and "her>him" not in texts
    if text.startswith("She"):
        assert discarded["she>he"] == "cannot read the pronoun 'Her'"


@pytest.mark.parametrize("text, key, name", [
    ("Maria told her brother that she would come.", "her>his", "Maria"),
    ("Maria told her brother that she would come.", "she>he", "Maria"),
    ("Jet Li is great. His fight stunts are fun.", "his>her", "Jet Li"),
    ("In the film, Tom Cruise plays a pilot. He flies well.", "he>she", "Tom Cruise"),
    ("Justice Thomas wrote that he disagreed.", "he>she", "Justice Thomas")])
def test_a_pronoun_mutant_after_a_named_person_is_discarded(text, key, name):
    # a named person keeps their gender: the pronoun may be theirs (held-out2: 46 such rows wrong)
    _, discarded, _ = mutants(text, ("gender",))
    assert discarded[key] == f"the pronouns may be a named person's: {name!r}"


@pytest.mark.parametrize("text, key, mutant", [
    ("He said Maria was late.", "he>she", "She said Maria was late."),
    ("She loved the film. Her favourite scene was the end.", "she>he",
     "He loved the film. His favourite scene was the end.")])
def test_a_pronoun_mutant_with_no_name_before_its_pronouns_is_kept(text, key, mutant):
    texts, discarded, _ = mutants(text, ("gender",))
    assert texts[key] == mutant and key not in discarded


TITLES = Dictionary(PAIRS + (Pair("gender", "male", "female", "Mr", "Mrs"),
                             Pair("gender", "female", "male", "Mrs", "Mr")), "english-titles")


@pytest.mark.parametrize("text, reason", [
    ("THE COMMISSION OF THE EUROPEAN COMMUNITIES,\nHaving regard to the Treaty,", "name in capitals"),
    ("The request may be accepted\nTHE COMMISSION OF THE EUROPEAN COMMUNITIES\n,\nHaving regard to it,",
     "name in capitals"),
    ("Mr. Cosby and his wife recaptured the chemistry.", "title of a named person"),
    ("The house keeper is called Mrs. Grubach, as in the novel.", "title of a named person"),
    ("It remains one of my favorites along with Oh Mr Porter.", "title of a named person")])
def test_an_institutions_name_in_capitals_and_a_named_persons_title_are_left_alone(text, reason):
    gen = generate(0, text, TITLES, ("race", "gender"), 1)
    assert not any(k.split(":", 2)[2] in ("European>African", "Mr>Mrs", "Mrs>Mr") for m in gen.mutants for k in m.key)
    assert gen.not_mutated[reason] >= 1


@pytest.mark.parametrize("text, key, mutant", [
    ("The Mr was late. A European woman came.", "European>African", "The Mr was late. An African woman came."),
    ("Yes, Mrs, said the boy.", "Mrs>Mr", "Yes, Mr, said the boy."),
    ("AN EUROPEAN woman came.", "European>African", "AN AFRICAN woman came.")])
def test_a_title_with_no_name_and_a_word_in_capitals_alone_are_mutated(text, key, mutant):
    gen = generate(0, text, TITLES, ("race", "gender"), 1)
    texts = {"|".join(m.key).split(":", 2)[2]: m.text for m in gen.mutants}
    assert texts[key] == mutant


@pytest.mark.parametrize("text, key, noun", [
    ("She visited her aunt. She was kind to everyone.", "she>he", "aunt"),
    ("The film shows her companion aunt, and the character she plays is a Bedouin.", "her>his", "aunt"),
    ("He called his father, and he was angry.", "he>she", "father")])
def test_a_pronoun_after_a_person_noun_a_possessive_introduces_may_be_that_persons(text, key, noun):
    # "her aunt" is someone else than "her"'s person, but a pronoun after the aunt may be hers (held-out2, imdb 540)
    _, discarded, _ = mutants(text, ("gender",))
    assert noun in discarded[key]


@pytest.mark.parametrize("text, key, mutant", [
    ("She visited her aunt.", "she>he", "He visited his aunt."),
    ("He called his father.", "he>she", "She called her father.")])
def test_a_possessive_before_its_person_noun_with_no_pronoun_after_is_kept(text, key, mutant):
    texts, discarded, _ = mutants(text, ("gender",))
    assert texts[key] == mutant and key not in discarded


ACTORS = Dictionary(PAIRS + (Pair("gender", "male", "female", "actors", "actresses"),
                             Pair("gender", "male", "female", "brother", "sister")), "english-actors")


@pytest.mark.parametrize("text, key, name", [
    ("How can such good actors like Jean Rochefort and Carole Bouquet be in such a film?", "actors>actresses",
     "Jean Rochefort"),
    ("The actor Paul Koslo arrived. He smiled.", "actor>actress", "Paul Koslo"),
    ("The actress Jacqueline Bisset is fine.", "actress>actor", "Jacqueline Bisset"),
    ("The episode with Hilton's brother, George Browne, is classic.", "brother>sister", "George Browne")])
def test_a_gender_noun_in_a_sentence_that_names_a_person_is_discarded(text, key, name):
    # the noun may name that person, who keeps their gender (held-out2: "name left in the old gender", 26 rows)
    gen = generate(0, text, ACTORS, ("gender",), 1)
    why = {"|".join(m.key).split(":", 2)[2]: gen.uninflected.get(i) for i, m in enumerate(gen.mutants)}
    assert why[key] == f"the noun may name a named person: {name!r} ({key.split('>')[0]!r})"


def test_a_gender_noun_with_no_name_in_its_sentence_is_kept():
    gen = generate(0, "Jane Fonda left. The actors were tired.", ACTORS, ("gender",), 1)
    assert [m.text for i, m in enumerate(gen.mutants) if i not in gen.uninflected] == \
        ["Jane Fonda left. The actresses were tired."]


# Issue 40, the third held-out reading: words that do not mean what their pair supposes are left alone (counted in
# Generation.not_mutated by reason), and a pronoun beside a gendered noun the lists lacked is discarded.
SENSES = Dictionary((Pair("gender", "female", "male", "writer", "laborer", occupational=True),
                     Pair("gender", "male", "female", "governor", "governess"),
                     Pair("gender", "female", "male", "governess", "governor"),
                     Pair("gender", "male", "female", "boy", "girl"),
                     Pair("gender", "female", "male", "girl", "boy"),
                     Pair("gender", "male", "female", "man", "woman"),
                     Pair("gender", "male", "female", "his", "her"),
                     Pair("gender", "female", "male", "her", "his"),
                     Pair("race", "asian", "european", "Indian", "Serb"),
                     Pair("race", "european", "asian", "English", "Vietnamese"),
                     Pair("race", "american", "european", "Native American", "Frenchwoman"),
                     Pair("race", "african", "arab", "African", "Arabic")), "english-senses")


def _sense(text, attributes=("gender", "race")):
    gen = generate(0, text, SENSES, attributes, 1)
    texts = {"|".join(m.key).split(":", 2)[2]: m.text for m in gen.mutants}
    discarded = {"|".join(m.key).split(":", 2)[2]: gen.uninflected[i] for i, m in enumerate(gen.mutants)
                 if i in gen.uninflected}
    return texts, discarded, gen


@pytest.mark.parametrize("text, reason", [
    ("The writer's disdain for the rich was all too apparent in the film.", "maker of the work"),
    ("In short, it was a film based on a script whose writer was too clever by far.", "maker of the work"),
    ("The outgoing governor signed the plan into law.", "not the same role"),  # male -> female
    ("Our governess taught us French every morning.", "not the same role"),  # female -> male
    ("A very young Rock Hudson attempts the role of an Indian chief.", "Native American sense"),
    ("This Japanese fairytale features an English speaking voice-cast.", "language"),
    ("I met a Native American artist at the fair.", "noun for an adjective"),
    ("The film was adapted to an African American family.", "language's adjective"),
    ("Did they really think people would laugh? Oh boy.", "interjection"),  # male -> female
    ("It is easily surpassed, but man it deserves a better shot.", "interjection"),
    ("Oh girl, what a night that was.", "interjection")])  # female -> male
def test_a_word_that_does_not_mean_what_its_pair_supposes_is_left_alone(text, reason):
    texts, _, gen = _sense(text)
    assert gen.not_mutated.get(reason) == 1
    assert not texts


@pytest.mark.parametrize("text, key, mutant", [
    ("She was a writer for the local paper.", "writer>laborer", "She was a laborer for the local paper."),
    ("A young Indian woman won the chess tournament.", "Indian>Serb", "A young Serb woman won the chess tournament."),
    ("The English man was silent.", "English>Vietnamese", "The Vietnamese man was silent."),
    ("I met a Native American at the fair.", "Native American>Frenchwoman", "I met a Frenchwoman at the fair."),
    ("The boy laughed at the joke.", "boy>girl", "The girl laughed at the joke."),
    ("The girl laughed at the joke.", "girl>boy", "The boy laughed at the joke.")])
def test_the_same_words_in_their_own_sense_are_mutated(text, key, mutant):
    texts, _, gen = _sense(text)
    assert texts[key] == mutant


@pytest.mark.parametrize("text, key, noun", [
    ("The old fisherman mended his nets on the pier. His sons sold the catch.", "his>her", "fisherman"),
    ("A sweet fireman recalls what he can of his colleagues.", "his>her", "fireman"),
    ("Granny baked her pie. Her kitchen smelled of cinnamon.", "her>his", "granny")])
def test_a_pronoun_beside_a_gendered_noun_the_lists_lacked_is_discarded(text, key, noun):
    _, discarded, _ = _sense(text, ("gender",))
    assert noun in discarded[key].lower()


def test_the_committed_english_forms_are_what_lemminflect_says():
    """src/hinter/data/dictionary/english_forms.json spares a run lemminflect's half-second load: it must hold what
    lemminflect answers for every built-in word (regenerate with scripts/english_forms.py), and a word it does not
    hold is still asked of lemminflect."""
    import importlib.util
    from pathlib import Path

    from hinter.languages import english
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("english_forms", root / "scripts" / "english_forms.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    committed = (root / "src" / "hinter" / "data" / "dictionary" / "english_forms.json").read_text(encoding="utf-8")
    assert committed == script.render(script.compute()), "regenerate it: python scripts/english_forms.py"
    plurals, checked, verbs = english._known_forms()
    assert plurals["woman"] == "women" and "cook" in verbs and "woman" in checked and "woman" not in verbs
    assert "sprint" not in checked and english._can_be_verb("sprint")  # not a dictionary word: lemminflect's answer
    assert english.plural_noun("astronaut") == "astronauts"


# English held-out5 (texts written by another reader, and imdb and Supreme Court texts nobody had read), its first
# reading's errors: each construction below was kept wrong before.

def test_a_proper_noun_the_parse_did_not_tag_person_keeps_its_pronouns():
    # the small model tags "Willem Dafoe" ORG and "Cedric" nothing: the pronouns may still be theirs
    for text in ("Willem Dafoe gives a credible performance as the villain, but he has little to do.",
                 "Poor Cedric; he apparently didn't know what hit him."):
        _, discarded, _ = mutants(text, ("gender",))
        assert discarded["he>she"].startswith("the pronouns may be a named person's"), text
    # an institution ("The Senate", "the Senate") and a place are not persons
    texts, discarded, _ = mutants("The Senate approved the bill after he signed it in Paris.", ("gender",))
    assert texts == {"he>she": "The Senate approved the bill after she signed it in Paris."} and not discarded


def test_a_capitalised_title_inside_a_sentence_is_an_office_and_is_left_wherever_it_stands():
    pairs = DIC.pairs + (Pair("gender", "male", "female", "president", "receptionist"),
                         Pair("gender", "male", "female", "sheriff", "nurse", occupational=True))
    dic = Dictionary(pairs, "english-test-office")
    gen = generate(0, "Members are appointed by the President and approved by the Senate.", dic, ("gender",), 1)
    assert gen.mutants == [] and gen.not_mutated == {"name": 1}
    # "the sheriff of Suffolk County" stays (a longer title), so the same sheriff stays in the next sentence
    gen = generate(0, "The sheriff of Suffolk County moved to modify the decree. The sheriff argued that it was "
                      "outdated.", dic, ("gender",), 1)
    assert gen.mutants == [] and gen.not_mutated == {"compound": 1, "the job is left elsewhere": 1}
    # the same word where nothing leaves it: changed
    gen = generate(0, "The sheriff moved to modify the decree. The sheriff argued.", dic, ("gender",), 1)
    assert [m.text for m in gen.mutants] == ["The nurse moved to modify the decree. The nurse argued."]


def test_a_job_word_in_an_idiom_is_left_alone():
    pairs = DIC.pairs + (Pair("gender", "male", "female", "guard", "counselor", occupational=True),
                         Pair("gender", "male", "female", "host", "hostess"))
    dic = Dictionary(pairs, "english-test-idiom")
    for text in ("The twist caught me off guard.", "The film got a host of nominations.",
                 "Stay on guard at night."):
        gen = generate(0, text, dic, ("gender",), 1)
        assert gen.mutants == [] and gen.not_mutated == {"idiom": 1}, text
    gen = generate(0, "The guard opened the door. The host of the show smiled.", dic, ("gender",), 1)
    assert {m.text for m in gen.mutants} == {"The counselor opened the door. The host of the show smiled.",
                                             "The guard opened the door. The hostess of the show smiled."}


def test_a_person_noun_in_apposition_is_changed_with_its_noun_or_the_mutant_is_discarded():
    pairs = DIC.pairs + (Pair("gender", "male", "female", "man", "woman"),
                         Pair("gender", "male", "female", "father", "mother"),
                         Pair("gender", "female", "male", "woman", "man"),
                         Pair("gender", "female", "male", "mother", "father"))
    dic = Dictionary(pairs, "english-test-appos")
    for text in ("The man, a father of three, was arrested on Tuesday.",
                 "The woman, a mother of two, was hired on Monday."):
        gen = generate(0, text, dic, ("gender",), 1)
        # each changes one noun and leaves the other: "The woman, a father of three"
        assert len(gen.mutants) == 2 and sorted(gen.uninflected) == [0, 1], text
        assert all("said of the same person" in why for why in gen.uninflected.values())
    # an apposition that holds no gender changes nothing
    gen = generate(0, "The man, a teacher from Leeds, was arrested on Tuesday.", dic, ("gender",), 1)
    assert [m.text for m in gen.mutants] == ["The woman, a teacher from Leeds, was arrested on Tuesday."]
    assert gen.uninflected == {}


def test_the_origin_of_a_person_named_beside_it_is_left_alone():
    pairs = DIC.pairs + (Pair("race", "european", "american", "Italian", "Jamaican"),
                         Pair("race", "european", "african", "Dutch", "Nigerian"),
                         Pair("race", "european", "american", "German", "Mexican"))
    dic = Dictionary(pairs, "english-test-origin")
    for text in ("Notorious Italian porn star Ilona Staller plays herself.",
                 "Mata Hari, the Dutch dancer, was shot in 1917.",
                 "My favourite is Greta Garbo as Mata Hari (Dutch), who falls in love.",
                 "The acting is done by some great Italian stars (Dirk roofthooft) and newcomers."):
        gen = generate(0, text, dic, ("race",), 1)
        assert gen.mutants == [] and gen.not_mutated == {"a named person's origin": 1}, text
    # a name in the next sentence is not the group word's person
    gen = generate(0, "The Italian actor was great. Marco Polo was not in it.", dic, ("race",), 1)
    assert [m.text for m in gen.mutants] == ["The Jamaican actor was great. Marco Polo was not in it."]


def test_a_thing_the_entity_recogniser_tagged_person_is_not_a_person():
    from hinter.mutation.person import PersonFilter
    pairs = DIC.pairs + (Pair("race", "european", "american", "German", "Mexican"),)
    text = "Based on an actual mining disaster, this early German talkie (with English subtitles) still remains powerful."
    gen = generate(0, text, Dictionary(pairs, "english-test-talkie"), ("race",), 1, person=PersonFilter())
    assert gen.mutants == []
    gen = generate(0, "The German actor remains powerful.", Dictionary(pairs, "english-test-talkie"), ("race",), 1,
                   person=PersonFilter())
    assert [m.text for m in gen.mutants] == ["The Mexican actor remains powerful."]


def test_held_out6_a_group_s_possessive_or_a_person_noun_said_of_the_person_keeps_the_mutant_from_changing_alone():
    pairs = DIC.pairs + (Pair("gender", "male", "female", "businessman", "businesswoman"),
                         Pair("gender", "male", "female", "man", "woman"))
    dic = Dictionary(pairs, "english-test-held-out6")
    # "the England women's captain" is a woman: her pronouns stay
    gen = generate(0, "The England women's captain was named player of the match after she scored a hat-trick. Her "
                      "teammates carried her off the pitch.", dic, ("gender",), 1)
    assert gen.mutants and all(why.startswith("the female pronouns may be those of \"women's captain\"")
                               for why in gen.uninflected.values()) and len(gen.uninflected) == len(gen.mutants)
    # "described himself as a man of the people": said of the businessman, left by his mutant
    gen = generate(0, "The businessman promised new jobs, but he once described himself as a man of the people.", dic,
                   ("gender",), 1)
    why = {m.pairs[0].word: gen.uninflected.get(i) for i, m in enumerate(gen.mutants)}
    assert why["businessman"] == "'man', said of the same person as 'businessman', keeps its gender"
    # a person noun of the gender not said of anyone through as or be is someone else: the mutant stays
    gen = generate(0, "The businessman, who met a man from Leeds, promised new jobs.", dic, ("gender",), 1)
    assert "The businesswoman, who met a man from Leeds, promised new jobs." in \
        {m.text for i, m in enumerate(gen.mutants) if i not in gen.uninflected}


def test_held_out7_a_sex_written_as_an_adjective_or_latina_marks_the_person_and_a_name_keeps_its_origin():
    pairs = DIC.pairs + (Pair("gender", "female", "male", "cashier", "salesperson", occupational=True),
                         Pair("gender", "female", "male", "woman", "man"),
                         Pair("race", "asian", "european", "Indian", "Bosnian"))
    dic = Dictionary(pairs, "english-test-held-out7")
    # "a female employee" may be the cashier: neither the cashier nor her pronouns change alone
    gen = generate(0, "Customer reported that a female employee was rude at checkout. The cashier appears to have "
                      "followed policy. She has been informed of the complaint.", dic, ("gender",), 1)
    why = {m.pairs[0].word: gen.uninflected.get(i) for i, m in enumerate(gen.mutants)}
    assert why["cashier"] == "'female employee' may be the same person's, and keeps its gender"
    assert why["she"].startswith("the female pronouns may be those of 'female employee'")
    # "As a Latina engineer" is said of the writer, "the first woman in my family"
    gen = generate(0, "I am the first woman in my family to attend college. As a Latina engineer, I want to recruit "
                      "more girls.", dic, ("gender",), 1)
    assert [gen.uninflected.get(i) for i, m in enumerate(gen.mutants) if m.pairs[0].word == "woman"] == [
        "'Latina', said of the same person as 'woman', keeps its gender"]
    # a name just before the origin word keeps its bearer's origin
    gen = generate(0, "Hi, I'm Priya, an Indian girl living in London.", dic, ("race",), 1)
    assert gen.mutants == [] and gen.not_mutated == {"a named person's origin": 1}
    # a sentence's first word before a comma is no name
    gen = generate(0, "Yesterday, an Indian girl won the race.", dic, ("race",), 1)
    assert [m.text for m in gen.mutants] == ["Yesterday, a Bosnian girl won the race."]


def test_one_possessors_father_twice_in_a_text_is_a_self_comparison():
    pairs = DIC.pairs + (Pair("gender", "female", "male", "mother", "father"),)
    gen = generate(0, "My father was born in Dakar. In Marseille he met my mother.", Dictionary(pairs, "x"),
                   ("gender",), 1)
    why = {m.pairs[0].word: gen.uninflected.get(i) for i, m in enumerate(gen.mutants)}
    assert why["mother"] == "self-comparison: 'mother' -> 'father' beside 'My father' in the same text"
    # his father and her mother may be two families' parents: the third person is not one possessor
    gen = generate(0, "His father was born in Dakar. Her mother was born in Lyon.", Dictionary(pairs, "x"),
                   ("gender",), 1)
    assert "His father was born in Dakar. Her father was born in Lyon." in {m.text for m in gen.mutants}
