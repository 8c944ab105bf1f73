"""Faulty models, through a real HTTP server on loopback that this test runs.

The llama.cpp server cannot produce these faults on demand, so a small OpenAI-compatible server injects
them: 429 with Retry-After, 5xx, a reply slower than the client's timeout, a dropped connection, an empty
answer, a garbage answer and an answer naming no label. Each must be retried where that helps, then end as
a model error or an unparseable outcome, counted in the summary, and never as bias or as no bias."""
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import hinter
from hinter.mutation.dictionary import Dictionary, Pair

pytest.importorskip("openai")
from hinter.models.openai_api import OpenAIModel  # noqa: E402
from hinter.models.tasks import get_task  # noqa: E402

DIC = Dictionary((Pair("gender", "male", "female", "man", "woman"), Pair("race", "european", "african", "white", "black")),
                 "faults")
FAULTS = ["FAULT429", "FAULT500", "FAULTSLOW", "FAULTDOWN", "FAULTEMPTY", "FAULTGARBAGE", "FAULTLABEL"]
TEXTS = [f"A white man watched the film. It was {f} good." for f in FAULTS] + ["A white man watched the film. It was good."]


class Handler(BaseHTTPRequestHandler):
    attempts: Counter = Counter()
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def _reply(self, code, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        try:
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (the timeout fault)
            pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/completions":
            return self._reply(404, {"error": {"message": f"no route {self.path}"}})
        prompt = body["prompt"]
        text = prompt.rsplit("Review: ", 1)[1]
        with self.lock:
            self.attempts[text] += 1
            n = self.attempts[text]
        if "FAULT429" in text and n == 1:
            return self._reply(429, {"error": {"message": "slow down"}}, [("Retry-After", "1")])
        if "FAULT500" in text and n <= 2:
            return self._reply(500 if n == 1 else 503, {"error": {"message": "overloaded"}})
        if "FAULTSLOW" in text and n == 1:
            import time
            time.sleep(2.5)  # past the client's 1 s timeout
        if "FAULTDOWN" in text:
            self.close_connection = True
            self.connection.shutdown(2)  # drop the connection without an answer
            return
        if "FAULTEMPTY" in text:
            answer = ""
        elif "FAULTGARBAGE" in text:
            answer = " qwerty zxcv"
        elif "FAULTLABEL" in text:
            answer = " Neutral"
        else:
            answer = " Negative" if ("woman" in text and "black" in text) else " Positive"
        self._reply(200, {"id": "x", "object": "text_completion", "created": 0, "model": body["model"],
                          "choices": [{"index": 0, "text": answer, "finish_reason": "stop", "logprobs": None}]})


@pytest.fixture()
def server():
    Handler.attempts = Counter()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_each_fault_is_retried_or_recorded_never_a_verdict(server, parser, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = OpenAIModel("fault-model", get_task("imdb"), base_url=server, timeout=1.0, retries=2, backoff=0.05,
                        concurrency=2)
    run = hinter.run(TEXTS, model, attributes=("gender", "race"), dictionary=DIC, parser=parser, out=tmp_path)
    by_text = {}
    for m in run.mutants:
        by_text.setdefault(m.text_id, []).append(m)
    import sqlite3
    db = sqlite3.connect(tmp_path / "run.sqlite")
    originals = dict(db.execute("SELECT text_id, outcome FROM texts"))
    raws = dict(db.execute("SELECT text_id, raw FROM texts"))
    # retried faults end with the right answers: the planted hidden bias is found in their texts too
    for i, fault in enumerate(FAULTS[:3]):
        assert originals[i] == "Positive", (fault, raws[i])
        assert any(m.hidden for m in by_text[i] if m.valid), fault
    assert model.retried >= 4  # 429 once, 5xx twice, timeout once (at least)
    # the dropped connection is a model error; empty, garbage and unknown labels are unparseable
    assert originals[3] is None and raws[3].startswith("model error:")
    for i in (4, 5, 6):
        assert originals[i] is None and not raws[i].startswith("model error:"), raws[i]
    for i in (3, 4, 5, 6):
        assert all(m.bias is None for m in by_text[i]), FAULTS[i]
    s = run.summary()
    assert s["unparseable"]["originals"] == 3
    assert s["unparseable"]["originals_model_errors"] == 1
    assert s["model_errors"] >= 1
    # the clean text is unaffected
    assert originals[7] == "Positive" and any(m.hidden for m in by_text[7] if m.valid)


def test_a_refused_request_stops_at_once(server, parser, tmp_path):
    model = OpenAIModel("fault-model", get_task("imdb"), base_url=server + "/nothing-here", timeout=1.0, retries=1,
                        backoff=0.01)
    with pytest.raises(hinter.ModelError) as err:
        hinter.run(TEXTS[7:], model, attributes=("gender", "race"), dictionary=DIC, parser=parser, out=tmp_path)
    assert "refused" in err.value.message
