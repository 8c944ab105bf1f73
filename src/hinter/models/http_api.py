"""A model behind the user's own JSON endpoint (not OpenAI-shaped): `http:URL`.

Each text is POSTed as `{"text": "..."}` and the label read from a field of the JSON answer (`field`, default
`label`; a dotted path such as `result.label` reads inside objects). The label may be a string, a number or a
boolean (written "1"/"0"), or a list of labels for a multi-label task. `scores=FIELD` also reads the labels' scores
from an object `{label: number}` of the answer. With `batch=N` up to N texts go in one request,
`{"texts": [...]}`, and the answer is a JSON array with one answer per text, in order (or an object holding that
array under `results`), each read as a single answer is.

The requests go as the OpenAI backend's do (openai_api.py): at most `concurrency` at a time (pacing.py; a 429
halves them, `rpm` caps the requests per minute), each with a timeout; timeouts, connection errors, 408, 429
and 5xx are retried with exponential backoff (honouring Retry-After). A text still failing after its retries is
a model error for that text (asked again by the next run into the same folder), never a label (a request that
timed out is tried twice in all; `give_up` requests failed in a row stop the run: pacing.FailureStreak); a batch that
fails whole is raised, so that the campaign's own retries and split (models.base) take over. A text the server
refuses (400, 413, 422) and an answer that is not JSON, or lacks the field, are unparseable outcomes, the raw
answer saying why. 401, 403, 404 and 405 stop the run (a fatal ModelError naming the URL): retrying cannot help.
Before the campaign one test request checks that the endpoint answers (`preflight`).

The header `Authorization` is sent from the environment variable HINTER_HTTP_AUTHORIZATION when set (e.g.
"Bearer KEY"), never from the spec, so a key is never recorded. Each request counts one call in `usage`, its
tokens estimated (hinter.usage): a `--budget calls=N` is exact.

The fingerprint is the URL, the fields read and the request's form (`batch`): changing any of them is another
model. The task (`--task`) only says which labels are answers; nothing of it is sent.
"""
from __future__ import annotations

import http.client
import json
import logging
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Sequence

from hinter.errors import InputError, ModelError
from hinter.usage import TextCost, Usage
from hinter.models.base import Outcome, ask_each, normalise, stopping, wait_to_retry
from hinter.models.pacing import GIVE_UP, TIMEOUT_TRIES, FailureStreak, Pacer
from hinter.models.registry import Backend, Option, register_backend

AUTH_VARIABLE = "HINTER_HTTP_AUTHORIZATION"
TRANSIENT = frozenset({408, 429}) | frozenset(range(500, 600))  # retried
REFUSED_TEXT = frozenset({400, 413, 422})  # this text is refused: unparseable, the others go on
PREFLIGHT_TEXT = "A short test."
log = logging.getLogger("hinter.models")


class Transient(Exception):
    """A failure worth retrying: a timeout, a lost connection, 408, 429 or 5xx (`status` None for no answer)."""

    def __init__(self, what: str, status: int | None = None, retry_after: float | None = None,
                 connected: bool = True):
        super().__init__(what)
        self.what, self.status, self.retry_after = what, status, retry_after
        self.connected = connected  # False: no connection was made (nothing listening, a host not found)


class Refused(Exception):
    """An HTTP error status that retrying will not change."""

    def __init__(self, status: int, body: str):
        super().__init__(f"{status}: {body}")
        self.status, self.body = status, body


def read_field(answer: object, path: str) -> tuple[bool, object]:
    """(found, value) of a dotted `path` in a JSON answer: "label", "result.label"."""
    value = answer
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return False, None
        value = value[key]
    return True, value


def post_json(url: str, payload: dict, headers: dict, timeout: float) -> str:
    """POST `payload` as JSON to `url` with `headers` besides the JSON ones; the answer's body. Transient (a
    timeout, a lost connection, 408, 429, 5xx) or Refused (another error status) otherwise. Shared by the API
    backends that speak plain HTTP (http:, anthropic:)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json", **headers}
    request = urllib.request.Request(url, data=json.dumps(payload).encode("utf-8"), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as e:
        body = e.read().decode("utf-8", errors="replace")[:300]
        if e.code in TRANSIENT:
            raise Transient(f"{e.code} ({body[:120]})", e.code, _retry_after(e.headers)) from None
        raise Refused(e.code, body) from None
    except (TimeoutError, socket.timeout):
        raise Transient(f"no answer within {timeout:g} s") from None
    except urllib.error.URLError as e:  # raised while connecting
        if isinstance(e.reason, (TimeoutError, socket.timeout)):
            raise Transient(f"no connection within {timeout:g} s", connected=False) from None
        raise Transient(f"connection error ({e.reason})", connected=False) from None
    except (http.client.HTTPException, ConnectionError, OSError) as e:  # connected, then reset, closed with no
        # answer or a broken answer
        raise Transient(f"connection error ({type(e).__name__}: {e})") from None


class HttpModel:
    def __init__(self, url: str, task=None, field: str = "label", scores: str | None = None, batch: int | None = None,
                 concurrency: int = 4, timeout: float = 60.0, retries: int = 5, backoff: float = 0.5,
                 rpm: int | None = None, give_up: int = GIVE_UP):
        if not url.startswith(("http://", "https://")):
            raise InputError(f"{url!r} is not an http(s) URL", where="--model",
                             fix="Write http:URL, e.g. http:http://127.0.0.1:8000/classify.")
        if task is not None and not task.scored:
            raise InputError("the http backend reads labels; a free-text task's answers are not supported yet",
                             where="--task", fix="Use a label task, or the openai: / python: backend.")
        self.url, self._task, self.field, self.scores_field, self.batch = url, task, field, scores, batch
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self.concurrency = max(1, concurrency)
        self.batch_size = (batch or 1) * 4 * self.concurrency
        self.usage = Usage()
        self.pacer = Pacer(self.concurrency, rpm)
        self.streak = FailureStreak(give_up)  # an endpoint failing every request stops the run (pacing.GIVE_UP)
        self._text_cost = TextCost()  # the text alone is sent: no prompt around it
        self._lock = threading.Lock()
        self.retried = 0  # requests retried (for logs and tests)
        self.requests = 0  # requests sent (for tests)
        form = f"texts[{batch}]" if batch else "text"
        self.fingerprint = (f"http:{url}|body={form}|field={field}"
                            + (f"|scores={scores}" if scores else ""))

    # --- one request ------------------------------------------------------------------------------------------
    def _post(self, payload: dict, timeout: float | None = None) -> str:
        """POST `payload` as JSON; the answer's body. Transient or Refused otherwise."""
        headers = {"Authorization": os.environ[AUTH_VARIABLE]} if os.environ.get(AUTH_VARIABLE) else {}
        with self._lock:
            self.requests += 1
        return post_json(self.url, payload, headers, timeout or self.timeout)

    def _request(self, texts: list[str]) -> str | Refused:
        """One request for `texts` (one, or a batch), paced and retried: the answer's body, a Refused for a refused
        text, or ModelError (fatal where retrying cannot help)."""
        payload = {"texts": texts} if self.batch else {"text": texts[0]}
        tokens = sum(sum(self._text_cost.of(t)) for t in texts)
        timeouts = 0
        for attempt in range(self.retries + 1):
            if stopping():  # the batch was given up (Ctrl-C): nothing more is sent
                raise ModelError("not asked: the run is stopping")
            self.pacer.acquire(tokens)
            limited = False
            try:
                body = self._post(payload)
                self.usage.add(calls=1, tokens_in=tokens - len(texts), tokens_out=len(texts), estimated_calls=1)
                self.streak.answered()
                return body
            except Refused as e:
                self.usage.add(calls=1)
                if e.status in REFUSED_TEXT:
                    self.streak.answered()
                    return e
                raise ModelError(f"the endpoint {self.url} refused the request ({e.status}: {e.body[:200]})",
                                 fix="Check the URL after http: in --model (the endpoint's path), and "
                                     f"{AUTH_VARIABLE} where it needs a key.", fatal=True) from None
            except Transient as e:
                limited = e.status == 429
                timeouts += e.what.startswith("no answer within")
                if not limited and self.streak.failed():
                    self.usage.add(calls=1)
                    raise ModelError(f"the endpoint {self.url} failed {self.streak.limit} requests in a row with no "
                                     f"answer between them (last: {e.what}): the run stops rather than ask every text "
                                     "in vain", fix="Check the server (its log, its load); running the same command "
                                     "again continues the run, asking only what was not answered.", fatal=True) \
                        from None
                if attempt == self.retries or timeouts >= TIMEOUT_TRIES:
                    # a retried request counts as a retry, the last try as a call
                    self.usage.add(calls=1)
                    raise ModelError(f"the endpoint {self.url} failed {self.retries + 1} times ({e.what})",
                                     fix="Check that the server runs and is reachable; lower the load or raise the "
                                         "timeout (?timeout=).") from None
                wait_to_retry(self, attempt, e.what, e.retry_after, f"the endpoint {self.url}")
            finally:
                self.pacer.release(rate_limited=limited)
        raise AssertionError("unreachable")

    def _request_or_error(self, texts: list[str]):
        try:
            return self._request(texts)
        except ModelError as e:
            if e.fatal:
                raise
            return e

    # --- before the campaign ----------------------------------------------------------------------------------
    def preflight(self, connect_timeout: float = 10.0) -> None:
        """One test request: nothing listening, a host that cannot be found, or a refusal (401, 403, 404...) stops
        the run now with a fatal ModelError naming the URL; an answer, even a 5xx, lets the campaign start."""
        payload_texts = [PREFLIGHT_TEXT]
        for attempt in range(2):
            try:
                self._post({"texts": payload_texts} if self.batch else {"text": PREFLIGHT_TEXT},
                           timeout=min(connect_timeout, self.timeout))
                self.usage.add(calls=1, tokens_in=sum(self._text_cost.of(PREFLIGHT_TEXT)) - 1, tokens_out=1,
                               estimated_calls=1)
                return
            except Refused as e:
                self.usage.add(calls=1)
                if e.status in REFUSED_TEXT:  # it read the request: the endpoint is there
                    log.warning("the endpoint %s refused a test request (%d: %s); starting all the same", self.url,
                                e.status, e.body[:120])
                    return
                fix = ("Check the path of the URL after http: in --model." if e.status in (404, 405) else
                       f"Set {AUTH_VARIABLE} in the environment to the Authorization header the endpoint expects "
                       "(e.g. 'Bearer KEY'; never on the command line)." if e.status in (401, 403) else
                       "Check the URL after http: in --model.")
                raise ModelError(f"the endpoint {self.url} refused a test request ({e.status}: {e.body[:200]})",
                                 where="--model", fix=fix, fatal=True) from None
            except Transient as e:
                if e.connected:  # it answered (429, 5xx), is slow or broke off: the campaign's retries will tell
                    log.warning("the endpoint %s answered a test request with %s; starting all the same", self.url,
                                e.what)
                    return
                if attempt == 0:  # a server still starting: one more try
                    time.sleep(1.0)
                    continue
                raise ModelError(f"cannot reach {self.url} ({e.what})", where="--model",
                                 fix="Start the server, or correct the URL after http: in --model (e.g. "
                                     "http:http://127.0.0.1:8000/classify).", fatal=True) from None

    # --- from an answer to outcomes ---------------------------------------------------------------------------
    def _outcome(self, answer: object, raw: str) -> Outcome:
        """One text's outcome from its JSON answer (`raw`: what is stored as the raw answer)."""
        found, value = read_field(answer, self.field)
        if not found:
            return Outcome(None, f"no field {self.field!r} in the answer: {raw[:300]}")
        scores = None
        if self.scores_field:
            found, scores = read_field(answer, self.scores_field)
            if not found:
                scores = None
        outcome = normalise({"label": value, "scores": scores} if scores is not None else {"label": value},
                            raw=raw[:1000])
        return outcome

    def _outcomes(self, texts: list[str], response) -> list[Outcome]:
        """The outcomes of one request's texts from its response: a body, a Refused or a ModelError."""
        if isinstance(response, ModelError):
            return [Outcome(None, f"model error: {response.message}", error=True)] * len(texts)
        if isinstance(response, Refused):
            return [Outcome(None, f"error: {response.status}: {response.body[:300]}")] * len(texts)
        try:
            answer = json.loads(response)
        except json.JSONDecodeError as e:
            return [Outcome(None, f"not JSON ({e.msg}): {response[:300]}")] * len(texts)
        if not self.batch:
            return [self._outcome(answer, response)]
        items = answer.get("results") if isinstance(answer, dict) else answer
        if not isinstance(items, list) or len(items) != len(texts):
            n = len(items) if isinstance(items, list) else None
            why = (f"{n} answers for {len(texts)} texts" if n is not None else
                   "not a JSON array (nor an object holding one under 'results')")
            return [Outcome(None, f"model error: the batch's answer has {why}: {response[:300]}", error=True)] \
                * len(texts)
        return [self._outcome(item, json.dumps(item)) for item in items]

    def predict(self, texts: Sequence[str]) -> list[Outcome]:
        texts = list(texts)
        step = self.batch or 1
        chunks = [texts[i:i + step] for i in range(0, len(texts), step)]
        responses = ask_each(chunks, self._request_or_error, self.concurrency)
        return [o for chunk, r in zip(chunks, responses) for o in self._outcomes(chunk, r)]


def _retry_after(headers) -> float | None:
    from hinter.models.openai_api import retry_after_s
    return retry_after_s(headers) if headers is not None else None


def _load(rest: str, *, task=None, concurrency: int | None = None, timeout: float = 60.0, retries: int = 5,
          field: str = "label", scores: str | None = None, batch: int | None = None, rpm: int | None = None,
          preflight: bool = True, give_up: int = GIVE_UP, **_) -> HttpModel:
    from hinter.models.tasks import get_task
    model = HttpModel(rest, get_task(task) if task is not None else None, field=field, scores=scores, batch=batch,
                      timeout=timeout, retries=retries, rpm=rpm, give_up=give_up,
                      **({"concurrency": concurrency} if concurrency else {}))
    if preflight:
        model.preflight()
    return model


FIELD_PATTERN = r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*"
OPTIONS = (
    Option("field", "label", "the answer's JSON field holding the label (a dotted path: result.label), changes "
           "results", kind=str, pattern=FIELD_PATTERN, affects_results=True),
    Option("scores", None, "the answer's JSON field holding {label: score}, changes results", kind=str,
           pattern=FIELD_PATTERN, affects_results=True, auto="none"),
    Option("batch", None, "send up to N texts a request as {\"texts\": [...]}, the answer a JSON array; changes "
           "results", minimum=1, affects_results=True, auto="one text a request, {\"text\": ...}"),
    Option("timeout", 60.0, f"seconds per request; a request that times out is tried {TIMEOUT_TRIES} times in all, "
           "then is a model error of its texts (asked again by the next run)", kind=float, minimum=0.1),
    Option("concurrency", 4, "requests at once in all, --concurrency wins", minimum=1),
    Option("retries", 5, "retries of connection errors, 408, 429 and 5xx", minimum=0),
    Option("give_up", GIVE_UP, "requests failed in a row (no answer between them) after which the run stops: a server "
           "that fails everything", minimum=1),
    Option("rpm", None, "requests per minute at most", minimum=1, auto="no limit"),
)

HTTP = register_backend(Backend(
    prefix="http", loader=_load, usage="http:URL",
    summary="your own JSON endpoint: POSTs {\"text\": ...}, reads the label from the answer's field",
    example="http:http://127.0.0.1:8000/classify?field=label", is_api=True, env=(AUTH_VARIABLE,), options=OPTIONS))
