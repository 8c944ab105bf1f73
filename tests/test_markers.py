"""The test suite's own shape: conftest.py's `process` mark finds the tests that start a process, serve or send a
signal (followed through helpers), and every test of a real fault that docs/testing.md lists still exists, in the
file it names, so that none is lost when tests move."""
import ast
import re
from pathlib import Path

import conftest

TESTS = Path(__file__).resolve().parent
DOC = TESTS.parent / "docs" / "testing.md"


def test_the_process_mark_follows_the_code_and_its_helpers():
    # signals sent in the test itself
    assert conftest._process_level(TESTS / "test_interrupt.py", "test_ctrl_c_and_sigterm_stop_cleanly_and_the_run_resumes")
    # the CLI started through a helper of tests/campaign.py (write_kill_campaign writes files; kill_and_resume kills)
    assert conftest._process_level(TESTS / "test_resume.py", "test_killed_runs_resume_to_the_uninterrupted_result")
    # a browser through tests/browser.py
    assert conftest._process_level(TESTS / "test_serve.py", "test_serve_in_chromium")
    # pure statistics: no process
    assert not conftest._process_level(TESTS / "test_findings.py", "test_benjamini_hochberg_hand_computed")


def _listed_fault_tests() -> list[tuple[str, str]]:
    rows = re.findall(r"^\|[^|]+\| `(test_\w+)` \| (tests/test_\w+\.py) \|$", DOC.read_text(), re.MULTILINE)
    assert len(rows) >= 30, "docs/testing.md's table of fault tests is not where this test reads it"
    return rows


def test_every_fault_test_in_the_docs_exists_in_its_file():
    missing = []
    for name, file in _listed_fault_tests():
        path = TESTS.parent / file
        names = {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)} \
            if path.exists() else set()
        if name not in names:
            missing.append(f"{file}::{name}")
    assert missing == [], "fault tests listed in docs/testing.md but gone (move them back, or update the list)"


def test_every_test_file_is_in_the_table_of_components():
    """docs/testing.md's table by component names every test file once, so that a newcomer finds which file covers
    a module; a file added, renamed or removed updates the table."""
    text = DOC.read_text()
    table = text[text.index("## How the suite is organised"):text.index("## Markers")]
    listed = re.findall(r"\btest_\w+", "".join(line.split("|")[2] for line in table.splitlines()
                                               if line.startswith("|") and line.count("|") >= 3))
    files = sorted(p.stem for p in TESTS.glob("test_*.py"))
    assert sorted(set(files) - set(listed)) == [], "add these files to the table in docs/testing.md"
    assert sorted(set(listed) - set(files)) == [], "the table in docs/testing.md names files that are gone"
    assert len(listed) == len(set(listed)), "a file is listed twice in docs/testing.md's table"


def test_the_cli_is_started_through_tests_cli_py_only():
    """One helper runs the command line (tests/cli.py): no other module-level function, class or fixture of the
    tests builds a `python -m hinter.cli` command of its own."""
    own = []
    for path in sorted(TESTS.glob("*.py")):
        if path.name == "cli.py":
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("test_") and any(
                    isinstance(c, ast.Constant) and c.value == "hinter.cli" for c in ast.walk(node)):
                own.append(f"{path.name}::{node.name}")
    assert own == [], "start the CLI through tests/cli.py (hinter, start, serve, hinter_here)"
