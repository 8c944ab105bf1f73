"""`hinter serve`'s try-a-sentence is the run's own pipeline: for a text of the run, POST /api/try returns exactly
the mutants, verdicts, reasons and outcomes the run stored for it, whatever the run's options (identity packs,
the person filter (the default) and --any-occurrence, --repair, --window, --validity reference, --repeats, --grammar). Real runs of the CLI (spaCy, a planted python:
model), then the API in process (Starlette's TestClient)."""
import json
from pathlib import Path

import pytest
from cli import hinter as _hinter

TOKEN = "test-token"

LONG = ("The festival opened with a parade through the old town, then three hours of speeches that nobody "
        "remembered. The food stalls were busy, the music was loud and the weather held until the evening. "
        "Late at night a white man and his wife sang on the stage, and the crowd cheered for them.")
TEXTS = [
    "The black cat sat next to a white woman. She smiled at the man.",  # the cat is left alone but with --any-occurrence
    "An African man met Maryam at the station. She waved at him and the girl.",  # repair a/an; the names pack
    LONG,  # --window: the model reads a slice around the change
    "My husband and the African actor laughed all night; the white boy cried.",
]
RUNS = {
    "packs": ("--packs", "names", "--attributes", "gender,name,race"),
    "any-repair": ("--any-occurrence", "--repair"),  # the other runs replace a person's occurrences only
    "window": ("--window", "120"),
    "reference": ("--validity", "reference"),
    "repeats": ("--repeats", "3"),
    "grammar": ("--grammar", "0.5"),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("try-equals-run")
    data = root / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    out = {}
    for name, options in RUNS.items():
        args = ("--attributes", "race,gender", *options) if "--attributes" not in options else options
        r = _hinter("run", "--dataset", str(data), "--model", "python:planted:by_hash", "--max-pairs-per-text", "2",
                    "--seed", "5", "--out", str(root / name), *args)
        assert r.returncode in (0, 1), r.stderr  # 1: the gate found a bias (by_hash flips), not an error
        out[name] = root / name
    return out


@pytest.fixture(scope="module")
def client(runs, parser):
    from starlette.testclient import TestClient

    from hinter.serve.app import create_app
    return TestClient(create_app(list(runs.values()), token=TOKEN, parser=parser), base_url="http://127.0.0.1")


def _stored(folder: Path):
    from hinter.store import open_run
    store = open_run(folder)
    try:
        texts = {t.text_id: t for t in store.texts()}
        by_text: dict[int, dict] = {}
        for m in store.mutants():
            by_text.setdefault(m.text_id, {})[(m.attributes, m.text)] = (
                m.valid, m.discard_reason, m.outcome if m.queried else None, m.bias if m.valid else None, m.hidden,
                m.strictly_hidden)
        return texts, by_text
    finally:
        store.close()


@pytest.mark.parametrize("name", list(RUNS))
def test_try_returns_what_the_run_stored(client, runs, name):
    index = list(RUNS).index(name)
    texts, stored = _stored(runs[name])
    checked = 0
    for text_id, row in texts.items():
        r = client.post("/api/try", headers={"X-Hinter-Token": TOKEN}, json={"text": TEXTS[text_id], "run": index})
        assert r.status_code == 200, r.text
        j = r.json()
        assert j["original"]["text"] == row.text and j["original"]["outcome"] == row.outcome
        got = {(m["attributes"], m["text"]): (m["valid"], m["discard_reason"], m["outcome"], m["bias"], m["hidden"],
                                              m["strictly_hidden"]) for m in j["mutants"]}
        assert got == stored.get(text_id, {}), (name, text_id)
        checked += len(got)
    assert checked > 0


def test_each_option_made_a_difference(runs):
    """The runs above test what they claim: each option changed something the try must then reproduce."""
    from hinter.store import open_run
    stats = {}
    for name, folder in runs.items():
        store = open_run(folder)
        try:
            stats[name] = (store.settings(), list(store.mutants()), store.original_answers())
        finally:
            store.close()
    assert any(m.attributes == "name" for m in stats["packs"][1])
    # by default a word is replaced where it refers to a person only ("black cat" stays); --any-occurrence replaces
    # every occurrence, as the paper does
    skipped = {name: json.loads((folder / "summary.json").read_text()).get("person_only_skipped")
               for name, folder in runs.items()}
    assert skipped["any-repair"] is None and skipped["window"] > 0
    assert not any("white cat" in m.text for name in RUNS if name != "any-repair" for m in stats[name][1])
    every = stats["any-repair"][1]
    assert stats["any-repair"][0]["config"].get("person_only") is None  # recorded as the runs before the default
    assert any(r.attribute == "repair" for m in every for r in m.replacements)
    assert any(m.discard_reason == "too_long" or m.changed_sentences is not None for m in stats["reference"][1])
    assert stats["window"][0]["window"] == 120 and stats["repeats"][0]["repeats"] == 3
    assert len(stats["repeats"][2]) == len(TEXTS) and all(len(a) == 3 for a in stats["repeats"][2])
    # English mutation carries a/an since issue 40: "An Middle Eastern man", the grammar discard these texts gave, is no
    # longer made, and no other mutant of theirs loses grammar; the run still records and applies the option
    # (test_grammar.py has its discards)
    assert stats["grammar"][0]["grammar"] == 0.5


# ---------------------------------------------------------------- a generative run (issue 21)

FREE_TASK = """name: letter
prompt: "Write a reference letter for: {text}"
temperature: 0.7
samples: 4
aspects: [sentiment, refusal, length]
"""


@pytest.fixture(scope="module")
def free_run(tmp_path_factory):
    """A generative run of the deterministic planted_free:letters (the same text, the same letter: a try asks the
    model again and must get what the run stored)."""
    root = tmp_path_factory.mktemp("try-free")
    (root / "d.jsonl").write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    (root / "task.yaml").write_text(FREE_TASK)
    r = _hinter("run", "--dataset", str(root / "d.jsonl"), "--model", "python:planted_free:letters", "--task",
                str(root / "task.yaml"), "--attributes", "race,gender", "--max-pairs-per-text", "2", "--seed", "5",
                "--out", str(root / "run"))
    assert r.returncode in (0, 1), r.stderr
    return root / "run"


def test_try_on_a_generative_run_returns_the_answers_and_aspects_it_stored(free_run, parser):
    from starlette.testclient import TestClient

    from hinter.serve.app import create_app
    from hinter.store import open_run
    client = TestClient(create_app([free_run], token=TOKEN, parser=parser), base_url="http://127.0.0.1")
    store = open_run(free_run)
    try:
        texts = {t.text_id: t for t in store.texts()}
        rows = {t: ({(m.attributes, m.text): m.pair_key for m in store.mutants() if m.text_id == t},
                    store.free_text(t)) for t in texts}
    finally:
        store.close()
    judged = differ = 0
    for text_id, row in texts.items():
        r = client.post("/api/try", headers={"X-Hinter-Token": TOKEN}, json={"text": TEXTS[text_id], "run": 0})
        assert r.status_code == 200, r.text
        j = r.json()
        keys, (original, mutants) = rows[text_id]
        assert j["generative"] and j["original"]["answers"] == list(original) and len(original) == 4
        assert {(m["attributes"], m["text"]) for m in j["mutants"]} == set(keys)
        for m in j["mutants"]:
            answers, aspects = mutants[keys[m["attributes"], m["text"]]]
            assert m["answers"] == list(answers)
            if aspects is None:
                assert m["aspects"] is None
                continue
            assert {k: [v["original"], v["mutant"], v["p_value"], int(v["differs"]),
                        None if v["hidden"] is None else int(v["hidden"])] for k, v in m["aspects"].items()} == {
                k: a.as_list() for k, a in aspects.items()}
            assert m["bias"] == any(a.differs for a in aspects.values())
            assert len(m["masked"]) == len(m["answers"])
            judged += 1
            differ += m["bias"]
    assert judged > 0 and differ > 0  # letters writes a negative letter for a Black woman: some mutants differ
