"""The task presets (the paper's five, a French one), the answer parser, user task files, datasets in every format."""
import json

import pytest

from hinter.datasets import BUNDLED, load_dataset
from hinter.errors import InputError
from hinter.models.tasks import TASKS, get_task, load_task_file


def test_presets_with_labels_prompts_and_three_examples():
    labelled = {name: task for name, task in TASKS.items() if not task.generative}
    # the paper's five, and avis: French reviews (issue 33)
    assert set(labelled) == {"imdb", "ecthr", "eurlex", "ledgar", "scotus", "avis"}
    assert set(TASKS) - set(labelled) == {"reference-letter"}  # the bundled generative task
    sizes = {"imdb": 2, "ecthr": 10, "eurlex": 100, "ledgar": 100, "scotus": 14, "avis": 2}
    for name, task in labelled.items():
        assert len(task.labels) == len(set(task.labels)) == sizes[name]
        assert len(task.examples) == 3
        for _, answer in task.examples:  # every example answer is readable by the task's own parser
            assert task.parse_answer(answer).parseable, (name, answer)
        prompt = task.completion_prompt("THE TEXT")
        assert "[LABELS]" not in prompt and prompt.endswith(f"THE TEXT\n{task.answer_prefix}")
    assert TASKS["ecthr"].multi_label and TASKS["eurlex"].multi_label and not TASKS["ledgar"].multi_label
    assert '"Article 1 of Protocol 1"' in TASKS["ecthr"].completion_prompt("x")  # [LABELS] filled in


@pytest.mark.parametrize("answer, expected", [
    ("Answer: Article 3, Article 6", {"Article 3", "Article 6"}),
    ("article 3; ARTICLE 6.", {"Article 3", "Article 6"}),
    ("Articles 3, 6 and 8", {"Article 3", "Article 6", "Article 8"}),
    ("Article 1 of Protocol No. 1 and Article 10", {"Article 1 of Protocol 1", "Article 10"}),
    ("P1-1", {"Article 1 of Protocol 1"}),
    ("Article 14", {"Article 14"}),
    ("None", set()), ("none.", set()), ("Answer: None", set()), ("No violation", set()),
    ("I do not know", None), ("Article 1", None), ("", None),
    ("Answer: Article 6\n\nThe Court found a violation of Article 8.", {"Article 6"}),  # the first line only
    ("Answer:\nArticle 6, Article 8", {"Article 6", "Article 8"}),
    ("Article 6\n\nArticle 8\n", {"Article 6", "Article 8"}),
    ("Article 6\nFacts: 7. The applicant was born in 1957 and lives in Nicosia\nAnswer: Article 8", {"Article 6"}),
    # answers that go on beyond the labels: the embedded model on the bundled ECtHR sample (issue 12)
    ("Article 11 et seq. of the Civil Code", None),
    ("Article 1 of the Land Ownership Act (see paragraph 25 below)", None),
    ("Article 125 of the Criminal Code", None), ("Article 6. The applicant was born in 1960.", None),
    ("Article 14 of the Family Act (see paragraph 46 below) is a criminal offence", None),
    ("Article 10, Article 11, Article 12, Article 13, Article 14, Article 15", None),  # 12, 13: no labels
    ("Article 146 § 1 of the Criminal Code", None), ("Article 2 of the Convention", {"Article 2"}),
    ("Article 1 of Protocol No. 1 to the Convention", {"Article 1 of Protocol 1"}),
    ("Articles 6 and 8 of the Convention", {"Article 6", "Article 8"}),
    ("Article 6 § 1", {"Article 6"}),
    ("Article 5 §§ 1 and 4 of the Convention, Article 14", {"Article 5", "Article 14"}),
    ("Article 6 § 1 of the Civil Code", None), ("Article 1 of Protocol No. 1 to the Civil Code", None),
    ("Articles 3 or 6", None), ("Article 3 or Article 6", None), ("None, Article 6", None), ("No", None),
])
def test_multi_label_parser(answer, expected):
    value = get_task("ecthr").parse_answer(answer).value
    assert (value if value is None else set(value)) == expected


@pytest.mark.parametrize("task, answer, expected", [
    ("imdb", " positive.", "Positive"), ("imdb", "Sentiment: NEGATIVE!", "Negative"),
    ("imdb", "positive or negative", None), ("imdb", "I cannot tell", None),
    ("ledgar", "No Waivers", "No Waivers"), ("ledgar", "waivers", "Waivers"),
    ("ledgar", "Waiver of Jury Trials.", "Waiver Of Jury Trials"), ("ledgar", "Governing Laws and Notices", None),
    ("scotus", "Answer: criminal procedure", "Criminal Procedure"), ("scotus", "Taxes", None),
])
def test_single_label_parser(task, answer, expected):
    assert get_task(task).parse_answer(answer).value == expected


CONTINUATIONS = (" et seq. of the Civil Code", " (see paragraph 25 below)", ". The applicant was born in 1960.",
                 " of the Land Ownership Act")


@pytest.mark.parametrize("name", ["imdb", "ecthr", "eurlex", "ledgar", "scotus"])
def test_answers_in_the_tasks_terms_parse_and_nothing_more(name):
    """Every label, alias and example answer of every task parses, in any case, after "Answer:" or the task's
    prefix, with trailing punctuation; multi-label answers list labels. The same answers continued by more
    text are unparseable."""
    task = get_task(name)

    def value(label_set):
        return frozenset(label_set) if task.multi_label else next(iter(label_set))

    answers = [(label, {label}) for label in task.labels] + [(alias, {label}) for alias, label in task.aliases]
    answers += [(a, None) for _, a in task.examples]  # None: whatever the example says
    for answer, labels in answers:
        expected = task.parse_answer(answer).value if labels is None else value(labels)
        assert expected is not None, (name, answer)
        for spelling in (answer, f" {answer.upper()}.", f"Answer: {answer.lower()}", f"{task.answer_prefix} {answer}\n",
                         f"{task.answer_prefix}\n{answer}", f"{answer}\nFacts: more text on the next line"):
            assert task.parse_answer(spelling).value == expected, (name, spelling)
        for more in CONTINUATIONS:
            assert task.parse_answer(answer + more).value is None, (name, answer + more)
    if task.multi_label:
        first, last = task.labels[0], task.labels[-1]
        for joined in (f"{first}, {last}", f"{first} and {last}", f"{first}; {last}."):
            assert task.parse_answer(joined).value == frozenset({first, last}), (name, joined)
        assert task.parse_answer(task.none_answer).value == frozenset()
    else:
        assert task.parse_answer(f"{task.labels[0]} and {task.labels[1]}").value is None  # two labels


def test_eurlex_longest_label_wins():
    value = get_task("eurlex").parse_answer("international trade, trade policy").value
    assert value == frozenset({"international trade", "trade policy"})  # not also "trade"


def test_user_task_from_yaml_and_json(tmp_path):
    (tmp_path / "t.yaml").write_text(
        "name: toxicity\nlabels: [Toxic, Fine]\nsystem_prompt: Classify the comment among [LABELS].\n"
        "question: Is it toxic?\nexamples:\n  - {text: You idiot, answer: Toxic}\n  - [Nice work, Fine]\n"
        "text_name: Comment\n")
    task = get_task(str(tmp_path / "t.yaml"))
    assert task.name == "toxicity" and task.examples == (("You idiot", "Toxic"), ("Nice work", "Fine"))
    assert 'among "Toxic", "Fine".' in task.completion_prompt("x") and task.parse_answer("fine").value == "Fine"
    (tmp_path / "m.json").write_text(json.dumps({"labels": ["A", "B", "C"], "system_prompt": "s", "question": "q",
                                                 "multi_label": True}))
    multi = load_task_file(tmp_path / "m.json")
    assert multi.name == "m" and multi.parse_answer("A and C").value == frozenset({"A", "C"})


@pytest.mark.parametrize("content, problem", [
    ("labels: [A]\nsystem_prompt: s\nquestion: q\n", "at least two"),
    ("labels: [A, B]\nquestion: q\n", "missing field(s) system_prompt"),
    ("labels: [A, B]\nsystem_prompt: s\nquestion: q\ncolour: red\n", "unknown field(s) colour"),
    ("labels: [A, B]\nsystem_prompt: s\nquestion: q\nexamples: [[only text]]\n", "example 1"),
    ("labels: [A, B\n", "not valid YAML"),
])
def test_bad_task_files(tmp_path, content, problem):
    (tmp_path / "t.yml").write_text(content)
    with pytest.raises(InputError) as e:
        get_task(str(tmp_path / "t.yml"))
    assert problem in e.value.problem and "t.yml" in e.value.where


def test_unknown_task_names_the_presets():
    with pytest.raises(InputError) as e:
        get_task("sentiment")
    assert "ecthr" in e.value.fix and e.value.where == "--task"
    assert "Registered tasks: avis, ecthr, eurlex, imdb, ledgar, reference-letter, scotus" in e.value.fix and "task file" in e.value.fix


def test_presets_are_packaged_yaml_files_and_keep_their_old_names():
    from importlib import resources

    from hinter.models.tasks import ECTHR, EUROVOC_CONCEPTS, IMDB, LEDGAR_LABELS, Task
    folder = resources.files("hinter") / "data" / "tasks"
    assert {f.name for f in folder.iterdir() if f.name.endswith(".yaml")} == {f"{n}.yaml" for n in TASKS}
    assert isinstance(IMDB, Task) and IMDB is get_task("imdb") and ECTHR.aliases[0] == ("P1-1", "Article 1 of Protocol 1")
    assert IMDB.answer_prefix == "Sentiment:" and IMDB.text_name == "Review"  # "Sentiment:" needs YAML quotes
    assert LEDGAR_LABELS == get_task("ledgar").labels
    assert list(EUROVOC_CONCEPTS.values()) == list(get_task("eurlex").labels)  # the ids file matches the labels
    assert EUROVOC_CONCEPTS["100163"] == "political framework"


def test_bundled_samples_load_by_name_with_task_labels():
    counts = {name: len(load_dataset(name)) for name in BUNDLED}
    assert counts["imdb"] == 200 and counts["ecthr"] == 63 and 1 <= counts["scotus"] <= 6
    assert all(1 <= n <= 300 for n in counts.values())
    for name in ("ecthr", "eurlex"):  # multi-label gold labels are written in the task's label names
        task = get_task(name)
        golds = [json.loads(r.gold) for r in load_dataset(name) if r.gold is not None]
        assert golds and all(set(g) <= set(task.labels) for g in golds)
    assert all(r.gold in get_task("ledgar").labels for r in load_dataset("ledgar"))
    assert all(r.gold in get_task("scotus").labels for r in load_dataset("scotus"))
    assert all(r.source_id.startswith("lexglue_") for r in load_dataset("scotus"))  # no Oyez summaries shipped


def test_bundled_samples_carry_their_source_notes():
    from importlib import resources
    for name in BUNDLED:
        note = (resources.files("hinter") / "data" / name / "SOURCE.md").read_text(encoding="utf-8")
        assert "icen" in note and "## In this package" in note  # licence (Licence/License) and what was taken


ROWS = [{"id": "a", "body": "A man walked in.", "gold": "x"}, {"id": "b", "body": "A woman left.", "gold": "y"}]


def test_csv_parquet_and_hf_folder_with_field_options(tmp_path):
    import csv
    with open(tmp_path / "d.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["id", "body", "gold"])
        w.writeheader()
        w.writerows(ROWS)
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    pq.write_table(pa.Table.from_pylist(ROWS), tmp_path / "d.parquet")
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "hf"))
    for path in ("d.csv", "d.parquet", "hf"):
        recs = load_dataset(tmp_path / path, text_field="body", label_field="gold")
        assert [(r.text, r.source_id, r.gold) for r in recs] == [("A man walked in.", "a", "x"), ("A woman left.", "b", "y")]
        assert len(load_dataset(tmp_path / path, text_field="body", limit=1)) == 1


def test_hf_folder_class_labels_become_names_and_splits_must_be_chosen(tmp_path):
    datasets = pytest.importorskip("datasets")
    features = datasets.Features({"text": datasets.Value("string"),
                                  "label": datasets.ClassLabel(names=["negative", "positive"])})
    ds = datasets.Dataset.from_dict({"text": ["Good.", "Bad."], "label": [1, 0]}, features=features)
    datasets.DatasetDict({"train": ds, "test": ds}).save_to_disk(str(tmp_path / "dd"))
    with pytest.raises(InputError) as e:
        load_dataset(tmp_path / "dd")
    assert "several splits" in e.value.problem and "dd/train" in e.value.fix
    assert [r.gold for r in load_dataset(tmp_path / "dd" / "test")] == ["positive", "negative"]


def test_dataset_errors_name_the_row(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    pq.write_table(pa.Table.from_pylist([{"text": "fine"}, {"text": ""}]), tmp_path / "e.parquet")
    with pytest.raises(InputError) as e:
        load_dataset(tmp_path / "e.parquet")
    assert "row 2" in e.value.where
    (tmp_path / "x.parquet").write_text("not parquet")
    with pytest.raises(InputError):
        load_dataset(tmp_path / "x.parquet")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError) as e:
        load_dataset(tmp_path / "empty")
    assert "datasets folder" in e.value.problem
    with pytest.raises(InputError) as e:
        load_dataset("ecthr2")
    assert "ecthr" in e.value.fix


def test_a_csv_row_cut_by_an_unquoted_comma_is_an_error_naming_its_line(tmp_path):
    from hinter.datasets import read_dataset
    path = tmp_path / "reviews.csv"
    path.write_text("id,text\n"
                    "u0,\"Quoted, so whole: the man left.\"\n"
                    "u1,Man, what a film. The man was great.\n"   # one comma too many: 3 fields
                    "u2\n"                                          # one too few
                    "u3,The woman stayed.\n")
    with pytest.raises(InputError) as e:
        read_dataset(path)
    assert e.value.where == f"{path}, line 3" and "3 fields where the header has 2" in e.value.problem
    assert "Quote the fields that hold commas" in e.value.fix and "--skip-bad-rows" in e.value.fix
    read = read_dataset(path, skip_bad_rows=True)  # skipped and counted like other bad rows, never cut
    assert [(r.source_id, r.text) for r in read.records] == [("u0", "Quoted, so whole: the man left."),
                                                             ("u3", "The woman stayed.")]
    assert len(read.skipped) == 2 and "line 3" in read.skipped[0] and "line 4" in read.skipped[1]
    assert "1 field where the header has 2" in read.skipped[1]


def test_a_task_file_is_parsed_once_while_unchanged_and_again_once_edited(tmp_path):
    """A run looks its task up at every stage: the file is read once, and an edit is never missed."""
    import os

    from hinter.models.tasks import get_task
    path = tmp_path / "letter.yaml"
    path.write_text('name: letter\nprompt: "Write about {text}"\n')
    first = get_task(str(path))
    assert get_task(str(path)) is first
    path.write_text("name: letter\nprompt: \"Write a letter for {text}\"\nmax_tokens: 64\n")
    os.utime(path, ns=(first_ns := path.stat().st_mtime_ns + 10**9, first_ns))
    edited = get_task(str(path))
    assert edited is not first and edited.max_tokens == 64
