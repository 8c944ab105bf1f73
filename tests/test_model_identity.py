"""A model's identity: an edited python: model is asked again (its code is in its fingerprint), a rerun of a
finished run says that it reused the stored answers, and where the identity cannot be known, hinter says so."""
import json
import os
import sqlite3
import subprocess
import sys
import types
from pathlib import Path

from hinter.models import identity_limit
from hinter.models.callable import SOURCE_MARK, CallableModel, code_hash, source_files
import cli

TEXTS = ["A white man came home. The film was fine.", "The woman and a white boy met. It was long.",
         "Nobody came. The film was fine."]
MODEL = '''from rules import answer


def predict(texts):
    return [answer(t) for t in texts]
'''
POSITIVE = 'def answer(text):\n    return "positive"\n'
WOMAN_NEGATIVE = 'def answer(text):\n    return "negative" if "woman" in text.lower() else "positive"\n'


def _campaign(root: Path) -> None:
    """A model in two files of one folder (mymodel.py imports rules.py), three texts, a two-pair dictionary."""
    (root / "mymodel.py").write_text(MODEL)
    (root / "rules.py").write_text(POSITIVE)
    (root / "data.jsonl").write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    (root / "dic.csv").write_text("attribute,source_group,target_group,word,replacement\n"
                                  "gender,male,female,man,woman\nrace,european,african,white,black\n")


def _run(root: Path, *extra: str) -> subprocess.CompletedProcess:
    # run from the model's folder: python: models beside the user import from there
    return cli.hinter("run", "-d", "data.jsonl", "-m", "python:mymodel:predict", "-a", "gender,race", "--dictionary",
                      "dic.csv", "-o", "out", *extra, cwd=root, pythonpath=(), timeout=300)


def _biased(root: Path) -> int:
    db = sqlite3.connect(root / "out" / "run.sqlite")
    try:
        return db.execute("SELECT COUNT(*) FROM mutants WHERE bias = 1").fetchone()[0]
    finally:
        db.close()


def test_an_edited_model_is_not_answered_from_the_old_run(tmp_path):
    _campaign(tmp_path)
    first = _run(tmp_path)
    assert first.returncode == 0, first.stderr
    assert "already tested" not in first.stderr and _biased(tmp_path) == 0

    again = _run(tmp_path)  # the same command on a finished run: it says that nothing was asked
    assert again.returncode == 0, again.stderr
    said = " ".join(again.stderr.split())
    assert f"All 3 texts were already tested in out: nothing asked, the stored answers were reused" in said
    assert "--overwrite" in said and "Note:" not in said  # a python: model with a file: its code is hashed

    (tmp_path / "rules.py").write_text(WOMAN_NEGATIVE)  # an edit in a file the model imports, not in its own
    edited = _run(tmp_path)
    said = " ".join(edited.stderr.split())
    assert edited.returncode == 2 and "the model (its fingerprint)" in said and "--overwrite" in said, said
    assert "Traceback" not in said

    overwritten = _run(tmp_path, "--overwrite")
    assert overwritten.returncode == 0, overwritten.stderr
    assert "already tested" not in overwritten.stderr
    assert _biased(tmp_path) > 0  # the woman mutants flip now: the edited model was asked


def test_the_fingerprint_follows_the_code_of_the_model_folder(tmp_path, monkeypatch):
    _campaign(tmp_path)
    (tmp_path / "unrelated.py").write_text("X = 1\n")  # in the folder but never imported: not the model's code
    monkeypatch.syspath_prepend(str(tmp_path))
    import mymodel
    try:
        files = source_files(mymodel)
        assert [f.name for f in files] == ["mymodel.py", "rules.py"]
        model = CallableModel(mymodel.predict, "mymodel:predict")
        assert model.fingerprint == f"python:mymodel:predict{SOURCE_MARK}{code_hash(files)}"
        before = code_hash(files)
        (tmp_path / "unrelated.py").write_text("X = 2\n")
        assert code_hash(source_files(mymodel)) == before
        (tmp_path / "rules.py").write_text(WOMAN_NEGATIVE)
        assert code_hash(source_files(mymodel)) != before
    finally:
        for name in ("mymodel", "rules"):
            sys.modules.pop(name, None)


def test_a_package_model_hashes_its_package_relative_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "mypkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "model.py").write_text("from ..weights import W\nfrom . import helper\n\n\n"
                                          "def predict(texts):\n    return [helper.f(t) for t in texts]\n")
    (pkg / "sub" / "helper.py").write_text("import json\n\n\ndef f(t):\n    return 'positive'\n")
    (pkg / "weights.py").write_text("W = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import mypkg.sub.model
    try:
        names = sorted(str(f.relative_to(pkg)) for f in source_files(mypkg.sub.model))
        assert names == ["sub/helper.py", "sub/model.py", "weights.py"]  # json: not of the package
    finally:
        for name in [n for n in sys.modules if n == "mypkg" or n.startswith("mypkg.")]:
            sys.modules.pop(name)


def test_where_the_identity_cannot_be_known_it_is_said(caplog):
    typed = types.ModuleType("typed_in_a_console")  # no __file__: a function typed in a console
    exec("def predict(texts):\n    return ['positive' for _ in texts]\n", typed.__dict__)
    sys.modules["typed_in_a_console"] = typed
    try:
        model = CallableModel(typed.predict)
    finally:
        sys.modules.pop("typed_in_a_console")
    assert SOURCE_MARK not in model.fingerprint
    assert any("has no source file to hash" in r.getMessage() for r in caplog.records)  # said when it is made
    assert "no source file" in identity_limit(model.fingerprint)
    assert "remote API" in identity_limit("openai-chat:gemma@http://127.0.0.1:8765/v1:imdb:abc",
                                          "openai:gemma@http://127.0.0.1:8765/v1")
    assert identity_limit("python:planted:by_hash" + SOURCE_MARK + "0123456789abcdef") is None
    assert identity_limit("gguf:gemma.gguf:abc:imdb:def", "gguf:default") is None  # the file's hash is in it


def test_the_python_api_refuses_a_model_changed_behind_the_same_spec(tmp_path):
    """hinter.run (no CLI pre-check): the run's settings compare the loaded model's fingerprint, not only its spec,
    so answers stored for the old code are not reused."""
    _campaign(tmp_path)
    code = (f"import os, sys; os.chdir({str(tmp_path)!r}); sys.path.insert(0, {str(tmp_path)!r})\n"
            "import hinter\n"
            "hinter.run(dataset='data.jsonl', model='python:mymodel:predict', attributes=('gender', 'race'),"
            " dictionary='dic.csv', out='api')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    (tmp_path / "rules.py").write_text(WOMAN_NEGATIVE)
    again = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode != 0 and "the model (its fingerprint)" in again.stderr, again.stderr
