"""The registries of model backends, executors and tasks: names registered once, errors that list what exists,
entries added from outside (a registration call, a package's entry point) usable like the built-in ones."""
import importlib.metadata

import pytest

from hinter.errors import InputError
from hinter.models import ModelSpec, load_model
from hinter.models.base import Outcome
from hinter.models.registry import BACKENDS, Backend, find_backend, help_lines, help_text, register_backend

BUILTIN_BACKENDS = {"anthropic", "gguf", "hf", "hf-causal", "http", "openai", "openai-chat", "python"}


class Upper:
    """A toy model: the label is the text upper-cased."""

    batch_size = 4

    def __init__(self, suffix: str, task):
        self.suffix, self.task = suffix, task
        self.fingerprint = f"upper:{suffix}"

    def predict(self, texts):
        return [Outcome(t.upper() + self.suffix) for t in texts]


def _load_upper(rest, *, task=None, **_):
    return Upper(rest, task)


UPPER = Backend(prefix="upper-test", loader=_load_upper, usage="upper-test:SUFFIX", summary="texts upper-cased",
                example="upper-test:!", env=("HINTER_UPPER_TEST_KEY",), extra="upper")


@pytest.fixture
def upper_backend():
    register_backend(UPPER)
    yield UPPER
    BACKENDS.unregister(UPPER.prefix)


def test_every_builtin_backend_is_registered_with_its_facts():
    assert BUILTIN_BACKENDS <= set(BACKENDS.names())
    assert find_backend("openai").is_api and find_backend("openai-chat").is_api and find_backend("anthropic").is_api
    assert find_backend("http").is_api and find_backend("http").env == ("HINTER_HTTP_AUTHORIZATION",)
    assert not any(find_backend(p).is_api for p in ("gguf", "hf", "hf-causal", "python"))
    assert find_backend("openai").env == ("HINTER_OPENAI_API_KEY", "OPENAI_API_KEY")
    assert find_backend("anthropic").env == ("HINTER_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")
    assert {p: find_backend(p).extra for p in BUILTIN_BACKENDS} == {
        "anthropic": None, "gguf": "gguf", "hf": "hf", "hf-causal": "hf", "http": None, "openai": "openai",
        "openai-chat": "openai", "python": None}
    assert ModelSpec("openai:gpt@http://x/v1").is_api and not ModelSpec("gguf:default").is_api
    assert not ModelSpec("nothing:here").is_api  # unknown: loading it says so


def test_help_text_lists_every_backend_with_an_example():
    import hinter.models
    text = help_text()
    assert hinter.models.SPEC_HELP == text  # the old constant, now generated
    assert len(help_lines()) == len(BACKENDS.names())
    for backend in map(find_backend, BACKENDS.names()):
        assert backend.usage in text and f"e.g. {backend.example}" in text
    assert "OPENAI_API_KEY" in text  # the environment a backend reads is part of its line


def test_a_registered_backend_is_usable_by_load_model_and_listed(upper_backend):
    model = load_model("upper-test:!")
    assert model.fingerprint == "upper:!" and model.predict(["a b"])[0].value == "A B!"
    assert ModelSpec("upper-test:?", task="ecthr").load().task == "ecthr"
    assert "upper-test:SUFFIX (texts upper-cased, reads HINTER_UPPER_TEST_KEY, e.g. upper-test:!)" in help_text()


def test_a_name_registered_twice_is_refused(upper_backend):
    with pytest.raises(InputError) as e:
        register_backend(UPPER)
    assert "'upper-test'" in e.value.problem and "registered" in e.value.problem
    with pytest.raises(InputError):  # a built-in prefix cannot be taken over either
        register_backend(Backend(prefix="gguf", loader=_load_upper, usage="gguf:X", summary="another gguf"))
    assert find_backend("gguf").extra == "gguf"


def test_an_unknown_prefix_lists_the_registered_backends():
    with pytest.raises(InputError) as e:
        load_model("llamafile:model.bin")
    assert "unknown model kind 'llamafile'" in e.value.problem and e.value.where == "--model"
    assert "Registered backends: anthropic, gguf, hf, hf-causal, http, openai, openai-chat, python" in e.value.fix
    with pytest.raises(InputError) as e:
        load_model("gguf")
    assert "cannot read the model spec" in e.value.problem and "gguf:PATH" in e.value.fix


def test_a_missing_optional_dependency_names_the_extra_to_install():
    def needs_a_package(rest, **_):
        import hinter_no_such_package  # noqa: F401
    register_backend(Backend(prefix="needs-test", loader=needs_a_package, usage="needs-test:X", summary="s",
                             extra="needs"))
    try:
        with pytest.raises(InputError) as e:
            load_model("needs-test:x")
        assert "hinter_no_such_package" in e.value.problem and e.value.fix == "pip install 'hinter[needs]'."
        assert e.value.where == "--model needs-test:x"
    finally:
        BACKENDS.unregister("needs-test")


def _entry_points(monkeypatch, *specs):
    """Pretend an installed package declares these (name, group, value) entry points."""
    import catalogue
    eps = importlib.metadata.EntryPoints(
        importlib.metadata.EntryPoint(name=n, group=g, value=v) for n, g, v in specs)
    monkeypatch.setattr(catalogue, "AVAILABLE_ENTRY_POINTS", eps)


def test_a_package_adds_a_backend_through_its_entry_point(monkeypatch):
    from hinter.models.registry import _check_backend
    from hinter.registry import Registry
    _entry_points(monkeypatch, ("upper-test", "hinter_plugin_backends", "test_registry:UPPER"))
    plugins = Registry("plugin_backends", "model backend", "--model", check=_check_backend)
    assert plugins.names() == ["upper-test"] and plugins.get("upper-test") is UPPER
    _entry_points(monkeypatch, ("gguf", "hinter_plugin_clash", "test_registry:UPPER"))
    clash = Registry("plugin_clash", "model backend", "--model", check=_check_backend)
    with pytest.raises(InputError) as e:  # an entry point named otherwise than its record's prefix
        clash.names()
    assert "prefix 'gguf'" in e.value.problem


def test_a_plugin_cannot_take_a_builtin_name(monkeypatch):
    from hinter.registry import Registry
    _entry_points(monkeypatch, ("local", "hinter_plugin_executors", "test_registry:_load_upper"))
    executors = Registry("plugin_executors", "executor", "--executor",
                         builtins=lambda: executors.register("local", object()))
    with pytest.raises(InputError) as e:
        executors.names()
    assert "two executors are registered as 'local'" in e.value.problem
    assert "entry point test_registry:_load_upper" in e.value.problem


def test_a_small_campaign_is_parsed_in_one_process_unless_workers_are_asked():
    import os
    from hinter.executor import LocalExecutor
    from hinter.validity.parsers import SMALL_CAMPAIGN_CHARACTERS, default_processes
    many = max(1, min(os.cpu_count() or 1, 4))
    assert default_processes(SMALL_CAMPAIGN_CHARACTERS - 1) == 1
    assert default_processes(SMALL_CAMPAIGN_CHARACTERS) == default_processes() == many
    small = LocalExecutor()
    small.start(lambda texts: ["x"] * len(texts), characters=300)  # the executor's own spaCy, in this process
    try:
        assert small.describe() == "this machine, 1 spaCy process"
    finally:
        small.close()
    asked = LocalExecutor(2)
    asked.start(lambda texts: ["x"] * len(texts), characters=300)  # --workers 2: kept, however small
    try:
        assert asked.describe() == "this machine, 2 spaCy processes"
    finally:
        asked.close()


def test_executors_by_name_describe_where_they_run(parser):
    from hinter.executor import EXECUTORS, LocalExecutor, make_executor
    assert {"local", "ray"} <= set(EXECUTORS.names())
    with pytest.raises(InputError) as e:
        make_executor("spark")
    assert "unknown executor 'spark'" in e.value.problem and "local, ray" in e.value.fix
    assert make_executor("local", workers=3).describe() == "this machine, 3 spaCy processes"
    local = LocalExecutor()
    local.start(lambda texts: ["x"] * len(texts), parser)
    assert local.describe() == "this machine, 1 spaCy process"
    made = []
    EXECUTORS.register("recording-test", lambda **options: made.append(options) or LocalExecutor(options["workers"]))
    try:
        assert isinstance(make_executor("recording-test", workers=2), LocalExecutor) and made[0]["workers"] == 2
    finally:
        EXECUTORS.unregister("recording-test")


def test_ray_driver_and_workers_exchange_dataclasses():
    pytest.importorskip("ray")
    import pickle

    from hinter.errors import ModelError
    from hinter.executor.ray_cluster import BatchResult, RayExecutor, RemoteModel, WorkerError
    from hinter.models import BatchSpreadingModel
    error = pickle.loads(pickle.dumps(WorkerError.of(InputError("no such file", where="--model hf:x", fix="Fix it."))))
    with pytest.raises(InputError) as e:
        error.raise_()
    assert e.value.problem == "no such file (on a Ray worker)" and e.value.where == "--model hf:x"
    with pytest.raises(ModelError) as e:
        WorkerError.of(ModelError("refused", fix="Check the key.")).raise_()
    assert e.value.fatal and e.value.fix == "Check the key."
    assert BatchResult(outcomes=[Outcome("a")]).value == [Outcome("a")] and BatchResult(error="boom").value == "boom"
    assert isinstance(RemoteModel(RayExecutor(), "f", 4), BatchSpreadingModel)
    assert RayExecutor(address="10.0.0.5:6379").describe() == "Ray at 10.0.0.5:6379, not started"


def test_the_papers_tasks_are_registered_yaml_files_read_like_a_users(tmp_path):
    from importlib import resources

    from hinter.models.tasks import TASK_REGISTRY, get_task, load_task_file
    assert {"imdb", "ecthr", "eurlex", "ledgar", "scotus"} <= set(TASK_REGISTRY.names())
    for name in ("imdb", "ecthr", "eurlex", "ledgar", "scotus"):
        shipped = resources.files("hinter") / "data" / "tasks" / f"{name}.yaml"
        (tmp_path / f"mine-{name}.yaml").write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
        assert get_task(str(tmp_path / f"mine-{name}.yaml")) == get_task(name)  # every field equal
        mine = load_task_file(tmp_path / f"mine-{name}.yaml")
        assert mine.completion_prompt("x") == get_task(name).completion_prompt("x")


def test_tasks_registered_by_call_and_unknown_names(tmp_path):
    from hinter.models.tasks import IMDB, TASK_REGISTRY, Task, get_task
    toxic = Task(name="toxic-test", labels=("Toxic", "Fine"), system_prompt="s", question="q", examples=())
    TASK_REGISTRY.register("toxic-test", lambda: toxic)
    try:
        assert get_task("toxic-test") is toxic and ModelSpec("python:x:y", task="toxic-test").task == "toxic-test"
        with pytest.raises(InputError):
            TASK_REGISTRY.register("imdb", lambda: toxic)
        assert get_task("imdb") == IMDB
    finally:
        TASK_REGISTRY.unregister("toxic-test")
    with pytest.raises(InputError) as e:
        get_task("toxic-test")
    assert e.value.where == "--task" and "Registered tasks: avis, ecthr, eurlex, imdb, ledgar, reference-letter, scotus" in e.value.fix
