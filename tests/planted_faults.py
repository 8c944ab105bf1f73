"""Models that fail as models do in the field (issue 30), importable as python:planted_faults:NAME. State that must
outlive a worker process or a run (calls made, the outage) is kept in files named by environment variables."""
import hashlib
import os
import sys
import time

from planted import intersectional


def _log(texts):
    """Every text asked, one line each (HINTER_FAULTS_LOG): which texts a run asked, and how often."""
    log = os.environ.get("HINTER_FAULTS_LOG")
    if log:
        with open(log, "a") as f:
            f.writelines(hashlib.sha256(t.encode()).hexdigest() + "\n" for t in texts)


def maybe(texts):
    """Answers "maybe" (not a label of the accept/reject task) whenever a woman is named, else "accept"."""
    return ["maybe" if "woman" in t else "accept" for t in texts]


def bad_text(t):
    return int(hashlib.sha256(t.encode()).hexdigest(), 16) % 10 == 0


def one_in_ten(texts):
    """Raises on the whole call when it holds one of the texts it cannot read (about one in ten, by hash), as a
    real batch call does; else the intersectional model."""
    _log(texts)
    bad = [t for t in texts if bad_text(t)]
    if bad and os.environ.get("HINTER_FAULTS_BAD"):  # the texts it fails on, logged as _log does
        with open(os.environ["HINTER_FAULTS_BAD"], "a") as f:
            f.writelines(hashlib.sha256(t.encode()).hexdigest() + "\n" for t in bad)
    if bad:
        raise ValueError(f"cannot read a text of {len(bad[0])} characters")
    return intersectional(texts)


def outage(texts):
    """A service down for its first HINTER_FAULTS_DOWN calls (ConnectionError), then back (calls counted in the
    file HINTER_FAULTS_STATE); the texts it answered are logged."""
    state = os.environ["HINTER_FAULTS_STATE"]
    calls = int(open(state).read()) if os.path.exists(state) else 0
    with open(state, "w") as f:
        f.write(str(calls + 1))
    if calls < int(os.environ.get("HINTER_FAULTS_DOWN", "3")):
        raise ConnectionError("model server unreachable")
    _log(texts)
    return intersectional(texts)


def exits_0(texts):
    if any("woman" in t for t in texts):
        sys.exit(0)
    return intersectional(texts)


def exits_3(texts):
    if any("woman" in t for t in texts):
        sys.exit(3)
    return intersectional(texts)


def dies(texts):
    """The process ends at once, no cleanup (os._exit), as a crash in native code does."""
    if any("woman" in t for t in texts):
        os._exit(1)
    return intersectional(texts)


def hangs(texts):
    """Never answers when a woman is named (a stuck request): only a timeout ends the call."""
    if any("woman" in t for t in texts):
        time.sleep(3600)
    return intersectional(texts)


def prints(texts):
    """Writes to stdout while it answers: model code's prints must not disturb hinter."""
    print("loading weights... done", flush=True)
    return intersectional(texts)


def misbehaves(texts):
    """Hangs on a text naming a black woman, calls sys.exit(0) on one naming a woman, sys.exit(3) on one naming a
    girl; else the intersectional model: every way model code can try to end hinter, in one run."""
    if any("black woman" in t for t in texts):
        time.sleep(3600)
    if any("woman" in t for t in texts):
        sys.exit(0)
    if any("girl" in t for t in texts):
        sys.exit(3)
    return intersectional(texts)
