"""Stage 4: the model under test, behind one interface (texts in, outcomes out, in batches)."""
from __future__ import annotations

import logging
import math
import random
import numbers
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from itertools import islice
from typing import Callable, Iterable, Iterator, Protocol, Sequence, TypeVar, runtime_checkable

from hinter.errors import ModelError
from hinter.records import Outcome, text_key


OUTCOME_KEYS = ("label", "scores", "seen", "raw")


def _label(value: object, raw_text: str) -> Outcome:
    if value is None:
        return Outcome(None, raw_text)
    if isinstance(value, str):
        return Outcome(value.strip() or None, raw_text)
    if isinstance(value, (bool, int)):
        return Outcome(str(int(value)) if isinstance(value, bool) else str(value), raw_text)
    if isinstance(value, (list, tuple, set, frozenset)):
        return Outcome(frozenset(str(v) for v in value), raw_text)
    return Outcome(None, f"unsupported outcome type {type(value).__name__}: {raw_text}")


def normalise(value: object, raw: str | None = None) -> Outcome:
    """Turn what a user's function returns into an Outcome: str, bool/int, a collection of labels, None, an Outcome,
    or a dict {"label": one of those, "scores": {label: float}, "seen": int, "raw": str} (all keys but "label"
    optional). Anything else, or a dict with other keys or scores that are not numbers, is unparseable, its raw
    answer saying why."""
    if isinstance(value, Outcome):
        return value
    raw_text = raw if raw is not None else repr(value)
    if not isinstance(value, dict):
        return _label(value, raw_text)
    unknown = sorted(map(str, set(value) - set(OUTCOME_KEYS)))
    if "label" not in value or unknown:
        why = f"unknown keys {', '.join(unknown)}" if unknown else "no 'label' key"
        return Outcome(None, f"unsupported outcome dict ({why}; keys: {', '.join(OUTCOME_KEYS)}): {raw_text}")
    raw_text = str(value["raw"]) if value.get("raw") is not None else raw_text
    base = _label(value["label"], raw_text)
    scores, seen = value.get("scores"), value.get("seen")
    try:
        if scores is not None:
            if not isinstance(scores, dict) or any(isinstance(s, bool) or not isinstance(s, numbers.Real)
                                                   for s in scores.values()):
                raise ValueError("'scores' must map labels to numbers")
        return Outcome(base.value, base.raw, scores=scores, seen=seen)
    except (TypeError, ValueError, OverflowError) as e:
        return Outcome(None, f"unsupported outcome dict ({e}): {raw_text}")


RAW_KEPT = 2000  # characters of a raw answer kept (stored, shown) where it is not the answer itself
SCORES_KEPT = 100  # scores kept of an answer that scores more labels: the highest ones, and the answer's own
_said_scores_cut: list[int] = []  # the cut of scores is said once a process


def at_boundary(outcome: Outcome) -> Outcome:
    """An outcome as the run may keep it: scores that are not finite numbers (NaN, infinity) make it a model
    error of its text (never stored: a later run asks again; never in a measure or a JSON file), and a raw answer
    that is not the answer itself is cut to RAW_KEPT characters, saying so (a 10 MB answer is not stored 40
    times over). A generative task's answer, its value, is kept whole."""
    bad = [(label, score) for label, score in outcome.scores or () if not math.isfinite(score)]
    if bad and not outcome.error:
        shown = ", ".join(f"{label}={score}" for label, score in bad[:3]) + (", ..." if len(bad) > 3 else "")
        return Outcome(None, f"model error: scores that are not finite numbers ({shown}): the model's answer is "
                             f"not used; answer: {_cut(outcome.raw)}", error=True)
    scores = outcome.scores
    if scores is not None and len(scores) > SCORES_KEPT:
        scores = _highest(outcome)
    if len(outcome.raw) > RAW_KEPT and outcome.raw != outcome.value or scores is not outcome.scores:
        return Outcome(outcome.value, _cut(outcome.raw), outcome.error, scores, outcome.seen)
    return outcome


def _highest(outcome: Outcome) -> tuple[tuple[str, float], ...]:
    """The SCORES_KEPT highest of an outcome's scores and those of the labels it answered, in their order: a task
    of 10,000 labels does not store 10,000 scores for every text and mutant. The analysis reads the label of
    interest's score where it is kept, and labels where any observation lacks it (findings.analyse)."""
    answered = outcome.value if isinstance(outcome.value, frozenset) else {outcome.value}
    ranked = sorted(range(len(outcome.scores)), key=lambda i: -outcome.scores[i][1])
    keep = set(ranked[:SCORES_KEPT]) | {i for i, (label, _) in enumerate(outcome.scores) if label in answered}
    if not _said_scores_cut:
        _said_scores_cut.append(1)
        logging.getLogger("hinter").warning(
            "the model scores %d labels: the %d highest scores of each answer (and its own label's) are kept",
            len(outcome.scores), SCORES_KEPT)
    return tuple(outcome.scores[i] for i in sorted(keep))


def _cut(raw: str) -> str:
    if len(raw) <= RAW_KEPT:
        return raw
    return raw[:RAW_KEPT] + f" [... {len(raw) - RAW_KEPT} more characters of the raw answer not kept]"


class Model(Protocol):
    fingerprint: str  # identifies model and prompt: outcomes are cached under it
    batch_size: int  # texts per predict() call: the unit of retries, progress and saved outcomes

    def predict(self, texts: Sequence[str]) -> list[Outcome]: ...


@runtime_checkable
class BatchSpreadingModel(Model, Protocol):
    """A model that runs many batches at once where it lives (the Ray executor's RemoteModel), retrying each where
    it runs. OutcomeCache hands such a model all its batches together instead of asking them one by one."""

    def predict_batches(self, batches: list[list[str]], retries: int, backoff_s: float) -> Iterator[list[Outcome] | str]:
        """Each batch's outcomes, or the text of its last error when every try failed, in the batches' order."""
        ...


STALL_S = 60.0  # seconds a call may go without an answer before the progress warns of a stall (again each STALL_S)


@contextmanager
def stall_watch(model: Model, texts: int):
    """Warn, every `model.stall_s` (STALL_S) seconds, while a call of `texts` texts has not answered: a hanging
    model shows itself in the progress, whatever its backend, instead of an ETA that climbs."""
    every = getattr(model, "stall_s", STALL_S)
    done = threading.Event()

    def watch() -> None:
        waited = 0.0
        while not done.wait(every):
            waited += every
            logging.getLogger("hinter.models").warning(
                "no answer from the model for %.0f s on a call of %d texts%s", waited, texts,
                f" (timeout {model.timeout:g} s)" if getattr(model, "timeout", None) else "")

    thread = threading.Thread(target=watch, daemon=True, name="hinter-stall-watch")
    thread.start()
    try:
        yield
    finally:
        done.set()


class CallTimeout(ModelError):
    """A call that outlived its timeout: not tried again (a text that hangs the model hangs it again, a timeout
    each time); the split of its batch (answer_apart) finds the text."""


def asked_ahead(model, chunks: Iterable[list[str]], retries: int, backoff_s: float,
                derived_of: Callable[[list[str]], dict | None], depth: int = 1) -> Iterator[list[Outcome] | str]:
    """predict_with_retries over `chunks`, each launched (`model.submit`, of a model that `launches_ahead`: hf:)
    `depth` calls before its answers are read: on CUDA the GPU runs the next calls while the caller stores this
    one's answers. The first `depth` calls are launched before this returns (OutcomeCache.start_repeats: the
    pipeline judges and stores the group before meanwhile). A call whose launch or reading fails is asked again by
    predict_with_retries; a fatal ModelError is raised when its call is read, so that what came before it is
    stored first."""
    def launch(texts):
        derived = derived_of(texts)
        try:
            return texts, derived, model.submit(texts, derived) if derived else model.submit(texts)
        except ModelError as e:
            if e.fatal:
                return texts, derived, e
        except Exception:  # as predict_with_retries: a failing model must not end the run at once
            pass
        return texts, derived, None

    def read(texts, derived, wait):
        if isinstance(wait, ModelError):
            raise wait
        if wait is not None:
            try:
                with stall_watch(model, len(texts)):
                    outs = wait()
                if len(outs) == len(texts):
                    return [at_boundary(normalise(o)) for o in outs]
            except ModelError as e:
                if e.fatal:
                    raise
            except Exception:
                pass
        return predict_with_retries(model, texts, retries, backoff_s, derived)

    chunks = iter(chunks)
    pending = deque(launch(texts) for texts in islice(chunks, depth))

    def answers():
        for texts in chunks:
            pending.append(launch(texts))
            yield read(*pending.popleft())
        while pending:
            yield read(*pending.popleft())
    return answers()


def predict_with_retries(model: Model, texts: list[str], retries: int = 2, backoff_s: float = 0.5,
                         derived: dict | None = None) -> list[Outcome] | str:
    """The model's outcomes for one batch, or the text of its last error when every try failed. A fatal
    ModelError (retrying cannot help) is raised. `derived`: see OutcomeCache.predict_repeats."""
    import time

    last = ""
    for attempt in range(retries + 1):
        try:
            with stall_watch(model, len(texts)):
                outs = model.predict(texts, derived) if derived else model.predict(texts)
            if len(outs) != len(texts):
                raise ModelError(f"the model returned {len(outs)} outcomes for {len(texts)} texts",
                                 fix="A model must return exactly one outcome per input text, in order.", fatal=True)
            return [at_boundary(normalise(o)) for o in outs]
        except ModelError as e:
            if e.fatal:
                raise
            last = e.message
            if isinstance(e, CallTimeout):
                break
        except Exception as e:  # a failing model must not become a verdict, nor end the run at once
            last = f"{type(e).__name__}: {e}"
        if attempt < retries:
            wait = backoff_s * 2 ** attempt
            # shown in the progress line: a model failing batch after batch is visible while it happens
            logging.getLogger("hinter.models").warning("a batch of %d texts failed (%s); retry %d of %d in %.1f s",
                                                       len(texts), last[:200], attempt + 1, retries, wait)
            time.sleep(wait)
    return last


OUTAGE_PIECES = 8  # a split where this many pieces all fail is the service failing, not some texts


def answer_apart(model: Model, texts: list[str], error: str, retries: int = 0, backoff_s: float = 0.5,
                 sent: Callable[[list[str]], None] | None = None) -> list[Outcome]:
    """The outcomes of a batch whose call failed with `error`: a failing text fails alone. The failing parts are
    split in halves, level by level, and each half asked again (`sent` told of each call) down to the texts that
    fail alone, the only ones recorded as model errors, each with its own error. A bad text costs about
    2 log2(batch) more calls, not the batch. Where every piece of a level of OUTAGE_PIECES or more fails, no text
    stands apart (a server down): the texts left are errors at once, so an outage costs 15 calls a batch, not 2n."""
    out: list[Outcome | None] = [None] * len(texts)
    failing = [(0, len(texts), error)]  # [start, end) of each part that failed, with its error
    while failing:
        asked, still = 0, []
        for start, end, err in failing:
            if end - start == 1:
                out[start] = Outcome(None, f"model error: {err}", error=True)
                continue
            mid = (start + end) // 2
            for a, b in ((start, mid), (mid, end)):
                if sent is not None:
                    sent(texts[a:b])
                got = predict_with_retries(model, texts[a:b], retries, backoff_s)
                asked += 1
                if isinstance(got, str):
                    still.append((a, b, got))
                else:
                    out[a:b] = got
        if asked >= OUTAGE_PIECES and len(still) == asked:
            for a, b, err in still:
                out[a:b] = [Outcome(None, f"model error: {err}", error=True)] * (b - a)
            still = []
        failing = still
    return out  # type: ignore[return-value]


SET_SEPARATOR = " | "  # a label set's encoding (records.Outcome.encode, findings.SET_SEPARATOR)


def readable(outcome: Outcome, labels: dict[str, str] | None) -> Outcome:
    """The outcome, or an unparseable one when it names a label the task does not have: an answer is an answer
    only if the task can read it ("maybe" for a task of accept and reject never enters a finding). `labels`: the
    task's labels by their lower case (a label in another case reads as given: "positive" for Positive), None to
    read any label (no task: a classifier's own labels)."""
    outcome = at_boundary(outcome)  # an answer stored before non-finite scores were refused is refused all the same
    if labels is None or outcome.value is None or outcome.error:
        return outcome
    if isinstance(outcome.value, frozenset):
        values = outcome.value
    elif outcome.value == "(none)":  # a multi-label answer naming no label, as stored (records.Outcome.encode)
        values = ()
    else:  # a label, or a multi-label answer as stored or sent back by a worker: "a | b"
        values = outcome.value.split(SET_SEPARATOR)
    unknown = sorted(v for v in values if v.lower() not in labels)
    if not unknown:
        return outcome
    return Outcome(None, f"not a label of the task ({', '.join(sorted(labels.values()))}): "
                         f"{', '.join(map(repr, unknown))}; answer: {_cut(outcome.raw)}", scores=outcome.scores,
                   seen=outcome.seen)


def task_labels(task) -> dict[str, str] | None:
    """`readable`'s labels of a task (None: a generative task, whose labels are (), or none)."""
    labels = getattr(task, "labels", None)
    return {label.lower(): label for label in labels} if labels else None


def _then(results: Iterable, stop) -> Iterator:
    """`results`, then `stop()` (which raises)."""
    yield from results
    stop()


class OutcomeCache:
    """Outcomes per (model fingerprint, exact text): the same text is never sent twice in a run."""

    def __init__(self, model: Model, store=None, retries: int = 2, max_failed_batches: int = 5,
                 backoff_s: float = 0.5, meter=None, labels: dict[str, str] | None = None):
        self.model, self.store = model, store
        # the task's labels (task_labels; default: those of the task the model was loaded with): an answer naming
        # another label is unparseable
        self.labels = labels if labels is not None else task_labels(getattr(model, "label_task", None))
        # hinter.usage.Meter: counts what each batch sent costs, and stops before one would exceed --budget
        self.meter = meter
        self._memory: dict[str, Outcome] = {}
        # keys sent and not yet read (start_repeats' calls whose answers _keep has not kept): a call started while
        # the one before is still out (the pipeline asks its next group before it reads this one's answers) does
        # not ask them again, and reads them once the call before has kept them
        self._asking: set[str] = set()
        self.calls = 0  # texts actually sent to the model
        self.errors = 0  # texts whose batch failed every try: recorded as model errors, never as outcomes
        self.retries, self.max_failed_batches, self.backoff_s = retries, max_failed_batches, backoff_s
        self._failed_in_a_row = 0

    def forget(self, *, errors: bool = True, keep: int | None = None) -> None:
        """Drop the answers kept in memory that were errors (a later call asks again), and past `keep` answers
        the oldest (a long-lived cache: `hinter serve`)."""
        if errors:
            for k in [k for k, o in self._memory.items() if o.error]:
                del self._memory[k]
        if keep is not None and len(self._memory) > keep:
            for k in list(self._memory)[:len(self._memory) - keep]:
                del self._memory[k]

    def predict(self, texts: Iterable[str], progress=None, repeat: int = 0) -> dict[str, Outcome]:
        """Each text's outcome, keyed by text_key. `repeat` r > 0 asks again (--repeats): its answers are cached
        apart, under the text's key and '#r', so a resumed run reuses every answer of every repeat."""
        return self.predict_repeats(texts, (repeat,), progress)[0]

    def predict_repeats(self, texts: Iterable[str], repeats: Sequence[int], progress=None,
                        derived: dict[str, tuple[str, list]] | None = None,
                        keys: dict[str, str] | None = None) -> list[dict[str, Outcome]]:
        """`predict` for each repeat in `repeats`, asked together: the model's batches are filled across repeats
        (a generative task's samples: on a GPU a full batch costs about what a part of one does). `derived`: for a
        mutant's text, its original's text and the edits that make it, handed to a model that `reads_edits` (the
        hf: backend then tokenizes only what changed; its answers are the same without). `keys`: each text's
        text_key where the caller has them (hashing a large campaign's texts twice was a noticeable cost)."""
        return self.start_repeats(texts, repeats, progress, derived, keys)()

    def start_repeats(self, texts: Iterable[str], repeats: Sequence[int], progress=None,
                      derived: dict[str, tuple[str, list]] | None = None,
                      keys: dict[str, str] | None = None) -> Callable[[], list[dict[str, Outcome]]]:
        """`predict_repeats` in two steps: what is missing is looked up and, with a model that `launches_ahead`,
        its first calls launched (on CUDA all of a pipeline group's: the GPU works while the caller judges and
        stores the group before); the function returned reads the answers, keeps and stores them. Nothing but the
        model's own work happens in between: the answers are kept (and counted) when read."""
        by_key = {text_key(t): t for t in texts} if keys is None else {keys[t]: t for t in texts}
        wanted = {k + (f"#{r}" if r else ""): t for r in repeats for k, t in by_key.items()}
        missing = [k for k in wanted if k not in self._memory and k not in self._asking]
        if missing and self.store is not None:
            # read as the task reads them: an answer stored before its task was checked is unparseable all the same
            # (an answer that reads as an error now, e.g. with a score that is not finite, is asked again)
            self._memory.update((k, o) for k, o in ((k, readable(o, self.labels)) for k, o in
                                self.store.cached_outcomes(self.model.fingerprint, missing).items()) if not o.error)
            missing = [k for k in missing if k not in self._memory]
        self._asking.update(missing)
        bs = max(1, self.model.batch_size)
        key_chunks = [missing[i:i + bs] for i in range(0, len(missing), bs)]
        text_chunks = [[wanted[k] for k in keys] for keys in key_chunks]
        # A model spread over workers (the Ray executor) runs the batches at once, retrying where it runs;
        # here they run one after the other. Either way the results arrive in order.
        meter = self.meter
        if isinstance(self.model, BatchSpreadingModel):
            fit = len(text_chunks) if meter is None else meter.fitting(text_chunks)
            results = self.model.predict_batches(text_chunks[:fit], self.retries, self.backoff_s)
            if fit < len(text_chunks):  # the batches that fit, then the budget's stop (BudgetReached)
                results = _then(results, lambda: meter.check(text_chunks[fit], force=True))
        else:
            if not (derived and getattr(self.model, "reads_edits", False)):
                derived = None
            of = (lambda c: {t: derived[t] for t in c if t in derived}) if derived else (lambda c: None)
            # each call counted before it is sent (Meter.sending), settled after: a run killed meanwhile counted it
            chunks = (c for c in text_chunks if meter is None or meter.check(c) is None and meter.sending(c) is None)
            if getattr(self.model, "launches_ahead", False) and (meter is None or meter.budget is None):
                # the next calls launched before this one's answers are stored (a budget checks each call after the
                # one before it is counted: then one at a time); as many as a pipeline group holds
                depth = max(1, getattr(self.model, "asks_ahead", 0) // bs)
                results = asked_ahead(self.model, chunks, self.retries, self.backoff_s, of, depth)
            else:
                results = (predict_with_retries(self.model, c, self.retries, self.backoff_s, of(c)) for c in chunks)
        return lambda: self._keep(by_key, repeats, key_chunks, text_chunks, results, progress)

    def _keep(self, by_key, repeats, key_chunks, text_chunks, results, progress) -> list[dict[str, Outcome]]:
        """start_repeats' second step: each call's answers read, counted, kept and stored."""
        try:
            return self._read(by_key, repeats, key_chunks, text_chunks, results, progress)
        finally:  # kept, or never to be (a failed call): a later call asks them again
            for keys in key_chunks:
                self._asking.difference_update(keys)

    def _read(self, by_key, repeats, key_chunks, text_chunks, results, progress) -> list[dict[str, Outcome]]:
        meter = self.meter
        results = iter(results)
        for keys, texts_sent in zip(key_chunks, text_chunks):
            try:
                outs = next(results)
            except StopIteration:
                break
            except BaseException as e:  # Ctrl-C, SIGTERM: the answers the call had when it came are kept
                outcomes = getattr(e, "outcomes", None)
                if not isinstance(e, Exception) and outcomes is not None and len(outcomes) == len(keys):
                    self._keep_interrupted(keys, texts_sent, outcomes)
                raise
            self.calls += len(keys)
            if meter is not None:  # what was written, where at hand: the written tokens are counted from it
                meter.record(texts_sent, None if isinstance(outs, str) else [o.raw for o in outs])
            if isinstance(outs, str):  # every try failed: find the texts that fail it, answer the others
                outs = answer_apart(self.model, texts_sent, outs, 0, self.backoff_s,
                                    None if meter is None else meter.record)
                if all(o.error for o in outs):
                    self._failed_in_a_row += 1
                    if self._failed_in_a_row >= self.max_failed_batches:
                        raise ModelError(f"the model failed on {self._failed_in_a_row} batches in a row (last error: "
                                         f"{outs[0].raw.removeprefix('model error: ')})",
                                         fix="Check the model or its server; finished batches are saved, and running "
                                         "the same command again continues the run (texts with model errors are "
                                         "asked again).")
                else:
                    self._failed_in_a_row = 0
            else:
                self._failed_in_a_row = 0
            outs = [readable(o, self.labels) for o in outs]
            self._memory.update(zip(keys, outs))
            self.errors += sum(o.error for o in outs)
            if self.store is not None:  # errors are not cached: a later run asks again
                self.store.save_outcomes(self.model.fingerprint, [(k, o) for k, o in zip(keys, outs) if not o.error])
            if progress is not None:
                progress(len(keys))
        return [{k: self._memory[k + (f"#{r}" if r else "")] for k in by_key} for r in repeats]

    def _keep_interrupted(self, keys, texts_sent, outcomes) -> None:
        """The answers a call interrupted by Ctrl-C had (the others are errors): counted and stored, so that the
        resumed run does not ask them again."""
        outs = [readable(normalise(o), self.labels) for o in outcomes]  # readable applies at_boundary
        answered = [(k, t, o) for k, t, o in zip(keys, texts_sent, outs) if not o.error]
        self.calls += len(answered)
        if self.meter is not None:
            self.meter.record(texts_sent)  # the call was sent for all of them
        self._memory.update((k, o) for k, _, o in answered)
        if self.store is not None and answered:
            self.store.save_outcomes(self.model.fingerprint, [(k, o) for k, _, o in answered])


_Item = TypeVar("_Item")


_asking = threading.local()  # in a thread of ask_each: the Event that says its batch was given up


def stopping() -> bool:
    """Whether the batch this thread asks for was given up (Ctrl-C, a fatal error): no more requests, no retry."""
    stop = getattr(_asking, "stop", None)
    return stop is not None and stop.is_set()


def pause(seconds: float) -> None:
    """Wait before a retry; in a thread of ask_each, a batch given up meanwhile ends the wait at once (a
    ModelError: the answer is not used)."""
    stop = getattr(_asking, "stop", None)
    if stop is None:
        time.sleep(seconds)
    elif stop.wait(seconds):
        raise ModelError("the batch was given up (the run is stopping)")


UNASKED = object()  # ask_each's place of an item not answered when the batch was given up


def ask_each(items: Sequence[_Item], ask: Callable[[_Item], object], concurrency: int) -> list:
    """`ask(item)` for each item of an API backend's batch, `concurrency` at a time: each answer, or the ModelError
    of an item that failed after its retries (a model error for its texts alone). When every item failed (the
    server is down), the first error is raised, so that the run can stop after a few such batches.

    The requests run in daemon threads that this thread only waits for: Ctrl-C (or SIGTERM) while they hang is
    raised here at once, no new request or retry starts after it (`stopping`, `pause`), and none of them keeps
    the process alive. The exception carries what was answered before it (`asked`: each answer, or UNASKED), so
    that the caller keeps those answers (OutcomeCache: `outcomes` on the exception)."""
    answers: list = [UNASKED] * len(items)
    try:
        if len(items) <= 1 or concurrency == 1:
            for i, item in enumerate(items):
                answers[i] = ask(item)
        else:
            _in_threads(items, ask, min(concurrency, len(items)), answers)
    except BaseException as e:
        if not isinstance(e, Exception):  # Ctrl-C, SIGTERM: the answers so far go up with it
            e.asked = answers  # type: ignore[attr-defined]
        raise
    if answers and all(isinstance(a, ModelError) for a in answers):
        raise answers[0]
    return answers


MAX_RETRY_AFTER_S = 600.0  # a Retry-After beyond this is taken as this: a run does not sleep for hours


def wait_to_retry(model, attempt: int, failure: str, retry_after: float | None, where: str) -> None:
    """An API backend's wait before its next try of a request (`attempt` from 0): the retry counted (`retried`
    under the model's `_lock`, its usage's `retries`), then its backoff slept, doubling from `backoff` with a
    jitter, at most 60 s; a server's Retry-After wins, up to MAX_RETRY_AFTER_S. `where` names the server in the
    warning ("the API at URL")."""
    with model._lock:
        model.retried += 1
    model.usage.add(retries=1)
    delay = min(model.backoff * 2 ** attempt * (1 + random.random() / 2), 60.0)
    if retry_after is not None:  # the server's word wins over our backoff
        delay = min(max(delay, retry_after), MAX_RETRY_AFTER_S)
    logging.getLogger("hinter.models").warning("%s: %s; retry %d of %d in %.1f s", where, failure, attempt + 1,
                                               model.retries, delay)
    pause(delay)


class AsksEachText:
    """An API backend that sends one request per text (`_request(text)`: its Outcome, or a ModelError raised),
    `concurrency` at a time (ask_each): a text that failed after its retries is a model error of its own, a fatal
    error stops the batch, and Ctrl-C keeps the answers got before it (OutcomeCache reads `outcomes`)."""

    concurrency: int

    def _pace_requests(self, task, concurrency: int, rpm: int | None, tpm: int | None, price_in: float | None,
                       price_out: float | None, give_up: int) -> None:
        """What the requests cost (hinter.usage: the API's own count, estimated where it gives none) and how fast
        they may go (--concurrency, rpm, tpm; a 429 lowers the requests at once): the state every such backend
        keeps. An API failing every request stops the run (pacing.GIVE_UP)."""
        from hinter.models.pacing import FailureStreak, Pacer
        from hinter.usage import Prices, TextCost, Usage
        self.concurrency = max(1, concurrency)
        self.batch_size = 4 * self.concurrency
        self._lock = threading.Lock()
        self.retried = 0  # requests retried (for logs and tests)
        self.usage = Usage()
        self.prices = Prices(price_in, price_out)
        self.pacer = Pacer(self.concurrency, rpm, tpm)
        self.streak = FailureStreak(give_up)
        self._text_cost = TextCost.of_task(task)

    def _request(self, text: str) -> Outcome:
        raise NotImplementedError

    def _request_or_error(self, text: str):
        try:
            return self._request(text)
        except ModelError as e:
            if e.fatal:
                raise
            return e

    def predict(self, texts: Sequence[str]) -> list[Outcome]:
        try:
            answers = ask_each(texts, self._request_or_error, self.concurrency)
        except BaseException as e:  # Ctrl-C: the texts answered so far go up with it (OutcomeCache keeps them)
            if getattr(e, "asked", None) is not None:
                e.outcomes = [Outcome(None, "model error: not answered: the run was stopped", error=True)
                              if a is UNASKED else _error_outcome(a) for a in e.asked]
            raise
        return [_error_outcome(a) for a in answers]


def _error_outcome(answer: Outcome | ModelError) -> Outcome:
    return Outcome(None, f"model error: {answer.message}", error=True) if isinstance(answer, ModelError) else answer


def _in_threads(items: Sequence, ask: Callable, threads: int, answers: list) -> None:
    stop, done = threading.Event(), threading.Condition()
    queue = iter(range(len(items)))
    failed: list[BaseException] = []
    left = [len(items)]

    def work() -> None:
        _asking.stop = stop
        while not stop.is_set():
            with done:
                i = next(queue, None)
            if i is None:
                return
            try:
                answers[i] = ask(items[i])
            except BaseException as e:  # a fatal error: the batch is given up
                with done:
                    failed.append(e)
                stop.set()
            with done:
                left[0] -= 1
                done.notify_all()

    for _ in range(threads):
        threading.Thread(target=work, daemon=True, name="hinter-api-request").start()
    try:
        with done:
            while left[0] and not failed:
                done.wait(0.5)  # a timeout, so that a signal's handler runs while the requests hang
    finally:
        stop.set()  # whatever ends the wait (the end, a fatal error, Ctrl-C): nothing more is sent
    if failed:
        raise failed[0]
