"""Progress that shows life: with stderr not a terminal (CI logs, a file), a run prints a plain line with counts,
speed and ETA every few seconds while it works, not only at the end; the count moves with each model batch."""
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from campaign import write_kill_campaign

from hinter.cli.campaign import PLAIN_EVERY_S, CampaignProgress, _duration

HERE = Path(__file__).parent
LINE = re.compile(r"^hinter: (\d+)/(\d+) texts, (.*)$", re.MULTILINE)


def test_plain_lines_with_counts_while_the_run_works(tmp_path):
    texts = 120  # about 800 calls of planted:counting at 0.02 s: some 17 s of model work, past one PLAIN_EVERY_S
    root = write_kill_campaign(tmp_path, texts=texts)
    env = {**os.environ, "PYTHONPATH": str(HERE), "HINTER_TEST_CALLS": str(tmp_path / "calls.log")}
    cmd = [sys.executable, "-m", "hinter.cli", "run", "-d", str(root / "data.jsonl"), "-m", "python:planted:counting",
           "-a", "gender,race", "--dictionary", str(root / "dic.csv"), "-o", str(tmp_path / "out")]
    err = tmp_path / "stderr.txt"
    with open(err, "w") as f:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=f)
    seen_while_running: list[tuple[int, int, str]] = []
    deadline = time.monotonic() + 300
    while p.poll() is None:
        assert time.monotonic() < deadline, err.read_text()
        lines = [(int(a), int(b), rest) for a, b, rest in LINE.findall(err.read_text())]
        if p.poll() is None:
            seen_while_running = lines
        time.sleep(0.2)
    assert p.returncode == 0, err.read_text()
    midway = [(done, rest) for done, total, rest in seen_while_running if 0 < done < total == texts]
    assert midway, f"no line with counts before the end (one every {PLAIN_EVERY_S} s):\n{err.read_text()}"
    assert all(re.search(r"[\d.]+ texts/s, ETA \d+[smh]", rest) and "model calls" in rest for _, rest in midway), midway
    final = LINE.findall(err.read_text())[-1]
    assert final[:2] == (str(texts), str(texts)), err.read_text()


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_count_moves_per_model_batch_with_speed_eta_errors_and_the_latest_warning():
    clock = Clock()
    state = CampaignProgress(100, 32, clock)
    assert state.line() == "hinter: loading the parser and the model, 0s"
    clock.now += 75
    state.update("load", 0, 1)
    assert state.line() == "hinter: loading the parser and the model, 1m15s"
    state.update("load", 1, 1)
    state.update("texts", 32, 100)  # a resumed run: one batch was stored before
    assert state.line() == "hinter: 32/100 texts, waiting for the first answers, 0 model calls"
    clock.now += 10
    state.update("model", 100, 200)  # half of the batch's model calls: half of its 32 texts
    assert state.done == 48
    assert state.line() == "hinter: 48/100 texts, 1.6 texts/s, ETA 32s, 100 model calls"
    state.update("model", 190, 200)
    state.update("errors", 2, 190)
    state.update("texts", 64, 100)
    assert state.calls == 190 and state.done == 64
    clock.now += 6  # 32 texts in 16 s: 2 texts/s, 36 left
    assert state.line() == "hinter: 64/100 texts, 2 texts/s, ETA 18s, 190 model calls, 2 model errors"
    log = logging.getLogger("hinter.models")
    log.addHandler(state)
    try:
        log.warning("the API at %s: connection refused;\nretry %d of %d", "http://h/v1", 1, 2)
        log.warning("the API at %s: timed out; retry %d of %d", "http://h/v1", 2, 2)
    finally:
        log.removeHandler(state)
    assert state.line().endswith("2 model errors, 2 warnings, the latest: the API at http://h/v1: timed out; "
                                 "retry 2 of 2")
    state.update("model", 50, 100)
    assert state.done == 80
    state.update("texts", 96, 100)
    state.update("model", 50, 100)  # the last batch holds 4 texts
    assert state.done == 98


def test_durations():
    assert [_duration(s) for s in (0, 59.4, 90, 3599, 3600, 7322)] == ["0s", "59s", "1m30s", "59m59s", "1h00m", "2h02m"]
