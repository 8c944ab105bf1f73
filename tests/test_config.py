"""One RunConfig for a run: validated and normalised once, compared by meaning on resume; one live process
per run folder."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from campaign import stored_texts, write_kill_campaign

from hinter.config import RunConfig, describe_differences
from hinter.errors import InputError
import cli

HERE = Path(__file__).parent


def test_attribute_order_and_path_spelling_do_not_make_another_config(tmp_path, monkeypatch):
    (tmp_path / "dic.csv").write_text("x")
    monkeypatch.chdir(tmp_path)
    a = RunConfig(attributes="race, gender", dictionary="./dic.csv", dataset="imdb")
    b = RunConfig(attributes=("gender", "race", "race"), dictionary=str(tmp_path / "dic.csv"), dataset="imdb")
    assert a == b and a.attributes == ("gender", "race") and a.dictionary == str(tmp_path / "dic.csv")
    assert a.dataset == "imdb"  # a bundled sample's name stays a name
    assert RunConfig.from_recorded(a.recorded()) == a


@pytest.mark.parametrize("changes, option", [({"order": 0}, "--order"), ({"limit": 0}, "--limit"),
                                             ({"max_pairs_per_text": 0}, "--max-pairs-per-text"),
                                             ({"attributes": " , "}, "--attributes")])
def test_bad_settings_fail_on_creation_naming_the_option(changes, option):
    with pytest.raises(InputError) as e:
        RunConfig(**changes)
    assert option in e.value.message


def test_an_order_above_the_attributes_is_refused_not_capped():
    with pytest.raises(InputError) as e:
        RunConfig(attributes="race,gender", order=5)
    assert e.value.where == "--order" and "--order 5 is higher than the number of attributes (2: gender, race)" in \
        e.value.problem and "--order 2 or less" in e.value.fix
    assert RunConfig(attributes="race,gender,body", order=3).order == 3  # as many as the attributes: fine
    # the default (pairs) over one attribute stays valid: "up to pairs", of which there are none
    assert RunConfig(attributes="gender").order == 2
    with pytest.raises(InputError):
        RunConfig(attributes="gender", order=3)


def test_a_real_difference_names_the_option_and_both_values():
    a, b = RunConfig(attributes="race,gender", seed=1).recorded(), RunConfig(attributes="body", seed=1).recorded()
    assert describe_differences(a, b) == ["--attributes: gender,race before, body now"]


def hinter(*args, cwd=None, **env):
    return cli.hinter(*args, cwd=cwd, env=env, timeout=300)


def test_reordered_attributes_and_a_dot_slash_path_continue_the_run(tmp_path):
    c = write_kill_campaign(tmp_path, texts=6)
    args = ("-d", "data.jsonl", "-m", "python:planted:intersectional", "-o", "out")
    first = hinter("run", *args, "-a", "race,gender", "--dictionary", "dic.csv", cwd=c)
    assert first.returncode == 0, first.stderr
    again = hinter("run", *args, "-a", "gender,race", "--dictionary", "./dic.csv", cwd=c)
    assert again.returncode == 0, again.stderr
    other = hinter("run", *args, "-a", "gender", "--dictionary", "./dic.csv", cwd=c)
    assert other.returncode == 2 and "--attributes: gender,race before, gender now" in other.stderr, other.stderr


def test_out_naming_a_file_is_a_clear_error(tmp_path):
    c = write_kill_campaign(tmp_path, texts=2)
    (c / "taken").write_text("not a folder")
    r = hinter("run", "-d", "data.jsonl", "-m", "python:planted:intersectional", "-a", "gender",
               "--dictionary", "dic.csv", "-o", "taken", cwd=c)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "file" in r.stderr, r.stderr


def test_a_second_process_on_a_folder_in_use_stops_at_once(tmp_path):
    c = write_kill_campaign(tmp_path, texts=48)
    env = {**os.environ, "PYTHONPATH": str(HERE), "HINTER_TEST_CALLS": str(tmp_path / "calls.log")}
    cmd = [sys.executable, "-m", "hinter.cli", "run", "-d", "data.jsonl", "-m", "python:planted:counting",
           "-a", "gender,race", "--dictionary", "dic.csv", "-o", "out"]
    first = subprocess.Popen(cmd, cwd=c, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while not (c / "out" / "run.lock").exists() and time.time() < deadline:
        time.sleep(0.1)
    started = time.time()
    second = subprocess.run(cmd, cwd=c, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 2, second.stderr
    assert f"pid {first.pid}" in second.stderr and "another hinter process" in second.stderr
    assert time.time() - started < 30
    assert first.wait(timeout=300) == 0, first.stderr.read().decode()
    assert stored_texts(c / "out") == 48
    from collections import Counter

    from hinter.pipeline.engine import DETERMINISM_PROBES
    asked = Counter((tmp_path / "calls.log").read_text().splitlines())
    # once each, but the first process's determinism probe: the second process asked the model nothing
    assert sorted(asked.values())[-2:] == [1, DETERMINISM_PROBES] and sum(asked.values()) == len(asked) + DETERMINISM_PROBES - 1


def test_options_that_change_no_result_never_refuse_a_resume():
    from hinter.pipeline.recorded_settings import comparable as _comparable
    a = {"config": RunConfig(model="gguf:default?threads=2", dataset="imdb").recorded()}
    b = {"config": RunConfig(model="gguf:default", dataset="imdb").recorded()}
    c = {"config": RunConfig(model="gguf:default?n_ctx=4096", dataset="imdb").recorded()}
    assert _comparable(a) == _comparable(b) != _comparable(c)
