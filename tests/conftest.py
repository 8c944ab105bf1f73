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
    from hinter.tasks import IMDB
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
                             "--host", "127.0.0.1", "--port", str(port), "--n_threads", "2", "--n_ctx", "2048"],
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
