"""The tests' one way to run the hinter command line: in a child process as a user's shell would (`hinter`,
`start`, `serve`), or in this process through the same entry point (`hinter_here`) where a test makes many calls
and the process itself adds nothing.

A child process gets PYTHONPATH = the folders asked for (by default tests/, where the planted models live), then
this checkout's src/: it runs the code under test, whatever hinter the virtualenv has installed."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"


def environment(pythonpath=(TESTS,), env: dict | None = None) -> dict:
    """os.environ for a hinter child process: PYTHONPATH = `pythonpath`, then src/; `env` set on top (a value of
    None removes that variable)."""
    out = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, pythonpath), str(SRC)])}
    for k, v in (env or {}).items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = str(v)
    return out


def command(*args) -> list[str]:
    return [sys.executable, "-m", "hinter.cli", *map(str, args)]


def hinter(*args, cwd=None, pythonpath=(TESTS,), env: dict | None = None, timeout: float = 600,
           input: str | None = None) -> subprocess.CompletedProcess:
    """`hinter ARGS...` in a child process, to its end: its exit code, stdout and stderr (text)."""
    return subprocess.run(command(*args), capture_output=True, text=True, cwd=cwd, input=input,
                          env=environment(pythonpath, env), timeout=timeout)


def start(*args, cwd=None, pythonpath=(TESTS,), env: dict | None = None, text: bool = True,
          stdout=subprocess.PIPE, stderr=subprocess.PIPE) -> subprocess.Popen:
    """`hinter ARGS...` started in a child process of its own process group (so that a test can signal the whole
    group, as a terminal's Ctrl-C does), not waited for."""
    return subprocess.Popen(command(*args), cwd=cwd, env=environment(pythonpath, env), stdout=stdout,
                            stderr=stderr, text=text, start_new_session=True)


def serve(run_dir, pythonpath=(TESTS,)) -> tuple[subprocess.Popen, str]:
    """`hinter serve RUN_DIR` on a free loopback port, with the tests' planted models importable: (process, URL
    with the token), once the server says it listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen(command("serve", run_dir, "--port", port), stderr=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, text=True, env=environment(pythonpath))
    lines = []
    for line in p.stderr:
        lines.append(line)
        m = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        if m:
            return p, m.group(1)
    raise AssertionError("hinter serve did not start: " + "".join(lines))


def hinter_here(capsys, *args) -> tuple[int, str]:
    """The CLI in this process, through its real entry point (errors, exit codes): (exit code, stderr). Cheaper
    than a process per call where a test makes many (the fuzz)."""
    from hinter.cli.main import main
    argv, sys.argv = sys.argv, ["hinter", *map(str, args)]
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)  # main() installs its own
    capsys.readouterr()
    try:
        main()
        code = 0
    except SystemExit as e:
        code = e.code or 0
    finally:
        sys.argv = argv
        signal.signal(signal.SIGINT, handlers[0])
        signal.signal(signal.SIGTERM, handlers[1])
    return code, capsys.readouterr().err
