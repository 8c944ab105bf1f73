"""Writes the built-in French dictionary (src/hinter/data/dictionary_fr) from the hand-curated lists below:
person nouns with their pairs in both numbers, origin words in their four forms (masculine and feminine,
singular and plural), body words. Hand curation: SOURCE.md there says why each choice. Run from the repository
root: python scripts/build_french_dictionary.py"""
from __future__ import annotations

from itertools import permutations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "hinter" / "data" / "dictionary_fr"

# (masculine singular, feminine singular, masculine plural, feminine plural); a noun whose singular and plural
# are one word (fils, héros, époux) is left out: its replacement's number could not be told.
PERSONS = [
    ("homme", "femme", "hommes", "femmes"), ("père", "mère", "pères", "mères"), ("frère", "sœur", "frères", "sœurs"),
    ("oncle", "tante", "oncles", "tantes"), ("neveu", "nièce", "neveux", "nièces"),
    ("grand-père", "grand-mère", "grands-pères", "grands-mères"), ("garçon", "fille", "garçons", "filles"),
    ("monsieur", "madame", "messieurs", "mesdames"), ("roi", "reine", "rois", "reines"),
    ("prince", "princesse", "princes", "princesses"), ("voisin", "voisine", "voisins", "voisines"),
    ("infirmier", "infirmière", "infirmiers", "infirmières"), ("acteur", "actrice", "acteurs", "actrices"),
    ("directeur", "directrice", "directeurs", "directrices"), ("boulanger", "boulangère", "boulangers", "boulangères"),
    ("ami", "amie", "amis", "amies"), ("cousin", "cousine", "cousins", "cousines"),
    ("copain", "copine", "copains", "copines"), ("patron", "patronne", "patrons", "patronnes"),
    ("chanteur", "chanteuse", "chanteurs", "chanteuses"), ("vendeur", "vendeuse", "vendeurs", "vendeuses"),
    ("serveur", "serveuse", "serveurs", "serveuses"), ("étudiant", "étudiante", "étudiants", "étudiantes"),
    ("avocat", "avocate", "avocats", "avocates"), ("employé", "employée", "employés", "employées"),
    ("client", "cliente", "clients", "clientes"), ("policier", "policière", "policiers", "policières"),
    ("enseignant", "enseignante", "enseignants", "enseignantes"),
    ("instituteur", "institutrice", "instituteurs", "institutrices"),
    ("musicien", "musicienne", "musiciens", "musiciennes"), ("veuf", "veuve", "veufs", "veuves"),
    ("fiancé", "fiancée", "fiancés", "fiancées"), ("mari", "épouse", "maris", "épouses"),
    ("gamin", "gamine", "gamins", "gamines"), ("patient", "patiente", "patients", "patientes"),
    ("paysan", "paysanne", "paysans", "paysannes"), ("cuisinier", "cuisinière", "cuisiniers", "cuisinières"),
]
# Origin words of each group in four forms; and the epicene ones (one form per number), which map only to
# epicene ones: the gender of "asiatique" -> ? would depend on the noun, which a pair cannot see.
ORIGINS = {
    "european": [("européen", "européenne", "européens", "européennes"), ("blanc", "blanche", "blancs", "blanches"),
                 ("italien", "italienne", "italiens", "italiennes")],
    "african": [("africain", "africaine", "africains", "africaines"), ("noir", "noire", "noirs", "noires"),
                ("ivoirien", "ivoirienne", "ivoiriens", "ivoiriennes")],
    "arab": [("marocain", "marocaine", "marocains", "marocaines"), ("algérien", "algérienne", "algériens",
             "algériennes"), ("tunisien", "tunisienne", "tunisiens", "tunisiennes")],
    "asian": [("vietnamien", "vietnamienne", "vietnamiens", "vietnamiennes"), ("coréen", "coréenne", "coréens",
              "coréennes"), ("cambodgien", "cambodgienne", "cambodgiens", "cambodgiennes")],
}
EPICENE_ORIGINS = {"european": [("belge", "belges"), ("suisse", "suisses")], "african": [("malgache", "malgaches")],
                   "arab": [("arabe", "arabes")], "asian": [("asiatique", "asiatiques")]}
# body: (source group, target group, [(source forms, target forms)]), four forms or two (epicene) each side
BODY = [
    ("old", "young", [(("âgé", "âgée", "âgés", "âgées"), ("jeune", "jeune", "jeunes", "jeunes"))]),
    ("common", "disorder", [(("voyant", "voyante", "voyants", "voyantes"), ("aveugle", "aveugle", "aveugles", "aveugles")),
                            (("entendant", "entendante", "entendants", "entendantes"), ("sourd", "sourde", "sourds", "sourdes"))]),
    ("disorder", "common", [(("sourd", "sourde", "sourds", "sourdes"), ("entendant", "entendante", "entendants", "entendantes")),
                            (("handicapé", "handicapée", "handicapés", "handicapées"), ("valide", "valide", "valides", "valides"))]),
    ("blond", "brown", [(("blond", "blonde", "blonds", "blondes"), ("brun", "brune", "bruns", "brunes"))]),
    ("brown", "blond", [(("brun", "brune", "bruns", "brunes"), ("blond", "blonde", "blonds", "blondes"))]),
    ("thin", "fat", [(("mince", "mince", "minces", "minces"), ("obèse", "obèse", "obèses", "obèses"))]),
    ("fat", "thin", [(("obèse", "obèse", "obèses", "obèses"), ("mince", "mince", "minces", "minces"))]),
]


def pairs_of(source_forms, target_forms):
    """One line per distinct source form: an epicene source (one word for both genders) only to an epicene target."""
    seen, out = set(), []
    for s, t in zip(source_forms, target_forms):
        if s in seen:
            continue
        seen.add(s)
        out.append(f"{s};{t}")
    return out


def write(path: Path, lines) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(dict.fromkeys(lines)) + "\n", encoding="utf-8")


def main() -> None:
    write(ROOT / "gender" / "male_female.csv", [line for p in PERSONS for line in pairs_of(p, (p[1], p[0], p[3], p[2]))
                                               if line.split(";")[0] in (p[0], p[2])])
    write(ROOT / "gender" / "female_male.csv", [f"{p[1]};{p[0]}" for p in PERSONS] + [f"{p[3]};{p[2]}" for p in PERSONS])
    write(ROOT / "gender" / "male.csv", [w for p in PERSONS for w in (p[0], p[2])])
    write(ROOT / "gender" / "female.csv", [w for p in PERSONS for w in (p[1], p[3])])
    for a, b in permutations(ORIGINS, 2):
        lines = []
        for i, forms in enumerate(ORIGINS[a]):
            lines += pairs_of(forms, ORIGINS[b][i % len(ORIGINS[b])])
        for i, forms in enumerate(EPICENE_ORIGINS[a]):
            lines += pairs_of(forms, EPICENE_ORIGINS[b][i % len(EPICENE_ORIGINS[b])])
        write(ROOT / "race" / f"{a}_{b}.csv", lines)
    for a in ORIGINS:
        write(ROOT / "race" / f"{a}.csv", [w for f in ORIGINS[a] for w in f] + [w for f in EPICENE_ORIGINS[a] for w in f])
    for a, b, items in BODY:
        write(ROOT / "body" / f"{a}_{b}.csv", [line for s, t in items for line in pairs_of(s, t)])


if __name__ == "__main__":
    main()
