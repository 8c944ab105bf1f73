import ast
import functools
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"

# The tests' runs (and the hinter processes they start, which inherit this environment) behave as on a plain
# machine whatever the CI sets: no forced terminal (rich then draws its live bar, not the progress lines the tests
# read), and the servers on loopback reached directly, not through a proxy.
for _name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CLICOLOR_FORCE"):
    os.environ.pop(_name, None)
for _name in ("NO_PROXY", "no_proxy"):
    os.environ[_name] = ",".join(filter(None, [os.environ.get(_name), "127.0.0.1", "localhost"]))


@pytest.fixture(scope="session")
def parser():
    from hinter.validity import SpacyParser
    return SpacyParser()


@pytest.fixture(scope="session")
def imdb_texts():
    from hinter.datasets import load_dataset
    return [r.text for r in load_dataset("imdb", limit=40)]


@pytest.fixture(scope="session")
def gemma():
    pytest.importorskip("llama_cpp")
    from hinter.models.gguf import GGUFModel, default_gguf_path
    from hinter.models.tasks import IMDB
    return GGUFModel(default_gguf_path(), IMDB)


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """llama.cpp's OpenAI-compatible server (`python -m llama_cpp.server`) serving the embedded Gemma 3 270M on
    loopback, started once for test_openai_server.py and test_usage.py: its base URL."""
    for module in ("llama_cpp", "openai", "uvicorn", "fastapi", "sse_starlette", "starlette_context",
                   "pydantic_settings"):
        pytest.importorskip(module)
    from hinter.models.gguf import default_gguf_path
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path_factory.mktemp("server") / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(default_gguf_path()),
                             "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_ctx", "2048"],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(url + "/models", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail("llama.cpp's server did not start: " + Path(log.name).read_text()[-2000:])
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


# ---------------------------------------------------------------------------------------------- markers

# `process`: the test crosses a process boundary or holds a server: it starts hinter (or another program) in a
# subprocess, serves on loopback, drives a browser, or sends a signal. `slow`: an in-process test measured to take
# long (SLOW below). `make check` runs neither (`pytest -m "not process and not slow"`); `make test` runs all.
# The process mark is found, not listed: a test is process-level when its code, a fixture it asks for, or a helper it
# calls (a function of its own module or of a helper module beside it, tests/campaign.py, tests/browser.py...,
# followed transitively) names one of PROCESS_NAMES, so a test added or renamed elsewhere is marked without an edit
# here. The names are read from the code (ast), never run.
PROCESS_NAMES = frozenset({
    "subprocess", "Popen", "executable",                        # a child process (sys.executable -m hinter...)
    "kill", "killpg", "send_signal", "SIGINT", "SIGKILL", "SIGTERM", "signal",  # signals
    "chromium_page", "sync_playwright", "chromium",             # a browser
    "ThreadingHTTPServer", "HTTPServer", "serve_forever", "uvicorn",  # a server on loopback
})
# In-process tests measured at 6 s or more (call) on a loaded 2-core machine (load 10: `pytest -m "not process"
# --durations=80`, 15 min in all), as "file::test name" (parametrized cases share their function's name), and the
# fixtures that train a classifier (about 130 s there): every test asking for one is slow. Re-measure when
# `make check` grows.
SLOW = frozenset({
    "test_adaptive.py::test_adaptive_finds_the_hidden_intersectional_bias_in_90_percent_of_seeds",
    "test_adaptive.py::test_the_e_process_crosses_1_over_a_rarely_under_the_null",
    "test_algorithms.py::test_matches_paper_pseudocode",
    "test_audit.py::test_hinter_audit_refuses_a_changed_python_model_until_overwrite",
    "test_audit.py::test_the_audit_asks_through_the_campaign_with_usage_and_budget",
    "test_model_faults.py::test_a_failing_text_fails_alone",
    "test_findings.py::test_additive_scored_model_is_not_population_hidden",
    "test_findings.py::test_calibration",
    "test_findings.py::test_calibration_all_pairs",
    "test_findings.py::test_effect_interval_coverage_at_small_n",
    "test_findings.py::test_interaction_population_hidden_only_where_planted",
    "test_findings.py::test_noise_with_repeats",
    "test_findings.py::test_power",
    "test_french.py::test_embedded_model_answers_the_french_task",
    "test_generative.py::test_random_wording_is_found_at_no_more_than_the_nominal_rate",
    "test_generative_backends.py::test_embedded_gguf_writes_a_short_answer",
    "test_generative_backends.py::test_hf_causal_generates_a_batch",
    "test_generative_backends.py::test_python_function_returns_one_string_per_text",
    "test_gguf.py::test_a_cut_review_never_claims_more_than_was_read",
    "test_gguf.py::test_a_mutant_right_after_its_original_equals_the_mutant_alone",
    "test_gguf.py::test_a_text_longer_than_the_context_says_what_was_read",
    "test_gguf.py::test_classifies_clear_reviews",
    "test_gguf.py::test_deterministic_and_independent_of_order",
    "test_gguf.py::test_options_and_fingerprints",
    "test_hf.py::test_campaign_through_the_cli",
    "test_openai_server.py::test_in_process_generation_stops_at_the_end_of_the_answer_line",
    "test_splice.py::test_bundled_campaigns_mutants",
    "test_validity.py::test_engine_equals_reference_on_real_texts",
})
SLOW_FIXTURES = frozenset({"imdb_classifier", "ecthr_classifier"})
TESTS = Path(__file__).resolve().parent


def _names(node) -> set[str]:
    """Every name and attribute a piece of code mentions (`subprocess.run` gives subprocess and run)."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.arg):
            out.add(n.arg)  # a fixture asked for by parameter name
    return out


@functools.lru_cache(maxsize=None)
def _module_defs(path: Path) -> tuple[dict[str, set[str]], dict[str, tuple[Path, str]]]:
    """A module's top-level functions and classes with the names each mentions, and the names it imports from the
    helper modules beside it (name -> (their file, their name there))."""
    defs, imported = {}, {}
    try:
        tree = ast.parse(path.read_text(), str(path))
    except (OSError, SyntaxError, ValueError):  # pytest reports the file's own error; nothing to mark here
        return defs, imported
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[node.name] = _names(node) - {node.name}
        elif isinstance(node, ast.ImportFrom) and node.module and (path.parent / f"{node.module}.py").exists():
            for a in node.names:
                imported[a.asname or a.name] = (path.parent / f"{node.module}.py", a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                # import planted: planted.foo is looked up there (conftest is pytest's, read for fixtures only)
                if a.name != "conftest" and (path.parent / f"{a.name}.py").exists():
                    imported[a.asname or a.name] = (path.parent / f"{a.name}.py", "*")
    return defs, imported


@functools.lru_cache(maxsize=None)
def _process_level(path: Path, name: str) -> bool:
    """Whether the top-level function or class `name` of `path` reaches PROCESS_NAMES (itself, or through the
    functions, classes and helper-module names it mentions)."""
    seen: set[tuple[Path, str]] = set()
    todo = [(path, name)]
    while todo:
        where, what = todo.pop()
        if (where, what) in seen:
            continue
        seen.add((where, what))
        defs, imported = _module_defs(where)
        if what == "*":  # a whole helper module used through its attributes: any of its functions
            mentioned = set().union(*defs.values()) if defs else set()
            if mentioned & PROCESS_NAMES:
                return True
            continue
        mentioned = defs.get(what, set())
        if mentioned & PROCESS_NAMES:
            return True
        for n in mentioned:
            if n in defs:
                todo.append((where, n))
            elif n in imported:
                todo.append(imported[n])
    return False


def _is_process_level(item) -> bool:
    path = Path(str(item.path))
    name = getattr(item, "originalname", None) or item.name
    cls = getattr(item, "cls", None)
    if _process_level(path, cls.__name__ if cls is not None else name):
        return True
    # a fixture asked for by name: one of the module's own functions, or of this conftest
    conftest = Path(__file__).resolve()
    for fixture in getattr(item, "fixturenames", ()):
        if fixture in PROCESS_NAMES:
            return True
        for where in (path, conftest):
            if fixture in _module_defs(where)[0] and _process_level(where, fixture):
                return True
    return False


# ------------------------------------------------------------------------------------------ parallel runs

# `make test` and `make check` run on two workers (pytest-xdist: `-n 2 --dist loadfile`). Every test of a file runs
# on the same worker, so its module fixtures (a campaign run once, a classifier trained once) run once; the files
# that share conftest's session fixture `server` (the llama.cpp server) form one unit, so it starts once
# (SHARED_UNITS, read by the scheduler below: xdist's own `loadgroup` marks do not reach it under pytest 9). Files are
# handed out heaviest first (HEAVY: measured), so that no worker is left alone with a long file at the end.
SHARED_UNITS = {"test_openai_server.py": "llama.cpp server", "test_usage.py": "llama.cpp server"}
# The files that took longest (all their tests together, `--durations=0` summed by file on a fresh clone, 2 quiet
# cores, 2026-11-29), longest first: re-measure when a file grows. A file not listed runs after these, in its order.
HEAVY = ("test_openai_server.py", "test_usage.py", "test_ray.py", "test_paths_agree.py", "test_adaptive.py",
         "test_api_faults.py", "test_generative_runs.py", "test_hf.py", "test_findings.py", "test_resume.py",
         "test_interrupt.py", "test_repeats.py", "test_splice.py", "test_fuzz.py", "test_cli.py",
         "test_http_backend.py", "test_findings_run.py", "test_audit.py", "test_report_prose.py",
         "test_model_faults.py", "test_exit_codes.py", "test_compare.py", "test_progress.py")


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile`, with the files of SHARED_UNITS sent to one worker together."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesAndSharedUnits(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return SHARED_UNITS.get(Path(file).name, file)

    return FilesAndSharedUnits(config, log)


def pytest_configure(config):
    # The embedded Gemma is assembled into ~/.cache/hinter on first use, and two workers (or the hinter processes
    # they start) assembling it at once could read each other's half-written file: done once here, before any
    # worker starts.
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        try:
            from hinter.models.gguf import default_gguf_path
            default_gguf_path()
        except Exception:  # not installed: the tests that need it skip or say so themselves
            pass


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _is_process_level(item):
            item.add_marker(pytest.mark.process)
        if f"{Path(str(item.path)).name}::{getattr(item, 'originalname', None) or item.name}" in SLOW \
                or SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a worker's order is the order the scheduler hands files out
        rank = {name: i for i, name in enumerate(HEAVY)}
        items.sort(key=lambda item: rank.get(Path(str(item.path)).name, len(HEAVY)))  # stable: files keep their order
