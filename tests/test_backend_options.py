"""Model options in the spec (`gguf:default?n_ctx=4096`), Outcome.scores / Outcome.seen and what a python: function
may return, how much of a cut text a model read (reading.py), and the OpenAI-compatible backend's check before the
campaign (preflight) and its logged retries, against tiny HTTP servers on loopback."""
import json
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hinter.errors import InputError, ModelError
from hinter.models import ModelSpec, Outcome, canonical_spec, load_model, normalise, parse_model_spec
from hinter.models.reading import read_extent, word_ends
from hinter.models.registry import BACKENDS, Backend, Option, help_text, register_backend
import cli

# ---------------------------------------------------------------------------------------------------- options


def test_spec_options_are_read_once_and_checked():
    p = parse_model_spec("gguf:default?n_ctx=8192")
    assert (p.backend.prefix, p.rest, p.given, p.options) == ("gguf", "default", {"n_ctx": 8192},
                                                               {"n_ctx": 8192, "threads": None})
    p = parse_model_spec("gguf:models/my.gguf?n_ctx=4096&threads=2")
    assert p.rest == "models/my.gguf" and p.given == {"n_ctx": 4096, "threads": 2}
    p = parse_model_spec("hf:runs/minilm?max_length=512&device=cuda&batch_size=16")
    assert p.rest == "runs/minilm" and p.given == {"max_length": 512, "device": "cuda", "batch_size": 16}
    p = parse_model_spec("openai:gemma@http://127.0.0.1:8765/v1?timeout=30&concurrency=8")
    assert p.rest == "gemma@http://127.0.0.1:8765/v1" and p.given == {"timeout": 30.0, "concurrency": 8}
    assert p.options == {"timeout": 30.0, "concurrency": 8, "retries": 5, "rpm": None, "tpm": None,
                         "price_in": None, "price_out": None, "give_up": 20}
    assert parse_model_spec("gguf:default").given == {} and parse_model_spec("gguf:default?").rest == "default"
    assert parse_model_spec("gguf:odd?name.gguf?").rest == "odd?name.gguf"  # a '?' of its own: end with a lone '?'
    assert parse_model_spec("hf-causal:f?device=cuda:1").given == {"device": "cuda:1"}


@pytest.mark.parametrize("spec, problem", [
    ("gguf:default?nctx=4096", "unknown option 'nctx' for the gguf backend"),
    ("gguf:default?n_ctx=big", "bad value 'big' for the option n_ctx of the gguf backend (expected an integer >= 256)"),
    ("gguf:default?n_ctx=100", "expected an integer >= 256"),
    ("gguf:default?threads=0", "bad value '0' for the option threads"),
    ("gguf:default?threads=2&threads=3", "the option threads is given twice"),
    ("gguf:default?threads", "cannot read the option 'threads'"),
    ("hf:runs/x?device=gpu", "expected cpu, cuda, cuda:N or mps"),
    ("openai:m@http://h/v1?timeout=-1", "bad value '-1' for the option timeout of the openai backend"),
    ("openai:m@http://h/v1?timeout=nan", "bad value 'nan'"),
    ("openai-chat:m?temperature=1", "unknown option 'temperature' for the openai-chat backend"),
    ("gguf:?n_ctx=4096", "nothing before the options"),
])
def test_an_unknown_option_or_a_bad_value_names_the_backends_options(spec, problem):
    with pytest.raises(InputError) as e:
        load_model(spec)
    assert problem in e.value.problem and e.value.where.startswith("--model")
    if "nothing before" not in problem:
        backend = parse_model_spec(spec.split("?")[0] + "?").backend
        for option in backend.options:  # every option, with its default
            assert f"{option.name} [{option.shown_default}]" in e.value.fix
    if spec.startswith("gguf"):
        assert "n_ctx [2048]" in e.value.fix and "threads [all cores]" in e.value.fix


def test_help_lists_each_backends_options_and_defaults():
    text = help_text()
    for part in ("n_ctx [2048]", "threads [all cores]", "max_length [the model's limit, 512 for BERT]",
                 "device [cuda if present, else cpu]", "batch_size [512 on CUDA, 32 elsewhere]",
                 "dtype [float16 on CUDA, float32 elsewhere]", "timeout [60]", "concurrency [4]"):
        assert part in text
    assert "options after ?, NAME=VALUE joined by &" in text
    assert "python:package.module:function (a function from a list of texts to one label per text, e.g. " \
           "python:mymodels.sentiment:predict; options after ?" in text
    assert "timeout [none]" in text and "process [worker]" in text  # issue 30: the worker's options


class Recorder:
    batch_size = 1

    def __init__(self, rest, kwargs):
        self.rest, self.kwargs, self.fingerprint = rest, kwargs, f"recorder:{rest}"

    def predict(self, texts):
        return [Outcome("x") for _ in texts]


RECORDER = Backend(prefix="options-test", loader=lambda rest, **kw: Recorder(rest, kw), usage="options-test:X",
                   summary="records its arguments", options=(
                       Option("size", 7, "a size", minimum=1, affects_results=True),
                       Option("ratio", 0.5, "a ratio", kind=float, minimum=0),
                       Option("mode", None, "fast or slow", kind=str, pattern="fast|slow", auto="fast"),
                       Option("threads", None, "threads", minimum=1), Option("concurrency", 4, "requests", minimum=1)))


@pytest.fixture
def recorder():
    register_backend(RECORDER)
    yield RECORDER
    BACKENDS.unregister(RECORDER.prefix)


def test_the_loader_gets_every_declared_option_and_the_callers_arguments_win(recorder):
    m = load_model("options-test:a/b?size=3&mode=slow", task="ecthr")
    assert m.rest == "a/b" and m.kwargs == {"task": "ecthr", "size": 3, "ratio": 0.5, "mode": "slow", "threads": None,
                                            "concurrency": 4}
    m = load_model("options-test:a?threads=2&concurrency=9", concurrency=3, threads=None)
    assert m.kwargs["concurrency"] == 3 and m.kwargs["threads"] == 2  # given here (the Ray share) wins over the spec
    # ModelSpec reads the spec's concurrency as the bound in all, which the Ray executor splits among workers
    assert ModelSpec("options-test:a?concurrency=9").concurrency == 9
    assert ModelSpec("options-test:a?concurrency=9", concurrency=2).concurrency == 2
    assert ModelSpec("openai:m@http://h/v1?concurrency=8").concurrency == 8 and ModelSpec("openai:m").concurrency is None
    assert ModelSpec("nothing:here?concurrency=8").concurrency is None  # loading it says what is wrong


def test_canonical_spec_keeps_only_options_that_change_results(recorder):
    assert canonical_spec("options-test:a?threads=2&ratio=0.1&concurrency=3") == "options-test:a"
    assert canonical_spec("options-test:a?size=7&mode=fast") == "options-test:a"  # the default
    assert canonical_spec("options-test:a?concurrency=1&size=3") == "options-test:a?size=3"
    assert canonical_spec("gguf:default?threads=2&n_ctx=4096") == "gguf:default?n_ctx=4096"
    assert canonical_spec("hf:runs/m?device=cpu&batch_size=8") == "hf:runs/m"
    assert canonical_spec("hf:runs/m?max_length=128") == "hf:runs/m?max_length=128"
    assert canonical_spec("openai:m@http://h/v1?timeout=5&concurrency=2") == "openai:m@http://h/v1"
    assert canonical_spec("python:mod:fn") == "python:mod:fn"
    declared = {p: {o.name for o in BACKENDS.get(p).options if o.affects_results} for p in ("gguf", "hf", "openai")}
    assert declared == {"gguf": {"n_ctx"}, "hf": {"max_length", "dtype"}, "openai": set()}
    assert canonical_spec("hf:runs/m?batch_size=8&dtype=float16") == "hf:runs/m?dtype=float16"  # precision: results


def test_a_backend_without_options_gets_its_spec_as_written():
    bare = Backend(prefix="bare-test", loader=lambda rest, **kw: Recorder(rest, kw), usage="bare-test:X",
                   summary="declares no options")
    register_backend(bare)
    try:
        assert parse_model_spec("bare-test:mod:fn?x=1").rest == "mod:fn?x=1"
        assert load_model("bare-test:mod:fn?x=1").rest == "mod:fn?x=1"
        assert "bare-test:X (declares no options)" in help_text()  # no options: no options part
    finally:
        BACKENDS.unregister(bare.prefix)
    with pytest.raises(InputError):  # python: declares its options (issue 30): another one is refused
        load_model("python:no_such_module_here:fn?x=1")


# ---------------------------------------------------------------------------------------------------- outcomes


def test_outcome_scores_and_seen():
    o = Outcome("Positive", scores={"Positive": 2, "Negative": -1.5}, seen=12)
    assert o.scores == (("Positive", 2.0), ("Negative", -1.5)) and o.score("Negative") == -1.5
    assert o.score("Neutral") is None and Outcome("x").score("x") is None and hash(o)
    assert o.encode() == "Positive" and Outcome("x", "raw", True).error  # the old positional fields are unchanged
    assert o == Outcome("Positive", scores=(("Positive", 2.0), ("Negative", -1.5)), seen=12)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError):
            Outcome("x", seen=bad)


def labelled(texts):
    return [{"label": "Positive", "scores": {"Positive": 0.9, "Negative": 0.1}}, {"label": ["a", "b"]},
            {"label": "Negative", "scores": {"Negative": 1}, "seen": 3, "raw": "kept short"},
            {"label": "x", "score": 1}, {"label": "x", "scores": {"x": "high"}}, {"label": "x", "scores": [1]},
            {"scores": {"x": 1.0}}, "Plain"][:len(texts)]


def test_a_python_function_may_return_dicts_with_scores():
    from hinter.models.callable import CallableModel
    a, b, c, d, e, f, g, h = CallableModel(labelled).predict(["t"] * 8)
    assert (a.value, a.scores, a.seen) == ("Positive", (("Positive", 0.9), ("Negative", 0.1)), None)
    assert b.value == frozenset({"a", "b"}) and b.scores is None
    assert (c.value, c.score("Negative"), c.seen, c.raw) == ("Negative", 1.0, 3, "kept short")
    assert d.value is None and "unknown keys score" in d.raw
    assert e.value is None and "'scores' must map labels to numbers" in e.raw and f.value is None
    assert g.value is None and "no 'label' key" in g.raw
    assert (h.value, h.scores) == ("Plain", None)
    assert normalise(a) is a


# ---------------------------------------------------------------------------------------------------- reading


def test_read_extent_ends_at_the_last_whole_word_read():
    text = "one two  three\nfour five"
    words = text.split()
    encode = str.split  # one token per word
    assert word_ends(text) == [3, 7, 14, 19]
    assert read_extent(text, words, 5, encode) is None  # nothing cut
    assert [read_extent(text, words, k, encode) for k in range(5)] == [0, 3, 7, 14, 19]

    def pieces(s):  # two tokens per word: a word cut in the middle is not counted as read
        return [p for w in s.split() for p in (w[:2], w[2:]) if p]
    tokens = pieces(text)
    assert tokens[:4] == ["on", "e", "tw", "o"]
    assert read_extent(text, tokens, 3, pieces) == 3  # "one" and half of "two": only "one" is seen
    assert read_extent(text, tokens, 4, pieces) == 7
    assert read_extent("nospaces" * 10, pieces("nospaces" * 10), 1, pieces) == 0  # no word ends: nothing counted


def test_read_extent_checks_the_prefix_tokenizes_as_read():
    text = "aa bb cc dd"

    def merging(s):  # a tokenizer whose tokens of "aa bb" differ when the text is cut there
        return ["aa", "bb"] + s.split()[2:] if s.startswith("aa bb c") else s.split()
    tokens = merging(text)
    assert tokens == ["aa", "bb", "cc", "dd"]
    assert read_extent(text, ["zz", "bb", "cc", "dd"], 3, merging) == 0  # never claims what was not read
    assert read_extent(text, tokens, 3, merging) == 8


# ---------------------------------------------------------------------------------------------------- preflight

openai = pytest.importorskip("openai")


def closed_port() -> int:
    """A loopback port nothing listens on: bound, then closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def completion(text=" Positive", top=None):
    return {"id": "c", "object": "text_completion", "created": 0, "model": "x", "choices": [{
        "index": 0, "text": text, "finish_reason": "stop",
        "logprobs": None if top is None else {"tokens": [text], "token_logprobs": [max(top.values())],
                                              "top_logprobs": [top], "text_offset": [0]}}]}


class Server:
    """A tiny OpenAI-compatible server on loopback: answers each POST with the next (status, body) of `script`
    (the last one repeating), and counts the requests."""

    def __init__(self, *script):
        self.script, self.requests = list(script), []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                outer.requests.append(json.loads(self.rfile.read(int(self.headers.get("content-length", 0)))))
                status, body = outer.script[min(len(outer.requests), len(outer.script)) - 1]
                if status is None:  # hang up without an answer
                    self.close_connection = True
                    return
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    servers = []

    def start(*script):
        servers.append(Server(*script))
        return servers[-1]
    yield start
    for s in servers:
        s.close()


def error(message):
    return {"error": {"message": message, "type": "invalid_request_error"}}


def run_cli(spec, out):
    return cli.hinter("run", "--dataset", "imdb", "--limit", "2", "--model", spec, "--out", out, timeout=120)


def test_a_closed_port_stops_the_cli_within_seconds(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    start = time.monotonic()
    r = run_cli(f"openai:x@{url}", tmp_path / "run")
    assert r.returncode == 2 and time.monotonic() - start < 30, r.stderr
    assert f"nothing answers at {url} (connection refused)" in r.stderr and "Start the server" in r.stderr


def test_a_refused_key_stops_the_cli_within_seconds(tmp_path, serve):
    server = serve((401, error("Invalid API key provided")))
    start = time.monotonic()
    r = run_cli(f"openai:x@{server.url}?timeout=20", tmp_path / "run")
    assert r.returncode == 2 and time.monotonic() - start < 30, r.stderr
    assert f"the API at {server.url} refused the API key (401: Invalid API key provided)" in r.stderr
    assert "OPENAI_API_KEY" in r.stderr and len(server.requests) == 1  # one test request, then nothing


@pytest.mark.parametrize("status, problem", [
    (404, "has no model 'x' or no completions endpoint (404: The model `x` does not exist)"),
    (403, "refused the API key (403"), (422, "refused a test request (422")])
def test_other_refusals_are_fatal_at_load(serve, status, problem):
    server = serve((status, error("The model `x` does not exist")))
    with pytest.raises(ModelError) as e:
        load_model(f"openai:x@{server.url}")
    assert e.value.fatal and problem in e.value.problem and server.url in e.value.problem


def test_an_unresolvable_host_is_fatal_at_load():
    start = time.monotonic()
    with pytest.raises(ModelError) as e:
        load_model("openai-chat:x@http://no-such-host.invalid/v1")
    assert e.value.fatal and "cannot be found" in e.value.problem and time.monotonic() - start < 30


def test_a_server_that_answers_is_fine_and_gives_first_token_scores(serve):
    top = {" Positive": -0.2, " Negative": -1.7, " The": -3.0}
    server = serve((200, completion(" Positive", top)))
    model = load_model(f"openai:x@{server.url}?concurrency=2", "imdb")
    assert model.concurrency == 2 and len(server.requests) == 1 and server.requests[0]["max_tokens"] == 1
    assert server.requests[0]["prompt"] == model.task.completion_prompt("A short test.")  # the campaign's shape
    out, = model.predict(["A fine film."])
    assert out.value == "Positive" and out.scores == (("Positive", -0.2), ("Negative", -1.7)) and out.seen is None
    assert max(out.scores, key=lambda s: s[1])[0] == out.value


def test_a_busy_server_lets_the_campaign_start_and_retries_are_logged(serve, caplog):
    server = serve((503, error("loading")), (503, error("loading")), (429, error("slow down")),
                   (200, completion(" Negative")))
    with caplog.at_level(logging.WARNING, logger="hinter.models"):
        model = load_model(f"openai:x@{server.url}?retries=3", "imdb")  # the test request got 503: a warning
        model.backoff = 0.01
        out, = model.predict(["A film."])  # 503, then 429, then an answer without logprobs: parsed
    assert out.value == "Negative" and out.scores is None and model.retried == 2
    messages = [r.getMessage() for r in caplog.records if r.name == "hinter.models"]
    assert "answered a test request with 503 (loading); starting all the same" in messages[0]
    assert f"the API at {server.url}: 503 (loading); retry 1 of 3 in " in messages[1]
    assert f"the API at {server.url}: 429 (slow down); retry 2 of 3 in " in messages[2]
    assert all(r.levelno == logging.WARNING for r in caplog.records if r.name == "hinter.models")


def test_a_server_that_hangs_up_is_left_to_the_retries(serve, caplog):
    server = serve((None, None), (200, {**completion(" Positive"), "object": "chat.completion", "choices": [{
        "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Positive"}}]}))
    with caplog.at_level(logging.WARNING, logger="hinter.models"):
        model = load_model(f"openai-chat:x@{server.url}", "imdb")
    assert "accepted a test request but sent no answer" in caplog.text
    assert server.requests[0]["messages"] == model.task.chat_messages("A short test.")
    out, = model.predict(["A film."])
    assert out.value == "Positive" and out.scores is None  # no logprobs: the answer text is parsed
