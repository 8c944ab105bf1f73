"""The http: backend (issue 29) against a real JSON endpoint on loopback (the stdlib's ThreadingHTTPServer): a
planted rule found as a bias through the CLI and hinter.run, one text a request and in batches; an endpoint that
fails some texts (500) gives model errors that the next run asks again; a malformed answer is unparseable, never
a crash; the fingerprint follows the URL and the options that change results."""
import csv
import http.server
import json
import re
import sqlite3
import threading
from pathlib import Path

import pytest

import hinter
from hinter.errors import InputError, ModelError
from hinter.models import canonical_spec, load_model
from hinter.models.registry import find_backend, help_text
from cli import hinter as hinter_cli


TEXTS = ["The man at the desk was helpful. The food was fine.",
         "A man sang at the bar. It was loud.",
         "Nothing happened. The plot was thin.",
         "My father liked the storm. He smiled.",
         "The man watched the storm from the porch.",
         "A garbled man came in. It rained."]
OPTIONS = ("-a", "gender", "-k", "1", "--max-pairs-per-text", "2", "--no-jobs", "--workers", "1")


def _has(text, word):
    return re.search(rf"\b{word}\b", text, re.IGNORECASE) is not None


class Endpoint:
    """A classifier behind a REST API of its own: POST {"text": ...} -> {"verdict": {"label": ..., "p": {...}}};
    POST {"texts": [...]} -> {"results": [...]}. Its rule: negative when a woman is named. While `failing`, a text
    naming a storm gets a 500; a text naming something garbled gets a body that is not JSON. `asked` logs every
    text it answered."""

    def __init__(self):
        self.failing, self.asked, self.failed = False, [], 0
        self.fail_next = 0  # the next requests answered 503, whatever they ask
        lock = threading.Lock()
        endpoint = self

        def answer(text):
            negative = _has(text, "woman")
            return {"verdict": {"label": "negative" if negative else "positive",
                                "p": {"negative": 0.9 if negative else 0.1, "positive": 0.1 if negative else 0.9}}}

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, body: bytes):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                if self.path != "/classify":
                    return self._send(404, b'{"error": "no such endpoint"}')
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    busy, endpoint.fail_next = endpoint.fail_next > 0, max(0, endpoint.fail_next - 1)
                if busy:
                    return self._send(503, b'{"error": "busy"}')
                texts = request["texts"] if "texts" in request else [request["text"]]
                if endpoint.failing and any(_has(t, "storm") for t in texts):
                    with lock:
                        endpoint.failed += 1
                    return self._send(500, b'{"error": "the model crashed"}')
                with lock:
                    endpoint.asked.extend(texts)
                if any(_has(t, "garbled") for t in texts):
                    return self._send(200, b'{"verdict": {"label": "posi')
                body = {"results": [answer(t) for t in texts]} if "texts" in request else answer(texts[0])
                self._send(200, json.dumps(body).encode())

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/classify"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def endpoint():
    e = Endpoint()
    yield e
    e.close()


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    return path


def biased_ids(out: Path) -> set[str]:
    with open(out / "biases.csv", newline="") as f:
        return {row["source_id"] for row in csv.DictReader(f)}


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def test_the_backend_is_registered_and_listed():
    backend = find_backend("http")
    assert backend is not None and backend.is_api and backend.env == ("HINTER_HTTP_AUTHORIZATION",)
    assert "http:URL (your own JSON endpoint" in help_text()
    r = hinter_cli("run", "--help")
    assert "http:URL" in " ".join(r.stdout.split())


def test_cli_finds_the_planted_bias_behind_the_endpoint(endpoint, data, tmp_path):
    spec = f"http:{endpoint.url}?field=verdict.label&scores=verdict.p"
    r = hinter_cli("run", "-d", str(data), "-m", spec, *OPTIONS, "--allow-model-errors", "-o", str(tmp_path / "out"))
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr[-3000:]
    # every text naming a man flips when he becomes a woman; the garbled one is unparseable, not a finding
    assert biased_ids(tmp_path / "out") == {"t0", "t1", "t4"}
    s = summary(tmp_path / "out")
    assert s["model_errors"] == 0 and s["unparseable"]["originals"] == 1
    assert s["usage"]["calls"] >= len(endpoint.asked)  # one call a request (the garbled answers are calls too)
    with sqlite3.connect(tmp_path / "out" / "run.sqlite") as db:  # the endpoint's scores are stored with the labels
        stored = list(db.execute("SELECT outcome, scores FROM outcomes WHERE outcome IS NOT NULL"))
    db.close()
    assert stored and all(json.loads(scores) for _, scores in stored)
    for outcome, scores in stored:
        by_label = dict(json.loads(scores)) if isinstance(json.loads(scores), list) else json.loads(scores)
        assert by_label[outcome] > by_label[{"negative": "positive", "positive": "negative"}[outcome]]


def test_api_in_batches_finds_the_same_bias(endpoint, data, tmp_path, parser):
    run = hinter.run(model=f"http:{endpoint.url}?field=verdict.label&batch=3", dataset=str(data), limit=5,
                     attributes=("gender",), order=1, max_pairs_per_text=2, include_occupational=False,
                     parser=parser, out=tmp_path / "out")
    run.store.close()
    assert biased_ids(tmp_path / "out") == {"t0", "t1", "t4"}
    s = summary(tmp_path / "out")
    assert s["model_errors"] == 0 and s["unparseable"]["originals"] == 0
    assert s["usage"]["calls"] < len(endpoint.asked)  # several texts a request


def test_texts_failing_with_500_are_model_errors_asked_again_by_the_next_run(endpoint, data, tmp_path):
    endpoint.failing = True
    spec = f"http:{endpoint.url}?field=verdict.label&retries=0"
    command = ("run", "-d", str(data), "--limit", "5", "-m", spec, *OPTIONS, "-o", str(tmp_path / "run"))
    first = hinter_cli(*command)
    assert endpoint.failed > 0 and first.returncode in (0, 1, 3), first.stderr[-3000:]
    s = summary(tmp_path / "run")
    # the storm texts (and their mutants) failed: errors, not labels, to be asked again
    assert s["model_errors"] > 0 and s["health"]["texts_to_ask_again"] == 2
    assert not biased_ids(tmp_path / "run") & {"t3", "t4"}
    answered_first = set(endpoint.asked)
    endpoint.failing, endpoint.asked = False, []  # the model is back
    again = hinter_cli(*command)  # the same command
    assert again.returncode in (0, 1), again.stderr[-3000:]
    s = summary(tmp_path / "run")
    assert s["model_errors"] == 0 and s["health"]["texts_to_ask_again"] == 0
    assert biased_ids(tmp_path / "run") == {"t0", "t1", "t4"}
    asked = [t for t in endpoint.asked if t != "A short test."]  # but the backend's check of the endpoint
    # only what failed was asked again: the storm texts and their mutants, nothing answered the first time
    assert asked and all(_has(t, "storm") for t in asked) and not set(asked) & answered_first


def test_a_malformed_answer_is_unparseable_not_a_crash(endpoint):
    model = load_model(f"http:{endpoint.url}?field=verdict.label")
    outcomes = model.predict(["A garbled man came in.", "A woman came in.", "A man came in."])
    assert outcomes[0].value is None and not outcomes[0].error and "not JSON" in outcomes[0].raw
    assert [o.value for o in outcomes[1:]] == ["negative", "positive"]
    # a field the answer does not have: unparseable, the raw answer saying which
    missing = load_model(f"http:{endpoint.url}?field=label").predict(["A man came in."])[0]
    assert missing.value is None and not missing.error and "no field 'label'" in missing.raw


def test_a_transient_failure_is_retried_and_counted(endpoint):
    model = load_model(f"http:{endpoint.url}?field=verdict.label&retries=3")
    endpoint.fail_next = 2
    outcomes = model.predict(["A woman came in."])
    assert [o.value for o in outcomes] == ["negative"] and not outcomes[0].error
    assert model.retried == 2 and model.usage.numbers()["retries"] == 2
    once = load_model(f"http:{endpoint.url}?field=verdict.label&retries=1")
    endpoint.fail_next = 2  # more failures than retries: a model error, never a label
    with pytest.raises(ModelError) as e:  # the whole call failed: raised for the campaign's retries and split
        once.predict(["A man came in."])
    assert not e.value.fatal and "503" in e.value.problem


def test_an_endpoint_that_is_not_there_stops_the_run_at_once(endpoint):
    with pytest.raises(ModelError) as e:
        load_model(f"http:{endpoint.url.replace('/classify', '/nothing')}")
    assert e.value.fatal and "404" in e.value.problem
    port = endpoint.httpd.server_address[1]
    endpoint.close()
    with pytest.raises(ModelError) as e:
        load_model(f"http:http://127.0.0.1:{port}/classify")
    assert e.value.fatal and f"127.0.0.1:{port}" in e.value.problem


def test_the_fingerprint_follows_the_url_and_what_changes_results(endpoint):
    base = f"http:{endpoint.url}"

    def fingerprint(spec):
        return load_model(spec).fingerprint

    plain = fingerprint(base)
    assert plain == fingerprint(f"{base}?timeout=5&concurrency=2&retries=1&rpm=600")  # how, not what, is asked
    changed = [fingerprint(f"{base}?field=verdict.label"), fingerprint(f"{base}?scores=verdict.p"),
               fingerprint(f"{base}?batch=4"), fingerprint(base.replace("127.0.0.1", "localhost"))]
    assert len({plain, *changed}) == 5
    assert canonical_spec(f"{base}?timeout=5&field=verdict.label") == f"{base}?field=verdict.label"
    with pytest.raises(InputError):
        load_model("http:ftp://127.0.0.1/classify")
    with pytest.raises(InputError):
        load_model(f"{base}?field=a b")
