"""The anthropic: backend against a real HTTP server on loopback that speaks the shape of Anthropic's Messages API
(POST /v1/messages, x-api-key and anthropic-version headers, content blocks, usage, error bodies): it stands in for
api.anthropic.com, which the tests cannot reach. Labels parsed from the answers; the system prompt and the task's
turns sent as the API expects; the key sent in x-api-key and found neither in the fingerprint nor in the run folder;
529 and 429 retried, then answered; a refused key a fatal ModelError naming ANTHROPIC_API_KEY; the tokens counted
from the responses' usage; a campaign through the CLI finding the server's planted rule."""
import csv
import http.server
import json
import re
import threading

import pytest

from hinter.errors import ModelError
from hinter.models import load_model
from hinter.models.registry import find_backend, help_text
from hinter.models.tasks import get_task
from cli import hinter as hinter_cli

KEY = "sk-ant-test-5f1c0ffee0ddba11"
TOKENS_IN, TOKENS_OUT = 57, 3  # what the server says each answered request read and wrote
ERRORS = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error",
          529: "overloaded_error"}


def _has(text, word):
    return re.search(rf"\b{word}\b", text, re.IGNORECASE) is not None


class MessagesAPI:
    """Stands in for Anthropic's Messages API on 127.0.0.1 (the real one cannot be reached from the tests). Its
    planted rule: "Sentiment: Negative" where the last user turn names a woman, else "Sentiment: Positive"; a text
    naming something garbled gets an answer that names no label; one naming an enormous thing is refused with 400
    (too long). `fail_next`: statuses answered to the next requests, whatever they ask. `key`: the key it accepts
    (401 otherwise). `requests`: (headers, body) of each request it read."""

    def __init__(self):
        self.key, self.fail_next, self.requests = KEY, [], []
        lock = threading.Lock()
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, body: dict, headers=()):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status, message, headers=()):
                self._send(status, {"type": "error", "error": {"type": ERRORS.get(status, "api_error"),
                                                               "message": message}}, headers)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path != "/v1/messages":
                    return self._error(404, f"no route {self.path}")
                if self.headers.get("x-api-key") != api.key:
                    return self._error(401, "invalid x-api-key")
                if self.headers.get("anthropic-version") != "2023-06-01":
                    return self._error(400, "anthropic-version: header is required")
                with lock:
                    api.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    status = api.fail_next.pop(0) if api.fail_next else None
                if status is not None:  # retry-after 0: the tests do not wait
                    return self._error(status, "Overloaded" if status == 529 else "rate limited",
                                       [("retry-after", "0")] if status == 429 else ())
                text = body["messages"][-1]["content"]
                if _has(text, "enormous"):
                    return self._error(400, "prompt is too long: 250000 tokens > 200000 maximum")
                answer = ("I would rather not say." if _has(text, "garbled") else
                          "Sentiment: Negative" if _has(text, "woman") else "Sentiment: Positive")
                self._send(200, {"id": "msg_01", "type": "message", "role": "assistant", "model": body["model"],
                                 "content": [{"type": "text", "text": answer}], "stop_reason": "end_turn",
                                 "usage": {"input_tokens": TOKENS_IN, "output_tokens": TOKENS_OUT}})

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def api(monkeypatch):
    monkeypatch.delenv("HINTER_ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server = MessagesAPI()
    yield server
    server.close()


def test_labels_are_parsed_from_the_answers_and_the_prompt_sent_as_the_api_expects(api):
    model = load_model(f"anthropic:claude-test@{api.url}?timeout=10")
    outcomes = model.predict(["A woman came in.", "A man came in.", "A garbled man came in.",
                              "An enormous man came in."])
    assert [o.value for o in outcomes] == ["Negative", "Positive", None, None]
    assert outcomes[0].raw == "Sentiment: Negative" and outcomes[0].scores is None  # no log-probabilities
    assert not outcomes[2].error and outcomes[2].raw == "I would rather not say."  # unparseable, not an error
    assert not outcomes[3].error and "prompt is too long" in outcomes[3].raw  # refused text: unparseable
    headers, body = next((h, b) for h, b in api.requests if b["messages"][-1]["content"].startswith(
        "Review: A woman came in."))
    assert headers["x-api-key"] == KEY and headers["anthropic-version"] == "2023-06-01"
    imdb = get_task("imdb")
    assert body["model"] == "claude-test" and body["temperature"] == 0 and body["max_tokens"] == 16
    assert body["system"] == imdb.system_text  # the system prompt is a field, not a message
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant"] * len(imdb.examples) + ["user"]
    assert body["messages"] == imdb.chat_messages("A woman came in.")[1:]
    assert KEY not in model.fingerprint and model.fingerprint.startswith("anthropic-messages:claude-test@")
    # the tokens are the API's count: the test request and the four texts, none estimated
    numbers = model.usage.numbers()
    assert numbers["calls"] == 5 and numbers["estimated_calls"] == 0
    assert numbers["tokens_in"] == 4 * TOKENS_IN and numbers["tokens_out"] == 4 * TOKENS_OUT  # the 400 read none


def test_overloaded_and_rate_limited_requests_are_retried_then_answered(api):
    model = load_model(f"anthropic:claude-test@{api.url}?retries=3")
    model.backoff = 0.01  # the waits of a test, not of a run
    api.fail_next = [529, 429]
    outcomes = model.predict(["A woman came in."])
    assert [o.value for o in outcomes] == ["Negative"] and not outcomes[0].error
    assert model.retried == 2 and model.usage.numbers()["retries"] == 2
    assert model.pacer.lowered == 1  # the 429 halved the requests at once; the 529 did not
    once = load_model(f"anthropic:claude-test@{api.url}?retries=1")
    once.backoff = 0.01
    api.fail_next = [529, 529]  # more failures than retries: a model error of the text, never a label
    with pytest.raises(ModelError) as e:
        once.predict(["A man came in."])
    assert not e.value.fatal and "529" in e.value.problem and "overloaded" in e.value.problem


def test_a_refused_key_is_a_fatal_error_naming_anthropic_api_key(api, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
    with pytest.raises(ModelError) as e:  # at the test request, before the campaign
        load_model(f"anthropic:claude-test@{api.url}")
    assert e.value.fatal and "401" in e.value.problem and "ANTHROPIC_API_KEY" in e.value.fix
    assert "sk-ant-wrong" not in str(e.value.problem) + str(e.value.fix)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    model = load_model(f"anthropic:claude-test@{api.url}")
    api.key = "sk-ant-rotated"  # the key is revoked mid-run: the run stops, it does not record errors
    with pytest.raises(ModelError) as e:
        model.predict(["A man came in."])
    assert e.value.fatal and "ANTHROPIC_API_KEY" in e.value.fix
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # Anthropic's own endpoint without a key: said before any request
    with pytest.raises(ModelError) as e:
        load_model("anthropic:claude-test")
    assert "ANTHROPIC_API_KEY" in e.value.fix


def test_the_backend_is_registered_with_its_key_variables():
    backend = find_backend("anthropic")
    assert backend.is_api and backend.env == ("HINTER_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")
    assert "anthropic:MODEL[@BASE_URL] (Anthropic's Messages API" in help_text()


def test_a_campaign_through_the_cli_finds_the_planted_rule_and_writes_no_key(api, tmp_path):
    texts = ["The man at the desk was helpful. The food was fine.", "A man sang at the bar. It was loud.",
             "Nothing happened. The plot was thin.", "A garbled man came in. It rained."]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    out = tmp_path / "out"
    r = hinter_cli("run", "-d", data, "-m", f"anthropic:claude-test@{api.url}", "-a", "gender", "-k", "1",
                   "--max-pairs-per-text", "2", "--no-jobs", "--workers", "1", "--price-in", "3", "--price-out", "15",
                   "--allow-model-errors", "-o", out, env={"ANTHROPIC_API_KEY": KEY})
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr[-3000:]
    with open(out / "biases.csv", newline="") as f:
        assert {row["source_id"] for row in csv.DictReader(f)} == {"t0", "t1"}  # a man become a woman flips
    summary = json.loads((out / "summary.json").read_text())
    usage = summary["usage"]
    assert summary["model_errors"] == 0 and summary["unparseable"]["originals"] == 1  # the garbled one
    assert usage["calls"] > 0 and usage["estimated_calls"] == 0
    assert usage["tokens_in"] == TOKENS_IN * usage["calls"] and usage["tokens_out"] == TOKENS_OUT * usage["calls"]
    assert usage["cost"] == pytest.approx((usage["tokens_in"] * 3 + usage["tokens_out"] * 15) / 1e6)
    for path in out.rglob("*"):  # the key is nowhere in the run folder (database, settings, logs, report)
        assert not path.is_file() or KEY.encode() not in path.read_bytes(), path
