"""Ctrl-C and SIGTERM always work: a real `hinter run` (spaCy in worker processes, a slow planted model) gets
SIGINT for its whole process group, as a terminal's Ctrl-C sends it, at random points of the validity and the
model stages, 8 times on one run folder, then SIGTERM a few times. Each time it must stop within seconds
with exit 130 and the resume message, print no worker traceback and leave no process behind; the same
command then completes, and no text answered before a session started is asked again."""
import json
import os
import random
import re
import signal
import statistics
import subprocess
import threading
import time
from pathlib import Path

from campaign import answered, assert_nothing_asked_again, write_kill_campaign
from hinter.pipeline.engine import DETERMINISM_PROBES
import cli

RESUME_MESSAGE = "Interrupted. Every finished batch is saved"
# 64 texts, 2 batches of 32, about 440 model calls at 0.02 s each: a batch's model work sleeps some 4 s on any
# machine, and every signal comes within a second of the stage it aims at, so no interrupted session stores a
# batch (each stops inside the first batch left) and the last session runs both.
TEXTS = 64
SIGINTS = 8  # 4 aimed at each stage (a Ctrl-C aimed at validity may land in the model stage)


class Session:
    """One `hinter run` in its own process group; stderr read as it comes, each line with its arrival time."""

    def __init__(self, root: Path, out: Path, session: int):
        self.session, self.calls, self.out = session, root / "calls.log", out
        self.p = cli.start("run", "-d", root / "data.jsonl", "-m", "python:planted:counting", "-a", "gender,race",
                           "--dictionary", root / "dic.csv", "-o", out, text=False,
                           env={"HINTER_TEST_CALLS": root / "calls.log", "HINTER_TEST_SESSION": session})
        self.lines: list[tuple[float, str]] = []
        self.stdout = ""
        self._readers = [threading.Thread(target=self._read_stderr, daemon=True),
                         threading.Thread(target=self._read_stdout, daemon=True)]
        for t in self._readers:
            t.start()

    def _read_stderr(self):
        for raw in self.p.stderr:
            self.lines.append((time.monotonic(), raw.decode("utf-8", "replace")))

    def _read_stdout(self):
        self.stdout = self.p.stdout.read().decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return "".join(line for _, line in self.lines)

    def asked(self) -> int:
        """Texts this session has asked the model about so far."""
        if not self.calls.exists():
            return 0
        tag = f"{self.session}\t"
        return sum(line.startswith(tag) for line in self.calls.read_text().splitlines())

    def wait_until(self, condition, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.p.poll() is None, f"the run ended before it could be interrupted:\n{self.stderr}"
            assert time.monotonic() < deadline, f"nothing happened in {timeout} s:\n{self.stderr}"
            time.sleep(0.01)

    def finish(self, timeout: float) -> int:
        code = self.p.wait(timeout=timeout)
        for t in self._readers:
            t.join(timeout=10)
        return code


def group_gone(pgid: int, timeout: float = 5) -> bool:
    """True once no process of the group is left (the spaCy workers stopped with their parent)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def interrupt(s: Session, sig: int, whole_group: bool) -> float:
    """Send `sig`, check the clean stop; returns the seconds from the signal to the process's exit."""
    sent = time.monotonic()
    (os.killpg if whole_group else os.kill)(s.p.pid, sig)
    try:
        code = s.p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(s.p.pid, signal.SIGKILL)
        s.finish(30)
        raise AssertionError(f"{signal.Signals(sig).name} {'to the group ' if whole_group else ''}did not stop the "
                             f"run within 10 s:\n{s.stderr}")
    seconds = time.monotonic() - sent
    s.finish(10)
    err = s.stderr
    assert code == 130, f"exit {code} after {signal.Signals(sig).name}:\n{err}"
    assert RESUME_MESSAGE in err and f"hinter resume {s.out}`" in " ".join(err.split()), err  # its real folder
    # a worker's traceback starts "Process NAME:" (multiprocessing's own report), the parent's "Traceback"
    assert "Traceback" not in err and not re.search(r"^Process [\w-]+:", err, re.MULTILINE), err
    assert group_gone(s.p.pid), f"processes of the run were left behind after {signal.Signals(sig).name}"
    return seconds


def test_ctrl_c_and_sigterm_stop_cleanly_and_the_run_resumes(tmp_path):
    root = write_kill_campaign(tmp_path, texts=TEXTS)
    out = tmp_path / "run"
    rng = random.Random(12)
    before: dict[int, set] = {}
    delays: list[float] = []
    stages: dict[str, int] = {"validity": 0, "model": 0}
    # 8 Ctrl-Cs, alternately aimed at the validity and the model stage; then SIGTERM to the group (as
    # `kill -TERM -PGID` or a container stop sends it) and to the main process alone (`kill PID`). Each session
    # starts hinter and its parser workers (some 4 s): 12 sessions keep the test under a minute.
    plan = [(signal.SIGINT, True, "validity" if i % 2 else "model") for i in range(SIGINTS)]
    plan += [(signal.SIGTERM, True, "validity"), (signal.SIGTERM, True, "model"),
             (signal.SIGTERM, False, "validity"), (signal.SIGTERM, False, "model")]
    for session, (sig, whole_group, aim) in enumerate(plan):
        before[session] = answered(out)
        s = Session(root, out, session)
        if aim == "validity":
            # the parser is up once the executor is named: the first batch left is being validated (some 0.3 to
            # 0.7 s here; aimed early, so that a faster machine lands there too)
            s.wait_until(lambda: "Running on" in s.stderr)
            time.sleep(rng.uniform(0.0, 0.1))
        else:
            # the first session outlives the run's determinism probe (its first call, DETERMINISM_PROBES texts:
            # 0.64 s), so that it is stored: otherwise each later session asks it again at once, and a Ctrl-C
            # aimed at validity lands in that call, by a margin of a few hundredths of a second
            s.wait_until(lambda: s.asked() > (DETERMINISM_PROBES if session == 0 else 0))
            time.sleep(rng.uniform(0.0, 1.0))
        landed = "model" if s.asked() else "validity"
        delays.append(interrupt(s, sig, whole_group))
        stages[landed] += 1 if sig == signal.SIGINT else 0
    before[len(plan)] = answered(out)
    last = Session(root, out, len(plan))
    assert last.finish(timeout=300) == 0, last.stderr
    assert json.loads((out / "summary.json").read_text())["texts"] == TEXTS
    assert_nothing_asked_again(root / "calls.log", before)
    assert stages["validity"] >= 2 and stages["model"] >= 2, stages
    for name, d in (("SIGINT to the group", delays[:SIGINTS]), ("SIGTERM", delays[SIGINTS:])):
        print(f"\n{name}: signal to exit max {max(d):.2f} s, median {statistics.median(d):.2f} s over {len(d)}")
    print(f"Ctrl-C landed in {stages}")


def test_a_parser_worker_dying_mid_task_is_an_error_not_a_hang():
    """A spaCy worker killed from outside while it works (the OOM killer, a signal to it alone) stops the run
    with an error within seconds: multiprocessing.Pool waited forever for the lost task's answer."""
    from hinter.errors import ModelError
    from hinter.validity import SpacyParser

    parser = SpacyParser(n_process=2)
    procs = list(parser._workers.procs)
    try:
        assert len(parser.tag(["A man came home.", "The film was long."])) == 2  # both workers loaded
        sentences = [f"A white man came home on day {i} and saw {7 * i} black cats." for i in range(12000)]
        killer = threading.Timer(0.5, os.kill, (procs[0].pid, signal.SIGKILL))  # some 5 s of tagging: mid-task
        killer.start()
        raised: list[BaseException] = []

        def tag():
            try:
                parser.tag(sentences)
            except BaseException as e:
                raised.append(e)

        asking = threading.Thread(target=tag, daemon=True)  # a hang fails the test instead of blocking it
        asking.start()
        asking.join(timeout=10.5)
        assert not asking.is_alive(), "the parser waited for a dead worker"
        assert len(raised) == 1 and isinstance(raised[0], ModelError), raised
        assert "spaCy worker process stopped" in raised[0].message
    finally:
        parser.close()
    assert not any(p.is_alive() for p in procs)
