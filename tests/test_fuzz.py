"""Property-based fuzzing of what users hand in: loaders and CLI options never crash with a traceback."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from hinter.datasets import load_dataset
from hinter.mutation.dictionary import load_dictionary
from hinter.errors import InputError

HERE = Path(__file__).parent
lines = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
raw_bytes = st.binary(max_size=300)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines, max_size=6), st.sampled_from(["male_female.csv", "a_b_job.csv", "x.csv", "a_b_c.csv"]))
def test_dictionary_folder_never_crashes(content, name):
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d) / "gender"
        folder.mkdir()
        (folder / name).write_text("\n".join(content), encoding="utf-8")
        try:
            dic = load_dictionary(d)
        except InputError as e:
            assert d in e.message or "dictionary" in e.message
        else:
            assert all(p.word and p.replacement and p.word.lower() != p.replacement.lower() for p in dic.pairs)


@settings(max_examples=400, deadline=None)
@given(raw_bytes, st.sampled_from([(load_dictionary, ".csv"), (load_dictionary, ".json"), (load_dictionary, ".txt"),
                                   (load_dataset, ".csv"), (load_dataset, ".jsonl"), (load_dataset, ".tsv"),
                                   (load_dataset, ".xml")]))
def test_loaders_never_crash_on_raw_bytes(data, loader_and_suffix):
    loader, suffix = loader_and_suffix
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"input{suffix}"
        path.write_bytes(data)
        try:
            loader(path)
        except InputError:
            pass


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                           max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(json_values.map(json.dumps), lines, st.fixed_dictionaries({"text": json_values}).map(json.dumps)),
                max_size=5))
def test_jsonl_dataset_never_crashes(rows):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "data.jsonl"
        path.write_text("\n".join(rows), encoding="utf-8")
        try:
            records = load_dataset(path)
        except InputError as e:
            assert "data.jsonl" in e.message
        else:
            assert records and all(isinstance(r.text, str) and r.text.strip() for r in records)


options = st.fixed_dictionaries({}, optional={
    "--order": st.sampled_from(["0", "-1", "2", "x", "99999999999999999999"]),
    "--limit": st.sampled_from(["0", "1", "-3", "abc"]),
    "--attributes": st.sampled_from(["", ",", "race", "gender,race", "religion", "race,,gender"]),
    "--model": st.sampled_from(["python:planted:intersectional", "python:nope:f", "python:planted:missing", "gguf:/no/file",
                                "foo", "python:", "hf"]),
    "--text-field": st.sampled_from(["text", "body", ""]),
    "--max-pairs-per-text": st.sampled_from(["1", "-1", "z"]),
})


# 25 examples, each a hinter process (a second or two of CPU): the options reach the real command line
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options)
def test_cli_options_exit_0_or_2_never_a_traceback(opts):
    with tempfile.TemporaryDirectory() as d:
        data = Path(d) / "d.jsonl"
        data.write_text('{"text": "A white man came. The film was fine."}\n')
        args = ["run", "-d", str(data), "-o", str(Path(d) / "out"), "--dictionary", str(Path(d) / "dic.csv")]
        (Path(d) / "dic.csv").write_text("attribute,source_group,target_group,word,replacement\n"
                                         "gender,male,female,man,woman\nrace,european,african,white,black\n")
        if "--model" not in opts:
            opts = {**opts, "--model": "python:planted:intersectional"}
        for k, v in opts.items():
            args += [k, v]
        r = subprocess.run([sys.executable, "-m", "hinter.cli", *args], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(HERE)})
        assert r.returncode in (0, 2), (args, r.stderr[-2000:])
        assert "Traceback" not in r.stderr, (args, r.stderr[-2000:])
