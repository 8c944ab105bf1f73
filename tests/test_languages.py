"""A language is one folder (issue 40, docs/languages.md "Adding a language"): a toy language registered inside the
test suite, through its `Language` record alone, runs a real campaign. Its record reuses the English parser and
has a dictionary of two pairs in a folder of its own; nothing outside it is touched."""
import textwrap

import hinter
from hinter.languages import LANGUAGES, Language, get_language, register_language

TEXTS = ["The sir walked into the shop. The film was fine.", "A lad bought a car. It was fast.",
         "Nothing to see here. The plot was thin."]


def test_a_toy_language_registered_in_the_tests_runs_a_campaign(tmp_path, monkeypatch):
    dictionary = tmp_path / "dictionary_xx"
    (dictionary / "gender").mkdir(parents=True)
    (dictionary / "gender" / "male_female.csv").write_text("sir;madam\nlad;lass\n", encoding="utf-8")
    (tmp_path / "toy_model.py").write_text(textwrap.dedent('''
        def predict(texts):
            return ["negative" if "madam" in t or "lass" in t else "positive" for t in texts]
        '''), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    toy = Language("xx", "Toy", get_language("en").spacy_model, str(dictionary),
                   frozenset("the a was it".split()))
    register_language(toy)
    try:
        run = hinter.run(TEXTS, "python:toy_model:predict", out=tmp_path / "run", language="xx",
                         attributes=("gender",))
        mutants = {m.text for m in run.mutants}
        assert mutants == {"The madam walked into the shop. The film was fine.", "A lass bought a car. It was fast."}
        summary = run.summary()
        assert summary["settings"]["language"] == "xx"
        assert summary["atomic"]["gender"]["biased"] == 2
    finally:
        del LANGUAGES["xx"]
