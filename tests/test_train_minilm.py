"""scripts/train_minilm.py's held-out split and scores (the MiniLM study's test accuracy, docs/reproduction.md)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import train_minilm  # noqa: E402


def test_the_split_is_seeded_disjoint_and_holds_out_the_share():
    train, test = train_minilm.split(63, 0.3, 0)
    assert len(test) == 19 and len(train) == 44 and sorted(train + test) == list(range(63))
    assert train_minilm.split(63, 0.3, 0) == (train, test)
    assert train_minilm.split(63, 0.3, 1)[1] != test
    assert train_minilm.split(10, 0.0, 0) == (list(range(10)), [])


def test_scores_single_label_accuracy_and_multi_label_subset_accuracy_and_micro_f1():
    assert train_minilm.scores(["a", "b", "a", "a"], ["a", "b", "b", "b"], False, ["a", "b"]) == {"accuracy": 0.5}
    # sets: exact {x}; {x, y} against {x}: one false positive; {} against {y}: one false negative
    got = train_minilm.scores([["x"], ["x", "y"], []], [["x"], ["x"], ["y"]], True, ["x", "y"])
    assert got["subset_accuracy"] == pytest.approx(1 / 3)
    assert got["micro_f1"] == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))  # tp 2, fp 1, fn 1
    assert train_minilm.scores([[]], [[]], True, ["x"]) == {"subset_accuracy": 1.0, "micro_f1": None}


def test_a_sample_too_small_to_split_is_refused():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    with pytest.raises(SystemExit, match="scotus: 4 labelled texts"):
        train_minilm.train("scotus", "unused")
