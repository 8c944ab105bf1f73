"""The faults of a model behind an API, and at the model boundary (issue 41), with real faults: an
OpenAI-compatible server on loopback (the stdlib's ThreadingHTTPServer) that sends truncated bodies, hangs or
answers 500 to everything, a real SIGINT or SIGKILL to a real `hinter run`, and real `python:` models that give
NaN scores, huge raw answers or their own labels. Each test counts what the server received or the model was
asked."""
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("openai")
from hinter.pipeline.engine import DETERMINISM_PROBES, check_determinism  # noqa: E402
from hinter.models import load_model  # noqa: E402
import cli  # noqa: E402

TEXTS = ["The man at the desk was helpful.", "A man sang at the bar all night.", "My father liked the film a lot.",
         "The boy read a book in the park.", "He said that the food was fine.", "The man watched the storm.",
         "His brother cooked a good dinner.", "The king spoke to the crowd."]


class FakeAPI:
    """An OpenAI-compatible completions endpoint. `mode(n, text)` decides each request's fate (n: the request's
    number, the preflight's being 1): "ok", "truncated" (HTTP 200, a JSON body cut short), "hang" (no answer
    until the server closes), "500". `received` counts every request, `by_text` each text's."""

    def __init__(self, mode=lambda n, text: "ok"):
        self.mode, self.received, self.by_text = mode, 0, Counter()
        self.lock, self.closing = threading.Lock(), threading.Event()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, status: int, body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = body["prompt"].rsplit("Review: ", 1)[-1].split("\n")[0] if "prompt" in body else body["text"]
                with api.lock:
                    api.received += 1
                    api.by_text[text] += 1
                    n = api.received
                fate = api.mode(n, text)
                if fate == "hang":
                    api.closing.wait(120)
                    return
                if fate == "500":
                    return self._reply(500, b'{"error": {"message": "the model crashed"}}')
                answer = json.dumps({"id": "x", "object": "text_completion", "created": 0, "model": "m",
                                     "choices": [{"index": 0, "text": " Negative" if "woman" in text else " Positive",
                                                  "finish_reason": "stop", "logprobs": None}],
                                     "usage": {"prompt_tokens": 50, "completion_tokens": 1, "total_tokens": 51}})
                self._reply(200, answer.encode()[:40] if fate == "truncated" else answer.encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def api():
    servers = []

    def start(mode=lambda n, text: "ok"):
        servers.append(FakeAPI(mode))
        return servers[-1]
    yield start
    for s in servers:
        s.close()


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("HINTER_OPENAI_API_KEY", raising=False)


def write_data(folder: Path, texts=TEXTS) -> Path:
    path = folder / "d.jsonl"
    path.write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    return path


def start_run(folder: Path, model: str, *args: str, out: str = "out") -> subprocess.Popen:
    return cli.start("run", "-d", write_data(folder), "-m", model, "-a", "gender", "--no-jobs", "--workers", "1",
                     "-o", folder / out, *args, cwd=folder, pythonpath=(folder,), env={"OPENAI_API_KEY": None})


def wait_for(condition, p: subprocess.Popen | None = None, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert p is None or p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "nothing happened in time"
        time.sleep(0.02)


# ---------------------------------------------------------------- 1. a malformed body: that text's failure alone

def test_a_truncated_body_is_asked_again_for_that_text_alone(api):
    texts = [f"Film number {i} was long." for i in range(40)]
    # one body in five cut short (HTTP 200): each such text asked once more, no other text asked twice
    server = api(lambda n, text: "truncated" if n > 1 and n % 5 == 0 else "ok")
    model = load_model(f"openai:m@{server.url}?concurrency=4", "imdb")
    model.backoff = 0.01
    outcomes = model.predict(texts)
    assert [o.encode() for o in outcomes] == ["Positive"] * 40
    truncated = (server.received - 1) // 5  # the bodies cut short among the requests after the preflight
    assert server.received == 1 + 40 + truncated  # before: a whole batch failed and was asked again, 3,778 for 800


def test_a_text_whose_answer_is_always_malformed_is_a_model_error_of_its_own(api):
    server = api(lambda n, text: "truncated" if "broken" in text else "ok")
    model = load_model(f"openai:m@{server.url}?concurrency=4&retries=2", "imdb")
    model.backoff = 0.01
    texts = ["A broken film.", "A fine film.", "A good film.", "A long film."]
    outcomes = model.predict(texts)
    assert outcomes[0].error and "malformed answer" in outcomes[0].raw
    assert [o.encode() for o in outcomes[1:]] == ["Positive"] * 3
    assert server.by_text["A broken film."] == 3 and all(server.by_text[t] == 1 for t in texts[1:])


# ---------------------------------------------------------------- 2. Ctrl-C, timeouts, a server failing everything

def test_ctrl_c_while_api_requests_hang_stops_at_once_and_sends_nothing_more(api, tmp_path):
    server = api(lambda n, text: "ok" if n == 1 else "hang")  # the preflight answered, then nothing
    p = start_run(tmp_path, f"openai:m@{server.url}")  # default settings: a 60 s timeout, 5 retries
    wait_for(lambda: server.received >= 5, p)  # four requests at once hang
    time.sleep(0.5)
    sent_before = server.received
    os.killpg(p.pid, signal.SIGINT)
    start = time.monotonic()
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        raise AssertionError("Ctrl-C did not stop the run within 30 s (it took 378 s before)")
    seconds = time.monotonic() - start
    assert p.returncode == 130 and "Interrupted" in err and "Traceback" not in err, err
    assert server.received == sent_before  # before: 10 more requests after Ctrl-C
    print(f"SIGINT to exit: {seconds:.2f} s")


def test_a_second_ctrl_c_stops_at_once_while_the_first_waits_for_the_model(tmp_path):
    (tmp_path / "slow.py").write_text(
        "import time\n"
        "def predict(texts):\n"
        "    if len(set(texts)) > 1:\n"
        "        open('started', 'w').close()\n"
        "        time.sleep(60)\n"
        "    return ['Positive'] * len(texts)\n")
    p = start_run(tmp_path, "python:slow:predict")
    wait_for(lambda: (tmp_path / "started").exists(), p)
    os.killpg(p.pid, signal.SIGINT)
    time.sleep(0.3)  # the first stop waits for the model's call, to keep its answers
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130 and "Stopped at once" in err, err  # before: the second Ctrl-C was ignored


def test_a_call_completing_as_ctrl_c_lands_keeps_its_answers(tmp_path):
    (tmp_path / "finishing.py").write_text(
        "import os, time\n"
        "def predict(texts):\n"
        "    if len(set(texts)) > 1:\n"
        "        open('started', 'w').close()\n"
        "        time.sleep(1.0)\n"
        "    with open('asked.log', 'a') as f:\n"
        "        f.writelines(os.environ['SESSION'] + '\\t' + t.replace('\\n', ' ') + '\\n' for t in texts)\n"
        "    return ['Positive'] * len(texts)\n")
    os.environ["SESSION"] = "1"
    try:
        p = start_run(tmp_path, "python:finishing:predict")
        wait_for(lambda: (tmp_path / "started").exists(), p)
        os.killpg(p.pid, signal.SIGINT)  # the call answers about a second later
        out, err = p.communicate(timeout=30)
        assert p.returncode == 130, err
        first = {line.split("\t", 1)[1] for line in (tmp_path / "asked.log").read_text().splitlines()}
        os.environ["SESSION"] = "2"
        p = start_run(tmp_path, "python:finishing:predict")
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    finally:
        os.environ.pop("SESSION", None)
    lines = (tmp_path / "asked.log").read_text().splitlines()
    again = {t for s, t in (line.split("\t", 1) for line in lines) if s == "2"} & first
    assert not again, f"{len(again)} texts answered before Ctrl-C were asked again"  # before: the whole call, 64


def test_a_server_failing_everything_stops_the_run_after_the_give_up_rule(api, tmp_path):
    server = api(lambda n, text: "ok" if n == 1 else "500")  # the preflight answered, then 500 to everything
    p = start_run(tmp_path, f"openai:m@{server.url}")  # default settings
    out, err = p.communicate(timeout=120)
    assert p.returncode not in (0, 1, 130) and "Traceback" not in err, err
    assert "requests in a row" in " ".join(err.split()), err
    from hinter.models.pacing import GIVE_UP
    assert server.received <= 1 + GIVE_UP + 4  # the preflight, the streak, the requests already out (before: 276)


def test_a_text_that_never_answers_costs_two_timeouts_not_six(api):
    server = api(lambda n, text: "hang" if "stuck" in text else "ok")
    model = load_model(f"openai:m@{server.url}?timeout=0.5&concurrency=4", "imdb")  # 5 retries, as by default
    model.backoff = 0.01
    texts = ["A stuck film.", "A fine film.", "A good film.", "A long film."]
    outcomes = model.predict(texts)
    assert outcomes[0].error and "timeout" in outcomes[0].raw
    assert [o.encode() for o in outcomes[1:]] == ["Positive"] * 3
    assert server.by_text["A stuck film."] == 2  # before: 6 (a text that never answers cost 6 timeouts)


def test_an_endpoint_failing_everything_stops_after_the_give_up_rule(api):
    from hinter.errors import ModelError
    server = api(lambda n, text: "ok" if n == 1 else "500")
    model = load_model(f"http:{server.url}/classify?give_up=6", "imdb")
    model.backoff = 0.01
    with pytest.raises(ModelError) as e:
        model.predict([f"Film number {i}." for i in range(16)])
    assert e.value.fatal and "6 requests in a row" in e.value.message
    assert server.received <= 1 + 6 + 4  # the preflight, the streak, the requests already out


def test_the_help_states_the_timeouts_and_the_give_up_rule():
    from hinter.models.registry import help_text
    text = " ".join(help_text().split())
    assert "give_up [20]" in text and "timeout [60]" in text and "tried 2 times" in text


# ---------------------------------------------------------------- 3. usage counted before a call is sent

def _usage_calls(folder: Path) -> int:
    with sqlite3.connect(folder / "run.sqlite") as db:
        return int(dict(db.execute("SELECT key, value FROM stats")).get("usage.calls", 0))


def test_after_kill_9_the_calls_sent_are_counted(api, tmp_path):
    server = api(lambda n, text: "hang" if n > 40 else "ok")
    p = start_run(tmp_path, f"openai:m@{server.url}")
    wait_for(lambda: server.received > 40, p)
    time.sleep(0.5)
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=30)
    assert _usage_calls(tmp_path / "out") >= server.received  # before: the call in flight was not counted


def test_the_determinism_check_is_not_paid_again_after_a_kill(api, tmp_path):
    probe = min(TEXTS, key=len)
    kill_after = 16 + 4  # the check's first call (16 requests: 4 at a time) answered, the second under way
    server = api(lambda n, text: "hang" if text == probe and server_probe_asks() > kill_after else "ok")
    server_probe_asks = lambda: server.by_text[probe]  # noqa: E731
    p = start_run(tmp_path, f"openai:m@{server.url}")
    wait_for(lambda: server.by_text[probe] > kill_after, p)
    time.sleep(0.5)
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=30)
    first = server.by_text[probe]
    server.mode = lambda n, text: "ok"
    p = start_run(tmp_path, f"openai:m@{server.url}")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    # the second session asks only what the first did not keep: 16 of the 32 (before: 32 again)
    assert server.by_text[probe] - first == DETERMINISM_PROBES - 16
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["determinism"]["deterministic"] is True


# ---------------------------------------------------------------- 4. scores that are not finite

NAN_MODEL = ("def predict(texts):\n"
             "    return [{'label': 'Positive', 'scores': {'Positive': float('nan') if 'father' in t else 1.0,\n"
             "             'Negative': float('-inf') if 'king' in t else 0.0}} for t in texts]\n")


def test_nan_and_infinite_scores_are_errors_of_their_texts_never_stored(tmp_path):
    (tmp_path / "nanmodel.py").write_text(NAN_MODEL)
    for session in (1, 2):  # the rerun asks them again, and does not crash on a stored answer
        p = start_run(tmp_path, "python:nanmodel:predict", "--allow-model-errors")
        out, err = p.communicate(timeout=120)
        assert p.returncode in (0, 3) and "Traceback" not in err, err  # before: a traceback, exit 1
    text = (tmp_path / "out" / "summary.json").read_text()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in summary.json"))
    with sqlite3.connect(tmp_path / "out" / "run.sqlite") as db:
        stored = [s for (s,) in db.execute("SELECT scores FROM outcomes UNION ALL SELECT scores FROM texts "
                                           "UNION ALL SELECT scores FROM mutants") if s]
    assert stored and not any(w in s for s in stored for w in ("NaN", "Infinity"))
    summary = json.loads(text)
    assert summary["model_errors"] >= 2 and "not finite" in " ".join(summary.get("first_errors") or [])


def test_the_determinism_check_calls_nan_a_failure_not_a_different_answer(tmp_path):
    (tmp_path / "nanmodel.py").write_text(NAN_MODEL)
    sys.path.insert(0, str(tmp_path))
    try:
        model = load_model("python:nanmodel:predict?process=inline")
        result, _ = check_determinism(model, "My father slept.")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("nanmodel", None)
    assert result["deterministic"] is None  # before: "answered differently" (NaN != NaN)


# ---------------------------------------------------------------- 5. a classifier's own labels without --task

def test_a_classifier_answers_its_own_labels_unless_a_task_is_given(tmp_path):
    (tmp_path / "tox.py").write_text("def predict(texts):\n"
                                     "    return ['toxic' if 'woman' in t else 'ok' for t in texts]\n")
    p = start_run(tmp_path, "python:tox:predict")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0 and "not a label" not in out + err, out + err  # before: exit 3, "Fix the model"
    p = start_run(tmp_path, "python:tox:predict", "--task", "imdb", out="given")
    out, err = p.communicate(timeout=120)
    said = " ".join((out + err).split())
    assert p.returncode == 3 and "not a label of the task" in said and "Give the --task" in said, said


# ---------------------------------------------------------------- 6. what is stored of a raw answer

def test_a_huge_raw_answer_is_cut_and_says_so(tmp_path):
    (tmp_path / "huge.py").write_text("def predict(texts):\n"
                                      "    return [{'label': 'Positive', 'raw': 'x' * 2_000_000} for t in texts]\n")
    p = start_run(tmp_path, "python:huge:predict", "--task", "imdb")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert (tmp_path / "out" / "run.sqlite").stat().st_size < 5_000_000  # before: 2 MB for every answer stored
    with sqlite3.connect(tmp_path / "out" / "run.sqlite") as db:
        raw, = db.execute("SELECT raw FROM texts LIMIT 1").fetchone()
    assert raw.startswith("xxx") and "not kept" in raw


def test_a_finite_score_passes_the_boundary_unchanged():
    from hinter.models.base import at_boundary
    from hinter.records import Outcome
    o = Outcome("Positive", "Positive", scores={"Positive": 2.0, "Negative": -1.0})
    assert at_boundary(o) is o
    bad = at_boundary(Outcome("Positive", "Positive", scores={"Positive": math.inf}))
    assert bad.error and bad.value is None


def test_a_task_of_ten_thousand_labels_stores_what_the_analysis_reads(tmp_path):
    labels = [f"label{i:05d}" for i in range(10_000)]
    (tmp_path / "big.json").write_text(json.dumps({"name": "big", "labels": labels, "question": "Which?",
                                                   "system_prompt": "Classify."}))
    (tmp_path / "many.py").write_text(
        "def predict(texts):\n"
        "    return [{'label': 'label00001' if 'man' in t else 'label09999',\n"
        "             'scores': {f'label{i:05d}': float(i % 7) for i in range(10_000)}} for t in texts]\n")
    p = start_run(tmp_path, "python:many:predict", "--task", str(tmp_path / "big.json"))
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert "10000 labels" in " ".join(err.split())  # said, once
    with sqlite3.connect(tmp_path / "out" / "run.sqlite") as db:
        kept = [json.loads(s) for (s,) in db.execute("SELECT scores FROM outcomes")]
        raws = [r for (r,) in db.execute("SELECT raw FROM outcomes") if r]
    # the 100 highest and the answer's own: before, 10,000 scores and their repr in every row (8.6 MB for 5 texts)
    assert kept and all(len(k) <= 101 for k in kept) and all(len(r) < 2100 for r in raws)
    assert any(label == "label09999" for k in kept for label, _ in k)  # an answer's own label, whatever its score
    assert (tmp_path / "out" / "run.sqlite").stat().st_size < 2_000_000
