"""The OpenAI-compatible backend against a real server on loopback: llama.cpp's server (`python -m
llama_cpp.server`) serving the embedded Gemma 3 270M (the `server` fixture of conftest.py, started once for
this module and test_usage.py). The same model runs in-process (gguf:default) for comparison.

Why outcomes may differ on borderline texts: the in-process backend tokenizes the prompt head, the text and
the prompt tail separately and evaluates them in fixed chunks (see gguf.py), while the server tokenizes the
whole prompt at once and evaluates it in one batch. Token boundaries at the joins and batch shapes change the
two label logits by up to about 0.2, so the labels are compared where the in-process margin is wider than that.
"""
import json
import os
import re
import socket
import sqlite3
import urllib.request

import pytest

for module in ("llama_cpp", "openai", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
    pytest.importorskip(module)

from hinter.errors import InputError, ModelError  # noqa: E402
from hinter.models import load_model  # noqa: E402

from campaign import REVIEWS, run_campaign  # noqa: E402

MARGIN = 0.3  # logits; see the module docstring


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def logit_margin(raw: str) -> float:
    """Positive minus Negative, from the raw answer of either backend."""
    scores = dict(re.findall(r"(Positive|Negative)=(-?\d+\.\d+)", raw))
    return float(scores["Positive"]) - float(scores["Negative"])


def test_server_completions_give_the_in_process_labels(server, gemma):
    from hinter.datasets import load_dataset
    texts = [r.text for r in load_dataset("imdb", limit=40) if len(r.text) < 900][:6] + [r["text"] for r in REVIEWS]
    remote = load_model(f"openai:gemma@{server}", "imdb")
    assert remote.fingerprint.startswith("openai-completions:gemma@http://127.0.0.1:")
    served, local = remote.predict(texts), gemma.predict(texts)
    compared = 0
    for s, g in zip(served, local):
        assert "first-token logprobs" in s.raw  # decided from the server's logprobs, as in-process from logits
        assert abs(logit_margin(s.raw) - logit_margin(g.raw)) < MARGIN
        # scores: the server's first-token log-probabilities, the in-process logits; the answer has the highest
        for o in (s, g):
            assert [label for label, _ in o.scores] == ["Positive", "Negative"] and o.seen is None
            assert max(o.scores, key=lambda x: x[1])[0] == o.value
        assert max(v for _, v in s.scores) <= 0  # log-probabilities
        margin = s.score("Positive") - s.score("Negative")  # a difference of log-probabilities is one of logits
        assert abs(margin - (g.score("Positive") - g.score("Negative"))) < MARGIN
        if abs(logit_margin(g.raw)) > MARGIN:
            assert s.value == g.value
            compared += 1
    assert compared >= 3


def test_chat_endpoint_and_answer_text(server):
    """Chat messages through the server's default chat handling; the answer text is parsed."""
    model = load_model(f"openai-chat:gemma@{server}", "imdb")
    out, = model.predict(["Dull, predictable and far too long."])
    assert model.fingerprint.startswith("openai-chat:") and out.raw
    assert out.value in {"Positive", "Negative", None}


FACTS = "5. The applicant was born in 1970 and lives in Ankara. He was detained for ten years without trial."


def test_multi_label_task_parses_generated_answers(server):
    model = load_model(f"openai:gemma@{server}", "ecthr")
    out, = model.predict([FACTS])
    assert out.value is None or (isinstance(out.value, frozenset) and out.value <= set(model.task.labels))
    assert "logprobs" not in out.raw and out.scores is None  # multi-label: never decided by a first token


def test_in_process_generation_stops_at_the_end_of_the_answer_line():
    """Gemma writes "\n\n" as one token, then invents the next example ("Facts: ... Answer: Article 6"):
    only the answer line may be parsed."""
    model = load_model("gguf:default", "ecthr")
    out, = model.predict([FACTS])
    assert out.raw.strip() and "\n" not in out.raw and "Facts" not in out.raw


def test_a_text_longer_than_the_context_is_unparseable_not_fatal(server):
    model = load_model(f"openai:gemma@{server}", "imdb")
    long, short = model.predict(["word " * 5000, "A wonderful film."])
    assert long.value is None and long.raw.startswith("error:") and short.value in {"Positive", "Negative"}


def test_unreachable_server_is_retried_then_a_model_error():
    from hinter.models.openai_api import OpenAIModel
    from hinter.models.tasks import get_task
    model = OpenAIModel("gemma", get_task("imdb"), base_url=f"http://127.0.0.1:{free_port()}/v1", retries=2,
                        backoff=0.01, timeout=2)
    with pytest.raises(ModelError) as e:
        model.predict(["A film."])
    assert "failed 3 times" in e.value.problem and model.retried == 2


def test_api_key_only_from_the_environment(monkeypatch, server, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-never-stored")
    model = load_model(f"openai:gemma@{server}", "imdb")
    assert "sk-secret" not in model.fingerprint
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("HINTER_OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError) as e:
        load_model("openai:gpt-4o-mini", "imdb")  # the real OpenAI API needs a key
    assert "OPENAI_API_KEY" in e.value.fix
    with pytest.raises(InputError):
        load_model("openai:gemma@127.0.0.1:8080", "imdb")  # not a URL


def test_same_campaign_in_process_and_behind_the_server(server, tmp_path):
    env_key = {"OPENAI_API_KEY": "sk-secret-never-stored"}
    os.environ.update(env_key)
    try:
        runs = {}
        for name, spec in (("local", "gguf:default"), ("served", f"openai:gemma@{server}")):
            # the determinism check, 32 calls of about a second each on the server, is not what is compared here
            r = run_campaign(tmp_path, spec, name, "--determinism-probes", "0")
            assert r.returncode == 0, r.stderr
            with sqlite3.connect(tmp_path / name / "run.sqlite") as db:
                runs[name] = {h: (o, raw) for h, o, raw in db.execute("SELECT text_hash, outcome, raw FROM outcomes")}
                dump = "\n".join(" ".join(map(str, row)) for table in ("settings", "outcomes", "texts", "mutants")
                                 for row in db.execute(f"SELECT * FROM {table}"))
            assert "sk-secret" not in dump + r.stdout + r.stderr
    finally:
        os.environ.pop("OPENAI_API_KEY")
    assert set(runs["local"]) == set(runs["served"]) and len(runs["local"]) > len(REVIEWS)  # the same texts asked
    for h, (outcome, raw) in runs["local"].items():
        if abs(logit_margin(raw)) > MARGIN:
            assert runs["served"][h][0] == outcome


class DroppingProxy:
    """An HTTP proxy on loopback in front of the server that, for a while, closes connections without answering
    (a lost connection, as a load balancer restarting gives): requests `drop_from` to `drop_from + drops - 1`
    (counting POSTs) are dropped, the others forwarded. It logs the prompt of every request it answered."""

    def __init__(self, upstream: str, drop_from: int, drops: int):
        import http.server
        import json
        import threading
        self.upstream, self.drop_from, self.drops = upstream.rsplit("/v1", 1)[0], drop_from, drops
        self.posts, self.dropped, self.answered = 0, 0, []
        lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _forward(self, body: bytes | None):
                req = urllib.request.Request(proxy.upstream + self.path, data=body, method=self.command,
                                             headers={k: v for k, v in self.headers.items()
                                                      if k.lower() in ("content-type", "authorization")})
                try:
                    with urllib.request.urlopen(req, timeout=120) as r:
                        status, payload, kind = r.status, r.read(), r.headers.get("Content-Type", "")
                except urllib.error.HTTPError as e:
                    status, payload, kind = e.code, e.read(), e.headers.get("Content-Type", "")
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return status

            def do_GET(self):
                self._forward(None)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with lock:
                    proxy.posts += 1
                    drop = proxy.drop_from <= proxy.posts < proxy.drop_from + proxy.drops
                    proxy.dropped += drop
                if drop:  # the connection lost: closed with no answer
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if self._forward(body) == 200:
                    with lock:
                        proxy.answered.append(json.loads(body).get("prompt"))

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_lost_connection_is_asked_again_by_the_rerun_and_no_answered_text_twice(server, tmp_path):
    """Issue 30's transient outage, for real: connections dropped for a while (behind a proxy on loopback), then
    the service is back. The texts whose calls failed are model errors, not answers; the same command asks those
    again and finishes the run; the server is never asked again about a text whose answer the run stored."""
    import shutil

    from hinter.records import text_key
    from hinter.store import RunStore
    # POSTs: the connection check (1), the determinism probe (4, its answers kept until it is whole), then the
    # campaign's 16: the last 12 of them are dropped
    proxy = DroppingProxy(server, drop_from=10, drops=12)
    try:
        # give_up above the outage's 12 drops: an outage the run outlives (a server failing everything, which
        # give_up stops, is test_api_faults')
        spec = f"openai:gemma@{proxy.url}?retries=0&concurrency=2&give_up=100"
        first = run_campaign(tmp_path, spec, "run", "--determinism-probes", "4")
        assert proxy.dropped == 12 and first.returncode == 3, (proxy.dropped, first.stderr[-2000:])
        s = json.loads((tmp_path / "run" / "summary.json").read_text())
        assert s["model_errors"] > 0 and s["health"]["texts_to_ask_again"] > 0
        assert "asks" in first.stdout and "again" in first.stdout
        shutil.copy(tmp_path / "run" / "run.sqlite", tmp_path / "first.sqlite")  # what the first run stored
        proxy.answered.clear()
        again = run_campaign(tmp_path, spec, "run", "--determinism-probes", "4")  # the same command: the service is back
        assert again.returncode in (0, 1), again.stderr[-2000:]
        s = json.loads((tmp_path / "run" / "summary.json").read_text())
        assert s["model_errors"] == 0 and s["health"]["complete"]
        # the texts the rerun sent (each prompt ends with its review), but the backend's connection check
        asked = [p.rsplit("Review: ", 1)[1].rsplit("\nSentiment:", 1)[0] for p in proxy.answered]
        asked = [t for t in asked if t != "A short test."]
        stored = RunStore(tmp_path / "first.sqlite")
        try:
            kept = stored.cached_outcomes(stored.settings()["model"], [text_key(t) for t in asked])
        finally:
            stored.close()
        assert asked and not kept, kept  # asked again: only what the first run did not store
    finally:
        proxy.close()
