"""Usage, cost, --budget, --dry-run and rate limits (hinter.usage, hinter.pipeline.estimate, models/pacing.py).

The campaign tests run against a real OpenAI-compatible server: llama.cpp's server (conftest.py's `server`
fixture, shared with test_openai_server.py) serving the embedded model, reached through a small recording proxy
on loopback that forwards every request unchanged and sums the `usage` of the server's answers: what hinter
records is compared with what the server said. A 429 with Retry-After cannot be made by llama.cpp: a small real
HTTP server on loopback answers 429 then 200 for that test.
"""
import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hinter.errors import InputError
from hinter.models.pacing import Pacer
from hinter.usage import Budget, Prices, parse_budget

from campaign import CAMPAIGN, REVIEWS, hinter


# ---------------------------------------------------------------- pure parts

def test_budget_forms_and_errors():
    assert parse_budget("calls=500") == Budget("calls", 500)
    assert parse_budget("cost=2.5") == Budget("cost", 2.5)
    for bad in ("calls", "money=3", "calls=-1", "tokens=1.5", "cost=abc"):
        with pytest.raises(InputError, match="--budget"):
            parse_budget(bad)
    assert Prices(1.0, 2.0).cost(1_000_000, 500_000) == 2.0  # per million tokens


class SpreadModel:
    """A model that runs its batches together (as the Ray executor's does): the cache hands it every batch."""

    fingerprint, batch_size = "spread", 4

    def __init__(self):
        self.asked = 0

    def predict(self, texts):
        self.asked += len(texts)
        return ["Positive" for _ in texts]

    def predict_batches(self, batches, retries, backoff_s):
        from hinter.models import normalise
        for b in batches:
            yield [normalise(o) for o in self.predict(b)]


@pytest.mark.parametrize("spread", [False, True])
def test_the_cache_stops_before_the_batch_that_would_pass_the_budget_and_counts_earlier_sessions(tmp_path, spread):
    from hinter.models.base import OutcomeCache
    from hinter.models.callable import CallableModel
    from hinter.store import RunStore
    from hinter.usage import BudgetReached, Meter
    texts = [f"text number {i}" for i in range(10)]
    store = RunStore(tmp_path / "run.sqlite")
    model = SpreadModel() if spread else CallableModel(lambda ts: ["Positive"] * len(ts), batch_size=4)
    cache = OutcomeCache(model, store, meter=Meter(model, store, Budget("calls", 9)))
    with pytest.raises(BudgetReached, match="calls=9"):
        cache.predict(texts)
    assert cache.calls == 8  # two batches of 4; a third would make 12
    assert store.stats()["usage.calls"] == 8 and store.stats()["usage.estimated_calls"] == 8
    # a later session with the same budget: what was spent counts, the stored answers are free, nothing is asked
    again = OutcomeCache(model, store, meter=Meter(model, store, Budget("calls", 9)))
    with pytest.raises(BudgetReached):
        again.predict(texts)
    assert again.calls == 0
    # with a larger one it asks only the rest
    more = OutcomeCache(model, store, meter=Meter(model, store, Budget("calls", 12)))
    assert len(more.predict(texts)) == 10 and more.calls == 2
    assert store.stats()["usage.calls"] == 10
    store.close()


def test_the_progress_line_shows_tokens_and_cost():
    from hinter.cli.campaign import CampaignProgress
    state = CampaignProgress(10, 5, lambda: 0.0)
    state.update("load", 1, 1)
    state.update("texts", 0, 10)
    state.update("tokens", 12345, 40)
    assert state.line().endswith("0 model calls, 12,345 tokens")
    state.update("tokens~", 20000, 60)  # some calls' tokens estimated
    state.update("cost", 0.0125, 0)
    assert state.line().endswith("~20,000 tokens, cost ~0.0125")


def test_pacer_keeps_to_requests_per_minute_and_halves_on_429():
    now = [0.0]
    pacer = Pacer(4, rpm=2, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    for _ in range(3):
        pacer.acquire()
        pacer.release()
    assert now[0] >= 60.0  # the third request waited for the first to leave the minute's window
    pacer.acquire()
    pacer.release(rate_limited=True)
    assert pacer.limit == 2 and pacer.lowered == 1
    for _ in range(2):  # two requests in a row through: one more at once
        pacer.acquire()
        pacer.release()
    assert pacer.limit == 3


def test_pacer_keeps_to_tokens_per_minute():
    now = [0.0]
    pacer = Pacer(2, tpm=100, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    c = pacer.acquire(60)
    pacer.settle(c, 70)  # the real count replaces the estimate
    pacer.release()
    pacer.acquire(40)  # 70 + 40 > 100: waits for the first to leave the window
    assert now[0] >= 60.0


def test_the_embedded_model_counts_its_tokens(gemma):
    """The in-process GGUF model knows its tokens: the whole prompt read (the task's examples and the text), one
    token decided per classified text."""
    def spent(text):
        before = gemma.usage.numbers()
        gemma.predict([text])
        after = gemma.usage.numbers()
        return {k: after[k] - before[k] for k in after}

    short = spent("A fine film.")
    long = spent("A fine film, with a long and winding plot that the actors carry well to the very end.")
    assert short["calls"] == long["calls"] == 1 and short["tokens_out"] == long["tokens_out"] == 1
    assert long["tokens_in"] > short["tokens_in"] > 50  # the prompt's examples, then the text
    assert short["estimated_calls"] == 0


# ---------------------------------------------------------------- a 429, then an answer (a real loopback server)

def test_retry_after_is_honoured_and_a_429_lowers_the_requests_at_once():
    pytest.importorskip("openai")
    from hinter.models import load_model
    seen: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", 0)))
            seen.append(time.monotonic())
            if len(seen) <= 2:  # the preflight's request, then the first text's: rate limited
                body, status = b'{"error": {"message": "slow down"}}', 429
            else:
                body, status = json.dumps({"id": "x", "object": "text_completion", "created": 0, "model": "m",
                                           "choices": [{"index": 0, "text": " Positive", "finish_reason": "stop",
                                                        "logprobs": None}],
                                           "usage": {"prompt_tokens": 123, "completion_tokens": 2,
                                                     "total_tokens": 125}}).encode(), 200
            self.send_response(status)
            if status == 429:
                self.send_header("Retry-After", "2")
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    loopback = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=loopback.serve_forever, daemon=True).start()
    try:
        model = load_model(f"openai:m@http://127.0.0.1:{loopback.server_port}/v1?concurrency=4", "imdb")
        outcome, = model.predict(["A fine film."])
        assert outcome.encode() == "Positive"
        assert seen[2] - seen[1] >= 2.0  # the retry waited what Retry-After asked (the backoff alone is < 1 s)
        assert model.pacer.limit < 4 and model.pacer.lowered == 1
        u = model.usage.numbers()
        assert (u["calls"], u["tokens_in"], u["tokens_out"], u["retries"], u["estimated_calls"]) == (1, 123, 2, 1, 0)
    finally:
        loopback.shutdown()


# ---------------------------------------------------------------- campaigns on llama.cpp's server

class Recorder:
    """A loopback proxy in front of the server: forwards each request unchanged, counts them and sums the usage
    the server returns."""

    def __init__(self, target: str):
        self.target, self.requests, self.tokens_in, self.tokens_out = target.rstrip("/"), 0, 0, 0
        self.lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _forward(self, method):
                body = self.rfile.read(int(self.headers.get("content-length", 0))) if method == "POST" else None
                req = urllib.request.Request(recorder.target + self.path.removeprefix("/v1"), data=body,
                                             method=method, headers={"content-type": "application/json"})
                with urllib.request.urlopen(req, timeout=120) as r:
                    data, status = r.read(), r.status
                if method == "POST":
                    usage = json.loads(data).get("usage") or {}
                    with recorder.lock:
                        recorder.requests += 1
                        recorder.tokens_in += usage.get("prompt_tokens", 0)
                        recorder.tokens_out += usage.get("completion_tokens", 0)
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                self._forward("POST")

            def do_GET(self):
                self._forward("GET")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def take(self) -> tuple[int, int, int]:
        with self.lock:
            out = (self.requests, self.tokens_in, self.tokens_out)
            self.requests = self.tokens_in = self.tokens_out = 0
        return out


@pytest.fixture(scope="module")
def recorder(server):
    r = Recorder(server)
    yield r
    r.server.shutdown()


def _results(out) -> dict:
    s = json.loads((out / "summary.json").read_text())
    return {k: s[k] for k in ("atomic", "intersectional", "totals", "findings")}, s["usage"]


def _counts(results: dict) -> dict:
    """What does not depend on the answers: the mutants, valid and discarded per cell."""
    return {kind: {c: (m["mutants"], m["valid"], m["discarded"]) for c, m in results[kind].items()}
            for kind in ("atomic", "intersectional")}


PROBES = 4  # the start-up determinism check's copies: each a call of about a second on llama.cpp's server


def test_dry_run_then_budget_then_resume_on_a_real_server(tmp_path, recorder):
    """Against llama.cpp's server. Its answers are not exactly reproducible from one session to the next (it
    reuses the previous prompt's cache, which moves the logits a little), so the resumed run is compared with
    an uncapped one on a deterministic model below; here, the calls and tokens are the server's own."""
    data = tmp_path / "reviews.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in REVIEWS))
    # concurrency 2: batches of 8 texts (4 x concurrency)
    base = (*CAMPAIGN, "--dataset", str(data), "--model", f"openai:gemma@{recorder.url}", "--concurrency", "2",
            "--price-in", "1", "--price-out", "2", "--determinism-probes", str(PROBES))
    recorder.take()

    dry = hinter(*base, "--out", str(tmp_path / "run"), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert recorder.take()[0] == 0  # no model call, not even the preflight
    estimate = json.loads(dry.stdout.strip().splitlines()[-1])["estimate"]
    assert estimate["calls"] > 8 and not (tmp_path / "run").exists()

    # the preflight and the start-up probes, one batch of 8, and 3 calls: not another batch
    cap = 1 + PROBES + 8 + 3
    capped = hinter(*base, "--out", str(tmp_path / "run"), "--budget", f"calls={cap}")
    assert capped.returncode == 4, capped.stderr
    assert f"budget calls={cap} is reached" in capped.stderr
    requests, tin, tout = recorder.take()
    results, usage = _results(tmp_path / "run")
    # what hinter recorded is what the server counted, request by request summed
    assert (usage["calls"], usage["tokens_in"], usage["tokens_out"]) == (requests, tin, tout)
    assert not usage["estimated"] and usage["cost"] == pytest.approx((tin + 2 * tout) / 1e6)
    assert cap - 8 < usage["calls"] <= cap  # stopped within one batch of the cap, never over it
    assert usage["budget"]["reached"] and usage["budget"]["incomplete_cells"]
    assert usage["budget"]["texts_done"] < usage["budget"]["texts_total"]

    again = hinter(*base, "--out", str(tmp_path / "run"))  # no budget: continues where it stopped
    assert again.returncode == 0, again.stderr
    requests2, tin2, tout2 = recorder.take()
    results, usage2 = _results(tmp_path / "run")
    # both sessions, each as the server counted it
    assert (usage2["calls"], usage2["tokens_in"], usage2["tokens_out"]) == (
        requests + requests2, tin + tin2, tout + tout2)
    assert not usage2["budget"]["reached"]
    # every call the estimate counted was made once: the texts, the probes and one preflight per session (the
    # probe's text is an original: its answer is reused when the probes agree, else it is asked again)
    assert requests + requests2 - 2 - PROBES in (estimate["calls"] - 1, estimate["calls"])


def test_a_run_stopped_by_its_budget_resumes_to_the_uncapped_run(tmp_path):
    """On a deterministic model (tests/planted.py, a real function of the texts): the capped run, continued
    without a budget, has every result of a run never stopped; tokens are estimated and marked so."""
    from campaign import write_kill_campaign
    campaign = write_kill_campaign(tmp_path, 24)
    base = ("run", "-d", str(campaign / "data.jsonl"), "-m", "python:planted:intersectional", "-a", "gender,race",
            "--dictionary", str(campaign / "dic.csv"), "--batch-texts", "4")
    full = hinter(*base, "--out", str(tmp_path / "full"))
    assert full.returncode == 0, full.stderr
    expected, usage_full = _results(tmp_path / "full")
    assert usage_full["estimated"] and usage_full["estimated_calls"] == usage_full["calls"] > 0
    assert f"Usage: {usage_full['calls']} requests" in full.stdout
    assert 'data-testid="usage"' in (tmp_path / "full" / "report.html").read_text(encoding="utf-8")

    capped = hinter(*base, "--out", str(tmp_path / "capped"), "--budget", "calls=60")
    assert capped.returncode == 4, capped.stderr
    partial, usage = _results(tmp_path / "capped")
    assert usage["calls"] <= 60 and usage["budget"]["reached"]
    assert _counts(partial) != _counts(expected)  # the summary is of the texts done: fewer mutants

    tokens = hinter(*base, "--out", str(tmp_path / "capped"), "--budget", "tokens=1")  # nothing more fits
    assert tokens.returncode == 4 and _results(tmp_path / "capped")[1]["calls"] == usage["calls"]

    again = hinter(*base, "--out", str(tmp_path / "capped"))
    assert again.returncode == 0, again.stderr
    resumed, usage_resumed = _results(tmp_path / "capped")
    assert resumed == expected
    assert usage_resumed["calls"] == usage_full["calls"]  # no text asked twice over the three sessions


def test_a_large_campaign_asks_first_in_a_terminal_and_a_no_asks_nothing(tmp_path):
    """In a real pseudo-terminal: above 10,000 estimated calls, the run asks; 'n' stops it before any call."""
    import os
    import pty
    import subprocess
    import sys
    # one person a sentence ("The man and the woman" would compare a group with itself once mutated: discarded),
    # and race alone, whose words need no parse of the texts: 200 texts make about 18,000 calls
    words = ["white man", "black woman", "Asian boy", "white girl", "black man", "Asian woman"]
    rows = [{"text": f"The {words[i % 6]} came. The {words[(i + 1) % 6]} left. The {words[(i + 2) % 6]} stayed on "
                     f"day {i}."} for i in range(200)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "hinter.cli", "run", "-d", str(tmp_path / "data.jsonl"), "-m",
                             "python:planted:intersectional", "-a", "race", "--budget", "calls=1000000",
                             "--any-occurrence", "--out", str(tmp_path / "run")],
                            stdin=slave, stdout=slave, stderr=slave,
                            env={**os.environ, "PYTHONPATH": os.path.dirname(__file__)}, close_fds=True)
    os.close(slave)
    seen = b""
    try:
        while b"Go on?" not in seen:
            chunk = os.read(master, 4096)
            assert chunk, seen.decode(errors="replace")
            seen += chunk
        os.write(master, b"n\n")
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            seen += chunk
    finally:
        assert proc.wait(timeout=120) == 1, seen.decode(errors="replace")
        os.close(master)
    assert b"Nothing was asked" in seen
    import re
    calls = int(re.search(rb"may make ([\d,]+) model calls", seen).group(1).replace(b",", b""))
    assert 10_000 < calls < 100_000  # over the threshold, and a campaign small enough to count quickly
    assert not (tmp_path / "run" / "run.sqlite").exists()
