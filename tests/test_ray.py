"""The Ray executor on a real Ray cluster started here: a head node and a second node on 127.0.0.1, one CPU each
(`ray start --block`, stopped at the end). The same campaigns give the same results as the local executor;
a killed driver resumes; an API model's concurrency bound holds across workers."""
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from campaign import answered, assert_nothing_asked_again, kill_and_resume, results, stored_texts, write_kill_campaign
import cli

pytest.importorskip("ray")

RAY = Path(sys.executable).parent / "ray"
# A plain local cluster for every process of these tests, whatever ~/.ray holds: once `ray.init()` has started
# Ray here, it leaves a token in ~/.ray/auth_token, and later clusters then ask for it.
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
FAST = {"HINTER_TEST_FAST": "1"}  # planted:counting without its delay, for the local reference runs never killed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid: int) -> list[int]:
    """A process's children, grandchildren...: Ray starts a node's raylet and workers in sessions of their own."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive_nodes(address: str) -> int:
    code = ("import logging, ray; ray.init(address=%r, log_to_driver=False, logging_level=logging.ERROR); "
            "print(sum(n['Alive'] for n in ray.nodes()))" % address)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, **RAY_ENV})
    return int(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 and r.stdout.strip() else 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(address, calls log, session file). Workers inherit the environment of `ray start`: PYTHONPATH for the
    planted models, and where planted:counting logs its calls."""
    root = tmp_path_factory.mktemp("ray")
    calls, session = root / "calls.log", root / "session"
    session.write_text("0")
    temp = tempfile.mkdtemp(prefix="hr", dir="/tmp")  # short: Ray's socket paths must fit in 107 characters
    port = _free_port()
    address = f"127.0.0.1:{port}"
    # the nodes' workers import the same hinter as the driver (tests/cli.py's PYTHONPATH: tests/, then src/)
    env = cli.environment(env={**RAY_ENV, "HINTER_TEST_CALLS": calls, "HINTER_TEST_SESSION_FILE": session})
    common = ["--num-cpus", "1", "--object-store-memory", str(100 * 2**20), "--block"]
    log = open(root / "ray.log", "w")
    nodes = [subprocess.Popen([str(RAY), "start", "--head", "--port", str(port), "--include-dashboard", "false",
                               "--disable-usage-stats", "--temp-dir", temp, *common], env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)]
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        nodes.append(subprocess.Popen([str(RAY), "start", "--address", address, *common], env=env, stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True))
        while _alive_nodes(address) < 2:
            assert time.time() < deadline, (root / "ray.log").read_text()[-3000:]
            time.sleep(1)
        saved = {k: os.environ.get(k) for k in RAY_ENV}
        os.environ.update(RAY_ENV)  # for the drivers these tests run in this process
        yield address, calls, session
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    finally:
        import ray
        # Ray kills a driver whose cluster goes away under it: this process must not still be one
        assert not ray.is_initialized(), "a test left this process connected to the cluster"
        tree = [pid for p in nodes for pid in [p.pid, *_descendants(p.pid)]]
        for p in reversed(nodes):  # SIGTERM: `ray start --block` stops the processes it started...
            os.killpg(p.pid, signal.SIGTERM)
        try:
            for p in nodes:
                p.wait(timeout=3)
        except subprocess.TimeoutExpired:  # ...but may drain for 30 s first: not worth waiting for here
            for pid in tree:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for p in nodes:
                p.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    return write_kill_campaign(tmp_path_factory.mktemp("campaign"))


def hinter(campaign, out, model, *extra, env=None, popen=False):
    args = ("run", "-d", campaign / "data.jsonl", "-m", model, "-a", "gender,race", "--dictionary",
            campaign / "dic.csv", "-o", out, *extra)
    env = {**RAY_ENV, **(env or {})}
    return cli.start(*args, env=env, text=False) if popen else cli.hinter(*args, env=env)


def test_a_campaign_on_ray_equals_the_local_run(cluster, campaign, tmp_path):
    address = cluster[0]
    local = hinter(campaign, tmp_path / "local", "python:planted:intersectional")
    assert local.returncode == 0, local.stderr
    on_ray = hinter(campaign, tmp_path / "ray", "python:planted:intersectional", "--executor", "ray",
                    "--ray-address", address)
    assert on_ray.returncode == 0, on_ray.stderr
    assert "Ray: 2 workers on 2 node(s), the model on 2 of them" in on_ray.stderr
    assert results(tmp_path / "ray") == results(tmp_path / "local")
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert summary["totals"]["intersectional"]["hidden"] > 0  # the planted hidden bias is found on Ray too


def test_the_embedded_gguf_model_on_ray_gives_the_same_outcomes(cluster, tmp_path):
    """A real model, one copy per worker (each with one thread): the same mutants, verdicts and raw answers."""
    pytest.importorskip("llama_cpp")
    from hinter.datasets import read_dataset
    from hinter.api import run
    from hinter.executor.ray_cluster import RayExecutor

    records = [r for r in read_dataset("imdb", limit=40).records if len(r.text) < 900][:4]
    kwargs = dict(attributes=("gender", "race"), order=2, max_pairs_per_text=2, overwrite=True)
    local = run(records, "gguf:default", out=tmp_path / "local", **kwargs)
    executor = RayExecutor(address=cluster[0])
    on_ray = run(records, "gguf:default", out=tmp_path / "ray", executor=executor, **kwargs)
    assert len(set(executor.nodes)) == 2
    rows = lambda r: [(m.text_id, m.replacements, m.valid, m.outcome, m.raw, m.bias) for m in r.mutants]  # noqa: E731
    assert rows(on_ray) == rows(local) and any(m.valid for m in local.mutants)
    query = "SELECT text_hash, outcome, raw FROM outcomes ORDER BY text_hash"
    assert on_ray.store.db.execute(query).fetchall() == local.store.db.execute(query).fetchall()


def test_a_killed_driver_resumes_on_ray_to_the_local_result(cluster, campaign, tmp_path):
    address, calls, session_file = cluster
    # local, never killed: no delay, and it runs beside the killed sessions
    reference = hinter(campaign, tmp_path / "reference", "python:planted:counting", env=FAST, popen=True)
    out = tmp_path / "killed"
    calls.write_text("")
    rng = random.Random(7)
    ray_args = ("--executor", "ray", "--ray-address", address)

    def start(session, last):
        session_file.write_text(f"{session} fast" if last else str(session))  # read by the workers' planted:counting
        if session == 0:
            return hinter(campaign, out, "python:planted:counting", *ray_args, popen=True)
        return cli.start("resume", out, *ray_args, env=RAY_ENV, text=False)

    def wait_before_kill(p, answered_before):
        deadline = time.time() + 120
        while p.poll() is None and answered(out) <= answered_before and time.time() < deadline:
            time.sleep(0.1)  # this session has answered something: kill it somewhere after that
        time.sleep(rng.uniform(0.0, 0.5))

    # up to 3 kills, each after the session saved an answer (a model batch): the campaign has few batches
    kills, before = kill_and_resume(out, start, 3, wait_before_kill)
    assert kills >= 2, "the run finished before it could be killed: make the campaign longer"
    _, err = reference.communicate(timeout=300)
    assert reference.returncode == 0, err.decode()
    assert results(out) == results(tmp_path / "reference")
    assert_nothing_asked_again(calls, before)  # the log is written by the Ray workers


class CountingServer(BaseHTTPRequestHandler):
    """An OpenAI-compatible completions endpoint that records how many requests it serves at once. (The llama.cpp
    server does not report that, so this small server on loopback stands in for it.)"""

    lock = threading.Lock()
    now = peak = served = 0
    delay = 0.15  # seconds per request: long enough for requests to overlap

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        cls = type(self)
        with cls.lock:
            cls.now += 1
            cls.peak = max(cls.peak, cls.now)
        time.sleep(cls.delay)
        text = body["prompt"].rsplit("Review: ", 1)[1]
        answer = " Negative" if ("woman" in text and "black" in text) else " Positive"
        data = json.dumps({"id": "x", "object": "text_completion", "created": 0, "model": body["model"],
                           "choices": [{"index": 0, "text": answer, "finish_reason": "stop", "logprobs": None}]}).encode()
        with cls.lock:
            cls.now -= 1
            cls.served += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_an_api_models_concurrency_bound_is_global_across_ray_workers(cluster, campaign, tmp_path):
    pytest.importorskip("openai")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), CountingServer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        model = f"openai:test-model@http://127.0.0.1:{httpd.server_address[1]}/v1"
        # the key reaches the workers through the job's environment, never through the command line
        env = {"HINTER_OPENAI_API_KEY": "sk-test"}
        CountingServer.delay = 0  # the local run, for its results only: answered at once
        local = hinter(campaign, tmp_path / "local", model, "--concurrency", "3", env=env)
        assert local.returncode == 0, local.stderr
        CountingServer.peak = CountingServer.served = 0
        CountingServer.delay = 0.2  # long enough for both workers' calls to overlap on a busy 2-core machine
        on_ray = hinter(campaign, tmp_path / "ray", model, "--concurrency", "3", "--executor", "ray",
                        "--ray-address", cluster[0], env=env)
        assert on_ray.returncode == 0, on_ray.stderr
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert CountingServer.served > 50
    # 3 in all, split 2 + 1 over the two workers: both worked at once, and never more than 3 requests
    assert CountingServer.peak == 3
    assert results(tmp_path / "ray") == results(tmp_path / "local")


def test_bad_ray_options_get_a_clear_error(campaign, tmp_path):
    port = _free_port()  # nothing listens there
    r = hinter(campaign, tmp_path / "o", "python:planted:intersectional", "--executor", "ray", "--ray-address",
               f"127.0.0.1:{port}")
    assert r.returncode == 2 and "no Ray cluster answers" in r.stderr and "Traceback" not in r.stderr
    r = hinter(campaign, tmp_path / "o", "python:planted:intersectional", "--executor", "spark")
    assert r.returncode == 2 and "unknown executor 'spark'" in r.stderr
    r = hinter(campaign, tmp_path / "o", "python:planted:intersectional", "--executor", "ray", "--workers", "0")
    assert r.returncode == 2 and "--workers must be at least 1" in r.stderr
    r = hinter(campaign, tmp_path / "o", "python:planted:intersectional", "--workers", "-1")
    assert r.returncode == 2 and "--workers must be at least 1" in r.stderr
    r = hinter(campaign, tmp_path / "o", "openai:m@http://127.0.0.1:9/v1", "--executor", "ray", "--concurrency", "0")
    assert r.returncode == 2 and "--concurrency must be at least 1" in r.stderr


def test_the_concurrency_split_adds_up_to_the_bound():
    from hinter.executor.ray_cluster import _split
    for total in range(1, 20):
        for parts in range(1, total + 1):
            shares = _split(total, parts)
            assert sum(shares) == total and len(shares) == parts and max(shares) - min(shares) <= 1 and min(shares) >= 1


def test_a_lost_worker_stops_the_run_cleanly_and_it_resumes(cluster, tmp_path):
    """A third node joins, its worker dies with it (SIGKILL) once the first batch is stored: the run stops with a
    message, keeps its finished batches, and resumes on the two nodes left to the local executor's result.
    160 texts = 5 batches: the batches still to come give the lost worker slices to validate."""
    address, calls, session_file = cluster
    campaign = write_kill_campaign(tmp_path, texts=160)
    session_file.write_text("lost")
    # local, never killed: no delay, and it runs while the third node starts
    reference = hinter(campaign, tmp_path / "reference", "python:planted:counting", env=FAST, popen=True)
    env = cli.environment(env=RAY_ENV)
    node = subprocess.Popen([str(RAY), "start", "--address", address, "--num-cpus", "1", "--object-store-memory",
                             str(100 * 2**20), "--block"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 90
        while _alive_nodes(address) < 3:
            assert time.time() < deadline, "the third node did not join"
            time.sleep(1)
        out = tmp_path / "lost"
        p = hinter(campaign, out, "python:planted:counting", "--executor", "ray", "--ray-address", address,
                   "--workers", "3", popen=True)
        while not stored_texts(out) and p.poll() is None and time.time() < deadline + 120:
            time.sleep(0.05)
        for pid in [node.pid, *_descendants(node.pid)]:  # the node and its worker die mid-run
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        node.wait()
        _, err = p.communicate(timeout=300)
        assert p.returncode == 2, err.decode()
        assert "Ray worker was lost" in err.decode() and "Traceback" not in err.decode()
        assert 0 < stored_texts(out) < 160  # what was finished is kept
        session_file.write_text("lost fast")  # the resume is not killed: its workers' planted:counting needs no delay
        resumed = cli.hinter("resume", out, "--executor", "ray", "--ray-address", address, "--workers", "2",
                             env=RAY_ENV)
        assert resumed.returncode == 0, resumed.stderr
        _, err = reference.communicate(timeout=300)
        assert reference.returncode == 0, err.decode()
        assert results(out) == results(tmp_path / "reference")
    finally:
        if node.poll() is None:
            os.killpg(node.pid, signal.SIGKILL)
